#pragma once
// SMaT's attention explainer (Fernandes et al., NeurIPS 2022, §3): per head h, s_h = the head's
// unnormalised attention logits (scaled q·k) averaged over the real query rows; the explanation is
// softmax over the real tokens of Σ_h λ_h s_h, with λ the normalised per-head coefficients
// (smat/normalizers.h). λ uniform gives the static "all heads, mean" explainer on logits.
#include <torch/torch.h>

#include <vector>

#include "model/classifier.h"

namespace salient::smat {

struct HeadScores {
  torch::Tensor scores;  // [B, heads of the chosen layers (layer-major), L]; 0 at padding keys
  torch::Tensor real;    // [B, L] bool: non-padding tokens
};
// The heads of `layers` (empty: every layer), from one forward of the batch. Differentiable with
// respect to the model's weights (the student is trained through it).
HeadScores head_scores(const Transformer& model, const Batch& batch, const std::vector<int64_t>& layers = {});
// [B, L] distributions over the real tokens (exact zeros at padding) from coefficients [N].
torch::Tensor head_explanation(const torch::Tensor& coefficients, const HeadScores& scores);

}  // namespace salient::smat
