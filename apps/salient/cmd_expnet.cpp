// ExpNet subcommands: expnet train | explain | evaluate (docs/expnet.md), over salient/studies.h:
// each flag given becomes the option of the same name; the library holds the defaults.
#include "commands.h"
#include "salient/distributed.h"
#include "salient/studies.h"

namespace salient::cli {

namespace {

using nlohmann::json;

// Options shared by `train` and the cross-task `evaluate`.
void add_train_options(CLI::App* cmd, json& o, std::string& filter) {
  add_named_option<std::string>(cmd, "--features", o, "features", "comma list of cls_to_token, token_to_cls, stats (default: the first two)");
  add_named_option<std::string>(cmd, "--layers", o, "layers", "last (default) | all | comma list of layer indices (negative = from the end)");
  add_named_option<std::string>(cmd, "--scale", o, "scale", "length (probabilities x tokens, entropy / log tokens; default) | raw");
  add_named_option<std::string>(cmd, "--head-pool", o, "head_pool",
                                "sorted (heads sorted per token; default) | mean_max | none (one feature per head, as the paper)");
  add_named_option<std::string>(cmd, "--hidden", o, "hidden", "MLP hidden sizes, comma-separated (default 64,32; empty = logistic regression)");
  add_named_option<std::string>(cmd, "--activation", o, "activation", "relu (default) | gelu | tanh");
  add_named_option<double>(cmd, "--dropout", o, "dropout", "MLP dropout (default 0.1)");
  add_named_option<std::string>(cmd, "--loss", o, "loss", "focal (default) | bce");
  add_named_option<double>(cmd, "--alpha", o, "alpha", "focal loss alpha (weight of rationale tokens; default 0.75)");
  add_named_option<double>(cmd, "--gamma", o, "gamma", "focal loss gamma (default 2)");
  cmd->add_option("--filter", filter, "on: train only on correctly predicted examples (default) | off");
  add_named_option<double>(cmd, "--lr", o, "lr", "Adam learning rate (default 1e-3)");
  add_named_option<int64_t>(cmd, "--batch-size", o, "batch_size", "tokens per step (default 512)");
  add_named_option<int>(cmd, "--epochs", o, "epochs", "maximum epochs (default 40)");
  add_named_option<int>(cmd, "--patience", o, "patience", "early stopping: epochs without a better validation loss (default 4)");
  add_named_option<int64_t>(cmd, "--max-train", o, "max_train", "use at most N examples per task (0 = all, default)");
}

// --filter on|off as the option filter_correct.
json with_filter(json o, const std::string& filter) {
  if (filter != "on" && filter != "off") fail("--filter: must be 'on' or 'off' (got '{}')", filter);
  o["filter_correct"] = filter == "on";
  return o;
}

struct TrainCmd {
  std::vector<std::string> tasks;
  std::string out, filter = "on";
  json options = json::object();
};

struct ExplainCmd {
  std::string model, expnet, input = "-", output = "-", html;
  int64_t batch_size = 32;
};

void run_explain(const ExplainCmd& c) {
  std::string html;
  const std::vector<json> lines = expnet_explain(c.model, c.expnet, c.input, c.batch_size, c.html.empty() ? nullptr : &html);
  Output out(c.output);
  for (const json& j : lines) out.line(j);
  out.commit();
  if (!c.html.empty()) write_file_atomic(c.html, html);
}

struct EvaluateCmd {
  // single: --expnet + --model + --data
  std::string expnet, model, data, data_dir;
  int64_t max_test = 0;
  double threshold = 0.5;
  // cross-task: --task x N
  std::vector<std::string> tasks;
  std::string out, filter = "on";
  json options = json::object();
};

void run_evaluate(EvaluateCmd& c) {
  if (!c.expnet.empty()) {
    if (c.model.empty() || c.data.empty()) fail("expnet evaluate --expnet: also give --model and --data");
    if (dist::sharded())  // one quick evaluation: nothing to share out
      fail("expnet evaluate --expnet: runs as one process (under mpirun only the leave-one-task-out run, --task, is sharded)");
    std::cout << expnet_evaluate(c.expnet, c.model, c.data, c.data_dir, c.max_test, c.threshold).dump() << "\n";
    return;
  }
  json options = with_filter(c.options, c.filter);
  if (!c.data_dir.empty()) options["data_dir"] = c.data_dir;
  if (c.max_test != 0) options["max_test"] = c.max_test;
  const json r = expnet_cross_task(c.tasks, c.out, options);
  if (dist::is_root()) std::cout << json({{"out", c.out}, {"seconds", r["seconds"]}}).dump() << "\n";
}

}  // namespace

void add_expnet_commands(CLI::App& app, std::vector<Command>& commands) {
  auto* group = app.add_subcommand("expnet", "ExpNet: learned explainer from attention to token importance");
  group->require_subcommand(1);

  static TrainCmd tr;
  auto* train = group->add_subcommand("train", "train an ExpNet on rationale tasks (each with its own classifier)");
  train->add_option("--task", tr.tasks, "NAME=MODEL_DIR (sst2, hatexplain, eraser) or NAME=MODEL_DIR,train=SPEC[,val=SPEC]; repeat")->required();
  train->add_option("--out", tr.out, "output directory (expnet.safetensors + expnet.json)")->required();
  add_named_option<uint64_t>(train, "--seed", tr.options, "seed", "random seed (default 0)");
  add_data_dir(train, tr.options);
  add_train_options(train, tr.options, tr.filter);

  static ExplainCmd ex;
  auto* explain = group->add_subcommand("explain", "token and word importance for text/JSON lines → JSON lines (+ HTML)");
  explain->add_option("--model", ex.model, "classifier directory")->required();
  explain->add_option("--expnet", ex.expnet, "ExpNet directory")->required();
  explain->add_option("--input,-i", ex.input, "input file (default stdin)");
  explain->add_option("--out,-o,--output", ex.output, "output file (default stdout)");
  explain->add_option("--html", ex.html, "also write a heatmap page");
  explain->add_option("--batch-size", ex.batch_size, "inputs per forward pass");

  static EvaluateCmd ev;
  auto* evaluate = group->add_subcommand("evaluate",
      "--expnet DIR --model DIR --data SPEC: plausibility on one dataset; or --task ... x N: leave-one-task-out report");
  evaluate->add_option("--expnet", ev.expnet, "a trained ExpNet (single evaluation)");
  evaluate->add_option("--model", ev.model, "classifier (single evaluation)");
  evaluate->add_option("--data", ev.data, "dataset spec with rationales (single evaluation)");
  evaluate->add_option("--threshold", ev.threshold, "binarisation threshold (single evaluation)");
  evaluate->add_option("--task", ev.tasks, "NAME=MODEL_DIR[,train=..,val=..,test=..] (cross-task; repeat, >= 2)");
  evaluate->add_option("--out", ev.out, "report directory (cross-task)");
  evaluate->add_option("--max-test", ev.max_test, "at most N held-out examples (the same for every method; 0 = all)");
  add_named_option<std::string>(evaluate, "--seeds", ev.options, "seeds", "comma-separated ExpNet seeds (default 0,1,2)");
  add_named_option<std::string>(evaluate, "--baselines", ev.options, "baselines", "all (default) | none | comma list of registered explainers");
  add_named_option<int64_t>(evaluate, "--tune-examples", ev.options, "tune_examples",
                            "source-task examples per task to tune baseline thresholds (default 100)");
  add_named_option<double>(evaluate, "--baseline-budget", ev.options, "baseline_budget",
                           "seconds per baseline and held-out task before it is dropped (default 300)");
  evaluate->add_flag_function(
      "--ablation", [](int64_t n) { ev.options["ablation"] = n > 0; }, "also run the feature / loss / filter / MLP-size ablation");
  add_data_dir(evaluate, ev.data_dir);
  add_train_options(evaluate, ev.options, ev.filter);

  commands.push_back({train, [] {
                        std::cout << expnet_train(tr.tasks, tr.out, with_filter(tr.options, tr.filter)).dump() << "\n";
                      }});
  commands.push_back({explain, [] { run_explain(ex); }});
  commands.push_back({evaluate, [] { run_evaluate(ev); }});
}

}  // namespace salient::cli
