#pragma once
// One exception type for every user-facing failure (salient::Error, fail(), one_line(): the public
// salient/error.h), and the library's own checks built on it.
#include "salient/error.h"

namespace salient {

// Dropout rates and warm-up shares: a value in [0, 1), else a one-line error naming the flag (NaN
// fails too).
inline void require_fraction_below_one(const char* flag, double value) {
  if (!(value >= 0 && value < 1)) fail("{}: must be in [0, 1) (got {})", flag, value);
}

}  // namespace salient
