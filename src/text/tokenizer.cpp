#include "text/tokenizer.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include "util/error.h"
#include "util/io.h"

// Pipeline (as HF tokenizers): special tokens are cut out of the raw text first; every other
// segment is normalized (clean text, space out CJK, lowercase, NFD + drop Mn), pre-tokenized
// (whitespace / punctuation) and WordPiece-encoded. Each normalized character keeps the original
// byte range it came from, which gives the offsets.

namespace salient {
namespace {

using json = nlohmann::json;

struct NormChar {
  char32_t cp;
  size_t begin, end;  // bytes of the original text this character derives from
};

struct Special {
  std::string_view text;
  int64_t id;
};

// Per-thread buffers reused across calls so tokenizing allocates (almost) only its output.
struct Scratch {
  std::vector<NormChar> chars;                 // normalized segment
  std::string word;                            // UTF-8 of the current word
  std::vector<size_t> bounds;                  // byte offset of each char boundary in `word`
  std::string candidate;                       // WordPiece lookup key
  std::vector<std::pair<int64_t, std::pair<size_t, size_t>>> pieces;  // id, [first, last) chars
};
thread_local Scratch scratch;

utf8proc_category_t category(char32_t cp) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

// tokenizers' is_control, as tokenizers.js (which produced the fixture) implements it: Cc, Cf, Co,
// Cs except \t \n \r. Unassigned (Cn) code points are kept: utf8proc's Unicode version may lag
// behind the text, and a newly assigned emoji should become [UNK], not vanish.
bool is_control(char32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  if (cp < 0x80) return cp < 0x20 || cp == 0x7f;
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CS:
      return true;
    default:
      return false;
  }
}

// Unicode White_Space (Rust char::is_whitespace): \t..\r, U+0085 and categories Zs, Zl, Zp.
bool is_whitespace(char32_t cp) {
  if (cp < 0x80) return cp == ' ' || (cp >= '\t' && cp <= '\r');
  if (cp == 0x85) return true;
  auto c = category(cp);
  return c == UTF8PROC_CATEGORY_ZS || c == UTF8PROC_CATEGORY_ZL || c == UTF8PROC_CATEGORY_ZP;
}

// BERT punctuation: all non-alphanumeric printable ASCII, plus Unicode categories P*.
bool is_punctuation(char32_t cp) {
  if (cp < 0x80)
    return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
           (cp >= 123 && cp <= 126);
  auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

// The CJK blocks of BERT's _is_chinese_char (Hangul and kana are deliberately not included).
bool is_chinese_char(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

int combining_class(char32_t cp) {
  return cp < 0x300 ? 0 : utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->combining_class;
}

void append_utf8(std::string& out, char32_t cp) {
  utf8proc_uint8_t buf[4];
  auto n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

// NFD's canonical ordering step: stable-sort every run of non-starters by combining class.
void canonical_order(std::vector<NormChar>& chars) {
  auto by_class = [](const NormChar& a, const NormChar& b) {
    return combining_class(a.cp) < combining_class(b.cp);
  };
  size_t i = 0;
  while (i < chars.size()) {
    if (combining_class(chars[i].cp) == 0) {
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < chars.size() && combining_class(chars[j].cp) != 0) ++j;
    std::stable_sort(chars.begin() + static_cast<ptrdiff_t>(i),
                     chars.begin() + static_cast<ptrdiff_t>(j), by_class);
    i = j;
  }
}

// BertNormalizer on text[begin, end) into `out`. Steps run in HF order: clean text, CJK spacing,
// lowercase, then NFD + removal of non-spacing marks.
void normalize(std::string_view text, size_t begin, size_t end, const TokenizerOptions& opt,
               std::vector<NormChar>& out) {
  const bool strip = opt.strip_accents.value_or(opt.lowercase);
  bool reorder = false;  // a non-starter was produced: NFD needs canonical ordering
  out.clear();

  auto emit = [&](char32_t cp, size_t b, size_t e) {
    if (!strip || cp < 0xC0) {  // nothing below U+00C0 decomposes
      out.push_back({cp, b, e});
      return;
    }
    utf8proc_int32_t parts[8];
    int unused = 0;
    auto n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), parts, 8,
                                     UTF8PROC_DECOMPOSE, &unused);
    if (n <= 0 || n > 8) {  // not decomposable by utf8proc: keep as is
      parts[0] = static_cast<utf8proc_int32_t>(cp);
      n = 1;
    }
    for (utf8proc_ssize_t k = 0; k < n; ++k) {
      char32_t part = static_cast<char32_t>(parts[k]);
      reorder = reorder || combining_class(part) != 0;
      out.push_back({part, b, e});
    }
  };

  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  size_t i = begin;
  while (i < end) {
    utf8proc_int32_t decoded = bytes[i];
    size_t len = 1;
    if (decoded >= 0x80) {
      auto n = utf8proc_iterate(bytes + i, static_cast<utf8proc_ssize_t>(end - i), &decoded);
      if (n > 0) {
        len = static_cast<size_t>(n);
      } else {
        decoded = 0xFFFD;  // invalid UTF-8: one replacement character per bad byte
      }
    }
    char32_t cp = static_cast<char32_t>(decoded);
    const size_t b = i, e = i + len;
    i = e;

    if (opt.clean_text) {
      if (cp == 0 || cp == 0xFFFD || is_control(cp)) continue;
      if (is_whitespace(cp)) cp = ' ';
    }
    const bool cjk = opt.tokenize_chinese_chars && is_chinese_char(cp);
    if (cjk) out.push_back({' ', b, e});
    if (!opt.lowercase) {
      emit(cp, b, e);
    } else if (cp < 0x80) {
      emit(cp >= 'A' && cp <= 'Z' ? cp + ('a' - 'A') : cp, b, e);
    } else if (cp == 0x130) {
      // The one code point whose full lowercase mapping differs from the simple one utf8proc
      // offers: İ -> i + COMBINING DOT ABOVE.
      emit('i', b, e);
      emit(0x307, b, e);
    } else {
      emit(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))), b, e);
    }
    if (cjk) out.push_back({' ', b, e});
  }

  if (strip) {
    if (reorder) canonical_order(out);
    out.erase(std::remove_if(out.begin(), out.end(),
                             [](const NormChar& c) {
                               return c.cp >= 0x300 && category(c.cp) == UTF8PROC_CATEGORY_MN;
                             }),
              out.end());
  }
}

