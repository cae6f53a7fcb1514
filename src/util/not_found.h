#pragma once
// The one kind of user-facing failure that callers tell apart: a file or directory that does not
// exist (the Python bindings raise FileNotFoundError for it, ValueError for every other Error).
#include "util/error.h"

namespace salient {

class NotFoundError : public Error {
 public:
  explicit NotFoundError(const std::string& msg) : Error(msg) {}
};

template <typename... Args>
[[noreturn]] void fail_not_found(fmt::format_string<Args...> f, Args&&... args) {
  throw NotFoundError(fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace salient
