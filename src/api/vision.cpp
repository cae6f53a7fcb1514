// The public entry points of salient/vision.h over src/vision: what `salient vit train | evaluate
// | explain` compute, returned as JSON (the CLI only prints it).
#include "salient/vision.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "smat/head_explainer.h"
#include "util/error.h"
#include "util/io.h"
#include "vision/render.h"
#include "vision/vit.h"

namespace salient {

nlohmann::json vit_train(vision::VitTrainOptions o) {
  if (o.data_dir.empty()) o.data_dir = shared_data_dir();
  const vision::VitTrainResult r = vision::train_vit(o);
  return {{"best_epoch", r.best_epoch}, {"best_dev_accuracy", r.best_accuracy}, {"train_seconds", r.train_seconds},
          {"out", o.output_dir}};
}

nlohmann::json vit_evaluate(const std::string& model_dir, const std::string& data, const std::string& data_dir,
                            int64_t limit) {
  if (limit < 0) fail("--limit: must be >= 0 (got {})", limit);
  const Transformer m = vision::load_vit(model_dir);
  const ImageData d = vision::load_vit_data(m, data, data_dir.empty() ? shared_data_dir() : data_dir, limit);
  return {{"model", model_dir}, {"data", data}, {"examples", d.size()}, {"accuracy", vision::vit_accuracy(m, d)}};
}

std::vector<nlohmann::json> vit_explain(const std::string& model_dir, const std::string& data,
                                        const VitExplainOptions& a) {
  if (a.limit < 1) fail("--limit: must be >= 1 (got {})", a.limit);
  if (a.scale < 1 || a.scale > 32) fail("--scale: must be in 1..32 (got {})", a.scale);
  const Transformer m = vision::load_vit(model_dir);
  const ImageData d = vision::load_vit_data(m, data, a.data_dir.empty() ? shared_data_dir() : a.data_dir, a.limit);
  if (a.method == "smat" && a.smat_file.empty()) fail("--smat: method smat needs a learned explainer (salient smat train|study)");
  if (a.method != "smat" && !a.smat_file.empty()) fail("--smat: only for --method smat (got '{}')", a.method);
  const bool attention = a.method == "attention_mean" || a.method == "rollout";
  torch::Tensor scores;
  if (a.method == "smat") {
    // The learned head mix's distribution over [CLS] and the patches; the patches' part is drawn.
    Batch b;
    b.pixel_values = vision::pixel_values(m, d.images);
    b.attention_mask = torch::ones({d.size(), m.config().max_tokens()}, torch::kLong);
    torch::NoGradGuard no_grad;
    scores = smat::explain_with(smat::load_head_explainer(a.smat_file), m, b).slice(1, 1);
  } else {
    scores = attention ? vision::patch_attention_scores(m, d.images, a.method)
                       : vision::patch_gradient_scores(m, d.images, a.method, {}, a.steps);
  }
  scores = scores.to(torch::kDouble).contiguous();
  const torch::Tensor probs = torch::softmax(vision::vit_logits(m, d.images), -1);
  const ModelConfig& c = m.config();
  const int64_t side = c.image_size / c.patch_size;
  if (!a.png_dir.empty()) make_dirs(a.png_dir);
  std::vector<nlohmann::json> out;
  for (int64_t i = 0; i < d.size(); ++i) {
    const int64_t pred = probs[i].argmax().item<int64_t>();
    std::vector<double> s(scores[i].data_ptr<double>(), scores[i].data_ptr<double>() + scores.size(1));
    nlohmann::json grid = nlohmann::json::array();
    for (int64_t r = 0; r < side; ++r) grid.push_back(std::vector<double>(s.begin() + r * side, s.begin() + (r + 1) * side));
    nlohmann::json j = {{"index", i},
                        {"label", d.label_names[d.labels[i].item<int64_t>()]},
                        {"prediction", c.id2label[pred]},
                        {"probability", probs[i][pred].item<double>()},
                        {"method", a.method},
                        {"patch_size", c.patch_size},
                        {"patch_scores", grid}};
    if (a.method == "ig") j["steps"] = a.steps;
    if (!a.png_dir.empty()) {
      const torch::Tensor img = d.images[i].contiguous();
      const std::vector<float> pixels(img.data_ptr<float>(), img.data_ptr<float>() + img.numel());
      const std::string png = fmt::format("{:04d}.png", i);
      write_file_atomic(join_path(a.png_dir, png), vision::patch_heat_png(pixels, c.image_size, c.image_size, s,
                                                                          c.patch_size, a.scale));
      j["png"] = png;
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace salient