// Special tokens of the vocabulary, longest first so that a scan picks the longest match.
std::vector<Special> special_tokens(const WordPieceTokenizer& tok) {
  const TokenizerOptions& o = tok.options();
  std::vector<Special> out;
  for (const std::string* s : {&o.cls_token, &o.sep_token, &o.pad_token, &o.unk_token, &o.mask_token})
    if (!s->empty() && tok.has_token(*s)) out.push_back({*s, tok.token_to_id(*s)});
  std::stable_sort(out.begin(), out.end(),
                   [](const Special& a, const Special& b) { return a.text.size() > b.text.size(); });
  return out;
}

// Walks the pre-tokenized words of `text` in order with their word index:
// on_special(special, begin, end, word) for special tokens found verbatim in the raw text,
// on_word(chars, count, word) for the normalized characters of every other word.
template <class OnSpecial, class OnWord>
void for_each_word(const std::string& text, const TokenizerOptions& opt,
                   const std::vector<Special>& specials, std::vector<NormChar>& chars,
                   OnSpecial&& on_special, OnWord&& on_word) {
  int64_t word = 0;
  auto split_segment = [&](size_t begin, size_t end) {
    if (begin == end) return;
    normalize(text, begin, end, opt, chars);
    const size_t n = chars.size();
    size_t i = 0;
    while (i < n) {
      if (is_whitespace(chars[i].cp)) {
        ++i;
      } else if (is_punctuation(chars[i].cp)) {
        on_word(&chars[i], size_t{1}, word++);
        ++i;
      } else {
        size_t j = i + 1;
        while (j < n && !is_whitespace(chars[j].cp) && !is_punctuation(chars[j].cp)) ++j;
        on_word(&chars[i], j - i, word++);
        i = j;
      }
    }
  };

  size_t segment_begin = 0, pos = 0;
  while (pos < text.size()) {
    const Special* match = nullptr;
    for (const Special& s : specials)
      if (text[pos] == s.text[0] && text.compare(pos, s.text.size(), s.text) == 0) {
        match = &s;
        break;
      }
    if (!match) {
      ++pos;
      continue;
    }
    split_segment(segment_begin, pos);
    on_special(*match, pos, pos + match->text.size(), word++);
    pos += match->text.size();
    segment_begin = pos;
  }
  split_segment(segment_begin, text.size());
}

