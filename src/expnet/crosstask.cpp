#include "expnet/crosstask.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

#include "dist/shards.h"
#include "salient/distributed.h"
#include "explain/explainer.h"
#include "util/table.h"
#include "util/error.h"
#include "util/io.h"
#include "util/progress.h"

namespace salient {

namespace {

using Clock = std::chrono::steady_clock;

struct LoadedTask {
  TaskSpec spec;
  Classifier clf;
  TaskSplit train, val, test;
};

// Metric names in report order, and their values in a row.
const std::vector<std::string> kMetrics = {"f1_threshold", "precision_threshold", "recall_threshold", "f1_top_k",
                                           "precision_top_k", "recall_top_k", "auroc", "auprc"};
std::vector<double> metric_values(const PlausibilityRow& r) {
  return {r.f1_threshold, r.precision_threshold, r.recall_threshold, r.f1_top_k, r.precision_top_k, r.recall_top_k, r.auroc, r.auprc};
}

// Mean and sample std over seeds of every metric.
struct Cell {
  std::vector<double> mean, std;
  int64_t runs = 0, examples = 0;
  nlohmann::json extra = nlohmann::json::object();
};

Cell aggregate(const std::vector<PlausibilityRow>& rows) {
  Cell c;
  c.runs = static_cast<int64_t>(rows.size());
  c.examples = rows.empty() ? 0 : rows[0].examples;
  for (size_t m = 0; m < kMetrics.size(); ++m) {
    std::vector<double> v;
    for (const auto& r : rows) v.push_back(metric_values(r)[m]);
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / std::max<size_t>(1, v.size());
    double var = 0;
    for (double x : v) var += (x - mean) * (x - mean);
    c.mean.push_back(mean);
    c.std.push_back(v.size() > 1 ? std::sqrt(var / (v.size() - 1)) : 0.0);
  }
  return c;
}

nlohmann::json cell_json(const Cell& c) {
  nlohmann::json j = {{"runs", c.runs}, {"examples", c.examples}, {"extra", c.extra}};
  for (size_t m = 0; m < kMetrics.size(); ++m) j[kMetrics[m]] = {{"mean", c.mean[m]}, {"std", c.std[m]}};
  return j;
}

// Deterministic 85/15 split of a source split into train and early-stopping validation
// (HateXplain: only val carries rationales). Fixed seed: the same split for every run.
void carve_validation(TaskSplit& train, TaskSplit& val, double fraction) {
  std::vector<size_t> idx(train.examples.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 rng(20260521);
  std::shuffle(idx.begin(), idx.end(), rng);
  const size_t n_val = std::max<size_t>(1, static_cast<size_t>(fraction * idx.size()));
  std::vector<char> is_val(idx.size(), 0);
  for (size_t i = 0; i < n_val; ++i) is_val[idx[i]] = 1;
  val.spec = train.spec + " (15% validation part)";
  std::vector<TaskExample> keep;
  for (size_t i = 0; i < train.examples.size(); ++i)
    (is_val[i] ? val.examples : keep).push_back(std::move(train.examples[i]));
  train.examples = std::move(keep);
  train.spec += " (85% training part)";
}

// Scores of a post-hoc explainer per example, mapped per example to [0, 1] by min-max over the
// scored tokens (monotone, so ranking metrics are unchanged; needed for one threshold).
std::vector<double> minmax_scored(const std::vector<double>& s, const std::vector<int>& labels) {
  double lo = 1e300, hi = -1e300;
  for (size_t t = 0; t < s.size(); ++t)
    if (labels[t] >= 0) lo = std::min(lo, s[t]), hi = std::max(hi, s[t]);
  std::vector<double> out(s.size(), 0.0);
  for (size_t t = 0; t < s.size(); ++t)
    if (labels[t] >= 0) out[t] = hi > lo ? (s[t] - lo) / (hi - lo) : 0.0;
  return out;
}

struct BaselineRun {
  std::vector<std::vector<double>> scores;  // one per explained example
  double seconds = 0;
  bool complete = true;
};

// `chunk` inputs per explain call; the budget is checked between calls.
BaselineRun run_baseline(Explainer& ex, const Classifier& clf, const std::vector<TaskExample>& examples, int64_t limit,
                         double budget_s, size_t chunk, const std::string& label) {
  BaselineRun run;
  const size_t n = limit > 0 ? std::min<size_t>(examples.size(), limit) : examples.size();
  Progress bar(label, static_cast<int64_t>(n), "ex");
  const auto start = Clock::now();
  for (size_t s = 0; s < n; s += chunk) {
    std::vector<const Encoding*> inputs;
    std::vector<int64_t> targets;
    for (size_t i = s; i < std::min(n, s + chunk); ++i) {
      inputs.push_back(&examples[i].enc);
      targets.push_back(examples[i].raw.predicted);  // explain the predicted class
    }
    ExplainOptions opts;
    auto exps = ex.explain(clf, inputs, targets, opts);
    for (auto& e : exps) run.scores.push_back(std::move(e.scores));
    bar.update(static_cast<int64_t>(inputs.size()));
    if (budget_s > 0 && seconds_since(start) > budget_s && s + chunk < n) {
      run.complete = false;
      break;
    }
  }
  run.seconds = seconds_since(start);
  bar.finish(run.complete ? "" : "over budget");
  return run;
}

std::string fmt_cell(const Cell& c, size_t metric, bool with_std) {
  if (c.runs == 0) return "—";
  if (with_std && c.runs > 1) return fmt::format("{:.3f} ± {:.3f}", c.mean[metric], c.std[metric]);
  return fmt::format("{:.3f}", c.mean[metric]);
}

struct Variant {
  std::string name, what;
  ExpNetTrainOptions options;
  // When set: train each candidate and keep the one with the lowest loss on the source tasks'
  // validation split (model selection that never looks at the held-out task).
  std::vector<std::pair<std::string, ExpNetTrainOptions>> candidates;
};

std::vector<Variant> ablation_variants(const ExpNetTrainOptions& base) {
  std::vector<Variant> v;
  auto add = [&](std::string name, std::string what, auto change) {
    Variant x{std::move(name), std::move(what), base};
    change(x.options);
    v.push_back(std::move(x));
  };
  add("main", "the main configuration", [](ExpNetTrainOptions&) {});
  add("feat:cls_to_token", "features: [CLS]→token only", [](ExpNetTrainOptions& o) {
    o.model.features.cls_to_token = true, o.model.features.token_to_cls = false, o.model.features.stats = false;
  });
  add("feat:token_to_cls", "features: token→[CLS] only", [](ExpNetTrainOptions& o) {
    o.model.features.cls_to_token = false, o.model.features.token_to_cls = true, o.model.features.stats = false;
  });
  add("feat:both", "features: both directions, last layer", [](ExpNetTrainOptions& o) {
    o.model.features.cls_to_token = o.model.features.token_to_cls = true, o.model.features.stats = false;
    o.model.features.layers = "last";
  });
  add("feat:all_layers", "features: both directions, all layers", [](ExpNetTrainOptions& o) {
    o.model.features.cls_to_token = o.model.features.token_to_cls = true, o.model.features.stats = false;
    o.model.features.layers = "all";
  });
  add("feat:all_layers+stats", "features: all layers, both directions + attention statistics", [](ExpNetTrainOptions& o) {
    o.model.features.cls_to_token = o.model.features.token_to_cls = o.model.features.stats = true;
    o.model.features.layers = "all";
  });
  add("feat:raw_scale", "features: unscaled probabilities (no length scaling)", [](ExpNetTrainOptions& o) {
    o.model.features.scale = o.model.features.scale == "raw" ? "length" : "raw";
  });
  add("heads:none", "heads as separate features (the paper's layout)", [](ExpNetTrainOptions& o) { o.model.features.head_pool = "none"; });
  add("heads:sorted", "heads sorted per token", [](ExpNetTrainOptions& o) { o.model.features.head_pool = "sorted"; });
  add("heads:mean_max", "mean and max over heads", [](ExpNetTrainOptions& o) { o.model.features.head_pool = "mean_max"; });
  add("loss:bce", "loss: plain BCE", [](ExpNetTrainOptions& o) { o.loss = "bce"; });
  add("loss:focal", "loss: focal", [](ExpNetTrainOptions& o) { o.loss = "focal"; });
  add("filter:off", "all training examples (no correct-prediction filter)", [](ExpNetTrainOptions& o) { o.filter_correct = false; });
  add("filter:on", "correctly predicted training examples only", [](ExpNetTrainOptions& o) { o.filter_correct = true; });
  add("mlp:16", "MLP hidden [16]", [](ExpNetTrainOptions& o) { o.model.hidden = {16}; });
  add("mlp:64-32", "MLP hidden [64, 32]", [](ExpNetTrainOptions& o) { o.model.hidden = {64, 32}; });
  add("mlp:256-128", "MLP hidden [256, 128]", [](ExpNetTrainOptions& o) { o.model.hidden = {256, 128}; });
  {
    Variant sel{"select:features", "features chosen per fold and seed by source validation loss among main, "
                                   "cls_to_token, token_to_cls, all_layers, all_layers+stats", base, {}};
    for (const auto& x : v)
      if (x.name == "main" || x.name == "feat:cls_to_token" || x.name == "feat:token_to_cls" ||
          x.name == "feat:all_layers" || x.name == "feat:all_layers+stats")
        sel.candidates.emplace_back(x.name, x.options);
    v.push_back(std::move(sel));
  }
  // Drop variants identical to the main one (e.g. loss:focal when focal is the default).
  std::vector<Variant> out;
  for (auto& x : v) {
    bool same = x.name != "main" && x.candidates.empty() && x.options.loss == base.loss && x.options.filter_correct == base.filter_correct &&
                x.options.model.hidden == base.model.hidden && x.options.model.features.to_json() == base.model.features.to_json();
    if (!same) out.push_back(std::move(x));
  }
  return out;
}


// Per-run metrics as stored in a unit file: every field, so a report rebuilt from the files is
// the report the run would have made in memory (JSON doubles round-trip exactly).
nlohmann::json row_json(const PlausibilityRow& r) {
  nlohmann::json j = {{"examples", r.examples}, {"auroc_examples", r.auroc_examples}};
  const std::vector<double> v = metric_values(r);
  for (size_t m = 0; m < kMetrics.size(); ++m) j[kMetrics[m]] = v[m];
  return j;
}

PlausibilityRow row_from_json(const nlohmann::json& j) {
  PlausibilityRow r;
  r.examples = j.at("examples").get<int64_t>();
  r.auroc_examples = j.at("auroc_examples").get<int64_t>();
  double* fields[] = {&r.f1_threshold, &r.precision_threshold, &r.recall_threshold, &r.f1_top_k,
                      &r.precision_top_k, &r.recall_top_k, &r.auroc, &r.auprc};
  for (size_t m = 0; m < kMetrics.size(); ++m) *fields[m] = j.at(kMetrics[m]).get<double>();
  return r;
}

// One piece of the evaluation, kept as OUT/units/FILE once computed: a run resumes without
// recomputing it, and under mpirun the ranks take the pieces one at a time (docs/distributed.md).
struct Unit {
  std::string file;
  size_t heldout = 0;
  // An ExpNet run: the variant (-1: the main configuration) and its seed ...
  int variant = -1;
  uint64_t seed = 0;
  // ... or a post-hoc baseline (its name) on the held-out task, its threshold tuned on the others.
  std::string baseline;
};

// One ExpNet run of a leave-one-task-out fold: trained on every task but `h` (the candidate with the
// lowest source validation loss when there are several), scored on h's test examples.
nlohmann::json expnet_unit(const std::vector<LoadedTask>& tasks, size_t h, uint64_t seed, const ExpNetTrainOptions& base,
                           const std::vector<std::pair<std::string, ExpNetTrainOptions>>& candidates,
                           const std::string& save_dir) {
  std::vector<const TaskSplit*> tr, va;
  for (size_t s = 0; s < tasks.size(); ++s)
    if (s != h) tr.push_back(&tasks[s].train), va.push_back(&tasks[s].val);
  std::string selected;
  ExpNetTrainResult res;
  if (candidates.empty()) {
    ExpNetTrainOptions opt = base;
    opt.seed = seed;
    res = train_expnet(tr, va, opt);
  } else {
    for (const auto& [name, cand] : candidates) {
      ExpNetTrainOptions c = cand;
      c.seed = seed;
      ExpNetTrainResult r = train_expnet(tr, va, c);
      if (selected.empty() || r.best_val_loss < res.best_val_loss) res = std::move(r), selected = name;
    }
  }
  res.model.check_compatible(tasks[h].clf, tasks[h].spec.model_dir);
  std::vector<std::vector<double>> scores;
  for (const auto& ex : tasks[h].test.examples) scores.push_back(res.model.explain(tasks[h].clf, ex.enc, ex.raw));
  const PlausibilityRow row = plausibility(tasks[h].test.examples, scores, 0.5);
  nlohmann::json run = {{"seed", seed}, {"best_epoch", res.best_epoch}, {"epochs_run", res.epochs_run}, {"seconds", res.seconds},
                        {"train_tokens", res.train_tokens}, {"train_positive", res.train_positive},
                        {"train_examples", res.train_examples}, {"filtered_out", res.filtered_out},
                        {"f1_threshold", row.f1_threshold}, {"f1_top_k", row.f1_top_k}};
  if (!selected.empty()) run["selected"] = selected;
  if (!save_dir.empty()) res.model.save(save_dir);  // before the unit file: a unit on disk has its model
  return {{"row", row_json(row)}, {"run", run}};
}

// A post-hoc baseline on held-out task `h`: its rate, and unless it ran over the budget, its
// metrics at the threshold tuned on the source tasks' validation examples (never on h).
nlohmann::json baseline_unit(const std::vector<LoadedTask>& tasks, size_t h, const std::string& name, const CrossTaskOptions& o) {
  auto explainer = make_explainer(name);
  // Perturbation methods batch their own passes within one input, so one input per call costs
  // nothing and keeps the budget check close: eight 512-token reviews of occlusion on MiniLM run
  // about ten minutes on one thread.
  const size_t chunk = explainer_info(name).family == "perturbation" ? 1 : 8;
  const LoadedTask& ht = tasks[h];
  BaselineRun test_run = run_baseline(*explainer, ht.clf, ht.test.examples, 0, o.baseline_budget_s, chunk,
                                      fmt::format("{} on {}", name, ht.spec.name));
  const double per_s = test_run.scores.size() / std::max(1e-9, test_run.seconds);
  nlohmann::json unit = {{"cost", {{"examples", test_run.scores.size()}, {"seconds", test_run.seconds}, {"examples_per_s", per_s}}}};
  if (!test_run.complete) {
    // Dropped for this held-out task only (its cell shows —); the rate still enters the cost table.
    unit["dropped"] = fmt::format("over the {:.0f} s budget: {} of {} examples ({:.2f} ex/s)", o.baseline_budget_s,
                                  test_run.scores.size(), ht.test.examples.size(), per_s);
    return unit;
  }
  std::vector<std::vector<double>> tune_scores;
  std::vector<TaskExample> tune_examples;
  for (size_t s = 0; s < tasks.size(); ++s) {
    if (s == h) continue;
    BaselineRun r = run_baseline(*explainer, tasks[s].clf, tasks[s].val.examples, o.tune_examples, o.baseline_budget_s,
                                 chunk, fmt::format("{} tuning on {}", name, tasks[s].spec.name));
    for (size_t i = 0; i < r.scores.size(); ++i) {
      tune_scores.push_back(minmax_scored(r.scores[i], tasks[s].val.examples[i].labels));
      tune_examples.push_back(tasks[s].val.examples[i]);
    }
  }
  double best_threshold = 0.5, best_f1 = -1;
  for (int k = 1; k < 20; ++k) {
    const double th = 0.05 * k;
    const double f1 = plausibility(tune_examples, tune_scores, th).f1_threshold;
    if (f1 > best_f1) best_f1 = f1, best_threshold = th;
  }
  std::vector<std::vector<double>> test_scores;
  for (size_t i = 0; i < test_run.scores.size(); ++i) test_scores.push_back(minmax_scored(test_run.scores[i], ht.test.examples[i].labels));
  unit["row"] = row_json(plausibility(ht.test.examples, test_scores, best_threshold));
  unit["extra"] = {{"threshold", best_threshold}, {"threshold_source_f1", best_f1}, {"tune_examples", tune_examples.size()}};
  return unit;
}

// What a report directory holds results of: resuming with other settings would mix them.
nlohmann::json settings_json(const CrossTaskOptions& o, const std::vector<std::string>& baselines) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& t : o.tasks)
    tasks.push_back({{"name", t.name}, {"model", t.model_dir}, {"train", t.train}, {"val", t.val}, {"test", t.test},
                     {"val_fraction", t.val_fraction}});
  const ExpNetTrainOptions& e = o.train;
  return {{"tasks", tasks}, {"data_dir", o.data_dir}, {"seeds", o.seeds},
          {"expnet", {{"config", e.model.to_json()}, {"loss", e.loss}, {"alpha", e.alpha}, {"gamma", e.gamma},
                      {"filter_correct", e.filter_correct}, {"lr", e.lr}, {"weight_decay", e.weight_decay},
                      {"batch_size", e.batch_size}, {"max_epochs", e.max_epochs}, {"patience", e.patience}}},
          {"baselines", baselines}, {"max_train", o.max_train}, {"max_test", o.max_test},
          {"tune_examples", o.tune_examples}, {"baseline_budget_s", o.baseline_budget_s}, {"ablation", o.ablation}};
}

}  // namespace

