#pragma once
// Shared plumbing of the salient subcommands: what a command line needs besides the public API
// (include/salient), which does the work.
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "salient/error.h"
#include "salient/files.h"

namespace salient::cli {

// A flag whose value, when given, becomes options[name]: the options by name of the library's
// entry points (salient/studies.h). A flag not given leaves the library's default.
template <class T>
CLI::Option* add_named_option(CLI::App* cmd, const std::string& flags, nlohmann::json& options, const std::string& name,
                              const std::string& help) {
  return cmd->add_option_function<T>(flags, [&options, name](const T& v) { options[name] = v; }, help);
}

// --data-dir, the shared datasets' directory, declared once for every command that reads them:
// into a string, or (the library's options by name) into options["data_dir"].
constexpr const char* kDataDirHelp = "directory of the shared datasets (default: ../shared/data or $SALIENT_SHARED/data)";
inline CLI::Option* add_data_dir(CLI::App* cmd, std::string& data_dir) {
  return cmd->add_option("--data-dir", data_dir, kDataDirHelp);
}
inline CLI::Option* add_data_dir(CLI::App* cmd, nlohmann::json& options) {
  return add_named_option<std::string>(cmd, "--data-dir", options, "data_dir", kDataDirHelp);
}

// --format auto|json|text: auto is the readable text view when the output is a terminal, JSON
// lines when it is a file or a pipe.
inline bool text_format(const std::string& format, const std::string& out_path) {
  if (format == "json") return false;
  if (format == "text") return true;
  if (format != "auto") fail("--format: expected auto, json or text, got '{}'", format);
  return (out_path.empty() || out_path == "-") && ::isatty(STDOUT_FILENO) != 0;
}

}  // namespace salient::cli
