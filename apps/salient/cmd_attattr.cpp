// salient attattr attribute | heads | prune | tree | triggers: Self-Attention Attribution.
#include <torch/torch.h>

#include <cmath>
#include <map>

#include "attattr/analysis.h"
#include "attattr/attribution.h"
#include "attattr/render.h"
#include "attattr/report.h"
#include "commands.h"
#include "data/dataset.h"
#include "dist/shards.h"
#include "dist/world.h"
#include "model/classifier.h"
#include "util/progress.h"
#include "util/tensor_values.h"

namespace salient::cli {

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

struct CommonArgs {
  std::string model, data_dir = shared_data_dir();
  int m = 20;
  std::string rule = "left";
  double max_batch_mb = 2048;
  bool float64 = false;
};

void add_common(CLI::App* cmd, CommonArgs& a, int default_m) {
  a.m = default_m;
  cmd->add_option("--model", a.model, "model directory")->required();
  cmd->add_option("--steps,--m", a.m, "integration points m (default " + std::to_string(default_m) + ")");
  cmd->add_option("--rule", a.rule,
                  "riemann_left (default, as the authors' code; alias left) | riemann_right | riemann_middle | "
                  "riemann_trapezoid | gausslegendre (aliases right, midpoint, trapezoid, gauss)");
  cmd->add_option("--max-batch-mb", a.max_batch_mb, "memory bound for one chunk of integration points (MiB)");
  cmd->add_option("--data-dir", a.data_dir, "directory of the shared datasets");
  cmd->add_flag("--float64", a.float64, "compute in double precision");
}

Classifier load(const CommonArgs& a) {
  Classifier clf = load_classifier(a.model);
  if (a.float64) clf.model.to(torch::kFloat64);
  clf.model.set_requires_grad(false);  // gradients only w.r.t. the scaled attention
  clf.model.eval();
  return clf;
}

AttributionOptions options(const CommonArgs& a) {
  AttributionOptions o;
  o.m = a.m;
  o.rule = parse_rule(a.rule);
  o.max_batch_mb = a.max_batch_mb;
  make_quadrature(o.rule, o.m);  // validate before any work
  return o;
}

torch::Tensor row(const std::vector<int64_t>& v) { return torch::tensor(v, torch::kLong).unsqueeze(0); }

// ---- attribute ----
struct AttributeArgs {
  CommonArgs c;
  std::string layers, target = "pred", input = "-", output = "-", html;
  int64_t html_index = 0;
  bool straightforward = false;
};

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

void run_attribute(const AttributeArgs& a) {
  Classifier clf = load(a.c);
  AttributionOptions o = options(a.c);
  o.layers = parse_layers(a.layers);
  std::vector<int64_t> layer_ids = checked_layers(clf.model, o);
  auto items = read_input_items(a.input);
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
                           {"max_batch_mb", a.c.max_batch_mb}, {"layers", a.layers}, {"target", a.target}, {"straightforward", a.straightforward},
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
struct HeadsArgs {
  CommonArgs c;
  std::string data = "sst2:dev", target = "gold", out;
  int64_t limit = 200, taylor_batch = 32;
  uint64_t seed = 0;
};

void check_heads_args(const HeadsArgs& a) {
  if (a.target != "gold" && a.target != "pred") fail("--target: must be gold or pred (got '{}')", a.target);
  if (a.taylor_batch <= 0) fail("--taylor-batch: must be positive (got {})", a.taylor_batch);
}

json heads_json(const Classifier& clf, const HeadsArgs& a) {
  check_heads_args(a);
  LabelledSet set = load_labelled_set(clf, a.data, a.c.data_dir, a.limit, "--data");
  json j = head_scores_json(clf, set, options(a.c), a.target == "gold", a.taylor_batch, a.seed);
  j["model"] = clf.dir;
  j["data"] = a.data;
  return j;
}

// Under mpirun: chunks of --taylor-batch examples (one Taylor batch each, as one process batches
// them), balanced by tokens; a chunk file holds its examples' terms of each sum, and rank 0 adds
// them in example order, which is exactly one process's sum (analysis.h).
void run_heads_sharded(const Classifier& clf, const HeadsArgs& a) {
  dist::require_sharded_files("", "", "-o", a.out);
  check_heads_args(a);
  const LabelledSet set = load_labelled_set(clf, a.data, a.c.data_dir, a.limit, "--data");
  const AttributionOptions o = options(a.c);
  const bool gold = a.target == "gold";
  std::vector<double> costs;
  for (const auto& e : set.encodings) costs.push_back(static_cast<double>(e.ids.size()));
  const json settings = {{"command", "attattr heads"}, {"model", clf.dir}, {"data", a.data}, {"limit", a.limit},
                         {"examples", set.encodings.size()}, {"m", o.m}, {"rule", rule_short_name(o.rule)},
                         {"max_batch_mb", a.c.max_batch_mb},
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
struct PruneArgs {
  HeadsArgs h;
  std::string heads_file, eval_data = "sst2:dev", svg, markdown;
  int steps = 10;
  int64_t layer = -1;
};

void run_prune(const PruneArgs& a) {
  Classifier clf = load(a.h.c);
  if (a.steps <= 0) fail("--prune-steps: must be positive (got {})", a.steps);
  json scores = a.heads_file.empty() ? heads_json(clf, a.h) : parse_json_file(a.heads_file);
  LabelledSet eval = load_labelled_set(clf, a.eval_data, a.h.c.data_dir, 0, "--eval-data");
  // Written to a file, the run is resumable: every accuracy is kept in OUT.partial.jsonl until the
  // results are written (a HateXplain curve set takes the better part of an hour).
  const bool to_file = !a.h.out.empty() && a.h.out != "-";
  MaskAccuracies accuracies =
      to_file ? MaskAccuracies(a.h.out + ".partial.jsonl",
                               {{"model", clf.dir}, {"weights", weights_fingerprint(clf.dir)}, {"eval_data", a.eval_data},
                                {"data_dir", a.h.c.data_dir}, {"eval_examples", eval.encodings.size()}})
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
  Output out(a.h.out);
  out.text(result.dump(2) + "\n");
  out.commit();
  accuracies.remove_file();
}

// ---- tree ----
struct TreeArgs {
  CommonArgs c;
  std::string text, pair, data, target = "pred", out, svg;
  int64_t index = 0, top_layer = -1;
  double tau = 0.4, top_tau = -1;
};

void run_tree(const TreeArgs& a) {
  Classifier clf = load(a.c);
  AttributionOptions o = options(a.c);
  Encoding e;
  int64_t gold = -1;
  if (!a.text.empty()) {
    e = clf.encode(a.text, a.pair.empty() ? std::nullopt : std::optional<std::string>(a.pair));
  } else if (!a.data.empty()) {
    Dataset ds = load_dataset(a.data, a.c.data_dir);
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
struct TriggerArgs {
  CommonArgs c;
  std::string train = "sst2:train", dev = "sst2:dev", out, markdown, patterns;
  int64_t n = 500, top = 10;
  double min_score = 0.02;
  bool use_both = false;
  bool mining_set_given = false;  // --train, --n or --min-score on the command line
};

void run_triggers(const TriggerArgs& a) {
  Classifier clf = load(a.c);
  AttributionOptions o = options(a.c);
  if (a.n <= 0) fail("--n: must be positive (got {})", a.n);
  if (a.top <= 0) fail("--top: must be positive (got {})", a.top);
  if (!a.patterns.empty() && a.mining_set_given)
    fail("--patterns: the patterns and their mining set come from the file; drop --train, --n and --min-score");
  Dataset dev = load_dataset(a.dev, a.c.data_dir);
  LabelledSet dev_set = load_labelled_set(clf, a.dev, a.c.data_dir, 0, "--dev");
  const int64_t n_labels = clf.model.config().num_labels;
  json j = {{"model", clf.dir}, {"dev", a.dev}};
  std::vector<TriggerPattern> patterns;
  std::string mined;  // for the table's title
  if (a.patterns.empty()) {
    LabelledSet mine = load_labelled_set(clf, a.train, a.c.data_dir, a.n, "--train");
    patterns = mine_trigger_patterns(clf, mine, o, a.min_score);
    j.update({{"train", a.train}, {"mined_examples", mine.encodings.size()}, {"m", o.m}, {"rule", rule_short_name(o.rule)}});
    mined = fmt::format("mined from {} examples of {}, m = {}", mine.encodings.size(), a.train, o.m);
  } else {
    // Another run's patterns on this model: the same inserted tokens at the same relative places.
    const json saved = parse_json_file(a.patterns);
    patterns = trigger_patterns_from_json(clf, saved, "--patterns: '" + a.patterns + "'", a.c.data_dir, a.use_both);
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

}  // namespace

void add_attattr_commands(CLI::App& app, std::vector<Command>& commands) {
  auto* group = app.add_subcommand("attattr", "Self-Attention Attribution (Hao et al. 2021): attribute, heads, prune, tree, triggers");
  group->require_subcommand(1);

  static AttributeArgs at;
  auto* attr = group->add_subcommand("attribute", "attribution of every attention connection → JSON lines");
  add_common(attr, at.c, 20);
  attr->add_option("--layers", at.layers, "comma-separated layers (default: all)");
  attr->add_option("--target", at.target, "pred (default) | gold (needs 'label' in the input) | class number or name");
  attr->add_option("--input,-i", at.input, "input JSON/text lines (default stdin)");
  attr->add_option("--out,-o,--output", at.output, "output file (default stdout)");
  attr->add_option("--html", at.html, "write an HTML view (head heatmaps + token matrix) of one example");
  attr->add_option("--html-index", at.html_index, "which input line the HTML view shows (default 0)");
  attr->add_flag("--straightforward", at.straightforward, "reference path: m full forward+backward passes per layer");

  static HeadsArgs hd;
  auto* heads = group->add_subcommand("heads", "head importance over a dataset: attattr, attention, Taylor (AttAttr's per-token form and Michel et al.'s), random");
  add_common(heads, hd.c, 20);
  heads->add_option("--data", hd.data, "dataset (default sst2:dev)");
  heads->add_option("--limit", hd.limit, "first N examples (default 200)");
  heads->add_option("--target", hd.target, "gold (default) | pred");
  heads->add_option("--taylor-batch", hd.taylor_batch, "batch size of the Taylor scores (default 32)");
  heads->add_option("--seed", hd.seed, "seed of the random ordering");
  heads->add_option("--out,-o", hd.out, "output JSON (default stdout)");

  static PruneArgs pr;
  auto* prune = group->add_subcommand("prune", "pruning curves for each head ordering (accuracy on the eval set)");
  add_common(prune, pr.h.c, 20);
  prune->add_option("--heads", pr.heads_file, "scores from `attattr heads` (default: compute them)");
  prune->add_option("--data", pr.h.data, "dataset for the head scores when computed (default sst2:dev)");
  prune->add_option("--limit", pr.h.limit, "examples for the head scores (default 200)");
  prune->add_option("--seed", pr.h.seed, "seed of the random ordering");
  prune->add_option("--eval-data", pr.eval_data, "accuracy on this whole dataset (default sst2:dev)");
  prune->add_option("--prune-steps", pr.steps, "points of the pruning curve (default 10: 0%, 10%, … 100%)");
  prune->add_option("--layer", pr.layer, "also prune the top-k heads of this layer, k = 0..H");
  prune->add_option("--out,-o", pr.h.out, "output JSON (default stdout); to a file, an interrupted run resumes from OUT.partial.jsonl");
  prune->add_option("--svg", pr.svg, "plot of the curves");
  prune->add_option("--markdown", pr.markdown, "table of the curves");

  static TreeArgs tr;
  auto* tree = group->add_subcommand("tree", "attribution tree (Algorithm 1) of one example → JSON + SVG");
  add_common(tree, tr.c, 64);
  tree->add_option("--text", tr.text, "the input text");
  tree->add_option("--pair", tr.pair, "second segment");
  tree->add_option("--data", tr.data, "or a dataset ...");
  tree->add_option("--index", tr.index, "... and the record index");
  tree->add_option("--target", tr.target, "pred (default) | gold");
  tree->add_option("--tau", tr.tau, "threshold on per-layer normalised attributions (default 0.4)");
  tree->add_option("--top-tau", tr.top_tau, "threshold of the top layer (root's children); default = --tau");
  tree->add_option("--top-layer", tr.top_layer, "layer of the root's children (default: second to last, as the original)");
  tree->add_option("--out,-o", tr.out, "output JSON (default stdout)");
  tree->add_option("--svg", tr.svg, "drawing (tokens across, layers up)");

  static TriggerArgs tg;
  auto* trig = group->add_subcommand("triggers", "adversarial trigger patterns: mine on training data, insert into dev");
  add_common(trig, tg.c, 64);
  trig->add_option("--train", tg.train, "mining data (default sst2:train)")->each([](const std::string&) { tg.mining_set_given = true; });
  trig->add_option("--n", tg.n, "first N training examples (default 500)")->each([](const std::string&) { tg.mining_set_given = true; });
  trig->add_option("--dev", tg.dev, "evaluation data (default sst2:dev)");
  trig->add_option("--top", tg.top, "evaluate the top-N patterns (default 10)");
  trig->add_option("--min-score", tg.min_score, "drop patterns whose two scores sum below this (default 0.02)")
      ->each([](const std::string&) { tg.mining_set_given = true; });
  trig->add_option("--patterns", tg.patterns,
                   "evaluate the patterns of another run's output JSON (mined on another model) instead of mining");
  trig->add_flag("--use-both", tg.use_both, "always insert both top pairs (default: only top-1 when score2/score1 < 0.2)");
  trig->add_option("--out,-o", tg.out, "output JSON (default stdout)");
  trig->add_option("--markdown", tg.markdown, "table of the results");

  commands.push_back({attr, [] { run_attribute(at); }});
  commands.push_back({heads, [] {
    Classifier clf = load(hd.c);
    if (dist::sharded()) return run_heads_sharded(clf, hd);
    json j = heads_json(clf, hd);
    Output out(hd.out);
    out.text(j.dump(2) + "\n");
    out.commit();
  }});
  commands.push_back({prune, [] { run_prune(pr); }});
  commands.push_back({tree, [] { run_tree(tr); }});
  commands.push_back({trig, [] { run_triggers(tg); }});
}

}  // namespace salient::cli
