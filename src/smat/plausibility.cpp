#include "smat/plausibility.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "data/dataset.h"
#include "eval/plausibility.h"
#include "model/checkpoint.h"
#include "smat/head_explainer.h"
#include "util/error.h"
#include "util/io.h"
#include "util/table.h"
#include "util/tensor_values.h"

namespace salient::smat {

namespace {

// Mean per-example AUROC and AUPRC of token scores against the projected rationale, over the
// labelled tokens (specials carry -1 and are left out), as summarize_plausibility means them: AUROC
// over the examples with marked and unmarked tokens, AUPRC over those with a marked one.
struct Agreement {
  double auroc = 0, auprc = 0;
  int64_t examples = 0;
};

// With `words` (per example, the encoding), the labelled tokens are first summed into their words
// (segment and word_ids): a word's score is the sum of its pieces', its label the max of theirs.
Agreement agreement(const std::vector<std::vector<double>>& scores, const std::vector<std::vector<int>>& gold,
                    const std::vector<Encoding>* words = nullptr) {
  std::vector<std::vector<double>> kept_scores(scores.size());
  std::vector<std::vector<int>> kept_gold(gold.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    std::map<std::pair<int64_t, int64_t>, size_t> word_slot;  // (segment, word) → its place in the kept lists
    for (size_t t = 0; t < gold[i].size(); ++t) {
      if (gold[i][t] < 0) continue;
      if (words) {
        const Encoding& e = (*words)[i];
        const std::pair<int64_t, int64_t> key = {e.type_ids.at(t), e.word_ids.at(t)};
        auto [it, fresh] = word_slot.emplace(key, kept_scores[i].size());
        if (!fresh) {
          kept_scores[i][it->second] += scores[i][t];
          kept_gold[i][it->second] = std::max(kept_gold[i][it->second], gold[i][t]);
          continue;
        }
      }
      kept_scores[i].push_back(scores[i][t]);
      kept_gold[i].push_back(gold[i][t]);
    }
  }
  const PlausibilitySummary p = summarize_plausibility(kept_scores, kept_gold);
  if (p.auroc_examples == 0) fail("--data: no example has a rationale with both marked and unmarked tokens");
  return {p.auroc_mean, p.auprc_mean, p.auroc_examples};
}

// Per example, the coefficient mix Σ_h w_h s_h of its head scores [heads, L] (the ranking of
// SMaT's explanation, which is a softmax of it).
std::vector<std::vector<double>> mixed(const std::vector<SimulationExample>& examples, const torch::Tensor& weights) {
  std::vector<std::vector<double>> out;
  for (const auto& ex : examples)
    out.push_back(tensor_values((ex.head_scores.to(torch::kFloat64) * weights.to(torch::kFloat64).view({-1, 1})).sum(0)));
  return out;
}

}  // namespace

void PlausibilityOptions::validate() const {
  if (teacher.empty()) fail("--teacher: a trained teacher model directory is required");
  if (!dir_exists(teacher)) fail("--teacher: '{}' is not a directory", teacher);
  if (data.empty()) fail("--data: a dataset with rationales is required");
  if (out_dir.empty()) fail("--out: an output directory is required");
  if (limit < 0) fail("--limit: must be ≥ 0, got {}", limit);
  if (max_length < 0 || max_length == 1 || max_length == 2) fail("--max-length: must be 0 or ≥ 3, got {}", max_length);
  if (unit != "word" && unit != "token") fail("--unit: expected word or token, got '{}'", unit);
}

nlohmann::json run_plausibility(const PlausibilityOptions& o) {
  o.validate();
  const Classifier teacher = load_classifier(o.teacher);
  const Dataset data = load_dataset(o.data, o.data_dir.empty() ? shared_data_dir() : o.data_dir);
  if (!data.has_rationales()) fail("--data: '{}' has no human rationales", o.data);
  const int max_length = static_cast<int>(o.max_length > 0 ? o.max_length : teacher.model.config().max_tokens());
  std::vector<Encoding> encodings;
  std::vector<std::vector<int>> gold;
  for (const Record& r : data.records) {
    if (r.rationale.empty()) continue;
    if (o.limit > 0 && static_cast<int64_t>(encodings.size()) >= o.limit) break;
    encodings.push_back(teacher.encode(r.text, r.text_pair, max_length));
    gold.push_back(project_rationale(r.text, encodings.back(), r.rationale, "--data " + o.data + " record " + r.id));
  }
  const std::vector<SimulationExample> examples = annotate(teacher, encodings);
  const std::vector<Encoding>* by_word = o.unit == "word" ? &encodings : nullptr;
  const int64_t L = teacher.model.num_layers(), H = teacher.model.num_heads();

  struct Row {
    std::string explainer, kind;
    Agreement a;
  };
  std::vector<Row> rows;
  // The study's static explainers; their distributions rank the tokens as their scores do.
  for (const std::string name : {"attention_all", "attention_last", "saliency", "grad_x_input", "ig"}) {
    const auto explained = with_explanations(teacher, examples, name, o.statics);
    std::vector<std::vector<double>> scores;
    for (const auto& ex : explained) scores.push_back(tensor_values(ex.explanation));
    rows.push_back({name, "static", agreement(scores, gold, by_word)});
  }
  nlohmann::json learned_files = nlohmann::json::array();
  for (const std::string& file : o.smat_files) {
    const LearnedHeadExplainer e = load_head_explainer(file);
    if (e.num_layers != L || e.num_heads != H)
      fail("--smat: '{}' explains a model of {} layers × {} heads; the teacher has {} × {}", file, e.num_layers, e.num_heads, L, H);
    torch::Tensor weights = torch::zeros({L * H}, torch::kFloat64);
    const torch::Tensor lambda = e.coefficients().to(torch::kFloat64);
    for (size_t k = 0; k < e.layers.size(); ++k)
      weights.slice(0, e.layers[k] * H, (e.layers[k] + 1) * H).copy_(lambda.slice(0, k * H, (k + 1) * H));
    rows.push_back({"smat (" + file + ")", "learned", agreement(mixed(examples, weights), gold, by_word)});
    learned_files.push_back(file);
  }
  if (o.smat_files.size() > 1) {
    Row mean{fmt::format("smat (mean of {})", o.smat_files.size()), "learned", {}};
    for (const Row& r : rows)
      if (r.kind == "learned") {
        mean.a.auroc += r.a.auroc / static_cast<double>(o.smat_files.size());
        mean.a.auprc += r.a.auprc / static_cast<double>(o.smat_files.size());
        mean.a.examples = r.a.examples;
      }
    rows.push_back(mean);
  }
  // The oracle rows: every layer's head mean and every head alone, the best by AUROC.
  nlohmann::json per_layer = nlohmann::json::array(), per_head = nlohmann::json::array();
  Row best_layer{"", "oracle", {-1, 0, 0}}, best_head{"", "oracle", {-1, 0, 0}};
  for (int64_t l = 0; l < L; ++l) {
    torch::Tensor w = torch::zeros({L * H}, torch::kFloat64);
    w.slice(0, l * H, (l + 1) * H).fill_(1.0 / static_cast<double>(H));
    const Agreement a = agreement(mixed(examples, w), gold, by_word);
    per_layer.push_back({{"layer", l}, {"auroc", a.auroc}, {"auprc", a.auprc}});
    if (a.auroc > best_layer.a.auroc) best_layer = {fmt::format("oracle: best layer ({})", l), "oracle", a};
    for (int64_t h = 0; h < H; ++h) {
      torch::Tensor one = torch::zeros({L * H}, torch::kFloat64);
      one[l * H + h] = 1.0;
      const Agreement b = agreement(mixed(examples, one), gold, by_word);
      per_head.push_back({{"layer", l}, {"head", h}, {"auroc", b.auroc}, {"auprc", b.auprc}});
      if (b.auroc > best_head.a.auroc) best_head = {fmt::format("oracle: best head ({}.{})", l, h), "oracle", b};
    }
  }
  rows.push_back(best_layer);
  rows.push_back(best_head);

  Table table({"explainer", "kind", "AUROC", "AUPRC", "examples"});
  nlohmann::json json_rows = nlohmann::json::array();
  for (const Row& r : rows) {
    table.add_row({r.explainer, r.kind, fmt::format("{:.3f}", r.a.auroc), fmt::format("{:.3f}", r.a.auprc),
                   std::to_string(r.a.examples)});
    json_rows.push_back({{"explainer", r.explainer}, {"kind", r.kind}, {"auroc", r.a.auroc}, {"auprc", r.a.auprc},
                         {"examples", r.a.examples}});
  }
  const nlohmann::json out = {{"teacher", o.teacher},   {"data", o.data},          {"max_length", max_length}, {"unit", o.unit},
                              {"smat", learned_files},  {"rows", json_rows},       {"layers", per_layer},
                              {"heads", per_head}};
  make_dirs(o.out_dir);
  write_file_atomic(join_path(o.out_dir, "plausibility.md"),
                    table.markdown() + "\nMean per-example AUROC / AUPRC of the " +
                        (o.unit == "word" ? std::string("word scores (word pieces summed)") : std::string("token scores")) +
                        " against the human rationale (special tokens excluded). Oracle rows are chosen with these labels.\n");
  write_file_atomic(join_path(o.out_dir, "plausibility.csv"), table.csv());
  write_file_atomic(join_path(o.out_dir, "plausibility.json"), out.dump(2) + "\n");
  return out;
}

}  // namespace salient::smat
