#pragma once
// What the attention family shares (internal to src/explain): one forward pass that keeps the
// attention probabilities actually used by the model (after the padding mask, so padded keys get
// exactly 0 and results are padding-invariant), optionally their gradients and the layers' input
// states, and a base that explains chunks of internal_batch inputs with it. Definitions follow the
// reference code named in docs/explainers.md.
#include <string>
#include <vector>

#include "explain/methods.h"

namespace salient::explain {

// One forward over a chunk of inputs with attentions (and hidden states) kept; gradients of the
// summed explained output w.r.t. them when asked.
struct AttentionPass {
  Batch batch;
  std::vector<torch::Tensor> attn;         // per layer [B, H, L, L]
  std::vector<torch::Tensor> attn_grad;    // same shapes (when with_grad)
  std::vector<torch::Tensor> hidden;       // each layer's input (the embedding output for layer 0): [B, L, Hd]
  std::vector<torch::Tensor> hidden_grad;  // their gradients
};

// The pass itself, over all of `inputs` at once; the gradients are the summed explained output's.
AttentionPass run_pass(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                       const std::vector<int64_t>& targets, ModelOutput output, bool with_grad, bool with_hidden);

// Base: explains chunks of internal_batch inputs; subclasses map one pass to [B, L] scores.
class AttentionExplainer : public Explainer {
 public:
  AttentionExplainer(std::string name, bool with_grad, bool with_hidden)
      : name_(std::move(name)), with_grad_(with_grad), with_hidden_(with_hidden) {}
  std::string name() const override { return name_; }
  // Gradient-weighted methods explain the target logit by default, as their authors' code.
  ModelOutput default_output() const override { return with_grad_ ? ModelOutput::Logit : ModelOutput::Probability; }
  bool uses_model_output() const override { return with_grad_; }
  std::vector<Explanation> compute(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                   const std::vector<int64_t>& targets, const ExplainOptions& o) override;

 protected:
  virtual torch::Tensor compute(const AttentionPass& p, const ExplainOptions& o) const = 0;
  // [B, L] 1/0 mask of real tokens, in the attention dtype.
  static torch::Tensor real_tokens(const AttentionPass& p) {
    return p.batch.attention_mask.to(p.attn[0].scalar_type());
  }
  // Mean of [B, Lq, Lk] maps over the real query rows → [B, Lk].
  static torch::Tensor mean_over_real_rows(const AttentionPass& p, const torch::Tensor& maps) {
    torch::Tensor q = real_tokens(p);
    return (maps * q.unsqueeze(2)).sum(1) / q.sum(1, true);
  }
  // The [CLS] row of [B, L, L] maps with its [CLS]→[CLS] entry set to 0, as the authors' code
  // does before returning it (`cam[:, 0, 0] = 0`): the class token attends to itself most, and
  // left in it would set every colour scale.
  static torch::Tensor cls_row_without_self(const torch::Tensor& maps) {
    torch::Tensor row = maps.select(1, 0).clone();
    row.select(1, 0).zero_();
    return row;
  }

 private:
  std::string name_;
  bool with_grad_, with_hidden_;
};

}  // namespace salient::explain