void push_token(Encoding& enc, int64_t id, const std::string& token, size_t begin, size_t end,
                int64_t word, int64_t type_id) {
  enc.ids.push_back(id);
  enc.tokens.push_back(token);
  enc.type_ids.push_back(type_id);
  enc.offsets.emplace_back(begin, end);
  enc.word_ids.push_back(word);
}

void append_encoding(Encoding& out, const Encoding& part, int64_t type_id) {
  for (size_t i = 0; i < part.ids.size(); ++i)
    push_token(out, part.ids[i], part.tokens[i], part.offsets[i].first, part.offsets[i].second,
               part.word_ids[i], type_id);
}

void keep_first(Encoding& enc, size_t n) {
  if (n >= enc.ids.size()) return;
  enc.ids.resize(n);
  enc.tokens.resize(n);
  enc.type_ids.resize(n);
  enc.offsets.resize(n);
  enc.word_ids.resize(n);
}

const char* truncation_name(Truncation t) {
  switch (t) {
    case Truncation::LongestFirst: return "longest_first";
    case Truncation::OnlyFirst: return "only_first";
    case Truncation::OnlySecond: return "only_second";
    case Truncation::DoNotTruncate: return "do_not_truncate";
  }
  return "?";
}

// HF tokenizers' truncate_encodings. Returns whether anything was dropped.
bool truncate_pair(Encoding& a, Encoding* b, int max_length, Truncation strategy) {
  if (max_length <= 0 || strategy == Truncation::DoNotTruncate) return false;
  const size_t n_special = b ? 3 : 2;
  if (static_cast<size_t>(max_length) < n_special)
    fail("max_length {} cannot hold the {} special tokens", max_length, n_special);
  const size_t budget = static_cast<size_t>(max_length) - n_special;
  const size_t n1 = a.ids.size(), n2 = b ? b->ids.size() : 0;
  if (n1 + n2 <= budget) return false;

  if (strategy == Truncation::LongestFirst) {
    if (!b) {
      keep_first(a, budget);
      return true;
    }
    // The shorter sequence stays whole if the longer one can absorb the cut; otherwise both get
    // half the budget and the longer one (the second on a tie) the odd token.
    const size_t shorter = std::min(n1, n2);
    size_t keep_short = shorter, keep_long = budget - shorter;
    if (2 * shorter > budget) {
      keep_short = budget / 2;
      keep_long = budget - keep_short;
    }
    keep_first(a, n1 > n2 ? keep_long : keep_short);
    keep_first(*b, n1 > n2 ? keep_short : keep_long);
    return true;
  }

  Encoding* target = strategy == Truncation::OnlyFirst ? &a : b;
  if (!target) fail("truncation only_second needs a sentence pair");
  const size_t to_remove = n1 + n2 - budget;
  const size_t target_len = target->ids.size();
  if (target_len <= to_remove)
    fail("truncation {} cannot fit max_length {}: the {} sequence has {} tokens, {} must go",
         truncation_name(strategy), max_length, target == &a ? "first" : "second", target_len,
         to_remove);
  keep_first(*target, target_len - to_remove);
  return true;
}

std::vector<std::string> parse_vocab_lines(const std::string& data) {
  std::vector<std::string> vocab;
  size_t pos = 0;
  while (pos < data.size()) {
    size_t nl = data.find('\n', pos);
    if (nl == std::string::npos) nl = data.size();
    size_t end = nl;
    if (end > pos && data[end - 1] == '\r') --end;  // Python's universal newlines drop it too
    vocab.emplace_back(data, pos, end - pos);
    pos = nl + 1;
  }
  return vocab;
}

// A special-token name in tokenizer_config.json: a string or an AddedToken object.
std::string config_token(const json& cfg, const char* key, const std::string& fallback) {
  if (!cfg.contains(key) || cfg[key].is_null()) return fallback;
  const json& v = cfg[key];
  return v.is_object() ? v.at("content").get<std::string>() : v.get<std::string>();
}

WordPieceTokenizer build(std::vector<std::string> vocab, TokenizerOptions options,
                         const std::string& source) {
  try {
    return WordPieceTokenizer(std::move(vocab), std::move(options));
  } catch (const Error& e) {
    fail("{}: {}", source, e.what());
  }
}

}  // namespace

