#pragma once
// Shared plumbing of the salient subcommands: input/output streams, output files written
// atomically, and JSON helpers.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "data/inputs.h"
#include "util/error.h"
#include "util/io.h"

namespace salient::cli {

// "500, 1000" → {500, 1000}: integers ≥ `min` separated by commas; errors name `flag`.
inline std::vector<int64_t> parse_int_list(const std::string& text, const std::string& flag, int64_t min = 1) {
  std::vector<int64_t> out;
  for (const std::string& item : split_list(text)) {
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || v < min)
      fail("{}: expected integers ≥ {} separated by commas, got '{}'", flag, min, text);
    out.push_back(v);
  }
  if (out.empty()) fail("{}: expected integers ≥ {} separated by commas, got '{}'", flag, min, text);
  return out;
}

// Reads all inputs from `path` ("-" = stdin).
inline std::vector<InputItem> read_input_items(const std::string& path) {
  if (path == "-" || path.empty()) return read_inputs(std::cin, "<stdin>");
  if (!file_exists(path)) fail("--input: file '{}' not found", path);
  std::ifstream in(path);
  return read_inputs(in, path);
}

// Collects output and writes it at the end: to stdout, or atomically to a file, so a failure
// midway leaves no partial output file.
class Output {
 public:
  explicit Output(std::string path) : path_(std::move(path)) {}
  void line(const nlohmann::json& j) { buf_ << j.dump() << '\n'; }
  void text(const std::string& s) { buf_ << s; }
  void commit() {
    if (path_.empty() || path_ == "-") {
      std::cout << buf_.str();
      std::cout.flush();
    } else {
      write_file_atomic(path_, buf_.str());
    }
  }

 private:
  std::string path_;
  std::ostringstream buf_;
};

// --format auto|json|text: auto is the readable text view when the output is a terminal, JSON
// lines when it is a file or a pipe.
inline bool text_format(const std::string& format, const std::string& out_path) {
  if (format == "json") return false;
  if (format == "text") return true;
  if (format != "auto") fail("--format: expected auto, json or text, got '{}'", format);
  return (out_path.empty() || out_path == "-") && ::isatty(STDOUT_FILENO) != 0;
}

// A token coloured by a score in [-1, 1] for a 256-colour terminal (red raises the explained
// output, blue lowers it), or bracketed with the score when there is no colour.
inline std::string colored_token(const std::string& token, double v, bool color) {
  if (!color) return v == 0 ? token : token + "[" + fmt::format("{:+.2f}", v) + "]";
  static const int reds[] = {231, 224, 217, 210, 203, 196}, blues[] = {231, 189, 147, 105, 63, 21};
  const int level = std::min(5, static_cast<int>(std::abs(v) * 5.0 + 0.5));
  return fmt::format("\033[48;5;{}m\033[38;5;16m{}\033[0m", v >= 0 ? reds[level] : blues[level], token);
}

}  // namespace salient::cli
