#pragma once
// What the gradient family shares (internal to src/explain): the inputs as one padded batch with
// their word embeddings, and the explained output with its gradient w.r.t. word embeddings, as
// Captum's Layer* methods on bert.embeddings.word_embeddings see them.
#include <utility>
#include <vector>

#include "explain/methods.h"

namespace salient::explain {

// One padded batch of the inputs, its word embeddings, and the explained targets.
struct Prepared {
  Batch batch;
  torch::Tensor embeds;   // [B, L, E], detached
  torch::Tensor targets;  // [B]
};

Prepared prepare(const Classifier& clf, const std::vector<const Encoding*>& inputs, const std::vector<int64_t>& targets);

// ∂F/∂e and F for rows of word embeddings `embeds` (rows are independent).
std::pair<torch::Tensor, torch::Tensor> output_and_grad(const Classifier& clf, torch::Tensor embeds,
                                                        const torch::Tensor& types, const torch::Tensor& mask,
                                                        const torch::Tensor& targets, ModelOutput output);

// Saliency and gradient × input: one backward pass over the whole batch, then a score per token
// from the gradient g and the word embedding e ([rows, L, E] each → [rows, L]).
class EmbeddingGradientExplainer : public Explainer {
 public:
  std::vector<Explanation> compute(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                   const std::vector<int64_t>& targets, const ExplainOptions& o) override;

 protected:
  virtual torch::Tensor token_scores(const torch::Tensor& grad, const torch::Tensor& embeds) const = 0;
};

}  // namespace salient::explain
