#include "vision/vit.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "explain/methods.h"
#include "model/checkpoint.h"
#include "train/trainer.h"
#include "util/error.h"
#include "util/atomic_file.h"
#include "util/io.h"
#include "util/progress.h"
#include "util/quadrature.h"

namespace salient::vision {
namespace {

// ViTImageProcessor's normalisation, written to preprocessor_config.json and applied by pixel_values.
constexpr double kImageMean = 0.5, kImageStd = 0.5;

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

void check_options(const VitTrainOptions& o) {
  if (o.output_dir.empty()) fail("--out: an output directory is required");
  const std::pair<const char*, int64_t> positive[] = {{"--patch-size", o.patch_size}, {"--hidden", o.hidden_size},
                                                      {"--layers", o.num_layers},     {"--heads", o.num_heads},
                                                      {"--intermediate", o.intermediate_size},
                                                      {"--batch-size", o.batch_size}};
  for (const auto& [name, v] : positive)
    if (v <= 0) fail("{}: must be positive (got {})", name, v);
  if (o.hidden_size % o.num_heads != 0) fail("--hidden: {} is not divisible by --heads {}", o.hidden_size, o.num_heads);
  if (o.epochs <= 0) fail("--epochs: must be positive (got {})", o.epochs);
  if (!(o.lr > 0 && std::isfinite(o.lr))) fail("--lr: must be positive (got {})", o.lr);
  if (!(o.weight_decay >= 0)) fail("--weight-decay: must be >= 0 (got {})", o.weight_decay);
  require_fraction_below_one("--warmup", o.warmup_ratio);
  if (!(o.clip_norm >= 0)) fail("--clip: must be >= 0 (got {})", o.clip_norm);
  require_fraction_below_one("--dropout", o.dropout);
  require_fraction_below_one("--attention-dropout", o.attention_dropout);
  if (!(o.max_minutes >= 0)) fail("--max-minutes: must be >= 0 (got {})", o.max_minutes);
  if (o.max_train_examples < 0) fail("--max-train-examples: must be >= 0 (got {})", o.max_train_examples);
}

ModelConfig vit_config(const VitTrainOptions& o, const ImageData& data) {
  const std::vector<int64_t>& shape = data.image_shape;  // C, H, W
  if (shape.size() != 3 || shape[1] != shape[2]) fail("--data: '{}': a ViT needs square images", data.spec);
  if (shape[1] % o.patch_size != 0)
    fail("--patch-size: {} does not divide the {}-pixel images of '{}'", o.patch_size, shape[1], data.spec);
  nlohmann::json id2label = nlohmann::json::object();
  for (size_t i = 0; i < data.label_names.size(); ++i) id2label[std::to_string(i)] = data.label_names[i];
  nlohmann::json cfg = {{"model_type", "vit"}, {"architectures", {"ViTForImageClassification"}},
                        {"image_size", shape[1]}, {"patch_size", o.patch_size}, {"num_channels", shape[0]},
                        {"hidden_size", o.hidden_size}, {"num_hidden_layers", o.num_layers},
                        {"num_attention_heads", o.num_heads}, {"intermediate_size", o.intermediate_size},
                        {"hidden_act", "gelu"}, {"hidden_dropout_prob", o.dropout},
                        {"attention_probs_dropout_prob", o.attention_dropout}, {"layer_norm_eps", 1e-12},
                        {"qkv_bias", true}, {"id2label", id2label}};
  return ModelConfig::from_json(cfg, "--data");
}

void save_vit(const Transformer& m, const std::string& dir) {
  save_model(m, dir);
  const ModelConfig& c = m.config();
  nlohmann::json pre = {{"image_processor_type", "ViTImageProcessor"},
                        {"do_resize", false},
                        {"size", {{"height", c.image_size}, {"width", c.image_size}}},
                        {"do_rescale", true},
                        {"rescale_factor", 1.0 / 255.0},
                        {"do_normalize", true},
                        {"image_mean", std::vector<double>(c.num_channels, kImageMean)},
                        {"image_std", std::vector<double>(c.num_channels, kImageStd)}};
  write_file_atomic(join_path(dir, "preprocessor_config.json"), pre.dump(2) + "\n");
}

// The settings a resumed run must share with the interrupted one.
nlohmann::json settings_json(const VitTrainOptions& o) {
  return {{"train_data", o.train_data}, {"dev_data", o.dev_data}, {"patch_size", o.patch_size},
          {"hidden_size", o.hidden_size}, {"num_layers", o.num_layers}, {"num_heads", o.num_heads},
          {"intermediate_size", o.intermediate_size}, {"dropout", o.dropout},
          {"attention_dropout", o.attention_dropout}, {"epochs", o.epochs}, {"batch_size", o.batch_size},
          {"lr", o.lr}, {"weight_decay", o.weight_decay}, {"warmup_ratio", o.warmup_ratio},
          {"clip_norm", o.clip_norm}, {"max_train_examples", o.max_train_examples}, {"seed", o.seed}};
}

nlohmann::json history_json(const std::vector<VitEpoch>& history) {
  nlohmann::json h = nlohmann::json::array();
  for (const auto& e : history)
    h.push_back({{"epoch", e.epoch}, {"train_loss", e.train_loss}, {"dev_accuracy", e.dev_accuracy}, {"seconds", e.seconds}});
  return h;
}

}  // namespace

Transformer load_vit(const std::string& dir) {
  Transformer m = load_model(dir);
  if (!m.config().is_vision())
    fail("{}: a {} model, not a vision transformer (model_type vit)", dir, m.config().model_type);
  return m;
}

ImageData load_vit_data(const Transformer& model, const std::string& spec, const std::string& data_dir, int64_t limit) {
  ImageData d = load_image_dataset(spec, data_dir, limit);
  const ModelConfig& c = model.config();
  const std::vector<int64_t> want = {c.num_channels, c.image_size, c.image_size};
  if (d.image_shape != want)
    fail("--data: '{}' has {}x{}x{} images, the model takes {}x{}x{}", spec, d.image_shape[0], d.image_shape[1],
         d.image_shape[2], want[0], want[1], want[2]);
  if (static_cast<int64_t>(d.label_names.size()) != c.num_labels)
    fail("--data: '{}' has {} classes, the model {}", spec, d.label_names.size(), c.num_labels);
  return d;
}

torch::Tensor pixel_values(const Transformer& model, const torch::Tensor& images) {
  const ModelConfig& c = model.config();
  return ((images.to(model.device(), model.dtype()) - kImageMean) / kImageStd)
      .view({images.size(0), c.num_channels, c.image_size, c.image_size});
}

torch::Tensor vit_logits(const Transformer& model, const torch::Tensor& images, int64_t batch_size) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  for (int64_t s = 0; s < images.size(0); s += batch_size) {
    ForwardRequest req;
    req.pixel_values = pixel_values(model, images.slice(0, s, std::min(images.size(0), s + batch_size)));
    parts.push_back(model.forward(req).logits);
  }
  return torch::cat(parts).cpu();
}

