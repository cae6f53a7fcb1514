// HateXplain: the JSONL splits, the original release (dataset.json + post_id_divisions.json) and the
// training CSV (docs/datasets.md).
#include "data/dataset.h"
#include <map>
#include "data/readers/reader_util.h"
#include "util/io.h"

namespace salient {

using namespace data_detail;

const std::vector<std::string> kHateXplainLabels = {"hatespeech", "normal", "offensive"};

// The label chosen by more than half of the annotators, or -1 ("undecided").
int64_t majority_label(const std::vector<int64_t>& labels) {
  for (int64_t c = 0; c < 3; ++c)
    if (2 * std::count(labels.begin(), labels.end(), c) > static_cast<int64_t>(labels.size())) return c;
  return -1;
}

// Builds one post from its tokens, the annotators' labels and their masks (one per token).
// Tokens holding whitespace become several words (each keeps the token's mask value); empty
// tokens are dropped with their mask entries, so words and rationale always line up.
Record make_hatexplain_record(const std::string& id, const std::vector<std::string>& tokens,
                              const std::vector<int64_t>& labels,
                              const std::vector<std::vector<int>>& masks, const std::string& where) {
  if (labels.empty()) fail("{}: post {} has no annotator labels", where, id);
  for (int64_t l : labels)
    if (l < 0 || l > 2) fail("{}: annotator label {} out of range 0..2", where, l);
  Record r;
  r.id = id;
  r.label = majority_label(labels);
  if (r.label < 0) fail("{}: post {} has no majority label among its annotators", where, id);

  for (const auto& m : masks)
    if (m.size() != tokens.size())
      fail("{}: rationale mask has {} values but the post has {} tokens", where, m.size(), tokens.size());

  std::vector<std::string> words;
  std::vector<size_t> token_of_word;
  for (size_t t = 0; t < tokens.size(); ++t)
    for (auto& w : split_whitespace(tokens[t])) {
      words.push_back(std::move(w));
      token_of_word.push_back(t);
    }
  r.text = join_words(words);
  r.rationale.assign(words.size(), 0.0f);
  for (const auto& m : masks) {
    std::vector<int> word_mask(words.size());
    for (size_t w = 0; w < words.size(); ++w) word_mask[w] = m[token_of_word[w]];
    r.annotator_rationales.push_back(std::move(word_mask));
  }
  // Gold mask: mean over the annotators who gave a mask, kept where >= 0.5 (HateXplain/ERASER).
  if (!masks.empty()) {
    for (size_t w = 0; w < words.size(); ++w) {
      int sum = 0;
      for (const auto& m : r.annotator_rationales) sum += m[w];
      r.rationale[w] = 2 * sum >= static_cast<int>(masks.size()) ? 1.0f : 0.0f;
    }
  }
  return r;
}


Dataset read_hatexplain_jsonl(const std::string& path) {
  Dataset ds;
  ds.name = path;
  ds.label_names = kHateXplainLabels;
  for (const Line& line : read_lines(read_file(path))) {
    std::string where = loc(path, line.no);
    json obj = parse_json_line(line.text, path, line.no);
    std::string id = get_string(obj, "id", where);
    const json& annotators = require_field(obj, "annotators", where);
    const json& label_list = require_field(annotators, "label", where);
    if (!label_list.is_array()) fail("{}: field \"annotators.label\" must be a list", where);
    std::vector<int64_t> labels;
    for (const auto& l : label_list) labels.push_back(get_int(l, "annotator label", where));
    std::vector<std::string> tokens = get_string_list(obj, "post_tokens", where);
    std::vector<std::vector<int>> masks = get_masks(obj, "rationales", where);
    ds.records.push_back(make_hatexplain_record(id, tokens, labels, masks, where));
  }
  return ds;
}

Dataset read_hatexplain_original(const std::string& dataset_json, const std::string& divisions_json,
                                 const std::string& split) {
  // ordered_json keeps the file's post order when no divisions file is given.
  ordered_json posts;
  try {
    posts = ordered_json::parse(read_file(dataset_json));
  } catch (const nlohmann::json::parse_error& e) {
    fail("{}: invalid JSON at byte {}", dataset_json, e.byte);
  } catch (const nlohmann::json::exception&) {
    fail("{}: invalid JSON (a number out of range)", dataset_json);
  }
  if (!posts.is_object()) fail("{}: expected an object keyed by post id", dataset_json);

  // Returns nullopt for an undecided post when `skip_undecided`.
  auto build = [&](const std::string& post_id, const ordered_json& post,
                   bool skip_undecided) -> std::optional<Record> {
    std::string where = fmt::format("{}: post {}", dataset_json, post_id);
    const ordered_json& annotators = require_field(post, "annotators", where);
    if (!annotators.is_array()) fail("{}: field \"annotators\" must be a list", where);
    std::vector<int64_t> labels;
    for (const auto& a : annotators) {
      std::string name = get_string(a, "label", where);
      auto it = std::find(kHateXplainLabels.begin(), kHateXplainLabels.end(), name);
      if (it == kHateXplainLabels.end())
        fail("{}: unknown annotator label {} (expected hatespeech, normal or offensive)", where,
             quote_for_error(name));
      labels.push_back(it - kHateXplainLabels.begin());
    }
    if (skip_undecided && !labels.empty() && majority_label(labels) < 0) return std::nullopt;
    std::vector<std::string> tokens = get_string_list(post, "post_tokens", where);
    std::vector<std::vector<int>> masks = get_masks(post, "rationales", where);
    return make_hatexplain_record(post_id, tokens, labels, masks, where);
  };

  Dataset ds;
  ds.name = dataset_json;
  ds.label_names = kHateXplainLabels;
  if (divisions_json.empty()) {
    // Whole file: posts without a majority label ("undecided") are in no official split; skip them.
    for (const auto& [post_id, post] : posts.items())
      if (auto r = build(post_id, post, true)) ds.records.push_back(std::move(*r));
    return ds;
  }
  json divisions = parse_json_file(divisions_json);
  auto it = divisions.is_object() ? divisions.find(split) : divisions.end();
  if (it == divisions.end() || !it->is_array())
    fail("{}: no split \"{}\" (expected train, val or test)", divisions_json, split);
  for (const auto& id_value : *it) {
    if (!id_value.is_string()) fail("{}: split \"{}\" must list post ids as strings", divisions_json, split);
    std::string post_id = id_value.get<std::string>();
    auto post = posts.find(post_id);
    if (post == posts.end())
      fail("{}: post {} of split \"{}\" is not in {}", divisions_json, post_id, split, dataset_json);
    ds.records.push_back(*build(post_id, *post, false));
  }
  return ds;
}

Dataset read_hatexplain_csv(const std::string& path) {
  std::vector<Row> rows = parse_delimited(read_gzip_file(path), path, ',', true);
  if (rows.empty()) fail("{}: empty file (expected a header line)", path);
  const std::vector<std::string>& header = rows[0].fields;
  int text_col = find_column(header, "text");
  int label_col = find_column(header, "majority_label");
  if (text_col < 0 || label_col < 0)
    fail("{}:{}: header needs \"text\" and \"majority_label\" columns", path, rows[0].line);
  Dataset ds;
  ds.name = path;
  ds.label_names = kHateXplainLabels;
  for (size_t k = 1; k < rows.size(); ++k) {
    const Row& row = rows[k];
    check_columns(row, header.size(), path, "comma-separated");
    Record r;
    r.id = std::to_string(ds.records.size());
    r.text = trim(row.fields[text_col]);
    r.label = parse_label(row.fields[label_col], 3, loc(path, row.line));
    ds.records.push_back(std::move(r));
  }
  return ds;
}

}  // namespace salient
