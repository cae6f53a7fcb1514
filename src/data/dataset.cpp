// Dataset readers. Every malformed row fails with "path:LINE: what is wrong" (one line); see
// docs/datasets.md for the formats, label ids and rationale rules.
#include "data/dataset.h"

#include <algorithm>
#include <cmath>
#include <charconv>
#include <map>

#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/io.h"

namespace salient {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// "Whitespace" is ASCII only (space, \t, \n, \v, \f, \r): deterministic, and what the PTB / GLUE /
// ERASER files use. A non-breaking space inside a token stays part of the word.
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i) out += ' ';
    out += words[i];
  }
  return out;
}

// Shortened, single-line copy of user data for error messages.
std::string quote_for_error(const std::string& s) {
  std::string t = one_line(s);
  if (t.size() > 60) t = t.substr(0, 57) + "...";
  return "'" + t + "'";
}

// Strict integer: the whole field, optional leading '-', digits only.
bool parse_int(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

int64_t parse_label(const std::string& field, size_t num_labels, const std::string& where) {
  int64_t v = 0;
  if (!parse_int(trim(field), v)) fail("{}: label {} is not an integer", where, quote_for_error(field));
  if (v < 0 || v >= static_cast<int64_t>(num_labels))
    fail("{}: label {} out of range 0..{}", where, v, num_labels - 1);
  return v;
}

std::string loc(const std::string& path, size_t line) { return fmt::format("{}:{}", path, line); }

struct Line {
  size_t no;  // 1-based
  std::string text;
};

// Lines without their terminator ("\n" or "\r\n"); a last line without newline is kept.
// Blank lines are dropped (they are not rows); line numbers stay those of the file.
// Length of a UTF-8 byte-order mark at the start of `content` (0 or 3), skipped by the readers.
size_t bom_length(const std::string& content) { return content.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0; }

std::vector<Line> read_lines(const std::string& content) {
  std::vector<Line> lines;
  size_t pos = bom_length(content), no = 0;
  while (pos < content.size()) {
    size_t nl = content.find('\n', pos);
    size_t end = nl == std::string::npos ? content.size() : nl;
    ++no;
    std::string text = content.substr(pos, end - pos);
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (!trim(text).empty()) lines.push_back({no, std::move(text)});
    pos = end + 1;
  }
  return lines;
}

struct Row {
  size_t line;  // line where the row starts
  std::vector<std::string> fields;
};

// CSV (RFC 4180: quoted fields, "" inside quotes, embedded delimiters and newlines, CRLF) when
// `quoting`; plain delimiter split otherwise (TSV files such as GLUE's have no quoting).
// Empty lines are skipped.
std::vector<Row> parse_delimited(const std::string& content, const std::string& path, char delim,
                                 bool quoting) {
  std::vector<Row> rows;
  size_t i = bom_length(content), n = content.size(), line = 1;
  while (i < n) {
    Row row{line, {}};
    size_t row_begin = i;
    std::string field;
    bool row_done = false;
    while (!row_done) {
      field.clear();
      if (quoting && i < n && content[i] == '"') {
        size_t start_line = line;
        ++i;
        for (;;) {
          if (i >= n) fail("{}: quoted field is not closed before end of file", loc(path, start_line));
          char c = content[i];
          if (c == '"') {
            if (i + 1 < n && content[i + 1] == '"') {
              field += '"';
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          if (c == '\n') ++line;
          field += c;
          ++i;
        }
        // After the closing quote only a delimiter or the end of the row may follow.
        if (i < n && content[i] == '\r' && i + 1 < n && content[i + 1] == '\n') ++i;
        if (i < n && content[i] != delim && content[i] != '\n')
          fail("{}: unexpected character after closing quote", loc(path, line));
      } else {
        while (i < n && content[i] != delim && content[i] != '\n') field += content[i++];
        if (!field.empty() && field.back() == '\r' && (i >= n || content[i] == '\n')) field.pop_back();
      }
      row.fields.push_back(field);
      if (i < n && content[i] == delim) {
        ++i;
      } else {
        row_done = true;
        if (i < n) {  // '\n'
          ++i;
          ++line;
        }
      }
    }
    bool blank = row.fields.size() == 1 && row.fields[0].empty() &&
                 !(quoting && content[row_begin] == '"');
    if (!blank) rows.push_back(std::move(row));
  }
  return rows;
}

int find_column(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (trim(header[i]) == name) return static_cast<int>(i);
  return -1;
}

void check_columns(const Row& row, size_t expected, const std::string& path, const char* kind) {
  if (row.fields.size() != expected)
    fail("{}: expected {} {} columns, got {}", loc(path, row.line), expected, kind, row.fields.size());
}

// ---- JSON field access with located errors (works for json and ordered_json) ----

template <class J>
const J& require_field(const J& obj, const char* key, const std::string& where) {
  if (!obj.is_object()) fail("{}: expected a JSON object", where);
  auto it = obj.find(key);
  if (it == obj.end()) fail("{}: missing field \"{}\"", where, key);
  return *it;
}

template <class J>
std::string get_string(const J& obj, const char* key, const std::string& where) {
  const J& v = require_field(obj, key, where);
  if (!v.is_string()) fail("{}: field \"{}\" must be a string", where, key);
  return v.template get<std::string>();
}

template <class J>
int64_t get_int(const J& v, const std::string& what, const std::string& where) {
  if (!v.is_number_integer()) fail("{}: {} must be an integer", where, what);
  return v.template get<int64_t>();
}

template <class J>
std::vector<std::string> get_string_list(const J& obj, const char* key, const std::string& where) {
  const J& v = require_field(obj, key, where);
  if (!v.is_array()) fail("{}: field \"{}\" must be a list", where, key);
  std::vector<std::string> out;
  for (const auto& e : v) {
    if (!e.is_string()) fail("{}: field \"{}\" must hold strings", where, key);
    out.push_back(e.template get<std::string>());
  }
  return out;
}

// Binary masks: a list of lists of 0/1.
template <class J>
std::vector<std::vector<int>> get_masks(const J& obj, const char* key, const std::string& where) {
  const J& v = require_field(obj, key, where);
  if (!v.is_array()) fail("{}: field \"{}\" must be a list of masks", where, key);
  std::vector<std::vector<int>> masks;
  for (const auto& m : v) {
    if (!m.is_array()) fail("{}: field \"{}\" must be a list of masks", where, key);
    std::vector<int> mask;
    for (const auto& x : m) {
      if (!x.is_number_integer() || (x.template get<int64_t>() != 0 && x.template get<int64_t>() != 1))
        fail("{}: rationale mask values must be 0 or 1", where);
      mask.push_back(x.template get<int>());
    }
    masks.push_back(std::move(mask));
  }
  return masks;
}

// ---- HateXplain ----

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

// ---- SST trees ----

class TreeParser {
 public:
  TreeParser(const std::string& text, const std::string& where) : s_(text), where_(where) {}

  SstTree parse() {
    SstTree tree;
    skip_space();
    tree.root = parse_node(tree);
    skip_space();
    if (pos_ != s_.size()) error("unexpected text after the end of the tree");
    return tree;
  }

 private:
  [[noreturn]] void error(const std::string& what) {
    fail("{}: {} (column {})", where_, what, pos_ + 1);
  }
  void skip_space() {
    while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
  }

  int parse_node(SstTree& tree) {
    if (pos_ >= s_.size() || s_[pos_] != '(') error("expected '('");
    ++pos_;
    size_t label_begin = pos_;
    while (pos_ < s_.size() && !is_space(s_[pos_]) && s_[pos_] != '(' && s_[pos_] != ')') ++pos_;
    std::string label_text = s_.substr(label_begin, pos_ - label_begin);
    int64_t label = -1;
    if (!parse_int(label_text, label) || label < 0 || label > 4) {
      pos_ = label_begin;
      error(fmt::format("sentiment label {} is not 0..4", quote_for_error(label_text)));
    }
    int index = static_cast<int>(tree.nodes.size());
    tree.nodes.push_back(SstNode{});
    tree.nodes[index].label = static_cast<int>(label);
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == '(') {
      // Phrase: exactly two children (the SST trees are binarised).
      int begin = static_cast<int>(tree.words.size());
      int left = parse_node(tree);
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != '(') error("phrase node needs two children");
      int right = parse_node(tree);
      skip_space();
      if (pos_ >= s_.size()) error("unbalanced parentheses: missing ')'");
      if (s_[pos_] != ')') error("phrase node has more than two children");
      ++pos_;
      SstNode& node = tree.nodes[index];
      node.left = left;
      node.right = right;
      node.begin = begin;
      node.end = static_cast<int>(tree.words.size());
      return index;
    }
    // Leaf: the word runs to the closing ')'. It may hold inner spaces (train line 1 has "R  ock").
    size_t word_begin = pos_;
    while (pos_ < s_.size() && s_[pos_] != ')' && s_[pos_] != '(') ++pos_;
    if (pos_ >= s_.size()) error("unbalanced parentheses: missing ')'");
    if (s_[pos_] == '(') error("unexpected '(' inside a leaf");
    std::string word = trim(std::string_view(s_).substr(word_begin, pos_ - word_begin));
    if (word.empty()) error("empty leaf");
    ++pos_;
    SstNode& node = tree.nodes[index];
    node.begin = static_cast<int>(tree.words.size());
    node.end = node.begin + 1;
    tree.words.push_back(std::move(word));
    return index;
  }

  const std::string& s_;
  std::string where_;
  size_t pos_ = 0;
};

// PTB escapes back to plain text: -LRB-/-RRB- and the backslash escapes \/ and \*.
std::string unescape_ptb(const std::string& w) {
  if (w == "-LRB-") return "(";
  if (w == "-RRB-") return ")";
  std::string out;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i] == '\\' && i + 1 < w.size() && (w[i + 1] == '/' || w[i + 1] == '*')) continue;
    out += w[i];
  }
  return out;
}