double vit_accuracy(const Transformer& model, const ImageData& data, int64_t batch_size) {
  if (data.size() == 0) fail("--data: '{}' is empty", data.spec);
  torch::Tensor pred = vit_logits(model, data.images, batch_size).argmax(-1);
  return pred.eq(data.labels).to(torch::kDouble).mean().item<double>();
}

torch::Tensor patch_attention_scores(const Transformer& model, const torch::Tensor& images, const std::string& method) {
  if (method != "attention_mean" && method != "rollout")
    fail("--method: '{}' is not an image attention method (attention_mean, rollout)", method);
  torch::NoGradGuard no_grad;
  ForwardRequest req;
  req.pixel_values = pixel_values(model, images);
  req.want_attentions = true;
  ForwardResult r = model.forward(req);
  torch::Tensor scores;
  if (method == "attention_mean") {
    // No padding in an image: every query row is real.
    scores = torch::zeros({images.size(0), r.attentions[0].size(-1)}, r.attentions[0].options());
    for (const auto& a : r.attentions) scores += a.mean(1).mean(1);
    scores /= double(r.attentions.size());
  } else {
    std::vector<torch::Tensor> maps;
    for (const auto& a : r.attentions) maps.push_back(a.mean(1));
    scores = explain::rollout(maps, 0);
  }
  return scores.slice(1, 1).cpu();  // patches only
}

