// Explanation subcommands: `explain` (one method over JSON lines) and `benchmark` (methods ×
// metrics over a dataset, resumable, with markdown/CSV/JSON tables and an HTML heatmap page).
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "commands.h"
#include "data/dataset.h"
#include "eval/faithfulness.h"
#include "eval/plausibility.h"
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
      std::string methods;
      for (const auto& m : takers[name]) methods += (methods.empty() ? "" : ", ") + m;
      flags[name] = cmd->add_option(p->flag(), given[name], methods + ": " + p->doc + " (see --list)");
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
      if (!taken) {
        std::string list;
        for (const auto& m : methods) list += (list.empty() ? "" : ", ") + m;
        fail("{}: not a parameter of {} (salient explain --list shows each method's parameters)", flag->get_name(), list);
      }
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
    const std::string output = !e->uses_model_output() ? ""
                               : e->default_output() == ModelOutput::Logit ? "; explains the target logit"
                                                                           : "; explains the target probability";
    out << info.name << "  [" << info.family << output << "]\n  " << info.summary << "\n";
    for (const auto& p : info.params) out << "    " << p.describe() << "\n";
  }
  return out.str();
}

// ---- explain ----
struct ExplainArgs {
  std::string model, method, input = "-", out = "-", target = "pred", word_agg = "sum";
  int64_t batch_size = 16;
  int max_length = 0;
  bool list = false;
  MethodArgs m;
};

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
  auto items = read_input_items(a.input);
  std::vector<Encoding> encs;
  for (const auto& item : items) {
    std::string where = fmt::format("{}:{}", a.input == "-" ? "<stdin>" : a.input, item.line_no);
    encs.push_back(item.text ? clf.encode(*item.text, item.text_pair, a.max_length)
                             : clf.encode_ids(item.input_ids, item.token_type_ids, where));
  }
  Output out(a.out);
  Progress progress("explain " + a.method, static_cast<int64_t>(encs.size()), "ex");
  for (size_t s = 0; s < encs.size(); s += a.batch_size) {
    std::vector<const Encoding*> chunk;
    for (size_t i = s; i < std::min(encs.size(), s + a.batch_size); ++i) chunk.push_back(&encs[i]);
    std::vector<int64_t> targets;
    if (a.target == "pred") {
      targets = predicted_classes(clf, chunk);
    } else {
      for (size_t i = s; i < s + chunk.size(); ++i)
        targets.push_back(resolve_target(a.target, clf, items[i],
                                         fmt::format("{}:{}", a.input == "-" ? "<stdin>" : a.input, items[i].line_no)));
    }
    std::vector<Explanation> ex = explainer->explain(clf, chunk, targets, opts);
    for (size_t i = 0; i < chunk.size(); ++i) {
      const InputItem& item = items[s + i];
      const nlohmann::json id = item.fields.is_object() && item.fields.contains("id") ? item.fields["id"] : nlohmann::json();
      out.line(explanation_json(clf, *chunk[i], ex[i], item.text, a.word_agg == "max", id));
    }
    progress.update(static_cast<int64_t>(chunk.size()));
  }
  progress.finish();
  out.commit();
}

// ---- benchmark ----
const std::vector<std::string> kPlausibility = {"token_f1", "token_f1_top5", "token_iou", "token_auroc", "token_auprc",
                                                "word_f1", "word_auroc", "word_auprc"};
const std::vector<std::string> kFaithfulness = {"comprehensiveness", "sufficiency", "aopc_comprehensiveness",
                                                "aopc_sufficiency", "deletion_auc", "insertion_auc"};
const std::vector<std::string> kCost = {"time_ms", "peak_mem_mb"};

struct BenchmarkArgs {
  std::string model, data, data_dir, methods, metrics = "token_f1,token_auroc,token_auprc,comprehensiveness,sufficiency,aopc_comprehensiveness,aopc_sufficiency",
                                              out;
  int64_t limit = 100, batch_size = 8, bootstrap = 1000, heatmaps = 10;
  MethodArgs m;
};

// Gold mask over the tokens of segment 0 (word rationale ≥ 0.5 projected to every piece).
std::vector<int> token_gold(const Record& r, const Encoding& enc, const std::vector<int64_t>& word_of) {
  std::vector<int> g;
  for (size_t t = 0; t < enc.ids.size(); ++t)
    if (word_of[t] >= 0) g.push_back(word_of[t] < static_cast<int64_t>(r.rationale.size()) && r.rationale[word_of[t]] >= 0.5f);
  return g;
}

