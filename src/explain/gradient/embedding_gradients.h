#pragma once
// What the gradient family shares (internal to src/explain): the inputs as one padded batch with
// their representation at the gradient layer, and the explained output with its gradient there,
// as Captum's Layer* methods see them.
#include <utility>
#include <vector>

#include "explain/methods.h"

namespace salient::explain {

// Where the family differentiates (the `layer` parameter): the word embeddings (`word_embeddings`,
// Captum's Layer* methods on bert.embeddings.word_embeddings), or the embedding layer's output
// (`embeddings`: word + position + type embeddings after their LayerNorm, HF's hidden_states[0],
// Layer* on bert.embeddings; where SMaT's authors take their gradient explainers).
enum class GradientLayer { WordEmbeddings, Embeddings };
ParamSpec gradient_layer_param();
GradientLayer gradient_layer(const ExplainOptions& o);

// One padded batch of the inputs, their representation at the gradient layer, and the explained targets.
struct Prepared {
  Batch batch;
  GradientLayer layer = GradientLayer::WordEmbeddings;
  torch::Tensor embeds;   // [B, L, E] at `layer`, detached
  torch::Tensor targets;  // [B]
};

Prepared prepare(const Classifier& clf, const std::vector<const Encoding*>& inputs, const std::vector<int64_t>& targets,
                 GradientLayer layer = GradientLayer::WordEmbeddings);

// `ids` (e.g. a baseline's) at `layer`, detached: their word embeddings, or the embedding layer's output.
torch::Tensor represent(const Classifier& clf, const torch::Tensor& ids, const torch::Tensor& types,
                        const torch::Tensor& mask, GradientLayer layer);

// Logits from rows `embeds` at `layer`.
torch::Tensor logits_at(const Classifier& clf, const torch::Tensor& embeds, const torch::Tensor& types,
                        const torch::Tensor& mask, GradientLayer layer);

// ∂F/∂e and F for rows `embeds` at `layer` (rows are independent).
std::pair<torch::Tensor, torch::Tensor> output_and_grad(const Classifier& clf, torch::Tensor embeds,
                                                        const torch::Tensor& types, const torch::Tensor& mask,
                                                        const torch::Tensor& targets, ModelOutput output,
                                                        GradientLayer layer = GradientLayer::WordEmbeddings);

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
