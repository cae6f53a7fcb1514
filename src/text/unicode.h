#pragma once
// Character classes the tokenizers share, on utf8proc.
#include <cstddef>
#include <string_view>

#include <utf8proc.h>

namespace salient::text {

inline utf8proc_category_t category(char32_t cp) { return utf8proc_category(static_cast<utf8proc_int32_t>(cp)); }

// Unicode White_Space (Rust char::is_whitespace): \t..\r, U+0085 and categories Zs, Zl, Zp.
inline bool is_whitespace(char32_t cp) {
  if (cp < 0x80) return cp == ' ' || (cp >= '\t' && cp <= '\r');
  if (cp == 0x85) return true;
  auto c = category(cp);
  return c == UTF8PROC_CATEGORY_ZS || c == UTF8PROC_CATEGORY_ZL || c == UTF8PROC_CATEGORY_ZP;
}

// The character at text[at] and its length in bytes; an invalid byte is U+FFFD, one byte long.
inline char32_t char_at(std::string_view text, size_t at, size_t* length) {
  utf8proc_int32_t cp = 0;
  const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + at),
                                  static_cast<utf8proc_ssize_t>(text.size() - at), &cp);
  *length = n > 0 ? static_cast<size_t>(n) : 1;
  return n > 0 ? static_cast<char32_t>(cp) : 0xFFFD;
}

}  // namespace salient::text
