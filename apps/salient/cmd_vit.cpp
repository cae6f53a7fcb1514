// Vision transformer subcommands: vit train | evaluate | explain (docs/vit.md), over the public
// salient/vision.h.
#include "commands.h"
#include "salient/vision.h"

namespace salient::cli {

namespace {

struct VitEvaluateArgs {
  std::string model, data = "fashion-mnist:test", data_dir, out;
  int64_t limit = 0;
};

struct VitExplainArgs {
  std::string model, data = "fashion-mnist:test", out;
  VitExplainOptions options;
};

void run_vit_train(const vision::VitTrainOptions& o) { std::cout << vit_train(o).dump() << "\n"; }

void run_vit_evaluate(const VitEvaluateArgs& a) {
  const nlohmann::json result = vit_evaluate(a.model, a.data, a.data_dir, a.limit);
  Output out(a.out);
  out.line(result);
  out.commit();
}

// One JSON line per image (prediction, probability, the patch scores as a grid) and, with --out, a
// PNG per image beside explanations.jsonl in the output directory.
void run_vit_explain(VitExplainArgs& a) {
  a.options.png_dir = a.out;
  const std::vector<nlohmann::json> images = vit_explain(a.model, a.data, a.options);
  Output lines(a.out.empty() ? "" : join_path(a.out, "explanations.jsonl"));
  for (const auto& j : images) lines.line(j);
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
  add_data_dir(train, to.data_dir);
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
  add_data_dir(evaluate, ea.data_dir);
  evaluate->add_option("--limit", ea.limit, "the first N images only (0 = all)");
  evaluate->add_option("--out,-o,--output", ea.out, "JSON output file (default stdout)");
  commands.push_back({evaluate, [] { run_vit_evaluate(ea); }});

  static VitExplainArgs xa;
  auto* explain = vit->add_subcommand("explain", "patch scores (attention or gradients), as JSON lines and PNG overlays");
  explain->add_option("--model", xa.model, "ViT model directory")->required();
  explain->add_option("--data", xa.data, "images (fashion-mnist:test, ...)");
  add_data_dir(explain, xa.options.data_dir);
  explain->add_option("--method", xa.options.method,
                      "attention_mean, rollout (attention), saliency, grad_x_input, ig (gradients w.r.t. patch embeddings "
                      "of the predicted class's probability; ig from the black image), smat (a learned head mix, --smat)");
  explain->add_option("--smat", xa.options.smat_file, "with --method smat: smat_explainer.json (or its directory) from salient smat train|study");
  explain->add_option("--steps", xa.options.steps, "ig: Gauss-Legendre points");
  explain->add_option("--limit", xa.options.limit, "the first N images");
  explain->add_option("--scale", xa.options.scale, "PNG pixels per image pixel");
  explain->add_option("--out,-o,--output", xa.out, "output directory (explanations.jsonl + one PNG per image); default: JSON lines on stdout");
  commands.push_back({explain, [] { run_vit_explain(xa); }});
}

}  // namespace salient::cli
