// Explanation subcommands: `explain` (one method over JSON lines) and `benchmark` (methods ×
// metrics over a dataset, resumable, with markdown/CSV/JSON tables and an HTML heatmap page), over
// salient/runs.h and salient/studies.h.
#include <unistd.h>

#include <fmt/ranges.h>

#include "commands.h"
#include "salient/runs.h"
#include "salient/studies.h"

namespace salient::cli {

namespace {

using nlohmann::json;

// Options shared by both commands: the explained output, seed and internal batch, and one flag
// per method parameter any registered method declares (--steps, --rule, --samples, --expnet...);
// the library parses each by the declared type for the methods that take it, and refuses one no
// chosen method takes.
struct MethodArgs {
  std::map<std::string, std::string> given;   // parameter name → text as given
  std::map<std::string, CLI::Option*> flags;  // parameter name → its flag
  MethodSettings settings;

  void add(CLI::App* cmd) {
    std::map<std::string, std::vector<std::string>> takers;
    std::map<std::string, const ParamSpec*> spec;
    for (const auto& info : methods())
      for (const auto& p : info.params) {
        takers[p.name].push_back(info.name);
        spec.emplace(p.name, &p);
      }
    for (const auto& [name, p] : spec)
      flags[name] = cmd->add_option(p->flag(), given[name], fmt::format("{}: {} (see --list)", fmt::join(takers[name], ", "), p->doc));
    cmd->add_option("--internal-batch", settings.internal_batch, "rows per internal forward pass (bounds memory)");
    cmd->add_option("--max-batch-tokens", settings.max_batch_tokens,
                    "token positions (rows × padded length) per internal forward pass (bounds memory; default 4096)");
    cmd->add_option("--score", settings.score,
                    "explained output: prob (softmax probability) | logit; default: the method's own (logit for the "
                    "gradient-weighted attention methods, prob otherwise)");
    cmd->add_option("--seed", settings.seed, "seed of the sampling methods and of the order of tied scores");
  }
  // The settings with the parameter flags that were given.
  MethodSettings given_settings() const {
    MethodSettings s = settings;
    for (const auto& [name, flag] : flags)
      if (flag->count() > 0) s.params[name] = given.at(name);
    return s;
  }
};

struct ExplainArgs {
  ExplainRun run;
  std::string format = "auto";
  bool list = false;
  MethodArgs m;
};

void run_explain_command(ExplainArgs& a) {
  if (a.list) {
    std::cout << method_list();
    return;
  }
  a.run.text = text_format(a.format, a.run.out);
  a.run.color = a.run.text && (a.run.out.empty() || a.run.out == "-") && ::isatty(STDOUT_FILENO);
  a.run.settings = a.m.given_settings();
  run_explain(a.run);
}

struct BenchmarkArgs {
  BenchmarkSpec spec;
  std::string methods, metrics;  // metrics "": the library's default for the data
  MethodArgs m;
};

void run_benchmark_command(BenchmarkArgs& a) {
  a.spec.methods = split_list(a.methods);
  a.spec.metrics = split_list(a.metrics);
  const MethodSettings s = a.m.given_settings();
  a.spec.shared_params = s.params;
  a.spec.score = s.score;
  a.spec.internal_batch = s.internal_batch;
  a.spec.max_batch_tokens = s.max_batch_tokens;
  a.spec.seed = s.seed;
  std::cout << run_benchmark(a.spec);
}

}  // namespace

void add_explain_commands(CLI::App& app, std::vector<Command>& commands) {
  static ExplainArgs ex;
  auto* ex_cmd = app.add_subcommand("explain", "explain predictions: JSON lines → method, target, tokens, scores, word_scores, extras");
  ex_cmd->add_option("--model", ex.run.model, "model directory");
  ex_cmd->add_option("--method", ex.run.method, "explainer name (salient explain --list)");
  ex_cmd->add_flag("--list", ex.list, "list every method with its summary, default output and parameters");
  ex_cmd->add_option("--input,-i", ex.run.input, "input file (default stdin)");
  ex_cmd->add_option("--out,-o,--output", ex.run.out, "output file (default stdout)");
  ex_cmd->add_option("--target", ex.run.target,
                     "class to explain: pred (default), gold (the input's \"label\"), a class index or a label name");
  ex_cmd->add_option("--batch-size", ex.run.batch_size, "inputs explained together");
  ex_cmd->add_option("--max-length", ex.run.max_length, "truncate inputs to this many tokens");
  ex_cmd->add_flag("--windows", ex.run.long_inputs.windows, "read inputs longer than the model's positions whole, as overlapping windows; scores averaged where they overlap");
  ex_cmd->add_option("--stride", ex.run.long_inputs.stride, "with --windows: word pieces between window starts (default: half a window)");
  ex_cmd->add_option("--word-agg", ex.run.word_agg, "word scores: sum (default) or max over the word's pieces");
  ex_cmd->add_option("--format", ex.format,
                     "auto (default: a coloured text view on a terminal, JSON lines to a file or pipe) | json | text");
  ex.m.add(ex_cmd);

  static BenchmarkArgs bm;
  auto* bm_cmd = app.add_subcommand("benchmark", "methods × metrics over a dataset → summary.{md,csv,json}, heatmaps.html");
  bm_cmd->add_option("--model", bm.spec.model_dir, "model directory")->required();
  bm_cmd->add_option("--data", bm.spec.data_spec, "dataset spec: sst2:dev, sst-trees:dev, hatexplain:val, eraser:val, cola:dev or a file")->required();
  add_data_dir(bm_cmd, bm.spec.data_dir);
  bm_cmd->add_option("--methods", bm.methods, "comma-separated explainer names")->required();
  bm_cmd->add_option("--metrics", bm.metrics, "comma-separated metric names (default: token_f1, token_auroc, token_auprc where the data has rationales, and comprehensiveness, sufficiency and their AOPCs)");
  bm_cmd->add_option("--limit", bm.spec.limit, "number of examples (the first N)");
  bm_cmd->add_option("--metric-removal", bm.spec.metric_removal,
                     "how the faithfulness metrics remove tokens: mask (default: [MASK], ERASER's) or delete; an "
                     "explainer's own --removal (occlusion, LIME, KernelSHAP) is its perturbation")
      ->check(CLI::IsMember({"mask", "delete"}));
  bm_cmd->add_flag("--positive-only", bm.spec.positive_only,
                   "ferret's only_pos: every top k from positive scores only (k capped at their count), AUPRC over max(score, 0)");
  bm_cmd->add_flag("--aopc-distinct", bm.spec.aopc_distinct,
                   "ferret's AOPC: each distinct top-k set counted once, not once per fraction");
  bm_cmd->add_option("--out", bm.spec.out_dir, "output directory (results.jsonl is appended to and reused)")->required();
  bm_cmd->add_option("--batch-size", bm.spec.batch_size, "inputs explained together");
  bm_cmd->add_option("--bootstrap", bm.spec.bootstrap, "bootstrap resamples for the 95% CI");
  bm_cmd->add_option("--heatmaps", bm.spec.heatmaps, "examples shown in heatmaps.html");
  bm_cmd->add_flag("--windows", bm.spec.windows, "read inputs longer than the model's positions whole, as overlapping windows: explained window by window (--batch-size windows at a time) and stitched; the explained class and faithfulness from the windows' mean logits");
  bm_cmd->add_option("--stride", bm.spec.stride, "with --windows: word pieces between window starts (default: half a window)");
  bm.m.add(bm_cmd);
  // --metrics simulability (SMaT's protocol; docs/smat.md): students trained on the model's labels.
  json& sim = bm.spec.simulability;
  add_named_option<std::string>(bm_cmd, "--sim-sizes", sim, "sizes", "simulability: student training sizes, comma-separated (default 500)");
  add_named_option<std::string>(bm_cmd, "--sim-seeds", sim, "seeds", "simulability: student seeds, comma-separated (default 0,9,11,30,69)");
  add_named_option<int64_t>(bm_cmd, "--sim-test-size", sim, "test_size", "simulability: texts held out to measure agreement (default 2000)");
  add_named_option<int64_t>(bm_cmd, "--sim-valid-size", sim, "valid_size", "simulability: texts for early stopping (default 500)");
  add_named_option<int64_t>(bm_cmd, "--sim-max-length", sim, "max_length", "simulability: tokens per text, specials included (default 64)");
  add_named_option<std::string>(bm_cmd, "--sim-student-init", sim, "student_init", "simulability: encoder the students start from (default: scratch)");
  add_named_option<std::string>(bm_cmd, "--sim-optimizer", sim, "optimizer", "simulability: student optimiser, sgd (the paper's, default) or adamw");
  add_named_option<double>(bm_cmd, "--sim-lr", sim, "lr", "simulability: student learning rate (default 5e-3)");
  add_named_option<int>(bm_cmd, "--sim-max-epochs", sim, "max_epochs", "simulability: student epochs at most (default 100)");
  add_named_option<int>(bm_cmd, "--sim-patience", sim, "patience", "simulability: epochs without improvement before stopping (default 0: the authors')");
  add_named_option<std::string>(bm_cmd, "--sim-early-stopping", sim, "early_stopping", "simulability: keep the epoch by valid accuracy (default) or loss");
  add_named_option<double>(bm_cmd, "--sim-temperature", sim, "temperature", "simulability: softmax temperature over score / max|score| (default 0.1)");
  add_named_option<double>(bm_cmd, "--sim-beta", sim, "beta",
                           "simulability: weight of the explanation loss (default: 5 for the attention family, 0.2 otherwise)");

  commands.push_back({ex_cmd, [] { run_explain_command(ex); }});
  commands.push_back({bm_cmd, [] { run_benchmark_command(bm); }});
}

}  // namespace salient::cli