Truncation parse_truncation(const std::string& name) {
  if (name == "longest_first") return Truncation::LongestFirst;
  if (name == "only_first") return Truncation::OnlyFirst;
  if (name == "only_second") return Truncation::OnlySecond;
  if (name == "do_not_truncate") return Truncation::DoNotTruncate;
  fail("unknown truncation strategy '{}' (expected longest_first, only_first, only_second or "
       "do_not_truncate)",
       one_line(name));
}

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> vocab, TokenizerOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  if (vocab_.empty()) fail("empty vocabulary");
  index_.reserve(vocab_.size());
  for (size_t i = 0; i < vocab_.size(); ++i)
    index_[vocab_[i]] = static_cast<int64_t>(i);  // a repeated token keeps its last id, as HF
  auto find = [&](const std::string& token) {
    auto it = index_.find(token);
    return it == index_.end() ? int64_t{-1} : it->second;
  };
  cls_id_ = find(options_.cls_token);
  sep_id_ = find(options_.sep_token);
  unk_id_ = find(options_.unk_token);
  pad_id_ = find(options_.pad_token);
  mask_id_ = find(options_.mask_token);
  for (const std::string* t : {&options_.cls_token, &options_.sep_token, &options_.unk_token})
    if (find(*t) < 0) fail("vocabulary has no '{}' token", one_line(*t));
}

WordPieceTokenizer WordPieceTokenizer::from_vocab_file(const std::string& path,
                                                       TokenizerOptions options) {
  std::vector<std::string> vocab = parse_vocab_lines(read_file(path));
  if (vocab.empty()) fail("{}: empty vocabulary", path);
  return build(std::move(vocab), std::move(options), path);
}

namespace {

// An integer of tokenizer.json: a float, or a number beyond int64 (which the JSON parser keeps as a
// double), is an error rather than an undefined conversion (libFuzzer found one: fuzz_vocab).
int64_t json_int64(const json& v, const std::string& path, const std::string& what) {
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)))
    fail("{}: {} must be an integer (got {})", path, what, one_line(v.dump()));
  return v.get<int64_t>();
}

}  // namespace

WordPieceTokenizer WordPieceTokenizer::from_tokenizer_json(const std::string& path) {
  const json doc = parse_json_file(path);
  std::vector<std::string> vocab;
  TokenizerOptions opt;
  try {
    const json& model = doc.at("model");
    if (model.contains("type") && model["type"] != "WordPiece")
      fail("{}: model.type is {}, only WordPiece is supported", path, model["type"].dump());
    const json& entries = model.at("vocab");
    if (!entries.is_object() || entries.empty()) fail("{}: model.vocab is empty", path);
    vocab.resize(entries.size());
    std::vector<bool> seen(entries.size(), false);
    for (const auto& [token, id_json] : entries.items()) {
      const int64_t id = json_int64(id_json, path, fmt::format("model.vocab['{}']", one_line(token)));
      if (id < 0 || id >= static_cast<int64_t>(vocab.size()) || seen[static_cast<size_t>(id)])
        fail("{}: model.vocab ids must be 0..{} without repeats (got {} for '{}')", path,
             vocab.size() - 1, id, one_line(token));
      seen[static_cast<size_t>(id)] = true;
      vocab[static_cast<size_t>(id)] = token;
    }
    opt.unk_token = model.value("unk_token", opt.unk_token);
    opt.continuing_subword_prefix =
        model.value("continuing_subword_prefix", opt.continuing_subword_prefix);
    if (model.contains("max_input_chars_per_word")) {
      const int64_t n = json_int64(model["max_input_chars_per_word"], path, "model.max_input_chars_per_word");
      if (n < 1 || n > std::numeric_limits<int>::max())
        fail("{}: model.max_input_chars_per_word must be a positive integer (got {})", path, n);
      opt.max_input_chars_per_word = static_cast<decltype(opt.max_input_chars_per_word)>(n);
    }

    const json normalizer = doc.value("normalizer", json());
    if (normalizer.is_null()) {  // no normalizer: text goes to the pre-tokenizer untouched
      opt.lowercase = opt.clean_text = opt.tokenize_chinese_chars = false;
      opt.strip_accents = false;
    } else {
      if (normalizer.value("type", std::string()) != "BertNormalizer")
        fail("{}: normalizer {} is not supported (expected BertNormalizer)", path,
             normalizer.value("type", std::string("without type")));
      opt.lowercase = normalizer.value("lowercase", true);
      opt.clean_text = normalizer.value("clean_text", true);
      opt.tokenize_chinese_chars = normalizer.value("handle_chinese_chars", true);
      if (normalizer.contains("strip_accents") && !normalizer["strip_accents"].is_null())
        opt.strip_accents = normalizer["strip_accents"].get<bool>();
    }
    const json pre = doc.value("pre_tokenizer", json());
    if (pre.is_null() || pre.value("type", std::string()) != "BertPreTokenizer")
      fail("{}: pre_tokenizer {} is not supported (expected BertPreTokenizer)", path,
           one_line(pre.dump()));
  } catch (const json::exception& e) {
    fail("{}: {}", path, one_line(e.what()));
  }
  return build(std::move(vocab), std::move(opt), path);
}

