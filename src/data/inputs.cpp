#include "salient/inputs.h"

#include <cstdint>
#include <iostream>

#include "util/error.h"
#include "util/io.h"

namespace salient {

std::optional<InputItem> parse_input_line(const std::string& raw, const std::string& source, size_t line_no) {
  std::string line = raw;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.find_first_not_of(" \t") == std::string::npos) return std::nullopt;
  InputItem item;
  item.line_no = line_no;
  size_t first = line.find_first_not_of(" \t");
  if (line[first] != '{') {
    item.text = line;
    return item;
  }
  item.fields = parse_json_line(line, source, line_no);
  if (!item.fields.is_object()) fail("{}:{}: expected a JSON object", source, line_no);
  auto get_string = [&](const char* key) -> std::optional<std::string> {
    if (!item.fields.contains(key) || item.fields[key].is_null()) return std::nullopt;
    if (!item.fields[key].is_string()) fail("{}:{}: field '{}' must be a string", source, line_no, key);
    return item.fields[key].get<std::string>();
  };
  auto get_ids = [&](const char* key) {
    std::vector<int64_t> ids;
    if (!item.fields.contains(key)) return ids;
    const auto& a = item.fields[key];
    if (!a.is_array()) fail("{}:{}: field '{}' must be a list of integers", source, line_no, key);
    for (const auto& v : a) {
      if (!v.is_number_integer()) fail("{}:{}: field '{}' must be a list of integers", source, line_no, key);
      ids.push_back(v.get<int64_t>());
    }
    return ids;
  };
  item.text = get_string("text");
  item.text_pair = get_string("text_pair");
  item.input_ids = get_ids("input_ids");
  item.token_type_ids = get_ids("token_type_ids");
  if (!item.text && item.input_ids.empty())
    fail("{}:{}: need a 'text' field or a non-empty 'input_ids' field", source, line_no);
  if (item.text && item.text->find_first_not_of(" \t\r\n") == std::string::npos)
    fail("{}:{}: field 'text' is empty", source, line_no);
  if (!item.token_type_ids.empty() && item.token_type_ids.size() != item.input_ids.size())
    fail("{}:{}: 'token_type_ids' has {} entries but 'input_ids' has {}", source, line_no,
         item.token_type_ids.size(), item.input_ids.size());
  if (item.text_pair && !item.text) fail("{}:{}: 'text_pair' given without 'text'", source, line_no);
  return item;
}

std::vector<InputItem> read_inputs(std::istream& in, const std::string& source) {
  return InputReader(in, source).next(SIZE_MAX);
}

InputReader::InputReader(const std::string& path, const std::string& flag) {
  if (path.empty() || path == "-") {
    in_ = &std::cin;
    source_ = "<stdin>";
    return;
  }
  if (!file_exists(path)) fail("{}: file '{}' not found", flag, path);
  file_.open(path);
  if (!file_) fail("{}: cannot read '{}'", flag, path);
  in_ = &file_;
  source_ = path;
}

std::vector<InputItem> InputReader::next(size_t max_items) {
  std::vector<InputItem> items;
  std::string line;
  while (items.size() < max_items && std::getline(*in_, line)) {
    ++line_no_;
    if (auto item = parse_input_line(line, source_, line_no_)) items.push_back(std::move(*item));
  }
  if (in_->bad()) fail("{}: read error", source_);
  return items;
}

}  // namespace salient
