#include "attattr/report.h"

#include <algorithm>
#include <cmath>

#include "data/dataset.h"
#include "util/error.h"
#include "util/progress.h"
#include "util/tensor_values.h"

namespace salient::attattr {

nlohmann::json attribution_json(const Classifier& clf, const Encoding& e, const AttributionResult& r,
                                const AttributionOptions& o, const std::vector<int64_t>& layer_ids) {
  using nlohmann::json;
  json j;
  j["tokens"] = e.tokens;
  j["target"] = r.target;
  j["target_label"] = clf.label_name(r.target);
  j["probs"] = tensor_values(r.probs);
  j["m"] = o.m;
  j["rule"] = rule_short_name(o.rule);
  j["layer_ids"] = layer_ids;
  json layers = json::array(), completeness = json::array(), token_out = json::array(), token_in = json::array(),
       word_out = json::array(), word_in = json::array();
  json words;
  for (const auto& la : r.layers) {
    layers.push_back(tensor_json(la.attribution));
    completeness.push_back({{"layer", la.layer}, {"sum", la.attribution_sum}, {"f_full", la.f_full}, {"f_zero", la.f_zero},
                            {"gap", la.completeness_gap()},
                            {"relative_gap", std::abs(la.f_full - la.f_zero) > 0
                                                 ? la.completeness_gap() / std::abs(la.f_full - la.f_zero) : 0.0}});
    TokenFlow tf = token_flow(la);
    token_out.push_back(tf.out);
    token_in.push_back(tf.in);
    WordFlow wf = word_flow(la, e.tokens, e.word_ids, e.type_ids, clf.tokenizer);
    words = wf.labels;
    word_out.push_back(wf.out);
    word_in.push_back(wf.in);
  }
  j["layers"] = std::move(layers);
  j["completeness"] = std::move(completeness);
  j["head_importance"] = tensor_json(head_importance(r));
  j["token_out"] = std::move(token_out);
  j["token_in"] = std::move(token_in);
  j["words"] = words;
  j["word_out"] = std::move(word_out);
  j["word_in"] = std::move(word_in);
  return j;
}

nlohmann::json tree_json(const Classifier& clf, const Encoding& e, const AttributionResult& r, const AttributionOptions& o,
                         double tau, double top_tau, int64_t top_layer) {
  using nlohmann::json;
  if (!(tau > 0)) fail("--tau: must be positive (got {})", tau);
  std::vector<torch::Tensor> sums;
  for (const auto& la : r.layers) sums.push_back(layer_sum(la));
  const double top = top_tau > 0 ? top_tau : tau;
  AttributionTree t = build_tree(torch::stack(sums), tau, top, top_layer);
  json j = {{"tokens", e.tokens}, {"target", r.target}, {"target_label", clf.label_name(r.target)},
            {"m", o.m}, {"rule", rule_short_name(o.rule)}, {"tau", tau}, {"top_tau", top},
            {"top_layer", t.top_layer}, {"num_layers", clf.model.num_layers()}, {"root", t.root}};
  json nodes = json::array(), edges = json::array();
  for (size_t i = 0; i < e.tokens.size(); ++i)
    if (t.state[i] != -1)
      nodes.push_back({{"index", i}, {"token", e.tokens[i]}, {"height", t.height[i]},
                       {"level", std::lround(t.height[i] * clf.model.num_layers())}});
  for (const auto& ed : t.edges)
    edges.push_back({{"from", ed.from}, {"to", ed.to}, {"from_token", e.tokens[ed.from]}, {"to_token", e.tokens[ed.to]},
                     {"layer", ed.layer}, {"weight", ed.weight}});
  j["nodes"] = nodes;
  j["edges"] = edges;
  return j;
}

LabelledSet load_labelled_set(const Classifier& clf, const std::string& spec, const std::string& data_dir, int64_t limit,
                              const std::string& flag) {
  if (spec.empty()) fail("{}: a dataset is required (e.g. sst2:dev)", flag);
  Dataset ds = load_dataset(spec, data_dir);
  LabelledSet set;
  for (const Record& r : ds.records) {
    if (limit > 0 && static_cast<int64_t>(set.encodings.size()) >= limit) break;
    if (r.label < 0) fail("{}: '{}' has unlabelled records (id {})", flag, spec, r.id);
    if (r.label >= clf.model.config().num_labels)
      fail("{}: label {} of record {} is out of range for the model", flag, r.label, r.id);
    set.encodings.push_back(clf.encode(r.text, r.text_pair));
    set.labels.push_back(r.label);
  }
  if (set.encodings.empty()) fail("{}: '{}' has no records", flag, spec);
  return set;
}

nlohmann::json head_scores_json(const Classifier& clf, const LabelledSet& set, const AttributionOptions& o, bool gold_target,
                                int64_t taylor_batch, uint64_t seed) {
  HeadScoreSums sums;
  sums.attattr = attattr_head_scores(clf.model, set, o, gold_target);
  sums.attention = attention_head_scores(clf.model, set);
  std::vector<TaylorHeadScores> batches;
  taylor_head_scores(clf.model, set, taylor_batch, {}, &batches);
  sums.taylor = {torch::zeros_like(sums.attattr), torch::zeros_like(sums.attattr)};
  for (const TaylorHeadScores& b : batches) {
    sums.taylor.attattr += b.attattr;
    sums.taylor.michel += b.michel;
  }
  return head_scores_json(clf.model, set.encodings.size(), o, gold_target, seed, sums);
}

nlohmann::json head_scores_json(const Transformer& model, size_t examples, const AttributionOptions& o, bool gold_target,
                                uint64_t seed, const HeadScoreSums& sums) {
  nlohmann::json j;
  j["examples"] = examples;
  j["m"] = o.m;
  j["rule"] = rule_short_name(o.rule);
  j["target"] = gold_target ? "gold" : "pred";
  j["seed"] = seed;
  nlohmann::json orderings;
  orderings["attattr"] = tensor_json(sums.attattr);
  orderings["attention"] = tensor_json(sums.attention);
  const TaylorHeadScores taylor = normalise_taylor(sums.taylor);
  orderings["taylor"] = tensor_json(taylor.attattr);
  orderings["taylor_michel"] = tensor_json(taylor.michel);
  orderings["random"] = tensor_json(random_head_scores(model, seed));
  j["scores"] = orderings;
  return j;
}

namespace {

torch::Tensor score_matrix(const nlohmann::json& rows, const Transformer& model, const std::string& where) {
  if (!rows.is_array() || (int64_t)rows.size() != model.num_layers())
    fail("{}: expected {} rows (one per layer)", where, model.num_layers());
  std::vector<torch::Tensor> out;
  for (const auto& r : rows) {
    if (!r.is_array() || (int64_t)r.size() != model.num_heads())
      fail("{}: expected {} numbers per row (one per head)", where, model.num_heads());
    std::vector<double> v;
    for (const auto& x : r) {
      if (!x.is_number()) fail("{}: {} is not a number", where, x.dump());
      v.push_back(x.get<double>());
    }
    out.push_back(torch::tensor(v, torch::kFloat64));
  }
  return torch::stack(out);
}

}  // namespace

nlohmann::json pruning_json(const Classifier& clf, const nlohmann::json& head_scores, const std::string& source,
                            const LabelledSet& eval, const std::string& eval_spec, int steps, int64_t layer,
                            MaskAccuracies* accuracies) {
  using nlohmann::json;
  if (steps <= 0) fail("prune steps: must be positive (got {})", steps);
  MaskAccuracies own;  // the orderings' curves share their end points: each mask runs once
  if (!accuracies) accuracies = &own;
  if (layer >= clf.model.num_layers()) fail("layer: {} out of range (the model has {} layers)", layer, clf.model.num_layers());
  if (!head_scores.is_object() || !head_scores.contains("scores") || !head_scores["scores"].is_object() ||
      head_scores["scores"].empty())
    fail("{}: has no 'scores' object (write it with salient attattr heads)", source);
  json result = {{"model", clf.dir}, {"eval_data", eval_spec}, {"eval_examples", eval.encodings.size()},
                 {"heads", head_scores}};
  std::string md = fmt::format("Pruning heads of {} (lowest score first), accuracy on {} ({} examples)\n\n| removed |",
                               clf.dir, eval_spec, eval.encodings.size());
  std::vector<std::string> names;
  std::vector<std::vector<PruneStep>> all;
  for (const auto& [name, s] : head_scores["scores"].items()) {
    torch::Tensor t = score_matrix(s, clf.model, source + ": scores." + name);
    Progress progress("prune " + name, 1, "curve");
    std::vector<PruneStep> curve = pruning_curve(clf.model, eval, t, steps, accuracies);
    progress.finish();
    json jc = json::array();
    for (const auto& st : curve)
      jc.push_back({{"fraction", st.fraction}, {"removed", st.removed}, {"accuracy", st.accuracy}});
    result["curves"][name] = jc;
    if (layer >= 0) result["layer_top_k"][name] = prune_layer_top_k(clf.model, eval, t, layer, accuracies);
    names.push_back(name);
    all.push_back(std::move(curve));
    md += " " + name + " |";
  }
  md += "\n|---|";
  for (size_t i = 0; i < names.size(); ++i) md += "---|";
  md += "\n";
  for (int s = 0; s <= steps; ++s) {
    md += fmt::format("| {:.0f}% ({}) |", 100.0 * all[0][s].fraction, all[0][s].removed);
    for (const auto& c : all) md += fmt::format(" {:.2f} |", 100 * c[s].accuracy);
    md += "\n";
  }
  if (layer >= 0) {
    result["layer"] = layer;
    md += fmt::format("\nTop-k heads of layer {} removed:\n\n| k |", layer);
    for (const auto& n : names) md += " " + n + " |";
    md += "\n|---|";
    for (size_t i = 0; i < names.size(); ++i) md += "---|";
    md += "\n";
    for (int64_t k = 0; k <= clf.model.num_heads(); ++k) {
      md += fmt::format("| {} |", k);
      for (const auto& n : names) md += fmt::format(" {:.2f} |", 100 * result["layer_top_k"][n][k].get<double>());
      md += "\n";
    }
  }
  result["markdown"] = md;
  return result;
}

std::vector<TriggerPattern> trigger_patterns_from_json(const Classifier& clf, const nlohmann::json& saved,
                                                       const std::string& source, const std::string& data_dir,
                                                       bool use_both) {
  for (const char* key : {"train", "mined_examples", "patterns"})
    if (!saved.contains(key)) fail("{}: no \"{}\" (not the output of salient attattr triggers)", source, key);
  const std::string train = saved["train"].get<std::string>();
  const LabelledSet mine =
      load_labelled_set(clf, train, data_dir, saved["mined_examples"].get<int64_t>(), source + ": \"train\"");
  std::vector<TriggerPattern> patterns;
  for (const nlohmann::json& s : saved["patterns"]) {
    const std::string where = fmt::format("{}: pattern {}", source, patterns.size());
    TriggerPattern p;
    try {
      p.example = s.at("example").get<int64_t>();
      p.layer = s.at("layer").get<int64_t>();
      p.head = s.at("head").get<int64_t>();
      p.score1 = s.at("scores").at(0).get<double>();
      p.score2 = s.at("scores").at(1).get<double>();
      p.pos1 = s.at("top1_position").get<std::vector<int64_t>>();
      p.pos2 = s.at("top2_position").get<std::vector<int64_t>>();
      p.target_label = s.at("target_label").get<int64_t>();
      p.gold_label = s.at("gold_label").get<int64_t>();
    } catch (const nlohmann::json::exception& e) {
      fail("{}: {}", where, e.what());
    }
    if (p.example < 0 || p.example >= static_cast<int64_t>(mine.encodings.size()))
      fail("{}: example {} is not among the {} mined examples of '{}'", where, p.example, mine.encodings.size(), train);
    p.set_example(mine.encodings[p.example], clf.tokenizer);
    const int64_t n = static_cast<int64_t>(p.tokens.size());
    for (const auto& [pos, key] : {std::pair{&p.pos1, "top1"}, std::pair{&p.pos2, "top2"}}) {
      if (pos->size() != 2 || (*pos)[0] < 0 || (*pos)[0] >= n || (*pos)[1] < 0 || (*pos)[1] >= n)
        fail("{}: {}_position is not a pair of positions in the example's {} tokens", where, key, n);
      const std::vector<std::string> here = {p.tokens[(*pos)[0]], p.tokens[(*pos)[1]]};
      if (s.contains(key) && s[key] != nlohmann::json(here))
        fail("{}: the example's tokens at {}_position are {} here but {} in the file (another tokenizer?)", where, key,
             nlohmann::json(here).dump(), s[key].dump());
    }
    std::vector<std::string> inserted;
    for (int64_t pos : p.positions(use_both)) inserted.push_back(p.tokens[pos]);
    if (s.contains("inserted_tokens") && s["inserted_tokens"] != nlohmann::json(inserted))
      fail("{}: inserts {} here but {} in the file (was it mined with{} --use-both?)", where,
           nlohmann::json(inserted).dump(), s["inserted_tokens"].dump(), use_both ? "out" : "");
    patterns.push_back(std::move(p));
  }
  return patterns;  // none when nothing was mined above --min-score there: nothing to insert
}

}  // namespace salient::attattr