WordPieceTokenizer WordPieceTokenizer::from_dir(const std::string& model_dir) {
  const std::string dir = model_files_dir(model_dir);
  const std::string tokenizer_json = join_path(dir, "tokenizer.json");
  if (file_exists(tokenizer_json)) return from_tokenizer_json(tokenizer_json);
  const std::string vocab_txt = join_path(dir, "vocab.txt");
  if (!file_exists(vocab_txt)) fail("{}: neither tokenizer.json nor vocab.txt found", dir);

  TokenizerOptions opt;
  const std::string config_path = join_path(dir, "tokenizer_config.json");
  if (file_exists(config_path)) {
    const json cfg = parse_json_file(config_path);
    try {
      opt.lowercase = cfg.value("do_lower_case", true);  // BertTokenizer's default
      if (cfg.contains("strip_accents") && !cfg["strip_accents"].is_null())
        opt.strip_accents = cfg["strip_accents"].get<bool>();
      opt.tokenize_chinese_chars = cfg.value("tokenize_chinese_chars", true);
      opt.unk_token = config_token(cfg, "unk_token", opt.unk_token);
      opt.cls_token = config_token(cfg, "cls_token", opt.cls_token);
      opt.sep_token = config_token(cfg, "sep_token", opt.sep_token);
      opt.pad_token = config_token(cfg, "pad_token", opt.pad_token);
      opt.mask_token = config_token(cfg, "mask_token", opt.mask_token);
    } catch (const json::exception& e) {
      fail("{}: {}", config_path, one_line(e.what()));
    }
  }
  return from_vocab_file(vocab_txt, std::move(opt));
}

WordPieceTokenizer WordPieceTokenizer::from_path(const std::string& path) {
  if (dir_exists(path)) return from_dir(path);
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) return from_tokenizer_json(path);
  return from_vocab_file(path);
}

std::vector<int64_t> WordPieceTokenizer::ordinary_ids() const {
  std::vector<int64_t> ids;
  for (size_t i = 0; i < vocab_.size(); ++i) {
    const std::string& t = vocab_[i];
    const int64_t id = static_cast<int64_t>(i);
    if (is_structural(id) || id == mask_id_) continue;
    if (t.size() > 2 && t.front() == '[' && t.back() == ']') continue;
    ids.push_back(id);
  }
  return ids;
}

Encoding WordPieceTokenizer::tokenize(const std::string& text) const {
  Encoding enc;
  Scratch& s = scratch;
  const std::string& prefix = options_.continuing_subword_prefix;

  auto on_special = [&](const Special& sp, size_t begin, size_t end, int64_t word) {
    push_token(enc, sp.id, vocab_[static_cast<size_t>(sp.id)], begin, end, word, 0);
  };
  // Greedy longest-match-first WordPiece; an over-long or unsplittable word is one [UNK].
  auto on_word = [&](const NormChar* chars, size_t n, int64_t word) {
    const size_t begin = chars[0].begin, end = chars[n - 1].end;
    if (n > static_cast<size_t>(std::max(options_.max_input_chars_per_word, 0))) {
      push_token(enc, unk_id_, options_.unk_token, begin, end, word, 0);
      return;
    }
    s.word.clear();
    s.bounds.assign(1, 0);
    for (size_t k = 0; k < n; ++k) {
      append_utf8(s.word, chars[k].cp);
      s.bounds.push_back(s.word.size());
    }
    s.pieces.clear();
    for (size_t start = 0; start < n;) {
      int64_t id = -1;
      size_t stop = n;
      for (; stop > start; --stop) {
        s.candidate.clear();
        if (start > 0) s.candidate += prefix;
        s.candidate.append(s.word, s.bounds[start], s.bounds[stop] - s.bounds[start]);
        auto it = index_.find(s.candidate);
        if (it != index_.end()) {
          id = it->second;
          break;
        }
      }
      if (id < 0) {
        push_token(enc, unk_id_, options_.unk_token, begin, end, word, 0);
        return;
      }
      s.pieces.push_back({id, {start, stop}});
      start = stop;
    }
    for (const auto& [id, range] : s.pieces)
      push_token(enc, id, vocab_[static_cast<size_t>(id)], chars[range.first].begin,
                 chars[range.second - 1].end, word, 0);
  };

  for_each_word(text, options_, special_tokens(*this), s.chars, on_special, on_word);
  return enc;
}

