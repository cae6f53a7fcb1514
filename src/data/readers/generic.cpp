// Generic CSV / TSV / JSONL files with text, optional text_pair, label (an id or a name), optional
// rationale and target.
#include "data/dataset.h"
#include <charconv>
#include <limits>
#include <map>
#include "data/readers/reader_util.h"
#include "util/io.h"

namespace salient {

using namespace data_detail;

namespace {

// A record's rationale has one value per whitespace word of its text.
void check_rationale_length(const Record& r, const std::string& where) {
  size_t words = split_whitespace(r.text).size();
  if (r.rationale.size() != words)
    fail("{}: rationale has {} values but the text has {} words", where, r.rationale.size(), words);
}

struct RawLabel {
  bool present = false;
  bool is_int = false;
  int64_t value = 0;
  std::string name;
  std::string where;
};

RawLabel raw_label_from_string(const std::string& s, const std::string& where) {
  RawLabel raw;
  raw.where = where;
  std::string t = trim(s);
  if (t.empty()) return raw;  // unlabelled
  raw.present = true;
  raw.name = t;
  // One strict parse (the whole field, optional '-', digits). An integer beyond int64 saturates, so
  // resolve_labels refuses it as too large (or negative) instead of taking it for a class name;
  // errors quote it as the file wrote it.
  const char* last = t.data() + t.size();
  const auto [end, ec] = std::from_chars(t.data(), last, raw.value);
  const bool beyond_int64 = ec == std::errc::result_out_of_range;
  raw.is_int = end == last && (ec == std::errc() || beyond_int64);
  if (raw.is_int && beyond_int64)
    raw.value = t[0] == '-' ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  return raw;
}

// Resolves labels: names through `label_names` when given (an integer is then an id into it);
// otherwise all integers (names "0".."max") or all names (ids in order of first appearance).
std::vector<int64_t> resolve_labels(const std::vector<RawLabel>& raws, std::vector<std::string>& label_names) {
  std::vector<int64_t> ids(raws.size(), -1);
  if (!label_names.empty()) {
    for (size_t i = 0; i < raws.size(); ++i) {
      const RawLabel& r = raws[i];
      if (!r.present) continue;
      auto it = std::find(label_names.begin(), label_names.end(), r.name);
      if (it != label_names.end()) {
        ids[i] = it - label_names.begin();
      } else if (r.is_int) {
        if (r.value < 0 || r.value >= static_cast<int64_t>(label_names.size()))
          fail("{}: label {} out of range 0..{}", r.where, r.name, label_names.size() - 1);
        ids[i] = r.value;
      } else {
        fail("{}: unknown label {}", r.where, quote_for_error(r.name));
      }
    }
    return ids;
  }
  const RawLabel* first_int = nullptr;
  const RawLabel* first_name = nullptr;
  for (const auto& r : raws) {
    if (!r.present) continue;
    if (r.is_int && !first_int) first_int = &r;
    if (!r.is_int && !first_name) first_name = &r;
  }
  if (first_int && first_name)
    fail("{}: label {} is a name but {} has the integer label {}; pass label names", first_name->where,
         quote_for_error(first_name->name), first_int->where, first_int->value);
  int64_t max_id = -1;
  for (size_t i = 0; i < raws.size(); ++i) {
    const RawLabel& r = raws[i];
    if (!r.present) continue;
    if (r.is_int) {
      if (r.value < 0) fail("{}: label {} is negative", r.where, r.name);
      if (r.value >= kMaxLabels)
        fail("{}: label {} is too large (integer labels are class ids below {})", r.where, r.name, kMaxLabels);
      ids[i] = r.value;
      max_id = std::max(max_id, r.value);
    } else {
      auto it = std::find(label_names.begin(), label_names.end(), r.name);
      if (it == label_names.end()) {
        label_names.push_back(r.name);
        it = label_names.end() - 1;
      }
      ids[i] = it - label_names.begin();
    }
  }
  if (first_int)
    for (int64_t k = 0; k <= max_id; ++k) label_names.push_back(std::to_string(k));
  return ids;
}

Dataset read_generic_jsonl(const std::string& path, std::vector<std::string> label_names) {
  Dataset ds;
  ds.name = path;
  std::vector<RawLabel> raws;
  for (const Line& line : read_lines(read_file(path))) {
    std::string where = loc(path, line.no);
    json obj = parse_json_line(line.text, path, line.no);
    Record r;
    r.text = get_string(obj, "text", where);
    if (auto it = obj.find("text_pair"); it != obj.end() && !it->is_null()) {
      if (!it->is_string()) fail("{}: field \"text_pair\" must be a string", where);
      r.text_pair = it->get<std::string>();
    }
    if (auto it = obj.find("id"); it != obj.end() && !it->is_null())
      r.id = it->is_string() ? it->get<std::string>() : it->dump();
    else
      r.id = std::to_string(ds.records.size());
    RawLabel raw;
    raw.where = where;
    if (auto it = obj.find("label"); it != obj.end() && !it->is_null()) {
      if (it->is_number_integer()) {
        raw = raw_label_from_string(it->dump(), where);  // as a CSV field with the same digits
      } else if (it->is_string()) {
        raw = raw_label_from_string(it->get<std::string>(), where);
      } else {
        fail("{}: field \"label\" must be an integer or a string", where);
      }
    }
    raws.push_back(raw);
    if (auto it = obj.find("target"); it != obj.end() && !it->is_null()) {
      if (!it->is_number() || !std::isfinite(it->get<double>())) fail("{}: field \"target\" must be a finite number", where);
      r.target = it->get<double>();
    }
    if (auto it = obj.find("rationale"); it != obj.end() && !it->is_null()) {
      if (!it->is_array()) fail("{}: field \"rationale\" must be a list of numbers", where);
      for (const auto& x : *it) {
        float v = 0;
        if (x.is_boolean()) v = x.get<bool>() ? 1.0f : 0.0f;
        else if (x.is_number()) v = x.get<float>();
        else fail("{}: field \"rationale\" must be a list of numbers", where);
        if (!(v >= 0.0f && v <= 1.0f)) fail("{}: rationale value {} is not in [0, 1]", where, v);
        r.rationale.push_back(v);
      }
      check_rationale_length(r, where);
    }
    ds.records.push_back(std::move(r));
  }
  std::vector<int64_t> ids = resolve_labels(raws, label_names);
  for (size_t i = 0; i < ids.size(); ++i) ds.records[i].label = ids[i];
  ds.label_names = std::move(label_names);
  return ds;
}

Dataset read_generic_table(const std::string& path, char delim, std::vector<std::string> label_names) {
  // CSV uses RFC 4180 quoting; TSV is split on tabs only (quotes are literal text).
  std::vector<Row> rows = parse_delimited(read_file(path), path, delim, delim == ',');
  if (rows.empty()) fail("{}: empty file (a header with a \"text\" column is required)", path);
  const std::vector<std::string>& header = rows[0].fields;
  int text_col = find_column(header, "text");
  if (text_col < 0) fail("{}:{}: header has no \"text\" column", path, rows[0].line);
  int pair_col = find_column(header, "text_pair");
  int label_col = find_column(header, "label");
  int id_col = find_column(header, "id");
  Dataset ds;
  ds.name = path;
  std::vector<RawLabel> raws;
  const char* kind = delim == ',' ? "comma-separated" : "tab-separated";
  for (size_t k = 1; k < rows.size(); ++k) {
    const Row& row = rows[k];
    check_columns(row, header.size(), path, kind);
    Record r;
    r.text = trim(row.fields[text_col]);
    if (pair_col >= 0 && !trim(row.fields[pair_col]).empty()) r.text_pair = trim(row.fields[pair_col]);
    r.id = id_col >= 0 ? trim(row.fields[id_col]) : std::to_string(ds.records.size());
    raws.push_back(label_col >= 0 ? raw_label_from_string(row.fields[label_col], loc(path, row.line))
                                  : RawLabel{});
    ds.records.push_back(std::move(r));
  }
  std::vector<int64_t> ids = resolve_labels(raws, label_names);
  for (size_t i = 0; i < ids.size(); ++i) ds.records[i].label = ids[i];
  ds.label_names = std::move(label_names);
  return ds;
}

}  // namespace




Dataset read_generic(const std::string& path, std::vector<std::string> label_names) {
  if (has_suffix(path, ".jsonl")) return read_generic_jsonl(path, std::move(label_names));
  if (has_suffix(path, ".csv")) return read_generic_table(path, ',', std::move(label_names));
  if (has_suffix(path, ".tsv")) return read_generic_table(path, '\t', std::move(label_names));
  fail("{}: unsupported file type (expected .jsonl, .csv or .tsv)", path);
}

}  // namespace salient
