// The benchmark runner: methods × metrics over a dataset, resumable, with bootstrap CIs, tables and
// heatmaps. See src/eval/benchmark.h.
#include "eval/benchmark.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data/dataset.h"
#include "dist/shards.h"
#include "salient/distributed.h"
#include "eval/plausibility.h"
#include "explain/long_inputs.h"
#include "explain/memory.h"
#include "eval/metric.h"
#include "util/error.h"
#include "util/append_file.h"
#include "util/io.h"
#include "util/table.h"
#include "util/memory.h"
#include "util/progress.h"
#include "util/stats.h"

namespace salient {
namespace {

// The (example, method) records of results.jsonl (none when it does not exist). A run killed
// mid-write leaves a last line without its newline: it is ignored, and with `repair` the file is
// rewritten without it, so that appending does not glue the next record onto it. A damaged line
// is skipped: its record is recomputed.
std::map<std::pair<size_t, std::string>, nlohmann::json> read_results(const std::string& path, bool repair) {
  std::map<std::pair<size_t, std::string>, nlohmann::json> done;
  if (!file_exists(path)) return done;
  std::string text = read_file(path);
  if (!text.empty() && text.back() != '\n') {
    text.erase(text.find_last_of('\n') == std::string::npos ? 0 : text.find_last_of('\n') + 1);
    if (repair) write_file_atomic(path, text);
  }
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const std::exception&) {
      continue;
    }
    done[{j.at("index").get<size_t>(), j.at("method").get<std::string>()}] = j;
  }
  return done;
}

}  // namespace