std::vector<std::pair<std::string, std::pair<size_t, size_t>>> WordPieceTokenizer::pre_tokenize(
    const std::string& text) const {
  std::vector<std::pair<std::string, std::pair<size_t, size_t>>> words;
  auto on_special = [&](const Special& sp, size_t begin, size_t end, int64_t) {
    words.push_back({std::string(sp.text), {begin, end}});
  };
  auto on_word = [&](const NormChar* chars, size_t n, int64_t) {
    std::string word;
    for (size_t k = 0; k < n; ++k) append_utf8(word, chars[k].cp);
    words.push_back({std::move(word), {chars[0].begin, chars[n - 1].end}});
  };
  for_each_word(text, options_, special_tokens(*this), scratch.chars, on_special, on_word);
  return words;
}

Encoding WordPieceTokenizer::encode(const std::string& text, const std::optional<std::string>& pair,
                                    int max_length, Truncation truncation) const {
  Encoding a = tokenize(text);
  std::optional<Encoding> b;
  if (pair) b = tokenize(*pair);
  const bool truncated = truncate_pair(a, b ? &*b : nullptr, max_length, truncation);

  Encoding out;
  const size_t total = a.ids.size() + (b ? b->ids.size() + 3 : 2);
  out.ids.reserve(total);
  out.tokens.reserve(total);
  out.type_ids.reserve(total);
  out.offsets.reserve(total);
  out.word_ids.reserve(total);
  push_token(out, cls_id_, options_.cls_token, 0, 0, -1, 0);
  append_encoding(out, a, 0);
  push_token(out, sep_id_, options_.sep_token, 0, 0, -1, 0);
  if (b) {
    append_encoding(out, *b, 1);
    push_token(out, sep_id_, options_.sep_token, 0, 0, -1, 1);
  }
  out.truncated = truncated;
  return out;
}

int64_t WordPieceTokenizer::token_to_id(const std::string& token) const {
  auto it = index_.find(token);
  return it == index_.end() ? unk_id_ : it->second;
}

const std::string& WordPieceTokenizer::id_to_token(int64_t id) const {
  if (id < 0 || id >= static_cast<int64_t>(vocab_.size()))
    fail("token id {} is out of range (vocabulary size {})", id, vocab_.size());
  return vocab_[static_cast<size_t>(id)];
}

bool WordPieceTokenizer::has_token(const std::string& token) const {
  return index_.count(token) > 0;
}

bool WordPieceTokenizer::is_structural(int64_t id) const {
  return id >= 0 && (id == cls_id_ || id == sep_id_ || id == pad_id_);
}

void WordPieceTokenizer::save_vocab(const std::string& path) const {
  std::string data;
  for (const std::string& token : vocab_) {
    data += token;
    data += '\n';
  }
  write_file_atomic(path, data);
}

std::vector<int64_t> whitespace_word_ids(const std::string& text, const Encoding& enc,
                                         int64_t segment) {
  // Words split on ASCII whitespace, like the datasets' split_whitespace.
  auto is_space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  std::vector<std::pair<size_t, size_t>> words;
  for (size_t i = 0; i < text.size();) {
    if (is_space(text[i])) {
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < text.size() && !is_space(text[j])) ++j;
    words.emplace_back(i, j);
    i = j;
  }

  std::vector<int64_t> out(enc.ids.size(), -1);
  for (size_t t = 0; t < enc.ids.size(); ++t) {
    const int64_t type = t < enc.type_ids.size() ? enc.type_ids[t] : 0;
    if (type != segment || enc.word_ids[t] < 0) continue;  // other segment or [CLS]/[SEP]
    const size_t first = enc.offsets[t].first;
    auto it = std::upper_bound(words.begin(), words.end(), first,
                               [](size_t pos, const std::pair<size_t, size_t>& w) { return pos < w.first; });
    if (it != words.begin() && first < std::prev(it)->second)
      out[t] = static_cast<int64_t>(std::prev(it) - words.begin());
  }
  return out;
}

}  // namespace salient
