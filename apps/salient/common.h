#pragma once
// Shared plumbing of the salient subcommands: input/output streams, output files written
// atomically, and JSON helpers.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "data/inputs.h"
#include "util/error.h"
#include "util/io.h"

namespace salient::cli {

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

}  // namespace salient::cli
