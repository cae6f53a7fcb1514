#pragma once
// Layer-wise relevance propagation through the BERT encoder as in Chefer et al. (2021),
// hila-chefer/Transformer-Explainability (BERT_explainability/modules/layers_ours.py and BERT.py),
// shared by lrp_partial, lrp_full, transformer_attribution and mgae (internal to src/explain).
// Rules (relprop of the reference): Linear = LRP-αβ with α = 1, β = 0 (positive contributions, no
// bias); LayerNorm, GELU, tanh, softmax, dropout pass relevance through unchanged; MatMul / einsum =
// z-rule (R·x·∂z/∂x / z); Add = z-rule then each branch rescaled so the branches share R by
// |Σ branch|; Clone = sum of the branches; IndexSelect ([CLS] pooling) = relevance at position 0.
// Relevance starts as the one-hot of the target class on the logits. Self-attention halves the
// relevance at each of its two matmuls (as the reference). One deliberate difference: the Add
// rescaling sums per example, where the reference sums over the whole batch (its results would
// depend on the batch). Only BERT-type heads (pooler + classifier) are supported.
#include <string>
#include <utility>
#include <vector>

#include "explain/methods.h"

namespace salient::explain {

struct LrpResult {
  std::vector<torch::Tensor> attn_cam;  // per layer [B, H, L, L]
  torch::Tensor input_relevance;        // [B, L, Hd]
  torch::Tensor kept_heads;             // [layers, B, H] when a head mask was used
};

// Which heads pass relevance down (1 = kept), per layer and example, or undefined for all.
struct HeadSelection {
  std::vector<std::pair<int64_t, int64_t>> heads;  // explicit (layer, head) list; empty = automatic
  double positional_threshold = 0.8;
  bool active = false;
};

// Forward with every activation kept, then relevance propagation from the one-hot target.
LrpResult lrp(const Classifier& clf, const Batch& batch, const std::vector<int64_t>& targets,
              const HeadSelection& select = {});

// Base of the four methods: explains chunks of internal_batch inputs, one relevance pass each, and
// records which heads passed relevance down when a selection was active (extras.kept_heads).
class LrpExplainer : public Explainer {
 public:
  // LRP starts from the one-hot target on the logits; the attention gradients that
  // transformer_attribution and mgae weigh it with are the target logit's, as in the reference.
  ModelOutput default_output() const override { return ModelOutput::Logit; }
  std::vector<Explanation> compute(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                   const std::vector<int64_t>& targets, const ExplainOptions& o) override;

 protected:
  virtual HeadSelection head_selection(const Classifier&, const ExplainOptions&) const { return {}; }
  // [B, L] scores of one chunk from its relevance pass.
  virtual torch::Tensor scores(const Classifier& clf, const Batch& batch, const LrpResult& r,
                               const std::vector<int64_t>& targets, const ExplainOptions& o) const = 0;
};

// transformer_attribution's and mgae's map before its [CLS]→[CLS] entry: per layer
// (∂F/∂A ⊙ R_A)⁺ averaged over heads, with F the explained output (the target logit unless --score
// prob), rolled out with the identity from start_layer; the [CLS] rows, [B, L].
torch::Tensor relevance_rollout(const Classifier& clf, const Batch& batch, const LrpResult& r,
                                const std::vector<int64_t>& targets, ModelOutput output, const ExplainOptions& o);

}  // namespace salient::explain
