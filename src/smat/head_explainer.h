#pragma once
// SMaT's attention explainer (Fernandes et al., NeurIPS 2022, §3): per head h, s_h = the head's
// unnormalised attention logits (scaled q·k) averaged over the real query rows; the explanation is
// softmax over the real tokens of Σ_h λ_h s_h, with λ the normalised per-head coefficients
// (smat/normalizers.h). λ uniform gives the static "all heads, mean" explainer on logits.
#include <torch/torch.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/classifier.h"
#include "smat/normalizers.h"

namespace salient::smat {

struct HeadScores {
  torch::Tensor scores;  // [B, heads of the chosen layers (layer-major), L]; 0 at padding keys
  torch::Tensor real;    // [B, L] bool: non-padding tokens
  torch::Tensor logits;  // [B, labels]: the same forward's classifier output, so a caller that needs
                         // both (the student's loss) runs the model once, with one dropout draw
};
// The heads of `layers` (empty: every layer), from one forward of the batch. Differentiable with
// respect to the model's weights (the student is trained through it).
HeadScores head_scores(const Transformer& model, const Batch& batch, const std::vector<int64_t>& layers = {});
// [B, L] distributions over the real tokens (exact zeros at padding) from coefficients [N].
torch::Tensor head_explanation(const torch::Tensor& coefficients, const HeadScores& scores);

// A trained SMaT explainer as saved by `salient smat train` (smat_explainer.json): the heads it
// reads, their coefficient logits and the normalisation that turns them into λ.
struct LearnedHeadExplainer {
  Normalizer normalizer = Normalizer::Sparsemax;
  int64_t num_layers = 0, num_heads = 0;  // of the model it explains
  std::vector<int64_t> layers;            // the layers it reads (layer-major heads)
  torch::Tensor coefficient_logits;       // [layers.size() · num_heads]
  torch::Tensor coefficients() const { return normalize(coefficient_logits, normalizer); }
  nlohmann::json to_json() const;
};
// An explainer over every head of `model` with the given coefficient logits [layers · heads].
LearnedHeadExplainer all_heads_explainer(const Transformer& model, Normalizer normalizer, torch::Tensor coefficient_logits);
void save_head_explainer(const LearnedHeadExplainer& e, const std::string& path, const nlohmann::json& provenance = {});
// `path` is the JSON file or a directory holding smat_explainer.json; every field is checked.
LearnedHeadExplainer load_head_explainer(const std::string& path);
// Its explanation of a batch: [B, L] distributions over the real tokens; the model's shape must match.
torch::Tensor explain_with(const LearnedHeadExplainer& e, const Transformer& model, const Batch& batch);

}  // namespace salient::smat
