// ExpNet subcommands: expnet train | explain | evaluate (docs/expnet.md).
#include <torch/torch.h>

#include <chrono>
#include <sstream>

#include "commands.h"
#include "dist/world.h"
#include "explain/explainer.h"
#include "expnet/crosstask.h"
#include "expnet/expnet.h"

namespace salient::cli {

namespace {

// Options shared by `train` and the cross-task `evaluate`.
struct TrainArgs {
  std::string features = "cls_to_token,token_to_cls", layers = "last", scale = "length", hidden = "64,32", head_pool = "sorted";
  std::string filter = "on";
  ExpNetTrainOptions o;
};

void add_train_options(CLI::App* cmd, TrainArgs& a) {
  cmd->add_option("--features", a.features, "comma list of cls_to_token, token_to_cls, stats");
  cmd->add_option("--layers", a.layers, "last | all | comma list of layer indices (negative = from the end)");
  cmd->add_option("--scale", a.scale, "length (probabilities x tokens, entropy / log tokens) | raw");
  cmd->add_option("--head-pool", a.head_pool, "sorted (heads sorted per token) | mean_max | none (one feature per head, as the paper)");
  cmd->add_option("--hidden", a.hidden, "MLP hidden sizes, comma-separated (empty = logistic regression)");
  cmd->add_option("--activation", a.o.model.activation, "relu | gelu | tanh");
  cmd->add_option("--dropout", a.o.model.dropout, "MLP dropout");
  cmd->add_option("--loss", a.o.loss, "focal | bce");
  cmd->add_option("--alpha", a.o.alpha, "focal loss alpha (weight of rationale tokens)");
  cmd->add_option("--gamma", a.o.gamma, "focal loss gamma");
  cmd->add_option("--filter", a.filter, "on: train only on correctly predicted examples | off");
  cmd->add_option("--lr", a.o.lr, "Adam learning rate");
  cmd->add_option("--batch-size", a.o.batch_size, "tokens per step");
  cmd->add_option("--epochs", a.o.max_epochs, "maximum epochs");
  cmd->add_option("--patience", a.o.patience, "early stopping: epochs without a better validation loss");
}

ExpNetTrainOptions finish_train_options(TrainArgs& a) {
  ExpNetTrainOptions o = a.o;
  FeatureOptions& f = o.model.features;
  f.layers = a.layers;
  f.scale = a.scale;
  f.head_pool = a.head_pool;
  set_feature_list(f, a.features, "--features");
  o.model.hidden.clear();
  std::stringstream hs(a.hidden);
  std::string item;
  while (std::getline(hs, item, ',')) {
    try {
      o.model.hidden.push_back(std::stoll(item));
    } catch (const std::exception&) {
      fail("--hidden: '{}' is not an integer", item);
    }
  }
  if (a.filter != "on" && a.filter != "off") fail("--filter: must be 'on' or 'off' (got '{}')", a.filter);
  o.filter_correct = a.filter == "on";
  return o;
}

// ---- train
struct TrainCmd {
  std::vector<std::string> tasks;
  std::string out, data_dir = shared_data_dir();
  int64_t max_train = 0;
  uint64_t seed = 0;
  TrainArgs args;
};

void run_train(TrainCmd& c) {
  if (c.out.empty()) fail("--out: an output directory is required");
  ExpNetTrainOptions o = finish_train_options(c.args);
  o.seed = c.seed;
  ExpNetTrainResult r = train_expnet_on_tasks(c.tasks, c.data_dir, c.max_train, o);
  r.model.save(c.out);
  std::cout << train_result_json(r, c.out).dump() << "\n";
}

// ---- explain
struct ExplainCmd {
  std::string model, expnet, input = "-", output = "-", html;
  int64_t batch_size = 32;
};

// The registered expnet explainer over JSON lines, in the explanation schema (word scores: the
// max over a word's pieces), and optionally an HTML word heatmap.
void run_explain(const ExplainCmd& c) {
  if (c.batch_size <= 0) fail("--batch-size: must be positive (got {})", c.batch_size);
  Classifier clf = load_classifier(c.model);
  auto explainer = make_explainer("expnet");
  ExplainOptions opts;
  opts.params["expnet"] = c.expnet;
  opts.internal_batch = c.batch_size;
  auto items = read_input_items(c.input);
  std::vector<Encoding> encs;
  for (const auto& item : items) {
    std::string where = fmt::format("{}:{}", c.input == "-" ? "<stdin>" : c.input, item.line_no);
    if (!item.text) fail("{}: expnet explain needs 'text' (word scores come from the text)", where);
    encs.push_back(clf.encode(*item.text, item.text_pair));
    if (encs.back().truncated)
      std::fprintf(stderr, "salient: warning: %s: input truncated to %zu tokens\n", where.c_str(), encs.back().ids.size());
  }
  std::vector<const Encoding*> ptrs;
  for (const auto& e : encs) ptrs.push_back(&e);
  // ExpNet does not depend on the class: the explanations name the predicted one.
  std::vector<Explanation> ex = explainer->explain(clf, ptrs, predicted_classes(clf, ptrs), opts);
  Output out(c.output);
  std::ostringstream html;
  html << "<!doctype html><meta charset=\"utf-8\"><title>ExpNet explanations</title>\n"
       << "<style>body{font-family:sans-serif;max-width:60em}span.t{padding:1px 2px;margin:1px;border-radius:3px}"
          "div.ex{margin:1em 0;line-height:1.9}</style>\n<h1>ExpNet token importance</h1>\n"
       << "<p>classifier " << html_escape(c.model) << ", ExpNet " << html_escape(c.expnet)
       << ". Red intensity = importance (sigmoid output, 0..1).</p>\n";
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& fields = items[i].fields;
    const nlohmann::json id = fields.is_object() && fields.contains("id") ? fields["id"] : nlohmann::json();
    nlohmann::json j = explanation_json(clf, encs[i], ex[i], items[i].text, /*word_max=*/true, id);
    out.line(j);
    html << "<div class=\"ex\"><b>" << html_escape(j["target_label"].get<std::string>()) << "</b>: ";
    const auto words = j["words"].get<std::vector<std::string>>();
    const auto scores = j["word_scores"].get<std::vector<double>>();
    for (size_t w = 0; w < words.size(); ++w)
      html << fmt::format("<span class=\"t\" title=\"{:.3f}\" style=\"background:rgba(220,30,30,{:.3f})\">", scores[w], scores[w])
           << html_escape(words[w]) << "</span> ";
    html << "</div>\n";
  }
  out.commit();
  if (!c.html.empty()) write_file_atomic(c.html, html.str());
}

// ---- evaluate
struct EvaluateCmd {
  // single: --expnet + --model + --data
  std::string expnet, model, data;
  // cross-task: --task x N
  std::vector<std::string> tasks;
  std::string out, data_dir = shared_data_dir(), seeds = "0,1,2", baselines = "all";
  int64_t max_train = 0, max_test = 0, tune_examples = 100;
  double baseline_budget = 300, threshold = 0.5;
  bool ablation = false;
  TrainArgs args;
};

void run_evaluate(EvaluateCmd& c) {
  if (!c.expnet.empty()) {
    if (c.model.empty() || c.data.empty()) fail("expnet evaluate --expnet: also give --model and --data");
    if (dist::sharded())  // one quick evaluation: nothing to share out
      fail("expnet evaluate --expnet: runs as one process (under mpirun only the leave-one-task-out run, --task, is sharded)");
    std::cout << evaluate_expnet(c.expnet, c.model, c.data, c.data_dir, c.max_test, c.threshold).dump() << "\n";
    return;
  }
  CrossTaskOptions o;
  for (const auto& t : c.tasks) o.tasks.push_back(parse_task_spec(t));
  o.data_dir = c.data_dir;
  o.seeds.clear();
  std::stringstream ss(c.seeds);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      o.seeds.push_back(std::stoull(item));
    } catch (const std::exception&) {
      fail("--seeds: '{}' is not a non-negative integer", item);
    }
  }
  o.train = finish_train_options(c.args);
  if (c.baselines != "none") {
    std::stringstream bs(c.baselines);
    while (std::getline(bs, item, ',')) o.baselines.push_back(item);
  }
  o.max_train = c.max_train;
  o.max_test = c.max_test;
  o.tune_examples = c.tune_examples;
  o.baseline_budget_s = c.baseline_budget;
  o.ablation = c.ablation;
  o.out_dir = c.out;
  // Layout: from the first task's classifier (run_cross_task checks that all agree).
  if (!o.tasks.empty()) {
    ModelConfig mc = load_model_config(o.tasks[0].model_dir);
    o.train.model.num_layers = mc.num_hidden_layers;
    o.train.model.num_heads = mc.num_attention_heads;
  }
  nlohmann::json r = run_cross_task(o);
  if (dist::is_root()) std::cout << nlohmann::json({{"out", c.out}, {"seconds", r["seconds"]}}).dump() << "\n";
}

}  // namespace

