#include "smat/head_explainer.h"

#include <cmath>

#include "util/error.h"
#include "util/io.h"
#include "util/tensor_values.h"

namespace salient::smat {

HeadScores head_scores(const Transformer& model, const Batch& batch, const std::vector<int64_t>& layers_in) {
  std::vector<int64_t> layers = layers_in;
  if (layers.empty())
    for (int64_t l = 0; l < model.num_layers(); ++l) layers.push_back(l);
  for (int64_t l : layers)
    if (l < 0 || l >= model.num_layers()) fail("--layers: layer {} out of range (0..{})", l, model.num_layers() - 1);
  ForwardRequest req = forward_request(batch);
  req.want_attention_logits = true;
  ForwardResult r = model.forward(req);
  HeadScores out;
  out.logits = r.logits;
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

nlohmann::json LearnedHeadExplainer::to_json() const {
  return {{"method", "smat"},
          {"normalizer", normalizer_name(normalizer)},
          {"num_layers", num_layers},
          {"num_heads", num_heads},
          {"layers", layers},
          {"coefficient_logits", tensor_values(coefficient_logits)},
          {"coefficients", tensor_values(coefficients())}};
}

LearnedHeadExplainer all_heads_explainer(const Transformer& model, Normalizer normalizer, torch::Tensor coefficient_logits) {
  LearnedHeadExplainer e;
  e.normalizer = normalizer;
  e.num_layers = model.num_layers();
  e.num_heads = model.num_heads();
  for (int64_t l = 0; l < e.num_layers; ++l) e.layers.push_back(l);
  if (coefficient_logits.numel() != e.num_layers * e.num_heads)
    fail("smat: {} coefficients for {} × {} heads", coefficient_logits.numel(), e.num_layers, e.num_heads);
  e.coefficient_logits = std::move(coefficient_logits);
  return e;
}

void save_head_explainer(const LearnedHeadExplainer& e, const std::string& path, const nlohmann::json& provenance) {
  nlohmann::json j = e.to_json();
  if (!provenance.is_null()) j["provenance"] = provenance;
  write_file_atomic(path, j.dump(2) + "\n");
}

LearnedHeadExplainer load_head_explainer(const std::string& path_in) {
  const std::string path = dir_exists(path_in) ? join_path(path_in, "smat_explainer.json") : path_in;
  if (!file_exists(path)) fail("{}: no SMaT explainer (smat_explainer.json from salient smat train)", path);
  const nlohmann::json j = parse_json_file(path);
  auto field = [&](const char* name) -> const nlohmann::json& {
    if (!j.is_object() || !j.contains(name)) fail("{}: missing field \"{}\"", path, name);
    return j.at(name);
  };
  if (field("method") != "smat") fail("{}: field \"method\" must be \"smat\"", path);
  LearnedHeadExplainer e;
  if (!field("normalizer").is_string()) fail("{}: field \"normalizer\" must be a string", path);
  e.normalizer = parse_normalizer(field("normalizer").get<std::string>(), path + ": field \"normalizer\"");
  for (const char* name : {"num_layers", "num_heads"})
    if (!field(name).is_number_integer() || field(name).get<int64_t>() < 1)
      fail("{}: field \"{}\" must be a positive integer", path, name);
  e.num_layers = j["num_layers"].get<int64_t>();
  e.num_heads = j["num_heads"].get<int64_t>();
  if (!field("layers").is_array() || j["layers"].empty()) fail("{}: field \"layers\" must be a non-empty list", path);
  for (const auto& l : j["layers"]) {
    if (!l.is_number_integer() || l.get<int64_t>() < 0 || l.get<int64_t>() >= e.num_layers)
      fail("{}: field \"layers\": every entry must be a layer index in 0..{}", path, e.num_layers - 1);
    e.layers.push_back(l.get<int64_t>());
  }
  const auto& z = field("coefficient_logits");
  if (!z.is_array() || static_cast<int64_t>(z.size()) != static_cast<int64_t>(e.layers.size()) * e.num_heads)
    fail("{}: field \"coefficient_logits\" must list {} numbers (layers × heads)", path,
         static_cast<int64_t>(e.layers.size()) * e.num_heads);
  std::vector<double> v;
  for (const auto& x : z) {
    if (!x.is_number() || !std::isfinite(x.get<double>())) fail("{}: field \"coefficient_logits\" must hold finite numbers", path);
    v.push_back(x.get<double>());
  }
  e.coefficient_logits = torch::tensor(v, torch::kFloat64).to(torch::kFloat32);
  return e;
}

torch::Tensor explain_with(const LearnedHeadExplainer& e, const Transformer& model, const Batch& batch) {
  if (model.num_layers() != e.num_layers || model.num_heads() != e.num_heads)
    fail("smat: the explainer was trained for {} layers × {} heads, the model has {} × {}", e.num_layers, e.num_heads,
         model.num_layers(), model.num_heads());
  return head_explanation(e.coefficients(), head_scores(model, batch, e.layers));
}

}  // namespace salient::smat
