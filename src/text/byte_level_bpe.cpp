#include "text/byte_level_bpe.h"

#include <array>
#include <climits>
#include <queue>
#include <tuple>

#include <utf8proc.h>

namespace salient::byte_level {
namespace {

enum class Class { Letter, Number, Space, Other };

struct Char {
  Class cls;
  bool is_space_char;  // U+0020 itself: the optional " ?" of the pattern
  size_t begin, end;   // bytes
};

// Unicode White_Space (what \s matches): \t..\r, U+0085 and categories Zs, Zl, Zp.
Class classify(utf8proc_int32_t cp) {
  if (cp < 0x80) {
    if (cp == ' ' || (cp >= '\t' && cp <= '\r')) return Class::Space;
    if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z')) return Class::Letter;
    if (cp >= '0' && cp <= '9') return Class::Number;
    return Class::Other;
  }
  if (cp == 0x85) return Class::Space;
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
      return Class::Letter;
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
      return Class::Number;
    case UTF8PROC_CATEGORY_ZS: case UTF8PROC_CATEGORY_ZL: case UTF8PROC_CATEGORY_ZP:
      return Class::Space;
    default:
      return Class::Other;
  }
}

std::vector<Char> decode_chars(std::string_view text, size_t begin, size_t end) {
  std::vector<Char> chars;
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  for (size_t i = begin; i < end;) {
    utf8proc_int32_t cp = bytes[i];
    size_t len = 1;
    Class cls = Class::Other;  // an invalid byte: a character of its own, of no class
    if (cp < 0x80) {
      cls = classify(cp);
    } else {
      const auto n = utf8proc_iterate(bytes + i, static_cast<utf8proc_ssize_t>(end - i), &cp);
      if (n > 0) {
        len = static_cast<size_t>(n);
        cls = classify(cp);
      }
    }
    chars.push_back({cls, cp == ' ', i, i + len});
    i += len;
  }
  return chars;
}

// The pattern's contractions at chars[i] ('s 't 'm 'd 're 've 'll, ASCII, case-sensitive): their
// length in characters, or 0.
size_t contraction(std::string_view text, const std::vector<Char>& chars, size_t i) {
  auto ascii = [&](size_t k) -> char {
    return k < chars.size() && chars[k].end - chars[k].begin == 1 ? text[chars[k].begin] : '\0';
  };
  if (ascii(i) != '\'') return 0;
  const char a = ascii(i + 1), b = ascii(i + 2);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

}  // namespace

std::vector<Word> split(std::string_view text, size_t begin, size_t end, bool add_prefix_space) {
  std::vector<Char> chars = decode_chars(text, begin, end);
  std::vector<Word> words;
  if (chars.empty()) return words;
  // tokenizers prepends the space to the segment; it takes the first character's offsets
  const bool prefixed = add_prefix_space && !chars[0].is_space_char;
  if (prefixed) chars.insert(chars.begin(), Char{Class::Space, true, chars[0].begin, chars[0].begin});
  const size_t n = chars.size();
  auto run = [&](size_t from, Class cls) {
    while (from < n && chars[from].cls == cls) ++from;
    return from;
  };
  auto emit = [&](size_t i, size_t j) {  // characters [i, j)
    words.push_back({chars[i].begin, chars[j - 1].end, prefixed && i == 0});
  };
  for (size_t i = 0; i < n;) {
    if (size_t c = contraction(text, chars, i)) {
      emit(i, i + c);
      i += c;
      continue;
    }
    // " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+": a space joins the run that follows it
    const size_t j = chars[i].is_space_char && i + 1 < n && chars[i + 1].cls != Class::Space ? i + 1 : i;
    if (chars[j].cls != Class::Space) {
      const size_t k = run(j, chars[j].cls);
      emit(i, k);
      i = k;
      continue;
    }
    // "\s+(?!\S)" keeps the run's last whitespace for what follows it; "\s+" takes a lone one
    const size_t r = run(i, Class::Space);
    const size_t stop = r == n || r - i == 1 ? r : r - 1;
    emit(i, stop);
    i = stop;
  }
  return words;
}

namespace {

std::array<std::string, 256> make_alphabet() {
  std::array<std::string, 256> chars;
  std::array<bool, 256> printable{};
  for (int b = '!'; b <= '~'; ++b) printable[b] = true;
  for (int b = 0xA1; b <= 0xAC; ++b) printable[b] = true;
  for (int b = 0xAE; b <= 0xFF; ++b) printable[b] = true;
  int next = 256;
  for (int b = 0; b < 256; ++b) {
    const utf8proc_int32_t cp = printable[b] ? b : next++;
    utf8proc_uint8_t buf[4];
    const auto len = utf8proc_encode_char(cp, buf);
    chars[b].assign(reinterpret_cast<const char*>(buf), static_cast<size_t>(len));
  }
  return chars;
}

const std::array<std::string, 256>& alphabet() {
  static const std::array<std::string, 256> chars = make_alphabet();
  return chars;
}

}  // namespace

const std::string& byte_char(unsigned char b) { return alphabet()[b]; }

void merge(std::vector<Symbol>& symbols, const std::unordered_map<std::string, int>& ranks) {
  const size_t n = symbols.size();
  if (n < 2) return;
  // A linked list over the symbols and a queue of candidate pairs by (rank, position): the lowest
  // rank first, the leftmost on a tie, as tokenizers' Word::merge_all. A pair whose symbols changed
  // since it was queued is recognised by its rank (ranks are unique per pair) and skipped.
  std::vector<size_t> next(n), prev(n);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i) {
    next[i] = i + 1;
    prev[i] = i == 0 ? SIZE_MAX : i - 1;
  }
  using Candidate = std::pair<int, size_t>;
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  std::string key;
  auto rank_of = [&](size_t left) {
    if (left == SIZE_MAX || next[left] >= n) return INT_MAX;
    key.assign(symbols[left].text).append(1, ' ').append(symbols[next[left]].text);
    auto it = ranks.find(key);
    return it == ranks.end() ? INT_MAX : it->second;
  };
  auto push = [&](size_t left) {
    const int r = rank_of(left);
    if (r != INT_MAX) queue.push({r, left});
  };
  for (size_t i = 0; i + 1 < n; ++i) push(i);
  while (!queue.empty()) {
    const auto [r, left] = queue.top();
    queue.pop();
    if (!alive[left] || rank_of(left) != r) continue;
    const size_t right = next[left];
    symbols[left].text += symbols[right].text;
    symbols[left].last = symbols[right].last;
    alive[right] = false;
    next[left] = next[right];
    if (next[right] < n) prev[next[right]] = left;
    push(prev[left]);
    push(left);
  }
  size_t out = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!alive[i]) continue;
    if (out != i) symbols[out] = std::move(symbols[i]);  // a self-move would empty the string
    ++out;
  }
  symbols.resize(out);
}

std::string decode(const std::string& token) {
  static const std::unordered_map<std::string, char> byte_of = [] {
    std::unordered_map<std::string, char> m;
    for (int b = 0; b < 256; ++b) m[alphabet()[b]] = static_cast<char>(b);
    return m;
  }();
  std::string out;
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(token.data());
  for (size_t i = 0; i < token.size();) {
    utf8proc_int32_t cp;
    const auto n = utf8proc_iterate(bytes + i, static_cast<utf8proc_ssize_t>(token.size() - i), &cp);
    const size_t len = n > 0 ? static_cast<size_t>(n) : 1;
    auto it = byte_of.find(token.substr(i, len));
    if (it != byte_of.end()) {
      out += it->second;
    } else {
      out.append(token, i, len);
    }
    i += len;
  }
  return out;
}

}  // namespace salient::byte_level
