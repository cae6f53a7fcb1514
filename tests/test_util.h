#pragma once
// Shared test helpers: where the shared data/fixtures live ($SALIENT_SHARED overrides).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <unistd.h>
#include <sys/wait.h>
#include <string>
#include <vector>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include "util/error.h"
#include "util/io.h"

namespace salient::test {

inline std::string shared_path(const std::string& rel) {
  std::string dir = salient::shared_dir();
  return dir.empty() ? std::string() : salient::join_path(dir, rel);
}

// Skips nothing: a missing shared/ directory is a setup error in this project, so fail loudly.
#define SALIENT_REQUIRE_SHARED(path)                                                        \
  do {                                                                                      \
    if ((path).empty() || !(salient::file_exists(path) || salient::dir_exists(path)))       \
      FAIL() << "shared data not found: '" << (path) << "' (set SALIENT_SHARED)";          \
  } while (0)

// A fresh directory /tmp/salient_test_TAG_PID (created, empty only if new).
inline std::string temp_dir(const std::string& tag) {
  std::string d = "/tmp/salient_test_" + tag + "_" + std::to_string(::getpid());
  salient::make_dirs(d);
  return d;
}

// Runs f, expects a salient::Error with a one-line message, and returns the message.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const salient::Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    return msg;
  }
  ADD_FAILURE() << "expected salient::Error";
  return "";
}

// One JSON value per non-empty line of `text` (a command's JSON-lines output or a .jsonl file).
inline std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

// max_i |a_i − b_i| / max_i |b_i|: the error relative to the scale of the reference vector.
inline double rel_err(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double num = 0, den = 1e-300;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    num = std::max(num, std::abs(a[i] - b[i]));
    den = std::max(den, std::abs(b[i]));
  }
  return num / den;
}

#ifdef SALIENT_BIN
// The salient binary run on `stdin_text`; its exit code, stdout and stderr.
struct RunResult {
  int code;
  std::string out, err;
};

inline RunResult run_salient(const std::string& args, const std::string& stdin_text = "") {
  const std::string base = "/tmp/salient_test_" + std::to_string(::getpid()) + "_";
  const std::string in = base + "stdin", out = base + "stdout", err = base + "stderr";
  salient::write_file_atomic(in, stdin_text);
  const std::string cmd = std::string(SALIENT_BIN) + " --quiet " + args + " < " + in + " > " + out + " 2> " + err;
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, salient::read_file(out), salient::read_file(err)};
}

// A failed run that printed exactly one line, "salient: error: ...", containing `needle`.
inline void expect_one_line_error(const RunResult& r, const std::string& needle) {
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(r.err.rfind("salient: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "expected '" << needle << "' in: " << r.err;
}
#endif

}  // namespace salient::test