// Marks the leaves of the minimal agreeing phrases under node n; returns whether n or a node
// below it agrees with the sentence polarity.
bool opposes(const SstNode& node, bool positive) { return positive ? node.label <= 1 : node.label >= 3; }

// Marks the words of node n's span except those inside constituents of the opposite polarity.
void mark_span_except_opposed(const SstTree& tree, int n, bool positive, std::vector<float>& mask) {
  const SstNode& node = tree.nodes[n];
  if (opposes(node, positive)) return;
  if (node.left < 0 && node.right < 0) {
    if (node.begin < 0 || node.end > static_cast<int>(mask.size()) || node.begin > node.end)
      fail("SST tree: node span [{}, {}) outside the {} words", node.begin, node.end, mask.size());
    for (int w = node.begin; w < node.end; ++w) mask[w] = 1.0f;
    return;
  }
  for (int child : {node.left, node.right})
    if (child >= 0) mark_span_except_opposed(tree, child, positive, mask);
}

bool mark_minimal_phrases(const SstTree& tree, int n, bool positive, std::vector<float>& mask) {
  if (n < 0 || n >= static_cast<int>(tree.nodes.size())) fail("SST tree: node index {} out of range", n);
  const SstNode& node = tree.nodes[n];
  // A constituent of the opposite polarity is not descended into: "good" inside a negative
  // "(not good)" does not support a positive sentence.
  if (opposes(node, positive)) return false;
  bool below = false;
  for (int child : {node.left, node.right})
    if (child >= 0 && mark_minimal_phrases(tree, child, positive, mask)) below = true;
  bool here = positive ? node.label >= 3 : node.label <= 1;
  if (here && !below) {
    std::vector<float> span(mask.size(), 0.0f);
    mark_span_except_opposed(tree, n, positive, span);
    // When every word lies in opposed parts ("not (to be moved)" in a positive sentence), the
    // polarity exists only in their composition: the whole phrase is the rationale.
    if (std::count(span.begin(), span.end(), 1.0f) == 0)
      std::fill(span.begin() + node.begin, span.begin() + node.end, 1.0f);
    for (size_t w = 0; w < mask.size(); ++w) mask[w] = std::max(mask[w], span[w]);
  }
  return here || below;
}

