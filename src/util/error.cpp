#include "util/error.h"

#include <utf8proc.h>

namespace salient {

std::string one_line(std::string s) {
  std::string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(s.size());
  while (left > 0) {
    utf8proc_int32_t c = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(p, left, &c);
    if (n < 0) {  // not UTF-8: one replacement character per byte
      out += "\xEF\xBF\xBD";
      ++p, --left;
      continue;
    }
    if (c == '\n' || c == '\r') out += ' ';
    else out.append(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
    p += n, left -= n;
  }
  return out;
}

}  // namespace salient