torch::Tensor patch_gradient_scores(const Transformer& model, const torch::Tensor& images, const std::string& method,
                                    const std::vector<int64_t>& targets, int64_t steps, bool of_logit) {
  if (method != "saliency" && method != "grad_x_input" && method != "ig")
    fail("--method: '{}' is not an image gradient method (saliency, grad_x_input, ig)", method);
  if (method == "ig" && steps < 2) fail("--steps: need at least 2, got {}", steps);
  const int64_t N = images.size(0);
  torch::Tensor target;
  if (targets.empty()) {
    target = vit_logits(model, images).argmax(-1);
  } else {
    if (static_cast<int64_t>(targets.size()) != N) fail("targets: {} for {} images", targets.size(), N);
    for (int64_t t : targets)
      if (t < 0 || t >= model.config().num_labels) fail("targets: class {} out of range (the model has {})", t, model.config().num_labels);
    target = torch::tensor(targets, torch::kLong);
  }
  target = target.to(model.device());
  torch::Tensor embeds;
  {
    torch::NoGradGuard no_grad;
    embeds = model.patch_embeddings(pixel_values(model, images));
  }
  // F and ∂F/∂e at patch embeddings e [N, P, Hd].
  auto output_and_grad = [&](const torch::Tensor& e) {
    torch::Tensor leaf = e.detach().requires_grad_(true);
    ForwardRequest req;
    req.inputs_embeds = leaf;
    torch::Tensor logits = model.forward(req).logits;
    torch::Tensor f = (of_logit ? logits : torch::softmax(logits, -1)).gather(1, target.view({-1, 1})).squeeze(1);
    return torch::autograd::grad({f.sum()}, {leaf})[0];
  };
  torch::Tensor scores;
  if (method == "saliency") {
    scores = output_and_grad(embeds).norm(2, -1);
  } else if (method == "grad_x_input") {
    scores = (output_and_grad(embeds) * embeds).sum(-1);
  } else {
    torch::Tensor base;
    {
      torch::NoGradGuard no_grad;
      base = model.patch_embeddings(pixel_values(model, torch::zeros_like(images)));
    }
    const Quadrature q = make_quadrature(Rule::GaussLegendre, steps, QuadratureConvention::Exact);
    torch::Tensor total = torch::zeros_like(embeds);
    for (size_t k = 0; k < q.alphas.size(); ++k)
      total += q.weights[k] * output_and_grad(base + q.alphas[k] * (embeds - base));
    scores = ((embeds - base) * total).sum(-1);
  }
  return scores.detach().cpu();
}