bool has_suffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// ---- generic reader: labels given as ints or names ----

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
  raw.is_int = parse_int(t, raw.value);
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
          fail("{}: label {} out of range 0..{}", r.where, r.value, label_names.size() - 1);
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
      if (r.value < 0) fail("{}: label {} is negative", r.where, r.value);
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

void check_rationale_length(const Record& r, const std::string& where) {
  size_t words = split_whitespace(r.text).size();
  if (r.rationale.size() != words)
    fail("{}: rationale has {} values but the text has {} words", where, r.rationale.size(), words);
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
        raw.present = raw.is_int = true;
        raw.value = it->get<int64_t>();
        raw.name = std::to_string(raw.value);
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

bool Dataset::has_rationales() const {
  for (const auto& r : records)
    if (!r.rationale.empty()) return true;
  return false;
}

bool Dataset::has_targets() const {
  for (const auto& r : records)
    if (!r.target) return false;
  return !records.empty();
}

std::vector<std::string> split_whitespace(const std::string& s) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    size_t b = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > b) words.push_back(s.substr(b, i - b));
  }
  return words;
}

// ---- GLUE / CoLA ----

Dataset read_glue_tsv(const std::string& path, const std::string& text_column,
                      const std::string& label_column) {
  std::vector<Row> rows = parse_delimited(read_file(path), path, '\t', false);
  if (rows.empty()) fail("{}: empty file (expected a header line)", path);
  const std::vector<std::string>& header = rows[0].fields;
  int text_col = find_column(header, text_column);
  if (text_col < 0) fail("{}:{}: header has no \"{}\" column", path, rows[0].line, text_column);
  int label_col = find_column(header, label_column);  // absent in GLUE's unlabelled test.tsv
  int index_col = find_column(header, "index");
  Dataset ds;
  ds.name = path;
  ds.label_names = {"negative", "positive"};
  for (size_t k = 1; k < rows.size(); ++k) {
    const Row& row = rows[k];
    check_columns(row, header.size(), path, "tab-separated");
    Record r;
    r.id = index_col >= 0 ? trim(row.fields[index_col]) : std::to_string(ds.records.size());
    // GLUE SST-2 sentences end with a space before the tab: trim it.
    r.text = trim(row.fields[text_col]);
    if (label_col >= 0) r.label = parse_label(row.fields[label_col], 2, loc(path, row.line));
    ds.records.push_back(std::move(r));
  }
  return ds;
}

