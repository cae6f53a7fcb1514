// Explanation subcommands: `explain` (one method over JSON lines) and `benchmark` (methods ×
// metrics over a dataset, resumable, with markdown/CSV/JSON tables and an HTML heatmap page).
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include <fmt/ranges.h>

#include "commands.h"
#include "data/dataset.h"
#include "eval/faithfulness.h"
#include "eval/plausibility.h"
#include "eval/benchmark.h"
#include "dist/shards.h"
#include "dist/world.h"
#include "explain/explainer.h"
#include "util/memory.h"
#include "util/progress.h"

namespace salient::cli {

namespace {

// Options shared by both commands: the explained output, seed and internal batch, and one flag
// per method parameter any registered method declares (--steps, --rule, --samples, --expnet...),
// parsed by the declared type for the methods that take it. A flag given that no chosen method
// takes is an error.
struct MethodArgs {
  std::map<std::string, std::string> given;          // parameter name → text as given
  std::map<std::string, CLI::Option*> flags;         // parameter name → its flag
  std::string score;
  int64_t internal_batch = 64;
  uint64_t seed = 0;

  void add(CLI::App* cmd) {
    std::map<std::string, std::vector<std::string>> takers;
    std::map<std::string, const ParamSpec*> spec;
    for (const auto& info : explainer_registry())
      for (const auto& p : info.params) {
        takers[p.name].push_back(info.name);
        spec.emplace(p.name, &p);
      }
    for (const auto& [name, p] : spec) {
      flags[name] = cmd->add_option(p->flag(), given[name],
                                    fmt::format("{}: {} (see --list)", fmt::join(takers[name], ", "), p->doc));
    }
    cmd->add_option("--internal-batch", internal_batch, "rows per internal forward pass (bounds memory)");
    cmd->add_option("--score", score,
                    "explained output: prob (softmax probability) | logit; default: the method's own (logit for the "
                    "gradient-weighted attention methods, prob otherwise)");
    cmd->add_option("--seed", seed, "seed of the sampling methods and of the order of tied scores");
  }
  bool was_given(const std::string& name) const { return flags.at(name)->count() > 0; }
  // Every given parameter flag must be taken by at least one of `methods`.
  void check_taken(const std::vector<std::string>& methods) const {
    for (const auto& [name, flag] : flags) {
      if (flag->count() == 0) continue;
      bool taken = false;
      for (const auto& m : methods)
        for (const auto& p : explainer_info(m).params) taken |= p.name == name;
      if (!taken)
        fail("{}: not a parameter of {} (salient explain --list shows each method's parameters)", flag->get_name(),
             fmt::join(methods, ", "));
    }
  }
  ExplainOptions options_for(const std::string& method) const {
    if (internal_batch <= 0) fail("--internal-batch: must be positive (got {})", internal_batch);
    ExplainOptions o;
    if (!score.empty()) o.output = parse_model_output(score);
    o.seed = seed;
    o.internal_batch = internal_batch;
    for (const auto& p : explainer_info(method).params) {
      if (!was_given(p.name)) continue;
      const std::string& text = given.at(p.name);
      size_t used = 0;
      try {
        if (p.type == ParamSpec::Type::Int) o.params[p.name] = static_cast<int64_t>(std::stoll(text, &used));
        else if (p.type == ParamSpec::Type::Number) o.params[p.name] = std::stod(text, &used);
        else o.params[p.name] = text, used = text.size();
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != text.size() || text.empty())
        fail("{}: expected {} {}, got '{}'", p.flag(), p.type == ParamSpec::Type::Int ? "an" : "a",
             p.type == ParamSpec::Type::Int ? "integer" : "number", text);
    }
    return with_declared_params(explainer_info(method), o);  // ranges and choices checked here, before any work
  }
};

// Every registered method with its family, summary, default output and parameters.
std::string method_list() {
  std::ostringstream out;
  for (const auto& info : explainer_registry()) {
    auto e = info.make();
    const std::string output =
        e->uses_model_output() ? "; explains the target " + model_output_name(e->default_output()) : "";
    out << info.name << "  [" << info.family << output << "]\n  " << info.summary << "\n";
    for (const auto& p : info.params) out << "    " << p.describe() << "\n";
  }
  return out.str();
}

// ---- explain ----
struct ExplainArgs {
  std::string model, method, input = "-", out = "-", target = "pred", word_agg = "sum", format = "auto";
  int64_t batch_size = 16;
  int max_length = 0;
  bool list = false;
  LongInputs long_inputs;  // --windows, --stride
  MethodArgs m;
};

// The text view of one explanation: the prediction with its probability, the explained class, and
// the tokens coloured (or bracketed) by score scaled by the largest |score| among content tokens.
std::string explanation_text(const Classifier& clf, const nlohmann::json& j, const torch::Tensor& probs, bool color) {
  const int64_t pred = probs.argmax().item<int64_t>();
  std::string out = fmt::format("{} (p = {:.3f}); {} explains {}:", clf.label_name(pred), probs[pred].item<double>(),
                                j["method"].get<std::string>(), j["target_label"].get<std::string>());
  const auto tokens = j["tokens"].get<std::vector<std::string>>();
  const auto scores = j["token_scores"].get<std::vector<double>>();
  double mx = 0;
  for (size_t t = 0; t < tokens.size(); ++t)
    if (!clf.tokenizer.is_structural(clf.tokenizer.token_to_id(tokens[t]))) mx = std::max(mx, std::abs(scores[t]));
  for (size_t t = 0; t < tokens.size(); ++t) {
    if (clf.tokenizer.is_structural(clf.tokenizer.token_to_id(tokens[t]))) continue;
    out += " " + colored_token(tokens[t], mx > 0 ? scores[t] / mx : 0.0, color);
  }
  return out + "\n";
}

// The class to explain for one input: pred (the prediction), gold (the input's "label" field, a
// class index or a label name), a class index, or a label name.
int64_t resolve_target(const std::string& target, const Classifier& clf, const InputItem& item, const std::string& where) {
  const ModelConfig& c = clf.model.config();
  if (target != "gold") return c.label_id(target);  // errors name the labels
  if (!item.fields.is_object() || !item.fields.contains("label") || item.fields["label"].is_null())
    fail("--target gold: {} has no \"label\" field", where);
  const nlohmann::json& v = item.fields["label"];
  if (v.is_number_integer()) {
    const int64_t id = v.get<int64_t>();
    if (id < 0 || id >= c.num_labels) fail("{}: label {} out of range for a model with {} labels", where, id, c.num_labels);
    return id;
  }
  if (!v.is_string()) fail("{}: label must be a class index or a label name, got {}", where, v.dump());
  try {
    return c.label_id(v.get<std::string>());
  } catch (const Error& e) {
    fail("{}: {}", where, e.what());
  }
}

void run_explain(const ExplainArgs& a) {
  if (a.list) {
    std::cout << method_list();
    return;
  }
  if (a.model.empty()) fail("--model: required");
  if (a.method.empty()) fail("--method: required (salient explain --list shows the methods)");
  // --output once named the explained output; a file called "prob" or "logit" is that old habit.
  if (a.out == "prob" || a.out == "logit")
    fail("--output: '{}' would be the output file's name; the explained output is --score {}", a.out, a.out);
  if (a.batch_size <= 0) fail("--batch-size: must be positive (got {})", a.batch_size);
  if (a.word_agg != "sum" && a.word_agg != "max") fail("--word-agg: expected sum or max, got '{}'", a.word_agg);
  auto explainer = make_explainer(a.method);  // unknown names fail before the model loads
  a.m.check_taken({a.method});
  const ExplainOptions opts = a.m.options_for(a.method);
  Classifier clf = load_classifier(a.model);
  if (a.target != "pred" && a.target != "gold") {
    try {
      resolve_target(a.target, clf, InputItem{}, "--target");
    } catch (const Error& e) {
      fail("--target: {}", e.what());
    }
  }
  const std::string source = a.input == "-" ? "<stdin>" : a.input;
  std::vector<InputItem> items;
  std::vector<Encoding> encs;
  auto encode_items = [&] {
    encs.clear();
    for (const auto& item : items) {
      std::string where = fmt::format("{}:{}", source, item.line_no);
      encs.push_back(item.text ? clf.encode(*item.text, item.text_pair, a.max_length)
                               : clf.encode_ids(item.input_ids, item.token_type_ids, where));
    }
  };
  const bool text = text_format(a.format, a.out), color = text && (a.out.empty() || a.out == "-") && ::isatty(STDOUT_FILENO);
  check_window_flags(a.long_inputs, a.max_length);
  // --windows: each input whole, through the public API's windows (model/windows.h).
  const Model windowed(clf);
  auto explain_windows = [&](size_t s, size_t e) {
    std::string lines;
    for (size_t i = s; i < e; ++i) {
      const InputItem& item = items[i];
      const std::string where = fmt::format("{}:{}", source, item.line_no);
      if (!item.text) fail("{}: --windows reads 'text', not 'input_ids'", where);
      const TextInput input{*item.text, item.text_pair};
      const std::string target =
          a.target == "pred" ? "pred" : std::to_string(resolve_target(a.target, clf, item, where));
      nlohmann::json j = windowed.explain({input}, a.method, opts.params, target,
                                          opts.output ? model_output_name(*opts.output) : "", a.batch_size, opts.seed,
                                          a.long_inputs)[0].to_json();
      if (item.fields.is_object() && item.fields.contains("id")) j["id"] = item.fields["id"];
      if (text) {
        const Prediction p = windowed.predict({input}, a.batch_size, a.long_inputs)[0];
        lines += explanation_text(clf, j, torch::tensor(p.probs, torch::kFloat64), color);
      } else {
        lines += j.dump() + "\n";
      }
    }
    return lines;
  };
  // The lines of inputs [s, e) of `items`: one batch, explained and formatted.
  auto explain_batch = [&](size_t s, size_t e) {
    if (a.long_inputs.windows) return explain_windows(s, e);
    std::vector<const Encoding*> chunk;
    for (size_t i = s; i < e; ++i) chunk.push_back(&encs[i]);
    std::vector<int64_t> targets;
    if (a.target == "pred") {
      targets = predicted_classes(clf, chunk);
    } else {
      for (size_t i = s; i < e; ++i)
        targets.push_back(resolve_target(a.target, clf, items[i], fmt::format("{}:{}", source, items[i].line_no)));
    }
    std::vector<Explanation> ex = explainer->explain(clf, chunk, targets, opts);
    torch::Tensor probs;
    if (text) {
      torch::NoGradGuard no_grad;
      Batch b = make_batch(chunk, clf.tokenizer.pad_id(), clf.model.device());
      probs = torch::softmax(clf.model.logits(b.input_ids, b.token_type_ids, b.attention_mask), -1).to(torch::kCPU);
    }
    std::string lines;
    for (size_t i = 0; i < chunk.size(); ++i) {
      const InputItem& item = items[s + i];
      const nlohmann::json id = item.fields.is_object() && item.fields.contains("id") ? item.fields["id"] : nlohmann::json();
      const nlohmann::json j = explanation_json(clf, *chunk[i], ex[i], item.text, a.word_agg == "max", id);
      lines += text ? explanation_text(clf, j, probs[i], color) : j.dump() + "\n";
    }
    return lines;
  };
  if (dist::sharded()) {
    // Under mpirun: chunks of one batch each, balanced over the ranks by cost; each finished chunk
    // is a file, and rank 0 joins them into the output one process writes (docs/distributed.md).
    // The plan needs every input's length, so the inputs are read whole.
    dist::require_sharded_files("-i", a.input, "-o", a.out);
    items = read_input_items(a.input);
    encode_items();
    std::vector<double> costs;
    const std::string family = explainer_info(a.method).family;
    for (const auto& e : encs) costs.push_back(dist::explain_cost(family, e.ids.size()));
    const nlohmann::json settings = {{"command", "explain"}, {"model", a.model}, {"method", a.method},
                                     {"params", opts.params},
                                     {"output", opts.output ? model_output_name(*opts.output) : ""}, {"seed", opts.seed},
                                     {"target", a.target}, {"word_agg", a.word_agg}, {"max_length", a.max_length},
                                     {"format", text ? "text" : "json"}, {"input", a.input}, {"inputs", encs.size()},
                                     {"input_bytes", read_file(a.input).size()}, {"batch_size", a.batch_size}};
    dist::run_sharded(costs, static_cast<size_t>(a.batch_size), a.out, settings, "explain " + a.method, explain_batch);
    return;
  }
  // One process: block by block (whole batches each, the batches of reading everything first),
  // so memory stays bounded whatever the input's length.
  InputReader reader(a.input);
  Output out(a.out);
  Progress progress("explain " + a.method, count_input_lines(a.input), "ex");
  const size_t block = input_block(a.batch_size);
  for (items = reader.next(block); !items.empty(); items = reader.next(block)) {
    encode_items();
    for (size_t s = 0; s < encs.size(); s += a.batch_size) {
      const size_t e = std::min(encs.size(), s + static_cast<size_t>(a.batch_size));
      out.text(explain_batch(s, e));
      progress.update(static_cast<int64_t>(e - s));
    }
  }
  progress.finish();
  out.commit();
}

// ---- benchmark ----
struct BenchmarkArgs {
  std::string model, data, data_dir, methods, metrics, out;  // metrics "": the library's default for the data
  int64_t limit = 100, batch_size = 8, bootstrap = 1000, heatmaps = 10;
  LongInputs long_inputs;  // --windows, --stride
  MethodArgs m;
  SimulabilityOptions sim;
  std::string sim_sizes = "500", sim_seeds = "0,9,11,30,69", sim_optimizer = "sgd", sim_early_stopping = "accuracy";
  double sim_beta = -1;  // not given: the paper's default for each method's family
  CLI::Option* sim_beta_option = nullptr;
  std::vector<CLI::Option*> sim_options;
  bool sim_given() const {
    for (const CLI::Option* opt : sim_options)
      if (opt->count() > 0) return true;
    return false;
  }
};

void run_benchmark_command(const BenchmarkArgs& a) {
  BenchmarkOptions o;
  o.model_dir = a.model;
  o.data_spec = a.data;
  o.data_dir = a.data_dir;
  o.out_dir = a.out;
  o.methods = split_list(a.methods);
  o.metrics = split_list(a.metrics);
  for (const auto& m : o.methods) explainer_info(m);  // unknown names fail first
  for (const auto& m : o.metrics) metric_info(m);
  a.m.check_taken(o.methods);
  for (const auto& m : o.methods) o.method_options[m] = a.m.options_for(m);
  o.faithfulness.removal = parse_removal(a.m.was_given("removal") ? a.m.given.at("removal") : "mask");
  o.faithfulness.tie_seed = a.m.seed;
  // Faithfulness measures the probability (ERASER) unless an output is asked for explicitly.
  o.metric_output = a.m.score.empty() ? ModelOutput::Probability : parse_model_output(a.m.score);
  o.internal_batch = a.m.internal_batch;
  o.seed = a.m.seed;
  o.limit = a.limit;
  o.batch_size = a.batch_size;
  o.bootstrap = a.bootstrap;
  o.heatmaps = a.heatmaps;
  o.windows = a.long_inputs.windows;
  o.stride = a.long_inputs.stride;
  // The --sim-* values are checked whether or not simulability is asked for: none is ignored silently.
  o.simulability = a.sim;
  o.simulability.sizes = parse_int_list(a.sim_sizes, "--sim-sizes");
  o.simulability.seeds.clear();
  for (int64_t s : parse_int_list(a.sim_seeds, "--sim-seeds", 0)) o.simulability.seeds.push_back(static_cast<uint64_t>(s));
  o.simulability.student.optimizer = smat::parse_optimizer(a.sim_optimizer, "--sim-optimizer");
  if (a.sim_early_stopping != "loss" && a.sim_early_stopping != "accuracy")
    fail("--sim-early-stopping: must be loss or accuracy, got '{}'", a.sim_early_stopping);
  o.simulability.student.select_by_accuracy = a.sim_early_stopping == "accuracy";
  if (a.sim_beta_option->count() > 0) {  // checked here too: the library reads -1 as "the family's default"
    if (!(a.sim_beta >= 0) || !std::isfinite(a.sim_beta)) fail("--sim-beta: must be ≥ 0, got {}", a.sim_beta);
    o.simulability.student.beta = a.sim_beta;
  }
  if (std::find(o.metrics.begin(), o.metrics.end(), "simulability") == o.metrics.end()) {
    const bool given = a.sim_given();
    if (given) fail("--sim-*: simulability options given but --metrics has no 'simulability'");
  }
  std::cout << run_benchmark(o);
}

}  // namespace

void add_explain_commands(CLI::App& app, std::vector<Command>& commands) {
  static ExplainArgs ex;
  auto* ex_cmd = app.add_subcommand("explain", "explain predictions: JSON lines → method, target, tokens, scores, word_scores, extras");
  ex_cmd->add_option("--model", ex.model, "model directory");
  ex_cmd->add_option("--method", ex.method, "explainer name (salient explain --list)");
  ex_cmd->add_flag("--list", ex.list, "list every method with its summary, default output and parameters");
  ex_cmd->add_option("--input,-i", ex.input, "input file (default stdin)");
  ex_cmd->add_option("--out,-o,--output", ex.out, "output file (default stdout)");
  ex_cmd->add_option("--target", ex.target,
                     "class to explain: pred (default), gold (the input's \"label\"), a class index or a label name");
  ex_cmd->add_option("--batch-size", ex.batch_size, "inputs explained together");
  ex_cmd->add_option("--max-length", ex.max_length, "truncate inputs to this many tokens");
  ex_cmd->add_flag("--windows", ex.long_inputs.windows, "read inputs longer than the model's positions whole, as overlapping windows; scores averaged where they overlap");
  ex_cmd->add_option("--stride", ex.long_inputs.stride, "with --windows: word pieces between window starts (default: half a window)");
  ex_cmd->add_option("--word-agg", ex.word_agg, "word scores: sum (default) or max over the word's pieces");
  ex_cmd->add_option("--format", ex.format,
                     "auto (default: a coloured text view on a terminal, JSON lines to a file or pipe) | json | text");
  ex.m.add(ex_cmd);

  static BenchmarkArgs bm;
  auto* bm_cmd = app.add_subcommand("benchmark", "methods × metrics over a dataset → summary.{md,csv,json}, heatmaps.html");
  bm_cmd->add_option("--model", bm.model, "model directory")->required();
  bm_cmd->add_option("--data", bm.data, "dataset spec: sst2:dev, sst-trees:dev, hatexplain:val, eraser:val, cola:dev or a file")->required();
  bm_cmd->add_option("--data-dir", bm.data_dir, "directory of the shared datasets (default ../shared/data)");
  bm_cmd->add_option("--methods", bm.methods, "comma-separated explainer names")->required();
  bm_cmd->add_option("--metrics", bm.metrics, "comma-separated metric names (default: token_f1, token_auroc, token_auprc where the data has rationales, and comprehensiveness, sufficiency and their AOPCs)");
  bm_cmd->add_option("--limit", bm.limit, "number of examples (the first N)");
  bm_cmd->add_option("--out", bm.out, "output directory (results.jsonl is appended to and reused)")->required();
  bm_cmd->add_option("--batch-size", bm.batch_size, "inputs explained together");
  bm_cmd->add_option("--bootstrap", bm.bootstrap, "bootstrap resamples for the 95% CI");
  bm_cmd->add_option("--heatmaps", bm.heatmaps, "examples shown in heatmaps.html");
  bm_cmd->add_flag("--windows", bm.long_inputs.windows, "read inputs longer than the model's positions whole, as overlapping windows: explained window by window (--batch-size windows at a time) and stitched; the explained class and faithfulness from the windows' mean logits");
  bm_cmd->add_option("--stride", bm.long_inputs.stride, "with --windows: word pieces between window starts (default: half a window)");
  bm.m.add(bm_cmd);
  // --metrics simulability (SMaT's protocol; docs/smat.md): students trained on the model's labels.
  bm.sim_options = {
      bm_cmd->add_option("--sim-sizes", bm.sim_sizes, "simulability: student training sizes, comma-separated"),
      bm_cmd->add_option("--sim-seeds", bm.sim_seeds, "simulability: student seeds, comma-separated"),
      bm_cmd->add_option("--sim-test-size", bm.sim.test_size, "simulability: texts held out to measure agreement"),
      bm_cmd->add_option("--sim-valid-size", bm.sim.valid_size, "simulability: texts for early stopping"),
      bm_cmd->add_option("--sim-max-length", bm.sim.max_length, "simulability: tokens per text, specials included"),
      bm_cmd->add_option("--sim-student-init", bm.sim.student_init, "simulability: encoder the students start from (default: scratch)"),
      bm_cmd->add_option("--sim-optimizer", bm.sim_optimizer, "simulability: student optimiser, sgd (the paper's) or adamw"),
      bm_cmd->add_option("--sim-lr", bm.sim.student.lr, "simulability: student learning rate"),
      bm_cmd->add_option("--sim-max-epochs", bm.sim.student.max_epochs, "simulability: student epochs at most"),
      bm_cmd->add_option("--sim-patience", bm.sim.student.patience, "simulability: epochs without improvement before stopping"),
      bm_cmd->add_option("--sim-early-stopping", bm.sim_early_stopping, "simulability: keep the epoch by valid loss or accuracy"),
      bm_cmd->add_option("--sim-temperature", bm.sim.temperature, "simulability: softmax temperature over score / max|score|"),
      bm.sim_beta_option = bm_cmd->add_option("--sim-beta", bm.sim_beta,
                         "simulability: weight of the explanation loss (default: 5 for the attention family, 0.2 otherwise)")};

  commands.push_back({ex_cmd, [] { run_explain(ex); }});
  commands.push_back({bm_cmd, [] { run_benchmark_command(bm); }});
}

}  // namespace salient::cli
