#pragma once
// salient's errors: every user-facing failure is a salient::Error whose message is one line naming
// the file, field or argument and what is wrong (the CLI prints it and exits non-zero; the Python
// package raises ValueError). A file or directory that does not exist is a NotFoundError, the one
// kind callers tell apart (Python: FileNotFoundError).
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace salient {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

class NotFoundError : public Error {
 public:
  explicit NotFoundError(const std::string& msg) : Error(msg) {}
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void fail_not_found(fmt::format_string<Args...> f, Args&&... args) {
  throw NotFoundError(fmt::format(f, std::forward<Args>(args)...));
}

// Keep messages on one line, and text: newlines in user data become spaces, bytes that are not
// UTF-8 become U+FFFD (a message may be sent as JSON, which must be UTF-8).
std::string one_line(std::string s);

// The one-line message of any exception a salient call lets through: a salient::Error's, or
// LibTorch's without its C++ backtrace.
std::string error_message(const std::exception& e);

}  // namespace salient