Dataset read_cola_tsv(const std::string& path) {
  Dataset ds;
  ds.name = path;
  ds.label_names = {"unacceptable", "acceptable"};
  for (const Row& row : parse_delimited(read_file(path), path, '\t', false)) {
    check_columns(row, 4, path, "tab-separated");
    Record r;
    r.id = std::to_string(ds.records.size());
    r.label = parse_label(row.fields[1], 2, loc(path, row.line));
    r.text = trim(row.fields[3]);
    ds.records.push_back(std::move(r));
  }
  return ds;
}

// ---- SST trees ----

std::vector<SstTree> read_sst_trees(const std::string& path) {
  std::vector<SstTree> trees;
  for (const Line& line : read_lines(read_file(path)))
    trees.push_back(TreeParser(line.text, loc(path, line.no)).parse());
  return trees;
}

// A word is a rationale word when it lies inside a minimal phrase of the sentence's polarity: a
// node (leaf or phrase) whose label has the root's polarity (>= 3 for a positive root, <= 1 for a
// negative one) while no node below it has; the descent stops at nodes of the opposite polarity.
// Neutral roots give all zeros. See docs/datasets.md.
std::vector<float> sst_tree_rationale(const SstTree& tree) {
  std::vector<float> mask(tree.words.size(), 0.0f);
  if (tree.nodes.empty()) return mask;
  if (tree.root < 0 || tree.root >= static_cast<int>(tree.nodes.size()))
    fail("SST tree: root index {} out of range", tree.root);
  int root_label = tree.nodes[tree.root].label;
  if (root_label == 2) return mask;
  mark_minimal_phrases(tree, tree.root, root_label > 2, mask);
  return mask;
}

