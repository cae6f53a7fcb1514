#pragma once
// Parsing helpers every dataset reader shares (internal to src/data): ASCII whitespace, labels,
// lines and CSV/TSV rows with their line numbers, JSON fields with located errors. Errors read
// "path:LINE: what is wrong" (one line).
#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "data/dataset.h"
#include "util/error.h"

namespace salient::data_detail {

using nlohmann::json;
using nlohmann::ordered_json;

// "Whitespace" is ASCII only (space, \t, \n, \v, \f, \r): deterministic, and what the PTB / GLUE /
// ERASER files use. A non-breaking space inside a token stays part of the word.
inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

inline std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

inline std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i) out += ' ';
    out += words[i];
  }
  return out;
}

// Shortened, single-line copy of user data for error messages.
inline std::string quote_for_error(const std::string& s) {
  std::string t = one_line(s);
  if (t.size() > 60) t = t.substr(0, 57) + "...";
  return "'" + t + "'";
}

// Strict integer: the whole field, optional leading '-', digits only.
inline bool parse_int(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

inline int64_t parse_label(const std::string& field, size_t num_labels, const std::string& where) {
  int64_t v = 0;
  if (!parse_int(trim(field), v)) fail("{}: label {} is not an integer", where, quote_for_error(field));
  if (v < 0 || v >= static_cast<int64_t>(num_labels))
    fail("{}: label {} out of range 0..{}", where, v, num_labels - 1);
  return v;
}

inline std::string loc(const std::string& path, size_t line) { return fmt::format("{}:{}", path, line); }

struct Line {
  size_t no;  // 1-based
  std::string text;
};

// Lines without their terminator ("\n" or "\r\n"); a last line without newline is kept.
// Blank lines are dropped (they are not rows); line numbers stay those of the file.
// Length of a UTF-8 byte-order mark at the start of `content` (0 or 3), skipped by the readers.
inline size_t bom_length(const std::string& content) { return content.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0; }

inline std::vector<Line> read_lines(const std::string& content) {
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
inline std::vector<Row> parse_delimited(const std::string& content, const std::string& path, char delim,
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

inline int find_column(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (trim(header[i]) == name) return static_cast<int>(i);
  return -1;
}

inline void check_columns(const Row& row, size_t expected, const std::string& path, const char* kind) {
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

inline bool has_suffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace salient::data_detail
