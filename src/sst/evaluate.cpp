#include "sst/evaluate.h"

#include <ATen/CPUGeneratorImpl.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "dist/shards.h"
#include "salient/distributed.h"
#include "sst/data.h"
#include "sst/render.h"
#include "util/error.h"
#include "util/append_file.h"
#include "util/io.h"
#include "util/progress.h"
#include "util/stats.h"
#include "util/table.h"

namespace salient::sst {

using Clock = std::chrono::steady_clock;

// Examples per chunk of a sharded run: what a rank that dies may lose.
constexpr size_t kShardExamples = 4;

namespace {

// The methods that read the SST model: its own subset, the control of that subset's size, and its
// subset judged by the standard model (sst_standard: a subset that only codes the prediction for
// the classifier trained beside the head does not hold for a model that was not).
bool reads_sst_model(const std::string& method) {
  return method == "sst" || method == "sst_shuffled" || method == "sst_standard";
}

constexpr const char* kMethodList = "sst, sst_shuffled, sst_standard, sis, anchors, gradient";

}  // namespace

void SstEvalOptions::validate() const {
  if (methods.empty()) fail("--methods: name at least one of {}", kMethodList);
  for (const auto& m : methods) {
    if (reads_sst_model(m)) {
      if (sst_model.empty()) fail("--model: method '{}' needs the SST model directory", m);
      if (m == "sst_standard" && standard_model.empty())
        fail("--standard: method 'sst_standard' checks the SST subsets on the standard model; give its directory");
    } else if (std::find(search_method_names().begin(), search_method_names().end(), m) != search_method_names().end()) {
      if (standard_model.empty()) fail("--standard: method '{}' explains the standard model; give its directory", m);
    } else {
      fail("--methods: unknown method '{}' ({})", m, kMethodList);
    }
  }
  if (limit < 1) fail("--limit: must be at least 1, got {}", limit);
  if (accuracy_limit < 0) fail("--accuracy-limit: must be ≥ 0, got {}", accuracy_limit);
  if (limit_random && accuracy_limit > 0)
    fail("--limit-random: accuracy is then over the whole split; not with --accuracy-limit");
  if (samples < 1) fail("--samples: must be at least 1, got {}", samples);
  if (views < 0) fail("--views: must be ≥ 0, got {}", views);
  if (data.empty()) fail("--data: a dataset spec is needed");
  if (out_dir.empty()) fail("--out: an output directory is needed");
  if (windows && max_length != 0) fail("--max-length: --windows reads whole inputs (give one or the other)");
  if (windows && is_image_spec(data)) fail("--windows: only text is read as windows ('{}' is images)", data);
  search.validate();
  fill.validate("", true);  // the robust check always runs
}

nlohmann::json SstEvalRow::to_json() const {
  return {{"method", method}, {"model", model}, {"accuracy", accuracy}, {"explained", explained},
          {"timed_out", timed_out}, {"size_percent", size}, {"size_percent_std", size_std},
          {"seconds_per_explanation", seconds}, {"faithful_baseline", baseline},
          {"faithful_probabilistic", probabilistic}, {"faithful_robust", robust}, {"no_subset", no_subset}};
}

std::string sst_table_markdown(const std::vector<SstEvalRow>& rows) {
  Table t({"method", "model", "accuracy %", "size % (± std)", "time / explanation", "time-outs %",
           "faithful: baseline %", "probabilistic %", "robust %", "explained"});
  for (const auto& r : rows) {
    const double finished = static_cast<double>(r.explained - r.timed_out - r.no_subset);
    t.add_row({r.method, r.model, fmt::format("{:.2f}", 100 * r.accuracy),
               finished > 0 ? fmt::format("{:.2f} ± {:.2f}", r.size, r.size_std) : "—",
               finished > 0 ? (r.seconds < 0.1 ? fmt::format("{:.2f} ms", 1e3 * r.seconds) : fmt::format("{:.2f} s", r.seconds)) : "—",
               fmt::format("{:.1f}{}", r.explained ? 100.0 * r.timed_out / r.explained : 0.0,
                           r.no_subset ? fmt::format(" ({} without a SIS)", r.no_subset) : ""),
               finished > 0 ? fmt::format("{:.1f}", r.baseline) : "—",
               finished > 0 ? fmt::format("{:.1f}", r.probabilistic) : "—",
               finished > 0 ? fmt::format("{:.1f}", r.robust) : "—", std::to_string(r.explained)});
  }
  return t.markdown();
}

namespace {

struct ModelAndData {
  LoadedSstModel loaded;
  SstData data;
  torch::Tensor vocab;
  std::vector<int64_t> predictions;  // on the explained examples
  double accuracy = 0;
};

std::vector<int64_t> predict(const SstModel& model, const SstData& data, int64_t n) {
  torch::NoGradGuard ng;
  std::vector<int64_t> out;
  for (int64_t b = 0; b < n; b += 128) {
    torch::Tensor p = model.logits(data.batch(b, std::min(n, b + 128))).argmax(1);
    for (int64_t i = 0; i < p.size(0); ++i) out.push_back(p[i].item<int64_t>());
  }
  return out;
}

ModelAndData load_for_eval(const std::string& dir, const SstEvalOptions& o) {
  ModelAndData m;
  m.loaded = load_sst_model(dir);
  m.loaded.model->set_training(false);
  const int64_t need = o.accuracy_limit > 0 ? o.accuracy_limit : 0;
  m.data = load_sst_data(o.data, o.data_dir, *m.loaded.model, o.max_length, need > 0 ? std::max(need, o.limit) : 0, o.windows);
  // --limit-random: the explained examples (the first `limit` rows) drawn at random; accuracy is
  // over the whole split either way.
  if (o.limit_random) m.data = select_rows(m.data, sample_first_order(m.data.size(), o.limit, o.seed));
  if (m.loaded.model->modality() == "text") m.vocab = ordinary_token_ids(text_classifier(*m.loaded.model).tokenizer);
  const int64_t n_acc = need > 0 ? std::min(need, m.data.size()) : m.data.size();
  std::vector<int64_t> pred = predict(*m.loaded.model, m.data, n_acc);
  double correct = 0;
  for (int64_t i = 0; i < n_acc; ++i) correct += pred[i] == m.data.labels[i].item<int64_t>();
  m.accuracy = correct / static_cast<double>(n_acc);
  pred.resize(std::min<int64_t>(o.limit, m.data.size()));
  m.predictions = pred;
  return m;
}

// The per-example records already in `path`. `repair` (one process: rank 0 under mpirun) also
// drops a truncated last line an interrupted run left from the file.
std::map<int64_t, nlohmann::json> read_records(const std::string& path, bool repair) {
  std::map<int64_t, nlohmann::json> out;
  if (!file_exists(path)) return out;
  std::ifstream in(path);
  std::string line, kept;
  while (std::getline(in, line)) {
    try {
      nlohmann::json j = nlohmann::json::parse(line);
      out[j.at("index").get<int64_t>()] = j;
      kept += line + "\n";
    } catch (const std::exception&) {
      break;
    }
  }
  if (repair) write_file_atomic(path, kept);
  return out;
}

// As many features as `subset` keeps, drawn uniformly among the example's features (`features`,
// [F] bool): the control that tells how much of a subset's faithfulness its choice explains.
torch::Tensor shuffled_subset(const torch::Tensor& subset, const torch::Tensor& features, uint64_t seed) {
  const torch::Tensor candidates = features.nonzero().flatten();
  const int64_t k = subset.logical_and(features).sum().item<int64_t>();
  auto gen = at::detail::createCPUGenerator(seed);
  const torch::Tensor order = torch::randperm(candidates.size(0), gen, torch::kInt64);
  torch::Tensor out = torch::zeros_like(features);
  out.index_fill_(0, candidates.index_select(0, order.slice(0, 0, k)), true);
  return out;
}

}  // namespace

std::vector<SstEvalRow> evaluate_sst(const SstEvalOptions& o) {
  o.validate();
  make_dirs(o.out_dir);
  if (dist::is_root()) remove_stale_temporaries(o.out_dir);  // a killed run's; live writers are kept
  // A run directory holds one configuration: resuming with other settings would mix results.
  nlohmann::json run = {{"sst_model", o.sst_model}, {"standard_model", o.standard_model}, {"data", o.data},
                              {"limit", o.limit}, {"samples", o.samples}, {"seed", o.seed},
                              {"time_limit", o.search.time_limit}, {"ranking", o.search.ranking},
                              {"max_length", o.max_length},
                              {"search", {{"ig_steps", o.search.ig_steps}, {"precision", o.search.precision},
                                          {"delta", o.search.delta}, {"lucb_epsilon", o.search.lucb_epsilon},
                                          {"epsilon_stop", o.search.epsilon_stop}, {"beam", o.search.beam},
                                          {"init_samples", o.search.init_samples}, {"batch_samples", o.search.batch_samples},
                                          {"max_samples", o.search.max_samples},
                                          {"coverage_samples", o.search.coverage_samples},
                                          {"sis_criterion", o.search.sis_criterion}}},
                              {"fill", o.fill.to_json()}};
  if (o.windows) run["windows"] = true;  // only when set: run.json of earlier runs stays valid
  if (o.limit_random) run["limit_random"] = true;
  if (o.search.sis_criterion == "threshold") run["search"]["sis_threshold"] = o.search.sis_threshold;
  const std::string run_path = join_path(o.out_dir, "run.json");
  if (file_exists(run_path)) {
    nlohmann::json before = parse_json_file(run_path);
    if (before != run)
      fail("--out: '{}' holds a run with other settings ({}; {}); use another directory", o.out_dir,
           differing_keys(before, run), run_path);
  } else if (dist::is_root()) {
    write_file_atomic(run_path, run.dump(2) + "\n");
  }
  std::unique_ptr<ModelAndData> sst, standard;
  std::vector<SstEvalRow> rows;
  std::string views_html;
  make_dirs(join_path(o.out_dir, "views"));
  for (const std::string& method : o.methods) {
    const bool is_sst = reads_sst_model(method);
    std::unique_ptr<ModelAndData>& slot = is_sst ? sst : standard;
    if (!slot) slot = std::make_unique<ModelAndData>(load_for_eval(is_sst ? o.sst_model : o.standard_model, o));
    ModelAndData& m = *slot;
    const SstModel& model = *m.loaded.model;
    // The model whose predictions the subsets must keep: the SST model's own, or for sst_standard
    // the standard model's (same data, read with its tokenizer).
    const bool judged_by_standard = method == "sst_standard";
    if (judged_by_standard && !standard) standard = std::make_unique<ModelAndData>(load_for_eval(o.standard_model, o));
    ModelAndData& judge = judged_by_standard ? *standard : m;
    if (judged_by_standard && (judge.data.size() != m.data.size() ||
                               (m.data.modality == "text" && judge.data.encodings[0].ids != m.data.encodings[0].ids)))
      fail("--standard: '{}' reads --data '{}' otherwise than the SST model (another tokenizer?); sst_standard needs the same features",
           o.standard_model, o.data);
    const std::string path = join_path(o.out_dir, "examples-" + method + ".jsonl");
    // Rank 0 drops a truncated last record before any other rank reads the file.
    std::map<int64_t, nlohmann::json> records;
    if (dist::is_root()) records = read_records(path, true);
    if (dist::sharded()) {
      dist::barrier();
      if (!dist::is_root()) records = read_records(path, false);
    }
    const int64_t n = static_cast<int64_t>(m.predictions.size());
    auto explain = [&](int64_t i) {
      FeatureBatch x = m.data.batch(std::vector<int64_t>{i});
      const int64_t target = judge.predictions[i];
      nlohmann::json rec = {{"index", i}, {"target", target}};
      // Example i's seed: the search's; + 1 the faithfulness checks' fills; + 7 the control's draw.
      const uint64_t example_seed = o.seed * 1000003ULL + static_cast<uint64_t>(i);
      torch::Tensor subset;
      std::vector<double> selection;
      if (is_sst) {
        const auto t0 = Clock::now();
        torch::NoGradGuard ng;
        SstOutput out = model.forward(x);
        subset = subset_of(out.selection, x.features, m.loaded.tau)[0];
        if (method == "sst_shuffled")
          subset = shuffled_subset(subset, x.features[0].to(torch::kBool), example_seed + 7);
        rec["seconds"] = std::chrono::duration<double>(Clock::now() - t0).count();
        rec["timed_out"] = false;
        if (method == "sst") {  // the control's subset is not the one these scores make
          torch::Tensor s = out.selection[0].to(torch::kFloat64).contiguous();
          selection.assign(s.data_ptr<double>(), s.data_ptr<double>() + s.numel());
        }
      } else {
        SearchOptions so = o.search;
        so.seed = example_seed;
        so.fill = o.fill;  // Anchors' precision samples are the probabilistic check's fills
        SearchResult r = sufficient_subset_search(method, model, x, target, so, m.vocab);
        rec["seconds"] = r.seconds;
        rec["timed_out"] = r.timed_out;
        rec["forward_rows"] = r.forward_rows;
        subset = r.subset;
        if (!r.complete) rec["complete"] = false;  // the time ran out after a subset was found
        if (method == "sis" && o.search.sis_criterion == "threshold") {
          nlohmann::json sets = nlohmann::json::array();
          for (const torch::Tensor& s : r.collection) sets.push_back(subset_positions(s));
          rec["sis_collection"] = sets;
          if (r.no_sis) {  // the whole input is below the threshold: no SIS, left out of the means
            rec["no_sis"] = true;
            subset = torch::Tensor();
          }
        }
      }
      if (subset.defined()) {
        const double nf = x.features.sum().item<double>();
        rec["subset"] = subset_positions(subset);
        rec["size_percent"] = nf > 0 ? 100.0 * subset.sum().item<double>() / nf : 0.0;
        for (MaskKind kind : {MaskKind::Baseline, MaskKind::Probabilistic, MaskKind::Robust}) {
          auto gen = at::detail::createCPUGenerator(example_seed + 1);
          rec[mask_kind_name(kind)] = subset_faithfulness(*judge.loaded.model, x, subset.unsqueeze(0), torch::tensor({target}),
                                                          kind, o.fill, o.samples, gen, judge.vocab)[0];
        }
        if (!selection.empty()) rec["selection"] = selection;
      }
      return rec;
    };
    bool complete = true;
    for (int64_t i = 0; i < n && complete; ++i) complete = records.count(i) > 0;
    // Chunks beside the file (docs/distributed.md) that an interrupted mpirun run left: stale once
    // the file holds every record, or once one process writes records into the file itself.
    if (dist::is_root() && (complete || !dist::sharded())) {
      std::error_code ignored;
      std::filesystem::remove_all(path + ".shards", ignored);
    }
    if (!complete && dist::sharded()) {
      // Under mpirun (docs/distributed.md): chunks of examples shared out by cost (a search's
      // forward passes grow with the features squared), the records already in the file kept;
      // rank 0 joins the chunks into the file in example order and alone writes the tables.
      std::vector<double> costs;
      for (int64_t i = 0; i < n; ++i)
        costs.push_back(records.count(i) ? 0.0 : dist::explain_cost(is_sst ? "learned" : "perturbation",
                                                                     m.data.modality == "image" ? static_cast<size_t>(m.data.images.size(1))
                                                                                                : m.data.encodings[i].ids.size()));
      nlohmann::json settings = run;
      settings["method"] = method;
      dist::run_sharded(costs, kShardExamples, path, settings, "sst evaluate " + method, [&](size_t b, size_t e) {
        std::string text;
        for (size_t i = b; i < e; ++i)
          text += (records.count(static_cast<int64_t>(i)) ? records.at(static_cast<int64_t>(i)) : explain(static_cast<int64_t>(i))).dump() + "\n";
        return text;
      });
      if (dist::is_root()) records = read_records(path, true);
    } else if (!complete) {
      AppendFile append(path);
      Progress bar("sst evaluate " + method, n, "ex");
      for (int64_t i = 0; i < n; ++i) {
        if (!records.count(i)) {
          nlohmann::json rec = explain(i);
          append.write(rec.dump() + "\n");
          records[i] = rec;
        }
        bar.update(1);
      }
      bar.finish();
    }
    if (!dist::is_root()) continue;  // rank 0 alone writes the tables

    SstEvalRow row;
    row.method = method;
    row.model = is_sst ? o.sst_model : o.standard_model;
    row.accuracy = m.accuracy;
    std::vector<double> sizes, secs, base, prob, rob;
    for (const auto& [i, r] : records) {
      if (i >= n) continue;
      ++row.explained;
      if (r.at("timed_out").get<bool>()) {
        ++row.timed_out;
        continue;
      }
      if (r.value("no_sis", false)) {
        ++row.no_subset;
        continue;
      }
      sizes.push_back(r.at("size_percent"));
      secs.push_back(r.at("seconds"));
      base.push_back(100 * r.at("baseline").get<double>());
      prob.push_back(100 * r.at("probabilistic").get<double>());
      rob.push_back(100 * r.at("robust").get<double>());
    }
    row.size = mean_of(sizes);
    row.size_std = sample_std(sizes);
    row.seconds = mean_of(secs);
    row.baseline = mean_of(base);
    row.probabilistic = mean_of(prob);
    row.robust = mean_of(rob);
    rows.push_back(row);

    // Views of the first examples.
    views_html += fmt::format("<h2>{}</h2>\n<div class=\"views\">\n", html_escape(method));
    for (int64_t i = 0; i < std::min<int64_t>(o.views, n); ++i) {
      const nlohmann::json& r = records.at(i);
      const std::string label = m.data.label_names.at(r.at("target").get<int64_t>());
      if (!r.contains("subset")) {
        views_html += fmt::format("<div class=\"view\">#{}: timed out</div>\n", i);
        continue;
      }
      std::vector<uint8_t> flags(m.data.modality == "image" ? m.data.images.size(1) : m.data.encodings[i].ids.size(), 0);
      for (int64_t p : r.at("subset").get<std::vector<int64_t>>()) flags.at(p) = 1;
      const std::string caption = fmt::format("#{} → {} · {:.1f}% kept", i, html_escape(label), r.at("size_percent").get<double>());
      if (m.data.modality == "image") {
        torch::Tensor px = m.data.images[i].contiguous();
        std::vector<float> pixels(px.data_ptr<float>(), px.data_ptr<float>() + px.numel());
        const std::string png = fmt::format("views/{}-{}.png", method, i);
        write_file_atomic(join_path(o.out_dir, png),
                          subset_overlay_png(pixels, m.data.image_shape[1], m.data.image_shape[2], flags));
        views_html += fmt::format("<div class=\"view\"><img src=\"{}\" alt=\"subset\"><br>{}</div>\n", png, caption);
      } else {
        std::vector<double> sel = r.contains("selection") ? r["selection"].get<std::vector<double>>() : std::vector<double>{};
        views_html += fmt::format("<div class=\"view text\">{}<br>{}</div>\n", caption,
                                  subset_tokens_html(m.data.encodings[i].tokens, flags, sel, m.data.is_feature[i]));
      }
    }
    views_html += "</div>\n";
  }

  if (!dist::is_root()) return {};
  Table csv({"method", "model", "accuracy", "explained", "timed_out", "size_percent", "size_percent_std",
             "seconds_per_explanation", "faithful_baseline", "faithful_probabilistic", "faithful_robust"});
  nlohmann::json json = nlohmann::json::array();
  for (const auto& r : rows) {
    csv.add_row({r.method, r.model, fmt::format("{:.6f}", r.accuracy), std::to_string(r.explained),
                 std::to_string(r.timed_out), fmt::format("{:.4f}", r.size), fmt::format("{:.4f}", r.size_std),
                 fmt::format("{:.6g}", r.seconds), fmt::format("{:.4f}", r.baseline), fmt::format("{:.4f}", r.probabilistic),
                 fmt::format("{:.4f}", r.robust)});
    json.push_back(r.to_json());
  }
  const std::string md = sst_table_markdown(rows);
  write_file_atomic(join_path(o.out_dir, "table.md"), md);
  write_file_atomic(join_path(o.out_dir, "table.csv"), csv.csv());
  write_file_atomic(join_path(o.out_dir, "table.json"), nlohmann::json{{"run", run}, {"rows", json}}.dump(2) + "\n");
  const std::string html =
      "<!doctype html><html><head><meta charset=\"utf-8\"><title>salient sst evaluate</title><style>"
      "body{font-family:sans-serif;margin:2em} table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:4px}"
      ".views{display:flex;flex-wrap:wrap;gap:12px} .view{font-size:12px} .view.text{max-width:40em}"
      "</style></head><body><h1>Sufficient subsets on " + html_escape(o.data) + "</h1>\n<p>Red: the subset kept; "
      "the rest is replaced (baseline, random or adversarial values). Faithful = the prediction survives.</p>\n<pre>" +
      html_escape(md) + "</pre>\n" + views_html + "</body></html>\n";
  write_file_atomic(join_path(o.out_dir, "report.html"), html);
  return rows;
}

}  // namespace salient::sst
