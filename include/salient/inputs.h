#pragma once
// Inputs one per line, as the CLI reads them: plain text, or JSON with "text" (+ "text_pair"), or
// with "input_ids" (+ "token_type_ids"). Extra JSON fields (e.g. "label", "id") are kept for the
// caller.
#include <cstdint>
#include <fstream>
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

// Inputs a block at a time, so a command's memory does not grow with the input: path "-" or "" is
// stdin (named "<stdin>" in errors); a missing file fails naming `flag`.
class InputReader {
 public:
  explicit InputReader(const std::string& path, const std::string& flag = "--input");
  InputReader(std::istream& in, std::string source) : in_(&in), source_(std::move(source)) {}
  // The next items, at most `max_items` (fewer only at the end; none when the input is done).
  std::vector<InputItem> next(size_t max_items);
  const std::string& source() const { return source_; }

 private:
  std::ifstream file_;
  std::istream* in_ = nullptr;
  std::string source_;
  size_t line_no_ = 0;
};

}  // namespace salient