void add_expnet_commands(CLI::App& app, std::vector<Command>& commands) {
  auto* group = app.add_subcommand("expnet", "ExpNet: learned explainer from attention to token importance");
  group->require_subcommand(1);

  static TrainCmd tr;
  auto* train = group->add_subcommand("train", "train an ExpNet on rationale tasks (each with its own classifier)");
  train->add_option("--task", tr.tasks, "NAME=MODEL_DIR (sst2, hatexplain, eraser) or NAME=MODEL_DIR,train=SPEC[,val=SPEC]; repeat")->required();
  train->add_option("--out", tr.out, "output directory (expnet.safetensors + expnet.json)")->required();
  train->add_option("--data-dir", tr.data_dir, "directory of the shared datasets");
  train->add_option("--max-train", tr.max_train, "use at most N examples per task (0 = all)");
  train->add_option("--seed", tr.seed, "random seed");
  add_train_options(train, tr.args);

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
  evaluate->add_option("--data-dir", ev.data_dir, "directory of the shared datasets");
  evaluate->add_option("--seeds", ev.seeds, "comma-separated ExpNet seeds");
  evaluate->add_option("--baselines", ev.baselines, "all | none | comma list of registered explainers");
  evaluate->add_option("--max-train", ev.max_train, "at most N training examples per source task (0 = all)");
  evaluate->add_option("--max-test", ev.max_test, "at most N held-out examples (the same for every method; 0 = all)");
  evaluate->add_option("--tune-examples", ev.tune_examples, "source-task examples per task to tune baseline thresholds");
  evaluate->add_option("--baseline-budget", ev.baseline_budget, "seconds per baseline and held-out task before it is dropped");
  evaluate->add_flag("--ablation", ev.ablation, "also run the feature / loss / filter / MLP-size ablation");
  add_train_options(evaluate, ev.args);

  commands.push_back({train, [] { run_train(tr); }});
  commands.push_back({explain, [] { run_explain(ex); }});
  commands.push_back({evaluate, [] { run_evaluate(ev); }});
}

}  // namespace salient::cli