VitTrainResult train_vit(const VitTrainOptions& o) {
  check_options(o);
  const ImageData train = load_image_dataset(o.train_data, o.data_dir);
  const ImageData dev = load_image_dataset(o.dev_data, o.data_dir);
  if (train.label_names != dev.label_names)
    fail("--dev: '{}' has other classes than --data '{}'", o.dev_data, o.train_data);
  const std::string ckpt = join_path(o.output_dir, "checkpoint"), state_path = join_path(ckpt, "state.json");
  const nlohmann::json settings = settings_json(o);
  if (o.resume) {
    recover_dir(ckpt);
    remove_stale_temporaries(o.output_dir);  // files a killed run was writing
  }
  const bool resuming = o.resume && file_exists(state_path);

  Transformer model;
  VitTrainResult result;
  int first_epoch = 0;
  double trained_seconds = 0;
  nlohmann::json state;
  if (resuming) {
    state = parse_json_file(state_path);
    if (state.at("settings") != settings)
      fail("--resume: '{}' was started with other settings ({})", o.output_dir, differing_keys(state.at("settings"), settings));
    model = load_vit(ckpt);
    first_epoch = state.at("epochs_done").get<int>();
    result.best_epoch = state.at("best_epoch").get<int>();
    result.best_accuracy = state.at("best_accuracy").get<double>();
    trained_seconds = state.at("train_seconds").get<double>();
    for (const auto& h : state.at("history"))
      result.history.push_back({h.at("epoch").get<int>(), h.at("train_loss").get<double>(),
                                h.at("dev_accuracy").get<double>(), h.at("seconds").get<double>()});
  } else {
    if (dev.image_shape != train.image_shape) fail("--dev: '{}' has other image sizes than --data '{}'", o.dev_data, o.train_data);
    model = Transformer(vit_config(o, train), o.seed);
  }
  model.train();
  model.set_requires_grad(true);

  std::vector<int64_t> rows(train.size());
  std::iota(rows.begin(), rows.end(), 0);
  if (o.max_train_examples > 0 && o.max_train_examples < train.size()) {
    std::mt19937_64 pick(o.seed ^ 0x5eed);
    std::shuffle(rows.begin(), rows.end(), pick);
    rows.resize(o.max_train_examples);
    std::sort(rows.begin(), rows.end());
  }
  const int64_t n = static_cast<int64_t>(rows.size());
  const int64_t steps_per_epoch = (n + o.batch_size - 1) / o.batch_size, total = steps_per_epoch * o.epochs;
  const int64_t warmup = static_cast<int64_t>(std::llround(o.warmup_ratio * double(total)));
  std::vector<std::pair<std::string, torch::Tensor>> named;
  for (const auto& [name, t] : model.weights()) named.emplace_back(name, t);
  auto optimizer = make_adamw(named, o.lr, o.weight_decay);
  if (resuming) load_optimizer(*optimizer, ckpt, model.device());

  const auto start = std::chrono::steady_clock::now();
  for (int epoch = first_epoch; epoch < o.epochs; ++epoch) {
    if (o.max_minutes > 0 && trained_seconds + seconds_since(start) > o.max_minutes * 60) break;
    const auto epoch_start = std::chrono::steady_clock::now();
    std::vector<int64_t> order = rows;
    std::mt19937_64 shuffle(o.seed * 1000003ULL + static_cast<uint64_t>(epoch));
    std::shuffle(order.begin(), order.end(), shuffle);
    torch::manual_seed(o.seed * 7919ULL + static_cast<uint64_t>(epoch));  // dropout
    model.train();
    double loss_sum = 0;
    Progress bar(fmt::format("vit epoch {}/{}", epoch + 1, o.epochs), steps_per_epoch, "step");
    for (int64_t s = 0; s < steps_per_epoch; ++s) {
      const int64_t step = int64_t(epoch) * steps_per_epoch + s;
      set_learning_rate(*optimizer, o.lr * warmup_linear_decay(step, total, warmup));
      const int64_t b = s * o.batch_size, e = std::min(n, b + o.batch_size);
      torch::Tensor idx = torch::tensor(std::vector<int64_t>(order.begin() + b, order.begin() + e), torch::kLong);
      ForwardRequest req;
      req.pixel_values = pixel_values(model, train.images.index_select(0, idx));
      torch::Tensor loss = torch::cross_entropy_loss(model.forward(req).logits,
                                                     train.labels.index_select(0, idx).to(model.device()));
      optimizer->zero_grad();
      loss.backward();
      if (o.clip_norm > 0) torch::nn::utils::clip_grad_norm_(model.parameters(), o.clip_norm);
      optimizer->step();
      loss_sum += loss.item<double>() * double(e - b);
      bar.update(1, fmt::format("loss {:.4f}", loss_sum / double(e)));
    }
    bar.finish();
    model.eval();
    VitEpoch rec{epoch + 1, loss_sum / double(n), vit_accuracy(model, dev), seconds_since(epoch_start)};
    result.history.push_back(rec);
    if (rec.dev_accuracy > result.best_accuracy || result.best_epoch == 0) {
      result.best_accuracy = rec.dev_accuracy;
      result.best_epoch = rec.epoch;
      save_vit(model, o.output_dir);
    }
    // The resumable state last, after the best model, so a crash never loses a better model.
    const double elapsed = trained_seconds + seconds_since(start);
    StagedDir staged(ckpt);  // the epoch's weights, optimizer and state, swapped in whole
    save_vit(model, staged.path());
    save_optimizer(*optimizer, staged.path());
    nlohmann::json st = {{"settings", settings}, {"epochs_done", epoch + 1}, {"best_epoch", result.best_epoch},
                         {"best_accuracy", result.best_accuracy}, {"train_seconds", elapsed},
                         {"history", history_json(result.history)}};
    write_file_atomic(join_path(staged.path(), "state.json"), st.dump(2) + "\n");
    staged.commit();
    nlohmann::json summary = {{"settings", settings}, {"best_epoch", result.best_epoch},
                              {"best_dev_accuracy", result.best_accuracy}, {"train_seconds", elapsed},
                              {"parameters", model.parameter_count()}, {"history", history_json(result.history)},
                              {"complete", epoch + 1 == o.epochs}};
    write_file_atomic(join_path(o.output_dir, "training.json"), summary.dump(2) + "\n");
    if (o.stop_after_epoch > 0 && epoch + 1 >= o.stop_after_epoch) break;
  }
  result.train_seconds = trained_seconds + seconds_since(start);
  return result;
}

}  // namespace salient::vision
