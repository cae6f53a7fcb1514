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
#include "data/dataset.h"
#include "explain/explainer.h"
#include "model/checkpoint.h"
#include "model/classifier.h"
#include "model/windows.h"
#include "salient/salient.h"
#include "util/error.h"
#include "util/atomic_file.h"
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

// Streaming commands read their inputs in blocks of about this many lines (input_block rounds
// it to whole batches).
constexpr size_t kInputBlock = 1024;
// --windows and --stride of predict, evaluate and explain, checked against --max-length.
inline void check_window_flags(const LongInputs& l, int64_t max_length) {
  if (l.windows && max_length > 0) fail("--max-length: --windows reads whole inputs (give one or the other)");
  if (l.stride != 0 && !l.windows) fail("--stride: only with --windows");
}

inline size_t input_block(int64_t batch_size) {
  const size_t b = static_cast<size_t>(std::max<int64_t>(batch_size, 1));
  return std::max<size_t>(1, kInputBlock / b) * b;
}

// The number of inputs in a file (its non-blank lines), for a progress total; -1 for stdin.
inline int64_t count_input_lines(const std::string& path) {
  if (path.empty() || path == "-") return -1;
  std::ifstream in(path);
  int64_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.find_first_not_of(" \t\r") != std::string::npos;
  return n;
}

// Reads all inputs from `path` ("-" = stdin).
inline std::vector<InputItem> read_input_items(const std::string& path) { return InputReader(path).next(SIZE_MAX); }

// A command's output: to stdout, collected and printed at the end, or streamed into a file that
// is put in place whole by commit() (AtomicFile), so a failure midway leaves no partial output
// file and a long output does not have to fit in memory.
class Output {
 public:
  explicit Output(const std::string& path) {
    if (!path.empty() && path != "-") file_ = std::make_unique<AtomicFile>(path);
  }
  void line(const nlohmann::json& j) { text(j.dump() + '\n'); }
  void text(const std::string& s) {
    if (file_) file_->write(s);
    else buf_ << s;
  }
  void commit() {
    if (file_) {
      file_->commit();
    } else {
      std::cout << buf_.str();
      std::cout.flush();
    }
  }

 private:
  std::unique_ptr<AtomicFile> file_;  // none: stdout
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
