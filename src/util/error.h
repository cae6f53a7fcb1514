#pragma once
// One exception type for every user-facing failure. Its message is a single line that names the
// file, field or argument and what is wrong; the CLI prints it and exits non-zero.
#include <stdexcept>
#include <string>
#include <fmt/format.h>

namespace salient {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

// Keep messages on one line, and text: newlines in user data become spaces, bytes that are not
// UTF-8 become U+FFFD (a message may be sent as JSON, which must be UTF-8).
std::string one_line(std::string s);

// Dropout rates and warm-up shares: a value in [0, 1), else a one-line error naming the flag (NaN
// fails too).
inline void require_fraction_below_one(const char* flag, double value) {
  if (!(value >= 0 && value < 1)) fail("{}: must be in [0, 1) (got {})", flag, value);
}

}  // namespace salient
