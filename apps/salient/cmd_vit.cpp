// Vision transformer subcommands: vit train | evaluate | explain (docs/vit.md).
#include <torch/torch.h>

#include "commands.h"
#include "smat/head_explainer.h"
#include "vision/render.h"
#include "vision/vit.h"

namespace salient::cli {

namespace {

struct VitEvaluateArgs {
  std::string model, data = "fashion-mnist:test", data_dir, out;
  int64_t limit = 0;
};

struct VitExplainArgs {
  std::string model, data = "fashion-mnist:test", data_dir, out, method = "attention_mean", smat_file;
  int64_t limit = 8, steps = 32;
  int scale = 8;
};

void run_vit_train(vision::VitTrainOptions& o) {
  if (o.data_dir.empty()) o.data_dir = shared_data_dir();
  const vision::VitTrainResult r = vision::train_vit(o);
  nlohmann::json j = {{"best_epoch", r.best_epoch}, {"best_dev_accuracy", r.best_accuracy},
                      {"train_seconds", r.train_seconds}, {"out", o.output_dir}};
  std::cout << j.dump() << "\n";
}

void run_vit_evaluate(VitEvaluateArgs& a) {
  if (a.data_dir.empty()) a.data_dir = shared_data_dir();
  if (a.limit < 0) fail("--limit: must be >= 0 (got {})", a.limit);
  const Transformer m = vision::load_vit(a.model);
  const ImageData d = vision::load_vit_data(m, a.data, a.data_dir, a.limit);
  Output out(a.out);
  out.line({{"model", a.model}, {"data", a.data}, {"examples", d.size()}, {"accuracy", vision::vit_accuracy(m, d)}});
  out.commit();
}

// One JSON line per image (prediction, probability, the patch scores as a grid) and, with --out, a
// PNG per image beside explanations.jsonl in the output directory.
void run_vit_explain(VitExplainArgs& a) {
  if (a.data_dir.empty()) a.data_dir = shared_data_dir();
  if (a.limit < 1) fail("--limit: must be >= 1 (got {})", a.limit);
  if (a.scale < 1 || a.scale > 32) fail("--scale: must be in 1..32 (got {})", a.scale);
  const Transformer m = vision::load_vit(a.model);
  const ImageData d = vision::load_vit_data(m, a.data, a.data_dir, a.limit);
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
  if (!a.out.empty()) make_dirs(a.out);
  Output lines(a.out.empty() ? "" : join_path(a.out, "explanations.jsonl"));
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
    if (!a.out.empty()) {
      const torch::Tensor img = d.images[i].contiguous();
      const std::vector<float> pixels(img.data_ptr<float>(), img.data_ptr<float>() + img.numel());
      const std::string png = fmt::format("{:04d}.png", i);
      write_file_atomic(join_path(a.out, png), vision::patch_heat_png(pixels, c.image_size, c.image_size, s,
                                                                      c.patch_size, a.scale));
      j["png"] = png;
    }
    lines.line(j);
  }
  lines.commit();
}

}  // namespace

void add_vit_commands(CLI::App& app, std::vector<Command>& commands) {
  auto* vit = app.add_subcommand("vit", "vision transformer: train on Fashion-MNIST/MNIST, evaluate, explain patches");
  vit->require_subcommand(1);

  static vision::VitTrainOptions to;
  auto* train = vit->add_subcommand("train", "train a ViT from scratch (HF ViTForImageClassification layout)");
  train->add_option("--data", to.train_data, "training images (fashion-mnist:train, mnist:train)");
  train->add_option("--dev", to.dev_data, "model selection images (fashion-mnist:val, mnist:val)");
  train->add_option("--out,-o,--output", to.output_dir, "model directory (checkpoint/ inside for --resume)")->required();
  train->add_option("--data-dir", to.data_dir, "shared datasets (MNIST); default ../shared/data or $SALIENT_SHARED/data");
  train->add_option("--patch-size", to.patch_size, "pixels per patch side (must divide the image side)");
  train->add_option("--hidden", to.hidden_size, "hidden size");
  train->add_option("--layers", to.num_layers, "encoder layers");
  train->add_option("--heads", to.num_heads, "attention heads");
  train->add_option("--intermediate", to.intermediate_size, "feed-forward size");
  train->add_option("--dropout", to.dropout, "hidden dropout");
  train->add_option("--attention-dropout", to.attention_dropout, "attention dropout");
  train->add_option("--epochs", to.epochs, "epochs");
  train->add_option("--batch-size", to.batch_size, "images per step");
  train->add_option("--lr", to.lr, "peak learning rate (AdamW, linear warmup then decay)");
  train->add_option("--weight-decay", to.weight_decay, "AdamW weight decay (not on biases and LayerNorm)");
  train->add_option("--warmup", to.warmup_ratio, "share of the steps spent warming up");
  train->add_option("--clip", to.clip_norm, "gradient norm clip (0 = off)");
  train->add_option("--max-minutes", to.max_minutes, "stop at the next epoch boundary after this much time (0 = no limit)");
  train->add_option("--max-train-examples", to.max_train_examples, "train on the first N images after a seeded shuffle (0 = all)");
  train->add_option("--seed", to.seed, "seed of initialisation, batch order and dropout");
  train->add_flag("--resume", to.resume, "continue from OUT/checkpoint (the same steps as an uninterrupted run)");
  train->add_option("--stop-after-epoch", to.stop_after_epoch, "end this invocation after that epoch (--resume continues)");
  commands.push_back({train, [] { run_vit_train(to); }});

  static VitEvaluateArgs ea;
  auto* evaluate = vit->add_subcommand("evaluate", "accuracy of a ViT on an image split");
  evaluate->add_option("--model", ea.model, "ViT model directory")->required();
  evaluate->add_option("--data", ea.data, "images (fashion-mnist:test, mnist:test, ...)");
  evaluate->add_option("--data-dir", ea.data_dir, "shared datasets (MNIST)");
  evaluate->add_option("--limit", ea.limit, "the first N images only (0 = all)");
  evaluate->add_option("--out,-o,--output", ea.out, "JSON output file (default stdout)");
  commands.push_back({evaluate, [] { run_vit_evaluate(ea); }});

  static VitExplainArgs xa;
  auto* explain = vit->add_subcommand("explain", "patch scores (attention or gradients), as JSON lines and PNG overlays");
  explain->add_option("--model", xa.model, "ViT model directory")->required();
  explain->add_option("--data", xa.data, "images (fashion-mnist:test, ...)");
  explain->add_option("--data-dir", xa.data_dir, "shared datasets (MNIST)");
  explain->add_option("--method", xa.method,
                      "attention_mean, rollout (attention), saliency, grad_x_input, ig (gradients w.r.t. patch embeddings "
                      "of the predicted class's probability; ig from the black image), smat (a learned head mix, --smat)");
  explain->add_option("--smat", xa.smat_file, "with --method smat: smat_explainer.json (or its directory) from salient smat train|study");
  explain->add_option("--steps", xa.steps, "ig: Gauss-Legendre points");
  explain->add_option("--limit", xa.limit, "the first N images");
  explain->add_option("--scale", xa.scale, "PNG pixels per image pixel");
  explain->add_option("--out,-o,--output", xa.out, "output directory (explanations.jsonl + one PNG per image); default: JSON lines on stdout");
  commands.push_back({explain, [] { run_vit_explain(xa); }});
}

}  // namespace salient::cli
