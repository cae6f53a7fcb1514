// Sufficient Subset Training subcommands: sst train | explain | evaluate (docs/sst.md), over
// salient/studies.h: each flag given becomes the option of the same name; the library holds the
// defaults.
#include "commands.h"
#include "salient/distributed.h"
#include "salient/runtime.h"
#include "salient/studies.h"

namespace salient::cli {

namespace {

using nlohmann::json;

// Options of the complement's fills that train and evaluate share.
void add_fill_options(CLI::App* cmd, json& o) {
  add_named_option<std::string>(cmd, "--noise", o, "noise",
                                "probabilistic masking's fill: sax (the authors': images clamp(x + epsilon*U[0,1)), text any "
                                "vocabulary id; default) or domain (images U[0,1], text ordinary tokens)");
  add_named_option<double>(cmd, "--epsilon", o, "epsilon", "images: l-inf radius of robust masking's PGD and of the sax noise (paper: 0.12)");
  add_named_option<double>(cmd, "--pgd-step", o, "pgd_step", "robust masking, images: PGD step size (paper: 0.01)");
  add_named_option<int>(cmd, "--pgd-steps", o, "pgd_steps", "robust masking: PGD steps (images, paper: 10) or tokens flipped by HotFlip (text)");
}

// SST's models, masking and searches run on the CPU only so far: a CUDA device is refused, never
// silently replaced (docs/gpu.md).
void require_cpu() {
  if (!device_is_cpu()) fail("--device: sst runs on the CPU only for now (got '{}'; use --device cpu)", device_name());
}

struct TrainArgs {
  std::string train, dev, out;
  json options = json::object();
};

void run_train(const TrainArgs& a) {
  require_cpu();
  const json r = sst_train(a.train, a.dev, a.out, a.options);
  const json& best = r["history"].at(r["best_epoch"].get<size_t>() - 1);
  std::cout << json{{"out", a.out}, {"best_epoch", r["best_epoch"]}, {"val_accuracy", best["val_accuracy"]},
                    {"val_faithfulness", best["val_faithfulness"]}, {"val_size", best["val_size"]},
                    {"train_seconds", r["train_seconds"]}}.dump()
            << "\n";
}

struct ExplainArgs {
  std::string model, out = "-";
  SstExplainOptions options;
};

struct EvaluateArgs {
  std::string data, out;
  json options = json::object();
};

void run_evaluate(const EvaluateArgs& a) {
  require_cpu();
  std::string table;
  sst_evaluate(a.data, a.out, a.options, &table);
  if (dist::is_root()) std::cout << table;  // under mpirun: rank 0's table
}

}  // namespace

void add_sst_commands(CLI::App& app, std::vector<Command>& commands) {
  CLI::App* sst = app.add_subcommand("sst", "Sufficient Subset Training (Bassan et al. 2025): train | explain | evaluate");
  sst->require_subcommand(1);

  auto ta = std::make_shared<TrainArgs>();
  json& t = ta->options;
  CLI::App* train = sst->add_subcommand("train", "train a dual-head model: prediction + sufficient subset (or a standard one: --masking none)");
  train->add_option("--train", ta->train, "training data: mnist:train, fashion-mnist:train, sst2:train, eraser:train, a file")->required();
  train->add_option("--dev", ta->dev, "validation data (model selection: lowest validation loss)")->required();
  train->add_option("-o,--out", ta->out, "output directory (best epoch; last/ holds the state for --resume)")->required();
  add_data_dir(train, t);
  add_named_option<std::string>(train, "--arch", t, "arch", "mlp (default) | resnet (images) | transformer (text)");
  add_named_option<std::string>(train, "--hidden", t, "hidden", "image models: mlp layer sizes (default 128,64) or resnet stage widths (16,32,32)");
  add_named_option<std::string>(train, "--init", t, "init", "start from a trained model: a classifier directory (text) or an SST/standard image model directory");
  add_named_option<std::string>(train, "--vocab", t, "vocab", "text from scratch: vocab.txt, tokenizer.json or a tokenizer directory");
  add_named_option<int64_t>(train, "--hidden-size", t, "hidden_size", "text from scratch: hidden size (default 128)");
  add_named_option<int64_t>(train, "--layers", t, "layers", "text from scratch: layers (default 2)");
  add_named_option<int64_t>(train, "--heads", t, "heads", "text from scratch: attention heads (default 4)");
  add_named_option<int64_t>(train, "--intermediate-size", t, "intermediate_size", "text from scratch: feed-forward size (default 512)");
  add_named_option<int64_t>(train, "--max-length", t, "max_length", "text: tokens per example (default 128)");
  train->add_flag_function("--windows", [&t](int64_t n) { t["windows"] = n > 0; },
                           "text: read every text whole, as windows of the encoder's positions half a window apart (not with --max-length)");
  add_named_option<int64_t>(train, "--max-windows", t, "max_windows",
                            "with --windows: at most N windows through the model at once, a batch's gradient summed over its parts (the same step in less memory; 0 = the whole batch, default)");
  add_named_option<double>(train, "--dropout", t, "dropout", "text from scratch: dropout (default 0.1)");
  add_named_option<std::string>(train, "--masking", t, "masking", "none (standard training) | baseline (default) | probabilistic | robust");
  add_named_option<double>(train, "--lambda", t, "lambda_", "weight of the faithfulness term (reference code: 1; default 1)");
  add_named_option<double>(train, "--xi", t, "xi", "weight of the cardinality term mean(s) (default 1)");
  add_named_option<double>(train, "--tau", t, "tau", "subset threshold on s (default 0.5)");
  train->add_flag_function(
      "--straight-through", [&t](int64_t n) { t["straight_through"] = n > 0; },
      "the faithfulness term also trains the explanation head (keep = hard + s - sg(s))");
  add_fill_options(train, t);
  add_named_option<int>(train, "--epochs", t, "epochs", "maximum epochs (default 10)");
  add_named_option<int>(train, "--patience", t, "patience", "stop after this many epochs without a lower validation loss (default 5)");
  add_named_option<int64_t>(train, "--batch-size", t, "batch_size", "examples per step (default 64)");
  add_named_option<double>(train, "--lr", t, "lr", "AdamW learning rate (default 1e-3)");
  add_named_option<double>(train, "--weight-decay", t, "weight_decay", "AdamW weight decay (default 0)");
  add_named_option<int64_t>(train, "--limit", t, "limit", "use the first N training examples (0 = all, default)");
  train->add_flag_function("--limit-random", [&t](int64_t n) { t["limit_random"] = n > 0; },
                           "with --limit N: N examples drawn at random (seeded by --seed), in the data's order, not the first N");
  add_named_option<uint64_t>(train, "--seed", t, "seed", "seed of initialisation, order, dropout and fills (default 13)");
  add_named_option<double>(train, "--max-minutes", t, "max_minutes", "stop after the epoch that passes this many minutes (0 = none)");
  train->add_flag_function("--resume", [&t](int64_t n) { t["resume"] = n > 0; }, "continue from OUT/last");
  commands.push_back({train, [ta] { run_train(*ta); }});

  auto ea = std::make_shared<ExplainArgs>();
  SstExplainOptions& x = ea->options;
  CLI::App* explain = sst->add_subcommand("explain", "the subset an SST model outputs with each prediction (explanation schema for text)");
  explain->add_option("--model", ea->model, "SST model directory")->required();
  explain->add_option("-i,--input", x.input, "text models: text or JSON lines (default stdin)");
  explain->add_option("--data", x.data, "image models: a split, e.g. mnist:test");
  explain->add_option("--limit", x.limit, "image models: the first N images");
  add_data_dir(explain, x.data_dir);
  explain->add_option("--png-dir", x.png_dir, "image models: write an overlay PNG per image here");
  explain->add_option("--sst-scores", x.scores, "subset (0/1 per feature) | selection (s)");
  explain->add_option("--max-length", x.max_length, "text: truncate inputs to N tokens");
  explain->add_option("-o,--out", ea->out, "output JSON lines (default stdout)");
  commands.push_back({explain, [ea] {
                        require_cpu();
                        const std::vector<json> lines = sst_explain(ea->model, ea->options);
                        Output out(ea->out);
                        for (const json& j : lines) out.line(j);
                        out.commit();
                      }});

  auto va = std::make_shared<EvaluateArgs>();
  json& v = va->options;
  CLI::App* evaluate = sst->add_subcommand("evaluate", "SST vs post-hoc sufficient subsets: accuracy, size, time, time-outs, faithfulness (3 kinds)");
  add_named_option<std::string>(evaluate, "--model", v, "model", "SST model directory (methods sst, sst_shuffled, sst_standard)");
  add_named_option<std::string>(evaluate, "--standard", v, "standard", "standard model directory (methods sis, anchors, gradient; the judge of sst_standard)");
  evaluate->add_option("--data", va->data, "evaluation split, e.g. mnist:test, sst2:dev")->required();
  add_data_dir(evaluate, v);
  evaluate->add_option("-o,--out", va->out, "output directory (table.md/csv/json, report.html; resumable)")->required();
  add_named_option<std::string>(evaluate, "--methods", v, "methods", "comma list of sst, sst_shuffled (control: as many features as the SST subset, at random), sst_standard (the SST subsets checked on --standard's predictions), sis, anchors, gradient (default: sst, sis, anchors, gradient)");
  add_named_option<int64_t>(evaluate, "--limit", v, "limit", "examples explained (the first N of the split; default 100)");
  evaluate->add_flag_function("--limit-random", [&v](int64_t n) { v["limit_random"] = n > 0; },
                              "the --limit N examples explained drawn at random (seeded by --seed), not the first N; accuracy stays over the whole split");
  add_named_option<int64_t>(evaluate, "--accuracy-limit", v, "accuracy_limit", "examples for accuracy (0 = the whole split, default)");
  add_named_option<double>(evaluate, "--time-limit", v, "time_limit", "post-hoc searches: seconds per example before a time-out (default 10)");
  add_named_option<int64_t>(evaluate, "--search-batch", v, "search_batch", "post-hoc searches: inputs per forward pass (default 512)");
  add_named_option<int64_t>(evaluate, "--search-tokens", v, "search_tokens",
                            "post-hoc searches, text: at most this many token positions per forward pass (default 32768; the "
                            "time limit is checked between passes)");
  add_named_option<int>(evaluate, "--samples", v, "samples", "probabilistic faithfulness: random fills per subset (default 20)");
  add_named_option<std::string>(evaluate, "--ranking", v, "ranking", "gradient search: ig (default) | gradient");
  add_named_option<int64_t>(evaluate, "--ig-steps", v, "ig_steps", "gradient search: IG points (default 20)");
  add_named_option<double>(evaluate, "--precision", v, "precision", "anchors: precision threshold (default 0.95)");
  add_named_option<int>(evaluate, "--beam", v, "beam", "anchors: beam width (default 2)");
  add_named_option<std::string>(evaluate, "--sis-criterion", v, "sis_criterion",
                                "sis: argmax (the baseline completion keeps the prediction; default) or threshold (Carter et al.: the "
                                "class probability stays >= --sis-threshold; the disjoint SIS collection is recorded)");
  add_named_option<double>(evaluate, "--sis-threshold", v, "sis_threshold", "sis --sis-criterion threshold: the probability kept (default 0.9)");
  add_named_option<int64_t>(evaluate, "--max-length", v, "max_length", "text: tokens per example (0: the model's, default)");
  evaluate->add_flag_function("--windows", [&v](int64_t n) { v["windows"] = n > 0; },
                              "text: read every text whole, as windows of the encoder's positions (not with --max-length)");
  add_named_option<int64_t>(evaluate, "--views", v, "views", "examples drawn in report.html (default 12)");
  add_named_option<uint64_t>(evaluate, "--seed", v, "seed", "seed of the fills, attacks and searches (default 0)");
  add_fill_options(evaluate, v);
  commands.push_back({evaluate, [va] { run_evaluate(*va); }});
}

}  // namespace salient::cli