Dataset sst_trees_to_binary(const std::vector<SstTree>& trees, bool with_rationales) {
  Dataset ds;
  ds.name = "sst-trees";
  ds.label_names = {"negative", "positive"};
  for (size_t t = 0; t < trees.size(); ++t) {
    const SstTree& tree = trees[t];
    if (tree.nodes.empty()) continue;
    int root_label = tree.nodes[tree.root].label;
    if (root_label == 2) continue;  // SST-2 drops neutral sentences
    Record r;
    r.id = std::to_string(t);  // index of the tree in its file
    r.label = root_label > 2 ? 1 : 0;
    std::vector<float> leaf_mask = sst_tree_rationale(tree);
    // A leaf holding whitespace (one train leaf is "R  ock") becomes several words, each with
    // the leaf's rationale value, so words and rationale stay aligned.
    std::vector<std::string> words;
    for (size_t i = 0; i < tree.words.size(); ++i)
      for (auto& w : split_whitespace(unescape_ptb(tree.words[i]))) {
        words.push_back(std::move(w));
        if (with_rationales) r.rationale.push_back(leaf_mask[i]);
      }
    r.text = join_words(words);
    ds.records.push_back(std::move(r));
  }
  return ds;
}

Dataset sst_trees_to_scores(const std::vector<SstTree>& trees) {
  Dataset ds;
  ds.name = "sst-trees-score";
  for (size_t t = 0; t < trees.size(); ++t) {
    const SstTree& tree = trees[t];
    if (tree.nodes.empty()) continue;
    Record r;
    r.id = std::to_string(t);
    r.target = tree.nodes[tree.root].label / 4.0;
    std::vector<std::string> words;
    for (const auto& leaf : tree.words)
      for (auto& w : split_whitespace(unescape_ptb(leaf))) words.push_back(std::move(w));
    r.text = join_words(words);
    ds.records.push_back(std::move(r));
  }
  return ds;
}

// ---- HateXplain ----

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

// ---- ERASER ----

Dataset read_eraser(const std::string& jsonl_path, const std::string& docs_dir) {
  Dataset ds;
  ds.name = jsonl_path;
  ds.label_names = {"NEG", "POS"};
  for (const Line& line : read_lines(read_file(jsonl_path))) {
    std::string where = loc(jsonl_path, line.no);
    json obj = parse_json_line(line.text, jsonl_path, line.no);
    Record r;
    r.id = get_string(obj, "annotation_id", where);
    std::string cls = get_string(obj, "classification", where);
    auto label = std::find(ds.label_names.begin(), ds.label_names.end(), cls);
    if (label == ds.label_names.end())
      fail("{}: classification {} is not NEG or POS", where, quote_for_error(cls));
    r.label = label - ds.label_names.begin();

    // Evidences: a list of groups, each a list of spans (a bare span object is accepted too).
    std::vector<const json*> spans;
    const json& evidences = require_field(obj, "evidences", where);
    if (!evidences.is_array()) fail("{}: field \"evidences\" must be a list", where);
    for (const auto& group : evidences) {
      if (group.is_object()) {
        spans.push_back(&group);
      } else if (group.is_array()) {
        for (const auto& span : group) spans.push_back(&span);
      } else {
        fail("{}: field \"evidences\" must hold lists of evidence objects", where);
      }
    }
    // One document per record (the movie reviews): the evidences' docid, else the annotation id.
    std::string docid = spans.empty() ? r.id : get_string(*spans[0], "docid", where);
    std::string doc_path = join_path(docs_dir, docid);
    if (!file_exists(doc_path)) fail("{}: missing document {}", where, doc_path);
    std::vector<std::string> tokens = split_whitespace(read_file(doc_path));
    r.text = join_words(tokens);
    r.rationale.assign(tokens.size(), 0.0f);
    for (const json* span : spans) {
      std::string span_doc = get_string(*span, "docid", where);
      if (span_doc != docid)
        fail("{}: evidence from document {} but the record's document is {}", where, span_doc, docid);
      int64_t start = get_int(require_field(*span, "start_token", where), "start_token", where);
      int64_t end = get_int(require_field(*span, "end_token", where), "end_token", where);
      if (start < 0 || end < start || end > static_cast<int64_t>(tokens.size()))
        fail("{}: evidence tokens [{}, {}) outside document {} ({} tokens)", where, start, end, docid,
             tokens.size());
      std::vector<std::string> span_tokens(tokens.begin() + start, tokens.begin() + end);
      std::string expected = join_words(span_tokens);
      std::string text = get_string(*span, "text", where);
      if (text != expected)
        fail("{}: evidence text {} does not match tokens [{}, {}) of {}: {}", where, quote_for_error(text),
             start, end, docid, quote_for_error(expected));
      for (int64_t i = start; i < end; ++i) r.rationale[i] = 1.0f;
    }
    ds.records.push_back(std::move(r));
  }
  return ds;
}

