// Sufficient Subset Training subcommands: sst train | explain | evaluate (docs/sst.md).
#include <torch/torch.h>

#include "commands.h"
#include "dist/world.h"
#include "explain/explainer.h"
#include "sst/data.h"
#include "sst/evaluate.h"
#include "sst/render.h"
#include "sst/train.h"
#include "util/progress.h"
#include "util/runtime.h"

namespace salient::cli {

namespace {

// Options of the complement's fills that train and evaluate share.
void add_fill_options(CLI::App* cmd, sst::FillOptions& a, std::string& noise) {
  cmd->add_option("--noise", noise,
                  "probabilistic masking's fill: sax (the authors': images clamp(x + epsilon*U[0,1)), text any "
                  "vocabulary id) or domain (images U[0,1], text ordinary tokens)")
      ->capture_default_str();
  cmd->add_option("--epsilon", a.epsilon, "images: l-inf radius of robust masking's PGD and of the sax noise (paper: 0.12)");
  cmd->add_option("--pgd-step", a.step, "robust masking, images: PGD step size (paper: 0.01)");
  cmd->add_option("--pgd-steps", a.steps, "robust masking: PGD steps (images, paper: 10) or tokens flipped by HotFlip (text)");
}

struct TrainArgs {
  sst::SstTrainOptions o;
  std::string masking = "baseline", hidden, noise = "sax";
};

// SST's models, masking and searches run on the CPU only so far: a CUDA device is refused, never
// silently replaced (docs/gpu.md).
void require_cpu() {
  if (!default_device().is_cpu())
    fail("--device: sst runs on the CPU only for now (got '{}'; use --device cpu)", default_device().str());
}

void run_train(TrainArgs& a) {
  require_cpu();
  a.o.objective.kind = sst::parse_mask_kind(a.masking, "--masking");
  a.o.objective.fill.noise = sst::parse_noise_fill(a.noise, "--noise");
  if (!a.hidden.empty()) a.o.hidden = parse_int_list(a.hidden, "--hidden");
  if (a.o.data_dir.empty()) a.o.data_dir = shared_data_dir();
  sst::SstTrainResult r = sst::train_sst(a.o);
  const auto& best = r.history.at(r.best_epoch - 1);
  std::cout << nlohmann::json{{"out", a.o.output_dir}, {"best_epoch", r.best_epoch}, {"val_accuracy", best.val_accuracy},
                              {"val_faithfulness", best.val_faithfulness}, {"val_size", best.val_size},
                              {"train_seconds", r.train_seconds}}.dump()
            << "\n";
}

struct ExplainArgs {
  std::string model, input = "-", out = "-", data, data_dir, png_dir, scores = "subset";
  int64_t limit = 10;
  int max_length = 0;
};

void run_explain(const ExplainArgs& a) {
  require_cpu();
  if (a.model.empty()) fail("--model: required (an SST model directory)");
  if (a.scores != "subset" && a.scores != "selection") fail("--sst-scores: expected subset or selection, got '{}'", a.scores);
  if (a.limit < 1) fail("--limit: must be at least 1, got {}", a.limit);
  sst::LoadedSstModel loaded = sst::load_sst_model(a.model);
  Output out(a.out);
  if (loaded.model->modality() == "text") {
    if (!a.data.empty()) fail("--data: a text SST model explains the inputs of -i/--input (text or JSON lines)");
    if (!a.png_dir.empty()) fail("--png-dir: only image models draw PNG overlays");
    const Classifier& clf = sst::text_classifier(*loaded.model);
    auto explainer = make_explainer("sst");
    ExplainOptions o;
    o.params = {{"sst", a.model}, {"sst_scores", a.scores}};
    auto items = read_input_items(a.input);
    for (const auto& item : items) {
      const std::string where = fmt::format("{}:{}", a.input == "-" ? "<stdin>" : a.input, item.line_no);
      Encoding enc = item.text ? clf.encode(*item.text, item.text_pair, a.max_length)
                               : clf.encode_ids(item.input_ids, item.token_type_ids, where);
      std::vector<int64_t> target = predicted_classes(clf, {&enc});
      Explanation e = explainer->explain(clf, {&enc}, target, o)[0];
      const nlohmann::json id = item.fields.is_object() && item.fields.contains("id") ? item.fields["id"] : nlohmann::json();
      out.line(explanation_json(clf, enc, e, item.text, false, id));
    }
    out.commit();
    return;
  }
  if (a.data.empty()) fail("--data: an image SST model explains a dataset split, e.g. --data mnist:test");
  if (a.input != "-") fail("--input: image models read --data, not -i");
  const sst::SstData data =
      sst::load_sst_data(a.data, a.data_dir.empty() ? shared_data_dir() : a.data_dir, *loaded.model, 0, a.limit);
  if (!a.png_dir.empty()) make_dirs(a.png_dir);
  torch::NoGradGuard ng;
  for (int64_t i = 0; i < data.size(); ++i) {
    sst::FeatureBatch x = data.batch(std::vector<int64_t>{i});
    sst::SstOutput f = loaded.model->forward(x);
    const torch::Tensor probs = torch::softmax(f.logits[0], 0);
    const int64_t target = probs.argmax().item<int64_t>();
    const torch::Tensor subset = sst::subset_of(f.selection, x.features, loaded.tau)[0];
    const torch::Tensor s = f.selection[0].to(torch::kFloat64).contiguous();
    std::vector<double> sel(s.data_ptr<double>(), s.data_ptr<double>() + s.numel());
    std::vector<uint8_t> flags(subset.size(0));
    std::vector<double> scores(subset.size(0));
    for (int64_t j = 0; j < subset.size(0); ++j) {
      flags[j] = subset[j].item<bool>();
      scores[j] = a.scores == "subset" ? flags[j] : sel[j];
    }
    nlohmann::json j = {{"method", "sst"}, {"id", fmt::format("{}#{}", a.data, i)}, {"target", target},
                        {"target_label", loaded.model->label_names().at(target)}, {"probability", probs[target].item<double>()},
                        {"gold_label", data.label_names.at(data.labels[i].item<int64_t>())},
                        {"image_shape", data.image_shape}, {"pixel_scores", scores},
                        {"extras", {{"tau", loaded.tau}, {"selection", sel}, {"subset_size", subset.sum().item<int64_t>()},
                                    {"features", subset.size(0)}}}};
    if (!a.png_dir.empty()) {
      torch::Tensor px = data.images[i].contiguous();
      std::vector<float> pixels(px.data_ptr<float>(), px.data_ptr<float>() + px.numel());
      const std::string path = join_path(a.png_dir, fmt::format("{}.png", i));
      write_file_atomic(path, sst::subset_overlay_png(pixels, data.image_shape[1], data.image_shape[2], flags));
      j["png"] = path;
    }
    out.line(j);
  }
  out.commit();
}

struct EvaluateArgs {
  sst::SstEvalOptions o;
  std::string methods = "sst,sis,anchors,gradient", noise = "sax";
};

void run_evaluate(EvaluateArgs& a) {
  require_cpu();
  a.o.methods = split_list(a.methods);
  a.o.fill.noise = sst::parse_noise_fill(a.noise, "--noise");
  if (a.o.data_dir.empty()) a.o.data_dir = shared_data_dir();
  std::vector<sst::SstEvalRow> rows = sst::evaluate_sst(a.o);
  if (dist::is_root()) std::cout << sst::sst_table_markdown(rows);  // under mpirun: rank 0's table
}

}  // namespace

void add_sst_commands(CLI::App& app, std::vector<Command>& commands) {
  CLI::App* sst = app.add_subcommand("sst", "Sufficient Subset Training (Bassan et al. 2025): train | explain | evaluate");
  sst->require_subcommand(1);

  auto ta = std::make_shared<TrainArgs>();
  CLI::App* train = sst->add_subcommand("train", "train a dual-head model: prediction + sufficient subset (or a standard one: --masking none)");
  train->add_option("--train", ta->o.train_data, "training data: mnist:train, fashion-mnist:train, sst2:train, eraser:train, a file")->required();
  train->add_option("--dev", ta->o.dev_data, "validation data (model selection: lowest validation loss)")->required();
  train->add_option("-o,--out", ta->o.output_dir, "output directory (best epoch; last/ holds the state for --resume)")->required();
  train->add_option("--data-dir", ta->o.data_dir, "shared data directory (default: ../shared/data or $SALIENT_SHARED/data)");
  train->add_option("--arch", ta->o.arch, "mlp | resnet (images) | transformer (text)");
  train->add_option("--hidden", ta->hidden, "image models: mlp layer sizes (default 128,64) or resnet stage widths (16,32,32)");
  train->add_option("--init", ta->o.init_model, "start from a trained model: a classifier directory (text) or an SST/standard image model directory");
  train->add_option("--vocab", ta->o.vocab, "text from scratch: vocab.txt, tokenizer.json or a tokenizer directory");
  train->add_option("--hidden-size", ta->o.hidden_size, "text from scratch: hidden size");
  train->add_option("--layers", ta->o.num_layers, "text from scratch: layers");
  train->add_option("--heads", ta->o.num_heads, "text from scratch: attention heads");
  train->add_option("--intermediate-size", ta->o.intermediate_size, "text from scratch: feed-forward size");
  train->add_option("--max-length", ta->o.max_length, "text: tokens per example");
  train->add_option("--dropout", ta->o.dropout, "text from scratch: dropout");
  train->add_option("--masking", ta->masking, "none (standard training) | baseline | probabilistic | robust");
  train->add_option("--lambda", ta->o.objective.lambda, "weight of the faithfulness term (reference code: 1)");
  train->add_option("--xi", ta->o.objective.xi, "weight of the cardinality term mean(s)");
  train->add_option("--tau", ta->o.objective.tau, "subset threshold on s");
  train->add_flag("--straight-through", ta->o.objective.straight_through,
                  "the faithfulness term also trains the explanation head (keep = hard + s - sg(s))");
  add_fill_options(train, ta->o.objective.fill, ta->noise);
  train->add_option("--epochs", ta->o.epochs, "maximum epochs");
  train->add_option("--patience", ta->o.patience, "stop after this many epochs without a lower validation loss");
  train->add_option("--batch-size", ta->o.batch_size, "examples per step");
  train->add_option("--lr", ta->o.lr, "AdamW learning rate");
  train->add_option("--weight-decay", ta->o.weight_decay, "AdamW weight decay");
  train->add_option("--limit", ta->o.limit, "use the first N training examples (0 = all)");
  train->add_option("--seed", ta->o.seed, "seed of initialisation, order, dropout and fills");
  train->add_option("--max-minutes", ta->o.max_minutes, "stop after the epoch that passes this many minutes (0 = none)");
  train->add_flag("--resume", ta->o.resume, "continue from OUT/last");
  commands.push_back({train, [ta] { run_train(*ta); }});

  auto ea = std::make_shared<ExplainArgs>();
  CLI::App* explain = sst->add_subcommand("explain", "the subset an SST model outputs with each prediction (explanation schema for text)");
  explain->add_option("--model", ea->model, "SST model directory")->required();
  explain->add_option("-i,--input", ea->input, "text models: text or JSON lines (default stdin)");
  explain->add_option("--data", ea->data, "image models: a split, e.g. mnist:test");
  explain->add_option("--limit", ea->limit, "image models: the first N images");
  explain->add_option("--data-dir", ea->data_dir, "shared data directory");
  explain->add_option("--png-dir", ea->png_dir, "image models: write an overlay PNG per image here");
  explain->add_option("--sst-scores", ea->scores, "subset (0/1 per feature) | selection (s)");
  explain->add_option("--max-length", ea->max_length, "text: truncate inputs to N tokens");
  explain->add_option("-o,--out", ea->out, "output JSON lines (default stdout)");
  commands.push_back({explain, [ea] { run_explain(*ea); }});

  auto va = std::make_shared<EvaluateArgs>();
  CLI::App* evaluate = sst->add_subcommand("evaluate", "SST vs post-hoc sufficient subsets: accuracy, size, time, time-outs, faithfulness (3 kinds)");
  evaluate->add_option("--model", va->o.sst_model, "SST model directory (method sst)");
  evaluate->add_option("--standard", va->o.standard_model, "standard model directory (methods sis, anchors, gradient)");
  evaluate->add_option("--data", va->o.data, "evaluation split, e.g. mnist:test, sst2:dev")->required();
  evaluate->add_option("--data-dir", va->o.data_dir, "shared data directory");
  evaluate->add_option("-o,--out", va->o.out_dir, "output directory (table.md/csv/json, report.html; resumable)")->required();
  evaluate->add_option("--methods", va->methods, "comma list of sst, sis, anchors, gradient");
  evaluate->add_option("--limit", va->o.limit, "examples explained (the first N of the split)");
  evaluate->add_option("--accuracy-limit", va->o.accuracy_limit, "examples for accuracy (0 = the whole split)");
  evaluate->add_option("--time-limit", va->o.search.time_limit, "post-hoc searches: seconds per example before a time-out");
  evaluate->add_option("--samples", va->o.samples, "probabilistic faithfulness: random fills per subset");
  evaluate->add_option("--ranking", va->o.search.ranking, "gradient search: ig | gradient");
  evaluate->add_option("--ig-steps", va->o.search.ig_steps, "gradient search: IG points");
  evaluate->add_option("--precision", va->o.search.precision, "anchors: precision threshold");
  evaluate->add_option("--beam", va->o.search.beam, "anchors: beam width");
  evaluate->add_option("--sis-criterion", va->o.search.sis_criterion,
                       "sis: argmax (the baseline completion keeps the prediction) or threshold (Carter et al.: the "
                       "class probability stays >= --sis-threshold; the disjoint SIS collection is recorded)")
      ->capture_default_str();
  evaluate->add_option("--sis-threshold", va->o.search.sis_threshold, "sis --sis-criterion threshold: the probability kept")
      ->capture_default_str();
  evaluate->add_option("--max-length", va->o.max_length, "text: tokens per example");
  evaluate->add_option("--views", va->o.views, "examples drawn in report.html");
  evaluate->add_option("--seed", va->o.seed, "seed of the fills, attacks and searches");
  add_fill_options(evaluate, va->o.fill, va->noise);
  commands.push_back({evaluate, [va] { run_evaluate(*va); }});
}

}  // namespace salient::cli