std::string run_benchmark(const BenchmarkOptions& a) {
  if (a.out_dir.empty()) fail("--out: required");
  // A dataset-level metric (simulability trains students) is not scored per example: each runs as
  // a study of its own (MetricFamily::run_study), after the per-example metrics.
  for (size_t i = 0; i < a.metrics.size(); ++i) {
    const MetricFamily* study = nullptr;
    for (const MetricFamily& f : metric_families())
      for (const MetricInfo& info : f.metrics)
        if (f.run_study && info.name == a.metrics[i]) study = &f;
    if (!study) continue;
    if (a.methods.empty()) fail("--methods: give at least one method");
    for (const auto& m : a.methods) explainer_info(m);
    BenchmarkOptions rest = a;
    rest.metrics.erase(rest.metrics.begin() + static_cast<std::ptrdiff_t>(i));
    const std::string md = rest.metrics.empty() ? "" : run_benchmark(rest) + "\n";
    const std::string section = study->run_study(a);
    return dist::is_root() ? md + section : "";
  }
  if (a.limit <= 0) fail("--limit: must be positive (got {})", a.limit);
  if (a.batch_size <= 0) fail("--batch-size: must be positive (got {})", a.batch_size);
  if (a.bootstrap < 0) fail("--bootstrap: must be >= 0 (got {})", a.bootstrap);
  if (a.heatmaps < 0) fail("--heatmaps: must be >= 0 (got {})", a.heatmaps);
  if (a.stride < 0) fail("--stride: must be >= 0 (got {})", a.stride);
  if (a.stride != 0 && !a.windows) fail("--stride: only with --windows");
  const std::vector<std::string>& methods = a.methods;
  if (methods.empty()) fail("--methods: give at least one method");
  for (const auto& m : a.metrics) metric_info(m);  // unknown names fail before any work
  std::map<std::string, std::unique_ptr<Explainer>> explainers;
  std::map<std::string, ExplainOptions> method_options;
  for (const auto& m : methods) {
    explainers[m] = make_explainer(m);
    auto it = a.method_options.find(m);
    method_options[m] = with_declared_params(explainer_info(m), it == a.method_options.end() ? ExplainOptions{} : it->second);
  }
  FaithfulnessOptions fopts = a.faithfulness;
  const ModelOutput metric_output = a.metric_output;

  Dataset data = load_dataset(a.data_spec, a.data_dir.empty() ? shared_data_dir() : a.data_dir);
  // No metrics named: ERASER's plausibility metrics where the data has human rationales, and the
  // faithfulness ones always.
  std::vector<std::string> metrics = a.metrics;
  if (metrics.empty()) {
    if (data.has_rationales()) metrics = {"token_f1", "token_auroc", "token_auprc"};
    for (const char* m : {"comprehensiveness", "sufficiency", "aopc_comprehensiveness", "aopc_sufficiency"})
      metrics.push_back(m);
  }
  // The families the asked metrics belong to, in registry order: each computes its own per example.
  std::vector<const MetricFamily*> families;
  for (const MetricFamily& f : metric_families())
    if (std::any_of(metrics.begin(), metrics.end(), [&](const std::string& m) { return &metric_family_of(m) == &f; })) {
      if (f.needs_rationales && !data.has_rationales())
        fail("--metrics: {} metrics need human rationales but '{}' has none (use faithfulness metrics only)", f.name,
             a.data_spec);
      families.push_back(&f);
    }
  Classifier clf = load_classifier(a.model_dir);
  fopts.mask_id = clf.tokenizer.mask_id();
  const MetricSettings settings{fopts, metrics};
  const MetricFamily& cost_family = metric_family_of("time_ms");
  // A regression model's faithfulness is measured on its value (a softmax over one output is 1).
  const ModelOutput measured = clf.model.config().num_labels == 1 ? ModelOutput::Logit : metric_output;
  const size_t n = std::min<size_t>(data.records.size(), a.limit);
  std::vector<Encoding> encs;
  for (size_t i = 0; i < n; ++i) {
    const Record& r = data.records[i];
    if (a.windows && r.text_pair) fail("--windows: reads one text per example, but record '{}' is a pair", r.id);
    // --windows: whole, untruncated (split into windows where explained and scored).
    encs.push_back(a.windows ? clf.tokenizer.encode(r.text, std::nullopt, 0) : clf.encode(r.text, r.text_pair));
  }
  // The explained class of each example: the model's prediction (from the windows' mean logits).
  auto predicted = [&](const std::vector<const Encoding*>& inputs) {
    if (!a.windows) return predicted_classes(clf, inputs);
    std::vector<TokenSequence> seqs;
    for (const Encoding* e : inputs) seqs.push_back(to_sequence(*e));
    std::vector<int64_t> classes;
    for (const auto& l : windowed_logits(clf, seqs, a.stride, a.limits()))
      classes.push_back(std::max_element(l.begin(), l.end()) - l.begin());
    return classes;
  };

  // Resume: (example, method) pairs already in results.jsonl with every faithfulness metric asked
  // for are skipped (a run that asked for fewer did not compute the others).
  make_dirs(a.out_dir);
  if (dist::is_root()) remove_stale_temporaries(a.out_dir);  // a killed run's; live writers are kept
  const std::string results_path = join_path(a.out_dir, "results.jsonl");
  std::map<std::pair<size_t, std::string>, nlohmann::json> done = read_results(results_path, !dist::sharded());
  auto conventions_json = [](const FaithfulnessOptions& f, ModelOutput output) {
    return nlohmann::json{{"removal", f.removal == Removal::Mask ? "mask" : "delete"},
                          {"positive_only", f.positive_only}, {"aopc_distinct", f.aopc_distinct},
                          {"output", model_output_name(output)}, {"tie_seed", f.tie_seed}};
  };
  const nlohmann::json default_conventions = conventions_json(FaithfulnessOptions{}, ModelOutput::Probability),
                       run_conventions = conventions_json(fopts, measured);
  for (auto it = done.begin(); it != done.end();) {
    const size_t i = it->first.first;
    const nlohmann::json& mj = it->second["metrics"];
    const bool exempt = i >= n || [&] {  // an input without removable tokens has no faithfulness
      const std::vector<bool> r = removable_positions(clf, encs[i]);
      return std::find(r.begin(), r.end(), true) == r.end();
    }();
    // A line scored under other metric conventions (removal, positive_only, aopc_distinct, the
    // measured output, the tie order) is recomputed, not mixed in. A line without them is taken as
    // scored under the defaults (lines written before they were recorded may not have been: a
    // rerun of such a study with other settings should start in a fresh --out).
    const nlohmann::json conventions = it->second.value("metric_conventions", default_conventions);
    if (conventions != run_conventions) {
      it = done.erase(it);
      continue;
    }
    const bool complete = exempt || std::all_of(metrics.begin(), metrics.end(), [&](const std::string& m) {
      return !metric_family_of(m).required_on_resume || mj.contains(m);
    });
    it = complete ? std::next(it) : done.erase(it);
  }

  // The lines of one method over examples [s, e): computed for the pairs not done; with
  // `with_done`, the pairs already done are written too (a sharded chunk holds all its lines).
  auto score_examples = [&](size_t s, size_t e, const std::string& method, bool with_done) {
    std::string lines;
    std::vector<size_t> todo;
    std::vector<const Encoding*> todo_encs;
    for (size_t i = s; i < e; ++i)
      if (!done.count({i, method})) {
        todo.push_back(i);
        todo_encs.push_back(&encs[i]);
      }
    std::vector<nlohmann::json> computed;
    if (!todo.empty()) {
      std::vector<int64_t> todo_targets = predicted(todo_encs);
      PeakMemorySampler sampler;
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<Explanation> ex;
      if (a.windows) {
        for (size_t k = 0; k < todo.size(); ++k)
          ex.push_back(explain_windows(*explainers[method], clf,
                                       split_windows(*todo_encs[k], clf.model.config().max_tokens(), a.stride, "--stride"),
                                       todo_encs[k]->ids.size(), todo_targets[k], method_options[method], a.batch_size));
      } else {
        ex = explainers[method]->explain(clf, todo_encs, todo_targets, method_options[method]);
      }
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
                        double(todo.size());
      const double mem = sampler.stop();
      // Estimated for the whole chunk, so that a resumed run writes the same number.
      int64_t longest = 0;
      for (size_t i = s; i < e; ++i) longest = std::max<int64_t>(longest, static_cast<int64_t>(encs[i].ids.size()));
      const double estimate =
          static_cast<double>(explain_bytes(clf.model.config(), explainer_info(method).footprint, method_options[method].params,
                                            longest, method_options[method].limits(), static_cast<int64_t>(e - s))) /
          (1024.0 * 1024.0);
      for (size_t k = 0; k < todo.size(); ++k) {
        const size_t i = todo[k];
        const Record& rec = data.records[i];
        const Encoding& enc = encs[i];
        const int64_t target = ex[k].target;
        SequenceScorer scorer = [&](const std::vector<TokenSequence>& seqs) {
          const std::vector<int64_t> targets(seqs.size(), target);
          return a.windows ? score_sequences_windowed(clf, seqs, targets, measured, a.stride, a.limits())
                           : score_sequences(clf, seqs, targets, measured, a.limits());
        };
        const ScoredExample example{clf, rec, enc, ex[k], data.has_rationales(), {ms, mem, estimate}, scorer};
        nlohmann::json m = nlohmann::json::object();
        cost_family.compute(example, settings, m);  // every line says what its explanation cost
        for (const MetricFamily* f : families)
          if (f != &cost_family && f->compute) f->compute(example, settings, m);
        nlohmann::json line = explanation_json(clf, enc, ex[k], std::nullopt, false, rec.id);
        line["index"] = i;
        line["label"] = rec.label;
        // The input and its gold, so that a line can be scored again elsewhere (e.g. by ferret):
        // per token 1 / 0 where the word rationale is ≥ 0.5 / below, −1 where no word is labelled.
        line["text"] = rec.text;
        if (rec.text_pair) line["text_pair"] = *rec.text_pair;
        if (!rec.rationale.empty())
          line["token_rationale"] = project_rationale(rec.text, enc, rec.rationale, "record '" + rec.id + "'");
        line["metrics"] = m;
        if (run_conventions != default_conventions) line["metric_conventions"] = run_conventions;
        computed.push_back(std::move(line));
      }
    }
    size_t next = 0;
    for (size_t i = s; i < e; ++i) {
      const bool fresh = next < todo.size() && todo[next] == i;
      if (fresh) done[{i, method}] = std::move(computed[next++]);
      if (fresh || with_done) lines += done.at({i, method}).dump() + "\n";
    }
    return lines;
  };

  if (dist::sharded()) {
    // Under mpirun: chunks of one batch (every method's lines for those examples, in the order one
    // process writes them), balanced over the ranks by cost; rank 0 joins them into results.jsonl
    // and alone writes the summaries (docs/distributed.md).
    std::vector<double> costs(n, 0.0);
    for (const auto& method : methods) {
      const std::string family = explainer_info(method).family;
      for (size_t i = 0; i < n; ++i) costs[i] += dist::explain_cost(family, encs[i].ids.size());
    }
    nlohmann::json params = nlohmann::json::object();
    for (const auto& method : methods) params[method] = method_options[method].params;
    const nlohmann::json settings = {
        {"command", "benchmark"}, {"model", a.model_dir}, {"data", a.data_spec}, {"data_dir", a.data_dir},
        {"methods", methods}, {"metrics", metrics}, {"params", params}, {"examples", n},
        {"removal", static_cast<int>(fopts.removal)}, {"tie_seed", fopts.tie_seed},
        {"positive_only", fopts.positive_only}, {"aopc_distinct", fopts.aopc_distinct},
        {"metric_output", model_output_name(metric_output)}, {"internal_batch", a.internal_batch},
        {"batch_size", a.batch_size}, {"windows", a.windows}, {"stride", a.stride}};
    dist::run_sharded(costs, static_cast<size_t>(a.batch_size), results_path, settings, "benchmark",
                      [&](size_t s, size_t e) {
                        std::string chunk;
                        for (const auto& method : methods) chunk += score_examples(s, e, method, true);
                        return chunk;
                      });
    if (!dist::is_root()) return "";
    done = read_results(results_path, false);
  } else {
    AppendFile results(results_path);
    Progress progress("benchmark", static_cast<int64_t>(n * methods.size()), "ex");
    for (size_t s = 0; s < n; s += a.batch_size) {
      const size_t e = std::min(n, s + static_cast<size_t>(a.batch_size));
      for (const auto& method : methods) {
        results.write(score_examples(s, e, method, false));
        progress.update(static_cast<int64_t>(e - s));
      }
    }
    progress.finish();
  }

  // Aggregate: mean ± std and a seeded bootstrap 95% CI of the mean, over examples where defined.
  nlohmann::json summary = {{"model", a.model_dir}, {"data", a.data_spec}, {"examples", n}, {"methods", nlohmann::json::object()}};
  std::vector<std::string> header = {"method"};
  header.insert(header.end(), metrics.begin(), metrics.end());
  Table md(header), csv({"method", "metric", "mean", "std", "ci_low", "ci_high", "n"});
  for (const auto& method : methods) {
    std::vector<std::string> row = {method};
    for (const auto& metric : metrics) {
      std::vector<double> v;
      for (size_t i = 0; i < n; ++i) {
        auto it = done.find({i, method});
        if (it == done.end()) continue;
        const auto& mj = it->second["metrics"];
        if (mj.contains(metric) && mj[metric].is_number()) v.push_back(mj[metric].get<double>());
      }
      double mean = std::nan(""), sd = std::nan(""), lo = std::nan(""), hi = std::nan("");
      if (!v.empty()) {
        mean = mean_of(v);
        sd = sample_std(v);
        std::mt19937_64 rng(a.seed + 12345);
        std::uniform_int_distribution<size_t> pick(0, v.size() - 1);
        std::vector<double> means;
        for (int64_t b = 0; b < a.bootstrap; ++b) {
          double sum = 0;
          for (size_t t = 0; t < v.size(); ++t) sum += v[pick(rng)];
          means.push_back(sum / double(v.size()));
        }
        std::sort(means.begin(), means.end());
        if (!means.empty()) {
          lo = means[static_cast<size_t>(0.025 * double(means.size() - 1))];
          hi = means[static_cast<size_t>(std::ceil(0.975 * double(means.size() - 1)))];
        }
      }
      summary["methods"][method][metric] = {{"mean", metric_value(mean)}, {"std", metric_value(sd)}, {"ci95", {metric_value(lo), metric_value(hi)}},
                                            {"n", v.size()}};
      row.push_back(v.empty() ? "–" : fmt::format("{:.4f} ± {:.4f} [{:.4f}, {:.4f}]", mean, sd, lo, hi));
      csv.add_row({method, metric, fmt::format("{}", mean), fmt::format("{}", sd), fmt::format("{}", lo),
                   fmt::format("{}", hi), std::to_string(v.size())});
    }
    md.add_row(row);
  }
  const std::string md_text = md.markdown() + fmt::format("\nmean ± std [bootstrap 95% CI of the mean]; model {}, data {}, {} "
                                                           "examples; per-example values in results.jsonl.\n",
                                                           a.model_dir, a.data_spec, n);
  write_file_atomic(join_path(a.out_dir, "summary.md"), md_text);
  write_file_atomic(join_path(a.out_dir, "summary.csv"), csv.csv());
  write_file_atomic(join_path(a.out_dir, "summary.json"), summary.dump(2) + "\n");

  // Heatmaps: the first examples, one row per method. Colour: red = the token raises the explained
  // output, blue = lowers it; intensity = |score| / the row's largest |score| over content tokens.
  // Structural tokens ([CLS], [SEP]) are drawn grey and left out of the scale: methods that keep
  // [CLS] (IG with the pad baseline, occlusion...) would otherwise wash every other token out.
  std::ostringstream html;
  html << "<!doctype html><meta charset=\"utf-8\"><title>salient benchmark</title>"
       << "<style>body{font-family:sans-serif} td{padding:2px 6px;vertical-align:top} "
          "span{padding:1px 2px;margin:1px;display:inline-block;border-radius:3px} .st{color:#888;background:#eee} "
          ".legend span{width:3em;text-align:center}</style>"
       << "<h1>" << html_escape(a.data_spec) << " — " << html_escape(a.model_dir) << "</h1>"
       << "<p class=\"legend\">Colour = score / (largest |score| of the row over content tokens): "
          "<span style=\"background:rgb(255,0,0)\">+1</span><span style=\"background:rgb(255,128,128)\">+½</span>"
          "<span style=\"background:#fff;border:1px solid #ccc\">0</span>"
          "<span style=\"background:rgb(128,128,255)\">−½</span><span style=\"background:rgb(0,0,255)\">−1</span> "
          "(red: raises the explained output of the target class, blue: lowers it; for methods whose scores are "
          "never negative, all colour is red). <span class=\"st\">[CLS]</span> grey: structural token, not "
          "scaled. Hover a token for its raw score.</p>";
  const size_t shown = std::min<size_t>(n, a.heatmaps);
  torch::Tensor probs;
  if (shown > 0) {
    std::vector<TokenSequence> first;
    for (size_t i = 0; i < shown; ++i) first.push_back(to_sequence(encs[i]));
    const auto logits = a.windows ? windowed_logits(clf, first, a.stride, a.limits())
                                  : sequence_logits(clf, first, a.limits());
    probs = torch::empty({static_cast<int64_t>(shown), static_cast<int64_t>(logits[0].size())}, torch::kDouble);
    for (size_t i = 0; i < shown; ++i)
      for (size_t c = 0; c < logits[i].size(); ++c) probs[i][c] = logits[i][c];
    probs = torch::softmax(probs, -1);
  }
  for (size_t i = 0; i < shown; ++i) {
    const Record& rec = data.records[i];
    const int64_t pred = probs[i].argmax().item<int64_t>();
    html << "<h3>#" << i << ": predicted " << html_escape(clf.label_name(pred))
         << fmt::format(" (p = {:.3f})", probs[i][pred].item<double>());
    if (rec.label >= 0 && rec.label < clf.model.config().num_labels)
      html << ", gold " << html_escape(clf.label_name(rec.label));
    html << "</h3><table>";
    const std::vector<bool> content = removable_positions(clf, encs[i]);
    for (const auto& method : methods) {
      auto it = done.find({i, method});
      if (it == done.end()) continue;
      const auto& j = it->second;
      std::vector<double> sc = j["token_scores"].get<std::vector<double>>();
      double mx = 0;
      for (size_t t = 0; t < sc.size(); ++t)
        if (content[t]) mx = std::max(mx, std::abs(sc[t]));
      const int64_t target = j["target"].get<int64_t>();
      html << "<tr><td>" << html_escape(method) << " (target " << html_escape(clf.label_name(target)) << ")</td><td>";
      for (size_t t = 0; t < sc.size(); ++t) {
        html << "<span";
        if (!content[t]) {
          html << " class=\"st\"";
        } else {
          const double v = mx > 0 ? sc[t] / mx : 0.0;
          const int c = static_cast<int>(255 * (1 - std::min(1.0, std::abs(v))));
          html << " style=\"background:"
               << (v >= 0 ? fmt::format("rgb(255,{},{})", c, c) : fmt::format("rgb({},{},255)", c, c)) << "\"";
        }
        html << " title=\"" << sc[t] << "\">" << html_escape(encs[i].tokens[t]) << "</span>";
      }
      html << "</td></tr>";
    }
    html << "</table>";
  }
  write_file_atomic(join_path(a.out_dir, "heatmaps.html"), html.str());
  return md_text;
}

}  // namespace salient