// ---- generic + dispatch ----

Dataset read_generic(const std::string& path, std::vector<std::string> label_names) {
  if (has_suffix(path, ".jsonl")) return read_generic_jsonl(path, std::move(label_names));
  if (has_suffix(path, ".csv")) return read_generic_table(path, ',', std::move(label_names));
  if (has_suffix(path, ".tsv")) return read_generic_table(path, '\t', std::move(label_names));
  fail("{}: unsupported file type (expected .jsonl, .csv or .tsv)", path);
}

Dataset load_dataset(const std::string& spec, const std::string& data_dir_arg) {
  const char* valid =
      "sst2:{train,dev,test}, cola:{train,dev,ood}, hatexplain:{train,val,test}, "
      "eraser:{train,val,test}, sst-trees:{train,dev,test}, sst-trees-score:{train,dev,test}, or a .jsonl/.csv/.tsv file path";
  if (file_exists(spec)) {
    Dataset ds = read_generic(spec);
    ds.name = spec;
    return ds;
  }
  if (has_suffix(spec, ".jsonl") || has_suffix(spec, ".csv") || has_suffix(spec, ".tsv"))
    fail("{}: dataset file not found", spec);
  std::string data_dir = data_dir_arg;
  if (data_dir.empty()) data_dir = shared_data_dir();
  auto colon = spec.find(':');
  std::string name = colon == std::string::npos ? spec : spec.substr(0, colon);
  std::string split = colon == std::string::npos ? "" : spec.substr(colon + 1);
  auto in = [&](const std::string& dir) { return join_path(data_dir, dir); };
  auto pick = [&](const std::map<std::string, std::string>& files) -> std::string {
    auto it = files.find(split);
    if (it == files.end()) fail("unknown dataset spec '{}'; valid specs: {}", spec, valid);
    return it->second;
  };

  Dataset ds;
  if (name == "sst2") {
    ds = read_glue_tsv(in(pick({{"train", "sst2_glue/train.tsv"},
                                {"dev", "sst2_glue/dev.tsv"},
                                {"test", "sst2_glue/test-labeled.tsv"}})));
  } else if (name == "cola") {
    ds = read_cola_tsv(in(pick({{"train", "cola/raw/in_domain_train.tsv"},
                                {"dev", "cola/raw/in_domain_dev.tsv"},
                                {"ood", "cola/raw/out_of_domain_dev.tsv"}})));
  } else if (name == "hatexplain") {
    pick({{"train", ""}, {"val", ""}, {"test", ""}});  // validates the split
    std::string original = in("hatexplain/dataset.json");
    if (file_exists(original)) {
      // The original release (absent from shared/data) has rationales for every split.
      ds = read_hatexplain_original(original, in("hatexplain/post_id_divisions.json"), split);
    } else if (split == "train") {
      ds = read_hatexplain_csv(in("hatexplain/training_data.csv.gz"));
    } else {
      ds = read_hatexplain_jsonl(in(split == "val" ? "hatexplain/hatexplain_validation.jsonl"
                                                    : "hatexplain/hatexplain_test.jsonl"));
    }
  } else if (name == "eraser") {
    std::string file = pick({{"train", "train.jsonl"}, {"val", "val.jsonl"}, {"test", "test.jsonl"}});
    ds = read_eraser(in("eraser_movies/" + file), in("eraser_movies/docs"));
  } else if (name == "sst-trees") {
    std::string file = pick({{"train", "train.txt"}, {"dev", "dev.txt"}, {"test", "test.txt"}});
    ds = sst_trees_to_binary(read_sst_trees(in("sst_ptb_trees/" + file)), true);
  } else if (name == "sst-trees-score") {
    std::string file = pick({{"train", "train.txt"}, {"dev", "dev.txt"}, {"test", "test.txt"}});
    ds = sst_trees_to_scores(read_sst_trees(in("sst_ptb_trees/" + file)));
  } else {
    fail("unknown dataset spec '{}'; valid specs: {}", spec, valid);
  }
  ds.name = spec;
  return ds;
}

}  // namespace salient
