// The runs of salient/attattr.h (`salient attattr ...`) over src/attattr: inputs read and
// encoded, results written, the shared-out forms under mpirun.
#include "salient/attattr.h"

#include <cmath>
#include <map>

#include "attattr/analysis.h"
#include "attattr/attribution.h"
#include "attattr/render.h"
#include "attattr/report.h"
#include "data/dataset.h"
#include "dist/shards.h"
#include "model/classifier.h"
#include "salient/distributed.h"
#include "salient/error.h"
#include "salient/files.h"
#include "salient/inputs.h"
#include "util/io.h"
#include "util/progress.h"
#include "util/tensor_values.h"

namespace salient {

namespace {

using namespace salient::attattr;
using nlohmann::json;

std::vector<int64_t> parse_layers(const std::string& s) {
  std::vector<int64_t> out;
  if (s.empty() || s == "all") return out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    try {
      size_t used = 0;
      long v = std::stol(item, &used);
      if (used != item.size()) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::exception&) {
      fail("--layers: '{}' is not a comma-separated list of layer numbers", s);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Classifier load(const AttAttrRun& a) {
  Classifier clf = load_classifier(a.model);
  if (a.float64) clf.model.to(torch::kFloat64);
  clf.model.set_requires_grad(false);  // gradients only w.r.t. the scaled attention
  clf.model.eval();
  return clf;
}

AttributionOptions options(const AttAttrRun& a) {
  AttributionOptions o;
  o.m = a.m;
  o.rule = parse_rule(a.rule);
  o.max_batch_mb = a.max_batch_mb;
  make_quadrature(o.rule, o.m);  // validate before any work
  return o;
}

torch::Tensor row(const std::vector<int64_t>& v) { return torch::tensor(v, torch::kLong).unsqueeze(0); }

// ---- attribute ----
int64_t resolve_target(const std::string& spec, const InputItem& item, const Classifier& clf, const std::string& where) {
  if (spec == "pred") return -1;
  const int64_t n = clf.model.config().num_labels;
  if (spec == "gold") {
    if (!item.fields.is_object() || !item.fields.contains("label"))
      fail("{}: --target gold needs a 'label' field", where);
    const json& l = item.fields["label"];
    if (l.is_number_integer()) {
      int64_t v = l.get<int64_t>();
      if (v < 0 || v >= n) fail("{}: label {} out of range (the model has {} labels)", where, v, n);
      return v;
    }
    if (l.is_string())
      for (int64_t i = 0; i < n; ++i)
        if (clf.label_name(i) == l.get<std::string>()) return i;
    fail("{}: label {} is not one of the model's labels", where, l.dump());
  }
  try {
    size_t used = 0;
    long v = std::stol(spec, &used);
    if (used == spec.size()) {
      if (v < 0 || v >= n) fail("--target: class {} out of range (the model has {} labels)", v, n);
      return v;
    }
  } catch (const std::invalid_argument&) {
  } catch (const std::out_of_range&) {
  }
  for (int64_t i = 0; i < n; ++i)
    if (clf.label_name(i) == spec) return i;
  fail("--target: '{}' is not pred, gold, a class number or a label name", spec);
}

void run_attribute(const AttAttrAttributeRun& a) {
  Classifier clf = load(a);
  AttributionOptions o = options(a);
  o.layers = parse_layers(a.layers);
  std::vector<int64_t> layer_ids = checked_layers(clf.model, o);
  const std::vector<InputItem> items = InputReader(a.input).next(SIZE_MAX);
  const std::string source = a.input == "-" ? "<stdin>" : a.input;
  // Encode everything first so a bad line fails before any work.
  std::vector<Encoding> encs;
  std::vector<int64_t> targets;
  for (const auto& item : items) {
    std::string where = fmt::format("{}:{}", source, item.line_no);
    Encoding e;
    if (item.text) {
      e = clf.tokenizer.encode(*item.text, item.text_pair);
      if ((int64_t)e.ids.size() > clf.model.config().max_tokens())
        fail("{}: input has {} tokens but the model allows at most {}", where, e.ids.size(), clf.model.config().max_tokens());
    } else {
      e = clf.encode_ids(item.input_ids, item.token_type_ids, where);
    }
    encs.push_back(std::move(e));
    targets.push_back(resolve_target(a.target, item, clf, where));
  }
  if (a.html_index < 0 || (!a.html.empty() && a.html_index >= (int64_t)encs.size()))
    fail("--html-index: {} is not an input line index (0..{})", a.html_index, (int64_t)encs.size() - 1);
  // The output lines of inputs [s, e).
  auto attribute_inputs = [&](size_t s, size_t e, Progress* progress) {
    std::string lines;
    for (size_t i = s; i < e; ++i) {
      const Encoding& enc = encs[i];
      AttributionResult r = a.straightforward
                                ? attribute_straightforward(clf.model, row(enc.ids), row(enc.type_ids), targets[i], o)
                                : attribute(clf.model, row(enc.ids), row(enc.type_ids), targets[i], o);
      json j = attribution_json(clf, enc, r, o, layer_ids);
      const auto& fields = items[i].fields;
      if (fields.is_object() && fields.contains("id")) j["id"] = fields["id"];
      if (!a.html.empty() && (int64_t)i == a.html_index)
        write_file_atomic(a.html, attribution_html(j, "Self-Attention Attribution — " + clf.dir));
      lines += j.dump() + "\n";
      if (progress) progress->update();
    }
    return lines;
  };
  if (dist::sharded()) {
    // Under mpirun (docs/distributed.md): chunks of a few inputs, balanced by cost (every layer's
    // attention, L², at each of the m points), joined by rank 0 into one process's output.
    dist::require_sharded_files("-i", a.input, "-o", a.output);
    std::vector<double> costs;
    for (const auto& e : encs) costs.push_back(static_cast<double>(e.ids.size() * e.ids.size()));
    const json settings = {{"command", "attattr attribute"}, {"model", clf.dir}, {"m", o.m}, {"rule", rule_short_name(o.rule)},
                           {"max_batch_mb", a.max_batch_mb}, {"layers", a.layers}, {"target", a.target}, {"straightforward", a.straightforward},
                           {"input", a.input}, {"inputs", encs.size()}, {"input_bytes", read_file(a.input).size()}};
    dist::run_sharded(costs, 4, a.output, settings, "attattr",
                      [&](size_t s, size_t e) { return attribute_inputs(s, e, nullptr); });
    return;
  }
  Output out(a.output);
  Progress progress("attattr", (int64_t)encs.size(), "ex");
  out.text(attribute_inputs(0, encs.size(), &progress));
  progress.finish();
  out.commit();
}

// ---- heads ----
void check_heads_args(const AttAttrHeadsRun& a) {
  if (a.target != "gold" && a.target != "pred") fail("--target: must be gold or pred (got '{}')", a.target);
  if (a.taylor_batch <= 0) fail("--taylor-batch: must be positive (got {})", a.taylor_batch);
}

json heads_json(const Classifier& clf, const AttAttrHeadsRun& a) {
  check_heads_args(a);
  LabelledSet set = load_labelled_set(clf, a.data, a.data_dir, a.limit, "--data");
  json j = head_scores_json(clf, set, options(a), a.target == "gold", a.taylor_batch, a.seed);
  j["model"] = clf.dir;
  j["data"] = a.data;
  return j;
}

// Under mpirun: chunks of --taylor-batch examples (one Taylor batch each, as one process batches
// them), balanced by tokens; a chunk file holds its examples' terms of each sum, and rank 0 adds
// them in example order, which is exactly one process's sum (analysis.h).
void run_heads_sharded(const Classifier& clf, const AttAttrHeadsRun& a) {
  dist::require_sharded_files("", "", "-o", a.out);
  check_heads_args(a);
  const LabelledSet set = load_labelled_set(clf, a.data, a.data_dir, a.limit, "--data");
  const AttributionOptions o = options(a);
  const bool gold = a.target == "gold";
  std::vector<double> costs;
  for (const auto& e : set.encodings) costs.push_back(static_cast<double>(e.ids.size()));
  const json settings = {{"command", "attattr heads"}, {"model", clf.dir}, {"data", a.data}, {"limit", a.limit},
                         {"examples", set.encodings.size()}, {"m", o.m}, {"rule", rule_short_name(o.rule)},
                         {"max_batch_mb", a.max_batch_mb},
                         {"target", a.target}, {"taylor_batch", a.taylor_batch}};
  auto values = [](const std::vector<torch::Tensor>& terms) {
    json list = json::array();
    for (const auto& t : terms) list.push_back(tensor_values(t));
    return list;
  };
  auto compute = [&](size_t s, size_t e) {
    std::vector<torch::Tensor> attattr, attention, taylor, michel;
    std::vector<TaylorHeadScores> batches;
    attattr_head_scores(clf.model, set, o, gold, {s, e}, &attattr);
    attention_head_scores(clf.model, set, {s, e}, &attention);
    taylor_head_scores(clf.model, set, a.taylor_batch, {s, e}, &batches);
    for (const auto& b : batches) {
      taylor.push_back(b.attattr);
      michel.push_back(b.michel);
    }
    return json{{"attattr", values(attattr)}, {"attention", values(attention)}, {"taylor", values(taylor)},
                {"taylor_michel", values(michel)}}.dump() + "\n";
  };
  auto join = [&](const std::vector<std::string>& chunks) {
    const int64_t layers = clf.model.num_layers(), heads = clf.model.num_heads();
    auto zeros = [&] { return torch::zeros({layers, heads}, torch::kFloat64); };
    HeadScoreSums sums{zeros(), zeros(), {zeros(), zeros()}};
    auto add = [&](torch::Tensor& total, const json& terms) {
      for (const auto& t : terms) total += torch::tensor(t.get<std::vector<double>>(), torch::kFloat64).view({layers, heads});
    };
    for (const std::string& text : chunks) {
      const json c = json::parse(text);
      add(sums.attattr, c.at("attattr"));
      add(sums.attention, c.at("attention"));
      add(sums.taylor.attattr, c.at("taylor"));
      add(sums.taylor.michel, c.at("taylor_michel"));
    }
    json j = head_scores_json(clf.model, set.encodings.size(), o, gold, a.seed, sums);
    j["model"] = clf.dir;
    j["data"] = a.data;
    return j.dump(2) + "\n";
  };
  dist::run_sharded(costs, static_cast<size_t>(a.taylor_batch), a.out, settings, "attattr heads", compute, join);
}

// ---- prune ----
void run_prune(const AttAttrPruneRun& a) {
  Classifier clf = load(a.heads);
  if (a.steps <= 0) fail("--prune-steps: must be positive (got {})", a.steps);
  json scores = a.heads_file.empty() ? heads_json(clf, a.heads) : parse_json_file(a.heads_file);
  LabelledSet eval = load_labelled_set(clf, a.eval_data, a.heads.data_dir, 0, "--eval-data");
  // Written to a file, the run is resumable: every accuracy is kept in OUT.partial.jsonl until the
  // results are written (a HateXplain curve set takes the better part of an hour).
  const bool to_file = !a.heads.out.empty() && a.heads.out != "-";
  MaskAccuracies accuracies =
      to_file ? MaskAccuracies(a.heads.out + ".partial.jsonl",
                               {{"model", clf.dir}, {"weights", weights_fingerprint(clf.dir)}, {"eval_data", a.eval_data},
                                {"data_dir", a.heads.data_dir}, {"eval_examples", eval.encodings.size()}})
              : MaskAccuracies();
  json result = pruning_json(clf, scores, a.heads_file.empty() ? "--heads" : "--heads: '" + a.heads_file + "'", eval,
                             a.eval_data, a.steps, a.layer, &accuracies);
  if (!a.svg.empty()) {
    std::vector<Curve> curves;
    for (const auto& [name, points] : result["curves"].items()) {
      Curve c{name, {}};
      for (const auto& p : points) c.points.emplace_back(p["fraction"].get<double>(), p["accuracy"].get<double>());
      curves.push_back(std::move(c));
    }
    write_file_atomic(a.svg, curves_svg(curves, "Head pruning: " + clf.dir, "fraction of heads removed", "accuracy"));
  }
  if (!a.markdown.empty()) write_file_atomic(a.markdown, result["markdown"].get<std::string>());
  Output out(a.heads.out);
  out.text(result.dump(2) + "\n");
  out.commit();
  accuracies.remove_file();
}

// ---- tree ----
void run_tree(const AttAttrTreeRun& a) {
  Classifier clf = load(a);
  AttributionOptions o = options(a);
  Encoding e;
  int64_t gold = -1;
  if (!a.text.empty()) {
    e = clf.encode(a.text, a.pair.empty() ? std::nullopt : std::optional<std::string>(a.pair));
  } else if (!a.data.empty()) {
    Dataset ds = load_dataset(a.data, a.data_dir);
    if (a.index < 0 || a.index >= (int64_t)ds.records.size())
      fail("--index: {} out of range ('{}' has {} records)", a.index, a.data, ds.records.size());
    e = clf.encode(ds.records[a.index].text, ds.records[a.index].text_pair);
    gold = ds.records[a.index].label;
  } else {
    fail("tree: give --text (and --pair) or --data with --index");
  }
  int64_t target = -1;
  if (a.target == "gold") {
    if (gold < 0) fail("--target gold needs --data with labels");
    target = gold;
  } else if (a.target != "pred") {
    fail("--target: must be pred or gold (got '{}')", a.target);
  }
  if (!(a.tau > 0)) fail("--tau: must be positive (got {})", a.tau);
  AttributionResult r = attribute(clf.model, row(e.ids), row(e.type_ids), target, o);
  json j = tree_json(clf, e, r, o, a.tau, a.top_tau, a.top_layer);
  j["model"] = clf.dir;
  if (!a.svg.empty()) write_file_atomic(a.svg, tree_svg(j));
  Output out(a.out);
  out.text(j.dump(2) + "\n");
  out.commit();
}

// ---- triggers ----
void run_triggers(const AttAttrTriggersRun& a) {
  Classifier clf = load(a);
  AttributionOptions o = options(a);
  if (a.n <= 0) fail("--n: must be positive (got {})", a.n);
  if (a.top <= 0) fail("--top: must be positive (got {})", a.top);
  if (!a.patterns.empty() && a.mining_set_given)
    fail("--patterns: the patterns and their mining set come from the file; drop --train, --n and --min-score");
  Dataset dev = load_dataset(a.dev, a.data_dir);
  LabelledSet dev_set = load_labelled_set(clf, a.dev, a.data_dir, 0, "--dev");
  const int64_t n_labels = clf.model.config().num_labels;
  json j = {{"model", clf.dir}, {"dev", a.dev}};
  std::vector<TriggerPattern> patterns;
  std::string mined;  // for the table's title
  if (a.patterns.empty()) {
    LabelledSet mine = load_labelled_set(clf, a.train, a.data_dir, a.n, "--train");
    patterns = mine_trigger_patterns(clf, mine, o, a.min_score);
    j.update({{"train", a.train}, {"mined_examples", mine.encodings.size()}, {"m", o.m}, {"rule", rule_short_name(o.rule)}});
    mined = fmt::format("mined from {} examples of {}, m = {}", mine.encodings.size(), a.train, o.m);
  } else {
    // Another run's patterns on this model: the same inserted tokens at the same relative places.
    const json saved = parse_json_file(a.patterns);
    patterns = trigger_patterns_from_json(clf, saved, "--patterns: '" + a.patterns + "'", a.data_dir, a.use_both);
    j.update({{"patterns_from", a.patterns}, {"mined_on", saved.value("model", "")}, {"train", saved["train"]},
              {"mined_examples", saved["mined_examples"]}, {"m", saved.value("m", 0)}, {"rule", saved.value("rule", "")},
              {"valid_patterns", saved.value("valid_patterns", patterns.size())}});
    mined = fmt::format("patterns mined on {}, from {}", saved.value("model", "?"), a.patterns);
  }
  std::vector<double> before = accuracy_per_class(clf.model, dev_set, n_labels);
  if (a.patterns.empty()) j["valid_patterns"] = patterns.size();  // mined here above --min-score
  j.update({{"use_both", a.use_both}, {"accuracy_before", before}});
  std::string md = fmt::format("Adversarial triggers on {} ({}), accuracy per gold class on {}\n\n"
                               "| pattern | layer.head | score | target | ",
                               clf.dir, mined, a.dev);
  for (int64_t c = 0; c < n_labels; ++c) md += clf.label_name(c) + " before → after | ";
  md += "\n|---|---|---|---|";
  for (int64_t c = 0; c < n_labels; ++c) md += "---|";
  md += "\n";
  json results = json::array();
  double best_drop = 0;
  const int64_t count = std::min<int64_t>(a.top, patterns.size());
  Progress progress("trigger eval", count, "pattern");
  for (int64_t p = 0; p < count; ++p) {
    const TriggerPattern& pat = patterns[p];
    LabelledSet attacked;
    for (size_t i = 0; i < dev.records.size() && i < dev_set.encodings.size(); ++i) {
      attacked.encodings.push_back(insert_pattern(clf, pat, dev.records[i].text, dev.records[i].text_pair, a.use_both));
      attacked.labels.push_back(dev_set.labels[i]);
    }
    std::vector<double> after = accuracy_per_class(clf.model, attacked, n_labels);
    json tokens = json::array();
    for (int64_t pos : pat.positions(a.use_both)) tokens.push_back(pat.tokens[pos]);
    json drop = json::array();
    for (int64_t c = 0; c < n_labels; ++c) {
      drop.push_back(before[c] - after[c]);
      best_drop = std::max(best_drop, before[c] - after[c]);
    }
    results.push_back({{"rank", p}, {"pattern", pat.label(a.use_both)}, {"inserted_tokens", tokens},
                       {"top1", {pat.tokens[pat.pos1[0]], pat.tokens[pat.pos1[1]]}},
                       {"top2", {pat.tokens[pat.pos2[0]], pat.tokens[pat.pos2[1]]}}, {"top1_position", pat.pos1},
                       {"top2_position", pat.pos2}, {"scores", {pat.score1, pat.score2}}, {"layer", pat.layer},
                       {"head", pat.head}, {"target_label", pat.target_label}, {"gold_label", pat.gold_label},
                       {"example", pat.example}, {"accuracy_after", after}, {"accuracy_drop", drop}});
    md += fmt::format("| {} | {}.{} | {:.3f} | {} | ", tokens.dump(), pat.layer, pat.head, pat.score_sum(),
                      clf.label_name(pat.target_label));
    for (int64_t c = 0; c < n_labels; ++c) md += fmt::format("{:.1f} → {:.1f} | ", 100 * before[c], 100 * after[c]);
    md += "\n";
    progress.update();
  }
  progress.finish();
  md += fmt::format("\nLargest drop of one class's accuracy: {:.1f} points.\n", 100 * best_drop);
  j["patterns"] = results;
  j["largest_drop"] = best_drop;
  j["markdown"] = md;
  if (!a.markdown.empty()) write_file_atomic(a.markdown, md);
  Output out(a.out);
  out.text(j.dump(2) + "\n");
  out.commit();
}

// The shared data when no directory is given, resolved once: it is part of a resumable run's
// settings.
template <class Run>
Run with_data_dir(Run run) {
  if (run.data_dir.empty()) run.data_dir = shared_data_dir();
  return run;
}

}  // namespace

void run_attattr_attribute(const AttAttrAttributeRun& run) { run_attribute(with_data_dir(run)); }

void run_attattr_heads(const AttAttrHeadsRun& run) {
  const AttAttrHeadsRun a = with_data_dir(run);
  const Classifier clf = load(a);
  if (dist::sharded()) return run_heads_sharded(clf, a);
  const json j = heads_json(clf, a);
  Output out(a.out);
  out.text(j.dump(2) + "\n");
  out.commit();
}

void run_attattr_prune(const AttAttrPruneRun& run) {
  AttAttrPruneRun a = run;
  a.heads = with_data_dir(run.heads);
  run_prune(a);
}

void run_attattr_tree(const AttAttrTreeRun& run) { run_tree(with_data_dir(run)); }

void run_attattr_triggers(const AttAttrTriggersRun& run) { run_triggers(with_data_dir(run)); }

}  // namespace salient
