#pragma once
// CLI inputs, one per line: plain text, or JSON with "text" (+ "text_pair"), or with "input_ids"
// (+ "token_type_ids"). Extra JSON fields (e.g. "label", "id") are kept for the caller.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

namespace salient {

struct InputItem {
  size_t line_no = 0;
  std::optional<std::string> text, text_pair;
  std::vector<int64_t> input_ids, token_type_ids;  // when given directly
  nlohmann::json fields;                           // the whole JSON object (empty for plain text)
};

// Parses one line; `source` names the input in errors ("<stdin>", a path). Blank lines → nullopt.
std::optional<InputItem> parse_input_line(const std::string& line, const std::string& source, size_t line_no);
std::vector<InputItem> read_inputs(std::istream& in, const std::string& source);

}  // namespace salient