double nan_if_empty(const std::vector<int>& gold, double v) {
  for (int g : gold)
    if (g) return v;
  return std::nan("");
}

nlohmann::json num(double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); }

std::string html_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

void run_benchmark(const BenchmarkArgs& a) {
  if (a.out.empty()) fail("--out: required");
  if (a.limit <= 0) fail("--limit: must be positive (got {})", a.limit);
  if (a.batch_size <= 0) fail("--batch-size: must be positive (got {})", a.batch_size);
  const std::vector<std::string> methods = split_list(a.methods), metrics = split_list(a.metrics);
  if (methods.empty()) fail("--methods: give at least one method");
  if (metrics.empty()) fail("--metrics: give at least one metric");
  std::map<std::string, std::unique_ptr<Explainer>> explainers;
  std::map<std::string, ExplainOptions> method_options;
  for (const auto& m : methods) explainers[m] = make_explainer(m);
  a.m.check_taken(methods);
  for (const auto& m : methods) method_options[m] = a.m.options_for(m);
  bool want_plaus = false, want_faith = false;
  for (const auto& m : metrics) {
    const bool p = std::count(kPlausibility.begin(), kPlausibility.end(), m) > 0;
    const bool f = std::count(kFaithfulness.begin(), kFaithfulness.end(), m) > 0;
    const bool c = std::count(kCost.begin(), kCost.end(), m) > 0;
    if (!p && !f && !c) {
      std::string valid;
      for (const auto* list : {&kPlausibility, &kFaithfulness, &kCost})
        for (const auto& n : *list) valid += (valid.empty() ? "" : ", ") + n;
      fail("--metrics: unknown metric '{}' (valid: {})", m, valid);
    }
    want_plaus |= p;
    want_faith |= f;
  }
  FaithfulnessOptions fopts;
  fopts.removal = parse_removal(a.m.was_given("removal") ? a.m.given.at("removal") : "mask");
  fopts.tie_seed = a.m.seed;
  // Faithfulness measures the probability (ERASER) unless an output is asked for explicitly.
  const ModelOutput metric_output = a.m.score.empty() ? ModelOutput::Probability : parse_model_output(a.m.score);

  std::string data_dir = a.data_dir;
  if (data_dir.empty() && !shared_dir().empty()) data_dir = join_path(shared_dir(), "data");
  Dataset data = load_dataset(a.data, data_dir);
  if (want_plaus && !data.has_rationales())
    fail("--metrics: plausibility metrics need human rationales but '{}' has none (use faithfulness metrics only)", a.data);
  Classifier clf = load_classifier(a.model);
  fopts.mask_id = clf.tokenizer.mask_id();
  const size_t n = std::min<size_t>(data.records.size(), a.limit);
  std::vector<Encoding> encs;
  for (size_t i = 0; i < n; ++i) encs.push_back(clf.encode(data.records[i].text, data.records[i].text_pair));

  // Resume: (example, method) pairs already in results.jsonl are skipped.
  make_dirs(a.out);
  const std::string results_path = join_path(a.out, "results.jsonl");
  std::map<std::pair<size_t, std::string>, nlohmann::json> done;
  if (file_exists(results_path)) {
    std::ifstream in(results_path);
    std::string line;
    size_t line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      if (line.empty()) continue;
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(line);
      } catch (const std::exception&) {
        continue;  // a line cut by an interruption: recomputed
      }
      done[{j.at("index").get<size_t>(), j.at("method").get<std::string>()}] = j;
    }
  }
  std::ofstream results(results_path, std::ios::app);

  Progress progress("benchmark", static_cast<int64_t>(n * methods.size()), "ex");
  for (size_t s = 0; s < n; s += a.batch_size) {
    const size_t e = std::min(n, s + static_cast<size_t>(a.batch_size));
    for (const auto& method : methods) {
      std::vector<size_t> todo;
      std::vector<const Encoding*> todo_encs;
      for (size_t i = s; i < e; ++i)
        if (!done.count({i, method})) {
          todo.push_back(i);
          todo_encs.push_back(&encs[i]);
        }
      if (todo.empty()) {
        progress.update(static_cast<int64_t>(e - s));
        continue;
      }
      std::vector<int64_t> todo_targets = predicted_classes(clf, todo_encs);
      PeakMemorySampler sampler;
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<Explanation> ex = explainers[method]->explain(clf, todo_encs, todo_targets, method_options[method]);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
                        double(todo.size());
      const double mem = sampler.stop();
      for (size_t k = 0; k < todo.size(); ++k) {
        const size_t i = todo[k];
        const Record& rec = data.records[i];
        const Encoding& enc = encs[i];
        nlohmann::json m;
        m["time_ms"] = ms;
        m["peak_mem_mb"] = num(mem);
        const std::vector<int64_t> word_of = whitespace_word_ids(rec.text, enc, 0);
        if (want_plaus) {
          std::vector<double> tok_scores;
          for (size_t t = 0; t < enc.ids.size(); ++t)
            if (word_of[t] >= 0) tok_scores.push_back(ex[k].scores[t]);
          std::vector<int> gold = token_gold(rec, enc, word_of);
          std::vector<double> ws = word_scores(rec.text, enc, ex[k].scores);
          std::vector<int> wgold;
          for (size_t w = 0; w < ws.size(); ++w) wgold.push_back(w < rec.rationale.size() && rec.rationale[w] >= 0.5f);
          int64_t k_tok = std::count(gold.begin(), gold.end(), 1), k_word = std::count(wgold.begin(), wgold.end(), 1);
          if (!tok_scores.empty()) {
            m["token_f1"] = num(nan_if_empty(gold, token_prf_top_k(tok_scores, gold, k_tok).f1));
            m["token_f1_top5"] = num(nan_if_empty(gold, token_prf_top_k(tok_scores, gold, 5).f1));
            m["token_iou"] = num(nan_if_empty(gold, token_iou_top_k(tok_scores, gold, k_tok)));
            m["token_auroc"] = num(auroc(tok_scores, gold));
            m["token_auprc"] = num(auprc(tok_scores, gold));
          }
          if (!ws.empty()) {
            m["word_f1"] = num(nan_if_empty(wgold, token_prf_top_k(ws, wgold, k_word).f1));
            m["word_auroc"] = num(auroc(ws, wgold));
            m["word_auprc"] = num(auprc(ws, wgold));
          }
        }
        if (want_faith) {
          const int64_t target = ex[k].target;
          SequenceScorer scorer = [&](const std::vector<TokenSequence>& seqs) {
            return score_sequences(clf, seqs, std::vector<int64_t>(seqs.size(), target), metric_output,
                                   a.m.internal_batch);
          };
          int64_t kk = 0;  // ERASER k: the gold rationale's token count when there is one
          if (data.has_rationales()) {
            std::vector<int> gold = token_gold(rec, enc, word_of);
            kk = std::count(gold.begin(), gold.end(), 1);
          }
          std::vector<bool> removable = removable_positions(clf, enc);
          if (std::count(removable.begin(), removable.end(), true) > 0) {
            FaithfulnessResult fr = evaluate_faithfulness(scorer, to_sequence(enc), ex[k].scores, removable, kk, fopts);
            m["comprehensiveness"] = fr.comprehensiveness;
            m["sufficiency"] = fr.sufficiency;
            m["aopc_comprehensiveness"] = fr.aopc_comprehensiveness;
            m["aopc_sufficiency"] = fr.aopc_sufficiency;
            m["deletion_auc"] = fr.deletion_auc;
            m["insertion_auc"] = fr.insertion_auc;
          }
        }
        nlohmann::json line = explanation_json(clf, enc, ex[k], std::nullopt, false, rec.id);
        line["index"] = i;
        line["label"] = rec.label;
        line["metrics"] = m;
        results << line.dump() << "\n";
        done[{i, method}] = line;
      }
      results.flush();
      progress.update(static_cast<int64_t>(e - s));
    }
  }
  progress.finish();

  // Aggregate: mean ± std and a seeded bootstrap 95% CI of the mean, over examples where defined.
  nlohmann::json summary = {{"model", a.model}, {"data", a.data}, {"examples", n}, {"methods", nlohmann::json::object()}};
  std::ostringstream md, csv;
  md << "| method |";
  for (const auto& m : metrics) md << " " << m << " |";
  md << "\n|---|";
  for (size_t i = 0; i < metrics.size(); ++i) md << "---|";
  md << "\n";
  csv << "method,metric,mean,std,ci_low,ci_high,n\n";
  for (const auto& method : methods) {
    md << "| " << method << " |";
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
        mean = 0;
        for (double x : v) mean += x;
        mean /= double(v.size());
        sd = 0;
        for (double x : v) sd += (x - mean) * (x - mean);
        sd = v.size() > 1 ? std::sqrt(sd / double(v.size() - 1)) : 0.0;
        std::mt19937_64 rng(a.m.seed + 12345);
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
      summary["methods"][method][metric] = {{"mean", num(mean)}, {"std", num(sd)}, {"ci95", {num(lo), num(hi)}},
                                            {"n", v.size()}};
      if (v.empty()) md << " – |";
      else md << fmt::format(" {:.4f} ± {:.4f} [{:.4f}, {:.4f}] |", mean, sd, lo, hi);
      csv << fmt::format("{},{},{},{},{},{},{}\n", method, metric, mean, sd, lo, hi, v.size());
    }
    md << "\n";
  }
  md << "\nmean ± std [bootstrap 95% CI of the mean]; model " << a.model << ", data " << a.data << ", " << n
     << " examples; per-example values in results.jsonl.\n";
  write_file_atomic(join_path(a.out, "summary.md"), md.str());
  write_file_atomic(join_path(a.out, "summary.csv"), csv.str());
  write_file_atomic(join_path(a.out, "summary.json"), summary.dump(2) + "\n");

  // Heatmaps: the first examples, one row per method. Colour: red = the token raises the explained
  // output, blue = lowers it; intensity = |score| / the row's largest |score| over content tokens.
  // Structural tokens ([CLS], [SEP]) are drawn grey and left out of the scale: methods that keep
  // [CLS] (IG with the pad baseline, occlusion...) would otherwise wash every other token out.
  std::ostringstream html;
  html << "<!doctype html><meta charset=\"utf-8\"><title>salient benchmark</title>"
       << "<style>body{font-family:sans-serif} td{padding:2px 6px;vertical-align:top} "
          "span{padding:1px 2px;margin:1px;display:inline-block;border-radius:3px} .st{color:#888;background:#eee} "
          ".legend span{width:3em;text-align:center}</style>"
       << "<h1>" << html_escape(a.data) << " — " << html_escape(a.model) << "</h1>"
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
    std::vector<const Encoding*> first;
    for (size_t i = 0; i < shown; ++i) first.push_back(&encs[i]);
    torch::NoGradGuard no_grad;
    Batch b = make_batch(first, clf.tokenizer.pad_id(), clf.model.device());
    probs = torch::softmax(clf.model.logits(b.input_ids, b.token_type_ids, b.attention_mask), -1).cpu();
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
  write_file_atomic(join_path(a.out, "heatmaps.html"), html.str());
  std::cout << md.str();
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
  ex_cmd->add_option("--word-agg", ex.word_agg, "word scores: sum (default) or max over the word's pieces");
  ex.m.add(ex_cmd);

  static BenchmarkArgs bm;
  auto* bm_cmd = app.add_subcommand("benchmark", "methods × metrics over a dataset → summary.{md,csv,json}, heatmaps.html");
  bm_cmd->add_option("--model", bm.model, "model directory")->required();
  bm_cmd->add_option("--data", bm.data, "dataset spec: sst2:dev, sst-trees:dev, hatexplain:val, eraser:val, cola:dev or a file")->required();
  bm_cmd->add_option("--data-dir", bm.data_dir, "directory of the shared datasets (default ../shared/data)");
  bm_cmd->add_option("--methods", bm.methods, "comma-separated explainer names")->required();
  bm_cmd->add_option("--metrics", bm.metrics, "comma-separated metric names");
  bm_cmd->add_option("--limit", bm.limit, "number of examples (the first N)");
  bm_cmd->add_option("--out", bm.out, "output directory (results.jsonl is appended to and reused)")->required();
  bm_cmd->add_option("--batch-size", bm.batch_size, "inputs explained together");
  bm_cmd->add_option("--bootstrap", bm.bootstrap, "bootstrap resamples for the 95% CI");
  bm_cmd->add_option("--heatmaps", bm.heatmaps, "examples shown in heatmaps.html");
  bm.m.add(bm_cmd);

  commands.push_back({ex_cmd, [] { run_explain(ex); }});
  commands.push_back({bm_cmd, [] { run_benchmark(bm); }});
}

}  // namespace salient::cli
