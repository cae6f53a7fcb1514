#include "smat/head_explainer.h"

#include "util/error.h"

namespace salient::smat {

HeadScores head_scores(const Transformer& model, const Batch& batch, const std::vector<int64_t>& layers_in) {
  std::vector<int64_t> layers = layers_in;
  if (layers.empty())
    for (int64_t l = 0; l < model.num_layers(); ++l) layers.push_back(l);
  for (int64_t l : layers)
    if (l < 0 || l >= model.num_layers()) fail("--layers: layer {} out of range (0..{})", l, model.num_layers() - 1);
  ForwardRequest req;
  req.input_ids = batch.input_ids;
  req.token_type_ids = batch.token_type_ids;
  req.attention_mask = batch.attention_mask;
  req.want_attention_logits = true;
  ForwardResult r = model.forward(req);
  HeadScores out;
  out.real = batch.attention_mask.to(r.logits.device()).gt(0);
  // Mean over the real query rows i of logits[b, h, i, j] (the additive padding mask is only on keys).
  torch::Tensor rows = out.real.to(r.logits.scalar_type()).unsqueeze(1).unsqueeze(-1);  // [B, 1, L, 1]
  torch::Tensor count = rows.sum(2).clamp_min(1);                                      // [B, 1, 1]
  std::vector<torch::Tensor> per_layer;
  for (int64_t l : layers) per_layer.push_back((r.attention_logits[l] * rows).sum(2) / count);  // [B, H, L]
  out.scores = torch::cat(per_layer, 1) * out.real.unsqueeze(1).to(r.logits.scalar_type());
  return out;
}

torch::Tensor head_explanation(const torch::Tensor& coefficients, const HeadScores& s) {
  if (coefficients.dim() != 1 || coefficients.size(0) != s.scores.size(1))
    fail("smat: {} coefficients for {} heads", coefficients.numel(), s.scores.size(1));
  torch::Tensor mixed = (s.scores * coefficients.to(s.scores.device(), s.scores.scalar_type()).view({1, -1, 1})).sum(1);
  return torch::softmax(mixed.masked_fill(s.real.logical_not(), -INFINITY), -1);
}

}  // namespace salient::smat