nlohmann::json run_cross_task(const CrossTaskOptions& o) {
  if (o.tasks.size() < 2) fail("--task: leave-one-task-out needs at least two tasks (got {})", o.tasks.size());
  if (o.seeds.empty()) fail("--seeds: give at least one seed");
  if (o.out_dir.empty()) fail("--out: an output directory is required");
  for (const auto& t : o.tasks)  // names become file names of the units and saved models
    if (t.name.empty() || t.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != std::string::npos ||
        t.name[0] == '.')
      fail("--task '{}': a task name is letters, digits, '.', '_' and '-', not starting with '.'", one_line(t.name));
  for (size_t i = 0; i < o.tasks.size(); ++i) {
    if (o.tasks[i].train.empty() || o.tasks[i].test.empty()) fail("--task {}: needs both train= and test= specs", o.tasks[i].name);
    for (size_t j = 0; j < i; ++j)
      if (o.tasks[j].name == o.tasks[i].name) fail("--task {}: given twice", o.tasks[i].name);
  }
  {
    std::vector<uint64_t> seeds = o.seeds;
    std::sort(seeds.begin(), seeds.end());
    if (std::adjacent_find(seeds.begin(), seeds.end()) != seeds.end()) fail("--seeds: a seed is given twice");
  }
  std::vector<std::string> baseline_names = o.baselines;
  if (baseline_names.size() == 1 && baseline_names[0] == "all") baseline_names = post_hoc_explainer_names();
  for (size_t i = 0; i < baseline_names.size(); ++i) {
    explainer_info(baseline_names[i]);  // an unknown name fails before any work
    for (size_t j = 0; j < i; ++j)
      if (baseline_names[j] == baseline_names[i]) fail("--baselines: '{}' is given twice", baseline_names[i]);
  }
  const std::string units_dir = join_path(o.out_dir, "units");
  const nlohmann::json settings = settings_json(o, baseline_names);
  const std::string settings_path = join_path(o.out_dir, "evaluate.json");
  if (file_exists(settings_path)) {
    const nlohmann::json before = parse_json_file(settings_path);
    if (before != settings)
      fail("--out: '{}' holds an evaluation with other settings ({}; evaluate.json); use another directory", o.out_dir,
           differing_keys(before, settings));
  }
  const auto start = Clock::now();

  // ---- load tasks, classifiers and features
  std::vector<LoadedTask> tasks(o.tasks.size());
  for (size_t i = 0; i < o.tasks.size(); ++i) {
    LoadedTask& t = tasks[i];
    t.spec = o.tasks[i];
    t.clf = load_classifier(t.spec.model_dir);
    const auto& c = t.clf.model.config();
    const auto& c0 = tasks[0].clf.model.config();
    if (i > 0 && (c.num_attention_heads != c0.num_attention_heads || c.num_hidden_layers != c0.num_hidden_layers))
      fail("--task {}: classifier {} has {} layers x {} heads but {} has {} x {}: features would not align", t.spec.name,
           t.spec.model_dir, c.num_hidden_layers, c.num_attention_heads, tasks[0].spec.model_dir, c0.num_hidden_layers,
           c0.num_attention_heads);
    if (dist::is_root()) std::fprintf(stderr, "salient: expnet: loading task %s (%s)\n", t.spec.name.c_str(), t.spec.model_dir.c_str());
    t.train = load_task_split(t.clf, t.spec.train, o.data_dir, o.max_train);
    if (t.spec.val.empty()) carve_validation(t.train, t.val, t.spec.val_fraction);
    else t.val = load_task_split(t.clf, t.spec.val, o.data_dir, o.max_train > 0 ? std::max<int64_t>(1, o.max_train / 5) : 0);
    t.test = load_task_split(t.clf, t.spec.test, o.data_dir, o.max_test);
  }

  // Written once every task has loaded: a run that failed to start leaves nothing to refuse a
  // corrected command with.
  if (dist::is_root()) {
    make_dirs(units_dir);
    remove_stale_temporaries(o.out_dir);
    if (!file_exists(settings_path)) write_file_atomic(settings_path, settings.dump(2) + "\n");
  }  // the other ranks use units_dir only after run_claimed_units' barrier

  // ---- the units: ExpNet runs (main configuration, then the ablation's) and baselines per held-out task
  const std::vector<Variant> variants = o.ablation ? ablation_variants(o.train) : std::vector<Variant>{};
  std::vector<Unit> units;
  for (size_t h = 0; h < tasks.size(); ++h)
    for (uint64_t seed : o.seeds)
      units.push_back({fmt::format("expnet-{}-seed{}.json", tasks[h].spec.name, seed), h, -1, seed, ""});
  for (const auto& name : baseline_names)
    for (size_t h = 0; h < tasks.size(); ++h)
      units.push_back({fmt::format("baseline-{}-{}.json", name, tasks[h].spec.name), h, -1, 0, name});
  for (size_t v = 0; v < variants.size(); ++v) {
    if (variants[v].name == "main") continue;  // the main configuration's runs above
    std::string stem = variants[v].name;
    std::replace(stem.begin(), stem.end(), ':', '_');
    for (size_t h = 0; h < tasks.size(); ++h)
      for (uint64_t seed : o.seeds)
        units.push_back({fmt::format("ablation-{}-{}-seed{}.json", stem, tasks[h].spec.name, seed), h,
                         static_cast<int>(v), seed, ""});
  }
  // Every unit not done yet; under mpirun the ranks take them one at a time as they go.
  std::vector<std::string> unit_files;
  for (const Unit& u : units) unit_files.push_back(join_path(units_dir, u.file));
  dist::run_claimed_units(unit_files, [&](size_t i) {
    const Unit& u = units[i];
    nlohmann::json result;
    if (!u.baseline.empty()) {
      result = baseline_unit(tasks, u.heldout, u.baseline, o);
    } else if (u.variant < 0) {
      const std::string save_dir = u.seed == o.seeds.front() ? join_path(o.out_dir, "expnet-heldout-" + tasks[u.heldout].spec.name) : "";
      result = expnet_unit(tasks, u.heldout, u.seed, o.train, {}, save_dir);
    } else {
      const Variant& v = variants[u.variant];
      std::fprintf(stderr, "salient: expnet: ablation %s, held out %s, seed %llu\n", v.name.c_str(),
                   tasks[u.heldout].spec.name.c_str(), static_cast<unsigned long long>(u.seed));
      result = expnet_unit(tasks, u.heldout, u.seed, v.options, v.candidates, "");
    }
    write_file_atomic(unit_files[i], result.dump(2) + "\n");
  });
  if (dist::sharded()) {
    dist::barrier();
    if (!dist::is_root()) return nlohmann::json();
  }

  // ---- the report, from the unit files
  auto read_unit = [&](const std::string& file) { return parse_json_file(join_path(units_dir, file)); };
  auto expnet_cell = [&](size_t h, const std::string& prefix) {
    std::vector<PlausibilityRow> rows;
    nlohmann::json runs = nlohmann::json::array();
    for (uint64_t seed : o.seeds) {
      const nlohmann::json u = read_unit(fmt::format("{}-{}-seed{}.json", prefix, tasks[h].spec.name, seed));
      rows.push_back(row_from_json(u.at("row")));
      runs.push_back(u.at("run"));
    }
    Cell c = aggregate(rows);
    c.extra["runs"] = runs;
    return c;
  };
  nlohmann::json report;
  report["tasks"] = nlohmann::json::array();
  for (const auto& t : tasks) {
    auto split_json = [](const TaskSplit& s) {
      return nlohmann::json{{"spec", s.spec}, {"records", s.records}, {"used", s.examples.size()}, {"no_rationale", s.no_rationale},
                            {"truncated", s.truncated}, {"rationale_words", s.rationale_words_total}, {"rationale_words_truncated_away", s.rationale_lost}};
    };
    int64_t correct = 0;
    for (const auto& ex : t.test.examples) correct += ex.raw.predicted == ex.gold_label;
    report["tasks"].push_back({{"name", t.spec.name}, {"model", t.spec.model_dir},
                               {"max_tokens", t.clf.model.config().max_tokens()},
                               {"layers", t.clf.model.config().num_hidden_layers}, {"heads", t.clf.model.config().num_attention_heads},
                               {"train", split_json(t.train)}, {"val", split_json(t.val)}, {"test", split_json(t.test)},
                               {"test_accuracy_on_used", t.test.examples.empty() ? 0.0 : double(correct) / t.test.examples.size()}});
  }

  // method → held-out task → cell
  std::map<std::string, std::map<std::string, Cell>> table;
  std::vector<std::string> methods = {"expnet"};
  for (size_t h = 0; h < tasks.size(); ++h) table["expnet"][tasks[h].spec.name] = expnet_cell(h, "expnet");
  nlohmann::json cost = nlohmann::json::object();
  nlohmann::json dropped = nlohmann::json::array();
  for (const auto& name : baseline_names) {
    std::map<std::string, Cell> cells;
    for (size_t h = 0; h < tasks.size(); ++h) {
      const nlohmann::json u = read_unit(fmt::format("baseline-{}-{}.json", name, tasks[h].spec.name));
      cost[name][tasks[h].spec.name] = u.at("cost");
      if (u.contains("dropped")) {
        dropped.push_back({{"method", name}, {"task", tasks[h].spec.name}, {"reason", u.at("dropped")}});
        continue;
      }
      Cell c = aggregate({row_from_json(u.at("row"))});
      c.extra = u.at("extra");
      cells[tasks[h].spec.name] = c;
    }
    if (!cells.empty()) {
      table[name] = cells;
      methods.push_back(name);
    }
  }

  // ---- cost: explanations per second on each held-out test set (same inputs for every method),
  // measured here by rank 0 alone once every unit is done
  for (const auto& t : tasks) {
    std::vector<const Encoding*> inputs;
    for (const auto& ex : t.test.examples) inputs.push_back(&ex.enc);
    ExpNet net = ExpNet::load(join_path(o.out_dir, "expnet-heldout-" + t.spec.name));
    for (int64_t bs : {int64_t(1), int64_t(32)}) {
      auto t0 = Clock::now();
      {
        torch::NoGradGuard ng;
        for (size_t s = 0; s < inputs.size(); s += bs) {
          std::vector<const Encoding*> chunk(inputs.begin() + s, inputs.begin() + std::min(inputs.size(), s + bs));
          Batch b = make_batch(chunk, t.clf.tokenizer.pad_id());
          t.clf.model.logits(b.input_ids, b.token_type_ids, b.attention_mask);
        }
      }
      const double fwd = seconds_since(t0);
      t0 = Clock::now();
      net.explain(t.clf, inputs, bs);
      const double exp_s = seconds_since(t0);
      cost[fmt::format("forward_pass_batch{}", bs)][t.spec.name] = {{"examples", inputs.size()}, {"seconds", fwd}, {"examples_per_s", inputs.size() / std::max(1e-9, fwd)}};
      cost[fmt::format("expnet_batch{}", bs)][t.spec.name] = {{"examples", inputs.size()}, {"seconds", exp_s}, {"examples_per_s", inputs.size() / std::max(1e-9, exp_s)}};
    }
  }

  // ---- ablation
  std::vector<std::pair<Variant, std::map<std::string, Cell>>> ablation;
  for (const Variant& v : variants) {
    std::map<std::string, Cell> cells;
    if (v.name == "main") {
      cells = table["expnet"];
    } else {
      std::string stem = v.name;
      std::replace(stem.begin(), stem.end(), ':', '_');
      for (size_t h = 0; h < tasks.size(); ++h) cells[tasks[h].spec.name] = expnet_cell(h, "ablation-" + stem);
    }
    ablation.emplace_back(v, std::move(cells));
  }

  // ---- reports
  report["protocol"] = {{"seeds", o.seeds}, {"max_train", o.max_train}, {"max_test", o.max_test},
                        {"tune_examples", o.tune_examples}, {"baseline_budget_s", o.baseline_budget_s},
                        {"expnet", {{"config", o.train.model.to_json()}, {"loss", o.train.loss}, {"alpha", o.train.alpha},
                                    {"gamma", o.train.gamma}, {"filter_correct", o.train.filter_correct}, {"lr", o.train.lr},
                                    {"batch_size", o.train.batch_size}, {"max_epochs", o.train.max_epochs}, {"patience", o.train.patience}}},
                        {"baselines_requested", baseline_names}, {"baselines_dropped", dropped}};
  nlohmann::json results = nlohmann::json::object();
  std::ostringstream csv;
  csv << "section,method,heldout,metric,mean,std,runs,examples\n";
  for (const auto& m : methods)
    for (const auto& [task, cell] : table[m]) {
      results[m][task] = cell_json(cell);
      for (size_t k = 0; k < kMetrics.size(); ++k)
        csv << "main," << m << "," << task << "," << kMetrics[k] << "," << cell.mean[k] << "," << cell.std[k] << "," << cell.runs << "," << cell.examples << "\n";
    }
  report["results"] = results;
  report["cost"] = cost;
  nlohmann::json abl = nlohmann::json::array();
  for (const auto& [v, cells] : ablation) {
    nlohmann::json j = {{"variant", v.name}, {"what", v.what}, {"results", nlohmann::json::object()}};
    for (const auto& [task, cell] : cells) {
      j["results"][task] = cell_json(cell);
      for (size_t k = 0; k < kMetrics.size(); ++k)
        csv << "ablation," << v.name << "," << task << "," << kMetrics[k] << "," << cell.mean[k] << "," << cell.std[k] << "," << cell.runs << "," << cell.examples << "\n";
    }
    abl.push_back(j);
  }
  report["ablation"] = abl;
  report["seconds"] = seconds_since(start);

  std::ostringstream md;
  md << "# ExpNet leave-one-task-out report\n\n";
  md << "Columns are held-out tasks (ExpNet trained on the others). ExpNet: mean ± std over " << o.seeds.size()
     << " seed(s); baselines are deterministic given their options (one run).\n\n";
  Table task_table({"task", "classifier", "test spec", "examples used", "truncated", "rationale words lost to truncation",
                     "classifier accuracy on them"});
  for (const auto& t : report["tasks"])
    task_table.add_row({t["name"].get<std::string>(), fmt::format("{} (max {} tokens)", t["model"].get<std::string>(), t["max_tokens"].dump()),
                        t["test"]["spec"].get<std::string>(), fmt::format("{} of {}", t["test"]["used"].dump(), t["test"]["records"].dump()),
                        t["test"]["truncated"].dump(),
                        fmt::format("{} of {}", t["test"]["rationale_words_truncated_away"].dump(), t["test"]["rationale_words"].dump()),
                        fmt::format("{:.3f}", t["test_accuracy_on_used"].get<double>())});
  md << task_table.markdown();
  // One row per method (or variant), one column per held-out task.
  std::vector<std::string> task_header = {"method"};
  for (const auto& t : tasks) task_header.push_back(t.spec.name);
  auto metric_table = [&](const std::string& title, size_t metric) {
    md << "\n### " << title << "\n\n";
    Table mt(task_header);
    for (const auto& m : methods) {
      std::vector<std::string> row = {m};
      for (const auto& t : tasks) row.push_back(table[m].count(t.spec.name) ? fmt_cell(table[m][t.spec.name], metric, true) : "—");
      mt.add_row(row);
    }
    md << mt.markdown();
  };
  metric_table("Token F1, binarised at 0.5 (ExpNet sigmoid; baselines: min-max per example, threshold tuned on the source tasks)", 0);
  metric_table("Token F1, top-k with k = rationale length", 3);
  metric_table("Precision (threshold)", 1);
  metric_table("Recall (threshold)", 2);
  metric_table("AUROC", 6);
  metric_table("AUPRC", 7);
  if (!dropped.empty()) {
    md << "\nDropped baselines:\n\n";
    for (const auto& d : dropped) md << "- " << d["method"].get<std::string>() << " on " << d["task"].get<std::string>() << ": " << d["reason"].get<std::string>() << "\n";
  }
  md << "\n### Cost (explanations per second on each held-out test set)\n\n";
  Table cost_table(task_header);
  for (auto it = cost.begin(); it != cost.end(); ++it) {
    std::vector<std::string> row = {it.key()};
    for (const auto& t : tasks)
      row.push_back(it.value().contains(t.spec.name) ? fmt::format("{:.1f}", it.value()[t.spec.name]["examples_per_s"].get<double>()) : "—");
    cost_table.add_row(row);
  }
  md << cost_table.markdown();
  if (!ablation.empty()) {
    md << "\n### Ablation (token F1 at 0.5 / top-k F1 / AUPRC, mean over seeds)\n\n";
    std::vector<std::string> header = task_header;
    header[0] = "variant";
    Table at(header);
    for (const auto& [v, cells] : ablation) {
      std::vector<std::string> row = {v.name + " (" + v.what + ")"};
      for (const auto& t : tasks) {
        const Cell& c = cells.at(t.spec.name);
        row.push_back(fmt::format("{:.3f}±{:.3f} / {:.3f} / {:.3f}", c.mean[0], c.std[0], c.mean[3], c.mean[7]));
      }
      at.add_row(row);
    }
    md << at.markdown();
  }
  md << "\nTotal time " << format_duration(report["seconds"].get<double>()) << ".\n";
  write_file_atomic(join_path(o.out_dir, "report.md"), md.str());
  write_file_atomic(join_path(o.out_dir, "report.csv"), csv.str());
  write_file_atomic(join_path(o.out_dir, "report.json"), report.dump(2) + "\n");
  return report;
}

}  // namespace salient
