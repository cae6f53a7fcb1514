#pragma once
// Shared test helpers: where the shared data/fixtures live ($SALIENT_SHARED overrides).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>
#include <gtest/gtest.h>
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

}  // namespace salient::test
