#include "text/tokenizer.h"

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <map>
#include <string_view>

#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include "text/byte_level_bpe.h"
#include "text/sentencepiece.h"
#include "text/unicode.h"
#include "util/error.h"
#include "util/io.h"
#include "util/model_folder.h"

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
  bool lstrip = false, rstrip = false;  // absorbs the whitespace before / after it
  bool normalized = false;             // its offsets take in that whitespace
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

using text::category;
using text::is_whitespace;

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

// A byte that is ASCII whitespace (a byte of a multi-byte character never is).
bool is_ascii_whitespace(char c) {
  const auto b = static_cast<unsigned char>(c);
  return b < 0x80 && is_whitespace(b);
}

bool listed(const std::vector<std::string>& names, const std::string& s) {
  return std::find(names.begin(), names.end(), s) != names.end();
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
std::vector<Special> special_tokens(const Tokenizer& tok) {
  const TokenizerOptions& o = tok.options();
  std::vector<Special> out;
  for (const std::string* s : {&o.cls_token, &o.sep_token, &o.pad_token, &o.unk_token, &o.mask_token})
    if (!s->empty() && tok.has_token(*s))
      out.push_back({*s, tok.token_to_id(*s), listed(o.lstrip_tokens, *s), listed(o.rstrip_tokens, *s),
                     listed(o.normalized_tokens, *s)});
  std::stable_sort(out.begin(), out.end(),
                   [](const Special& a, const Special& b) { return a.text.size() > b.text.size(); });
  return out;
}

// Cuts the special tokens found verbatim in the raw text out of it, in order:
// on_special(special, begin, end) for each (its range widened over the whitespace it strips),
// on_segment(begin, end) for the text between them.
template <class OnSpecial, class OnSegment>
void for_each_segment(const std::string& text, const std::vector<Special>& specials, OnSpecial&& on_special,
                      OnSegment&& on_segment) {
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
    size_t begin = pos, end = pos + match->text.size();
    if (match->lstrip)
      while (begin > segment_begin && is_ascii_whitespace(text[begin - 1])) --begin;
    if (match->rstrip)
      while (end < text.size() && is_ascii_whitespace(text[end])) ++end;
    if (begin > segment_begin) on_segment(segment_begin, begin);
    // The stripped spaces are in no token's offsets, as HF, unless HF matched the token in its
    // normalized text (then the alignment gives it their range too).
    if (match->normalized) on_special(*match, begin, end);
    else on_special(*match, pos, pos + match->text.size());
    pos = segment_begin = end;
  }
  if (segment_begin < text.size()) on_segment(segment_begin, text.size());
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

  for_each_segment(
      text, specials, [&](const Special& sp, size_t begin, size_t end) { on_special(sp, begin, end, word++); },
      split_segment);
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
bool truncate_pair(Encoding& a, Encoding* b, int max_length, Truncation strategy, size_t n_special) {
  if (max_length <= 0 || strategy == Truncation::DoNotTruncate) return false;
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

Tokenizer build(std::vector<std::string> vocab, TokenizerOptions options,
                         const std::string& source) {
  try {
    return Tokenizer(std::move(vocab), std::move(options));
  } catch (const Error& e) {
    fail("{}: {}", source, e.what());
  }
}

// One of the five special tokens' text.
bool is_special_name(const TokenizerOptions& o, const std::string& token) {
  return token == o.cls_token || token == o.sep_token || token == o.pad_token || token == o.unk_token ||
         token == o.mask_token;
}

// The special tokens that encoding cannot do without: a vocabulary lacking one is refused by name.
void require_tokens(const Tokenizer& t, std::initializer_list<const std::string*> tokens) {
  for (const std::string* token : tokens)
    if (!t.has_token(*token)) fail("vocabulary has no '{}' token", one_line(*token));
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

Tokenizer::Tokenizer(std::vector<std::string> vocab, TokenizerOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  index_vocab();
  require_tokens(*this, {&options_.cls_token, &options_.sep_token, &options_.unk_token});
}

TokenizerOptions TokenizerOptions::roberta() {
  TokenizerOptions opt;
  opt.cls_token = "<s>";
  opt.sep_token = "</s>";
  opt.pad_token = "<pad>";
  opt.unk_token = "<unk>";
  opt.mask_token = "<mask>";
  opt.lstrip_tokens = {opt.mask_token};
  return opt;
}

Tokenizer Tokenizer::byte_level_bpe(std::vector<std::string> vocab,
                                    std::vector<std::pair<std::string, std::string>> merges,
                                    TokenizerOptions options) {
  Tokenizer t;
  t.vocab_ = std::move(vocab);
  t.options_ = std::move(options);
  t.options_.continuing_subword_prefix.clear();
  t.model_ = TokenizerModel::ByteLevelBpe;
  t.index_vocab();
  require_tokens(t, {&t.options_.cls_token, &t.options_.sep_token});  // <unk> may be absent: bytes cover all text
  t.merges_ = std::move(merges);
  t.merge_rank_.reserve(t.merges_.size());
  for (size_t i = 0; i < t.merges_.size(); ++i)  // a repeated pair keeps its last rank, as tokenizers
    t.merge_rank_[t.merges_[i].first + " " + t.merges_[i].second] = static_cast<int>(i);
  return t;
}

Tokenizer Tokenizer::sentencepiece(std::shared_ptr<const spm::Model> model, SentencePieceLayout layout,
                                   TokenizerOptions options, const std::vector<std::string>& added) {
  if (!model) fail("sentencepiece: no model");
  Tokenizer t;
  t.model_ = TokenizerModel::SentencePiece;
  t.layout_ = layout;
  t.options_ = std::move(options);
  t.options_.continuing_subword_prefix.clear();
  const int n = model->size();
  if (layout == SentencePieceLayout::XlmRoberta) {
    // XLMRobertaTokenizer's fairseq_tokens_to_ids and fairseq_offset: the model's first three
    // pieces (<unk>, <s>, </s>) give way to fairseq's four, every other piece moves up one.
    t.vocab_ = {"<s>", "<pad>", "</s>", "<unk>"};
    for (int i = 3; i < n; ++i) t.vocab_.push_back(model->piece(i));
    t.vocab_.push_back("<mask>");
  } else {
    for (int i = 0; i < n; ++i) t.vocab_.push_back(model->piece(i));
  }
  for (const std::string& token : added) t.vocab_.push_back(token);
  t.index_vocab();
  require_tokens(t, {&t.options_.cls_token, &t.options_.sep_token, &t.options_.unk_token});
  t.spm_ids_.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t.spm_ids_[static_cast<size_t>(i)] = model->is_unknown(i) ? t.unk_id_ : t.token_to_id(model->piece(i));
  t.spm_ = std::move(model);
  return t;
}

void Tokenizer::index_vocab() {
  if (vocab_.empty()) fail("empty vocabulary");
  index_.clear();
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
}

Tokenizer Tokenizer::from_vocab_file(const std::string& path,
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
    fail("{}: {} must be an integer (got {})", path, what, show_json(v));
  return v.get<int64_t>();
}

// RoBERTa's special tokens (RobertaTokenizer's defaults: <mask> strips the space before it), then
// those that a tokenizer_config.json in `dir` names, with its add_prefix_space and trim_offsets.
TokenizerOptions byte_level_options(const std::string& dir) {
  TokenizerOptions opt = TokenizerOptions::roberta();
  const std::string config_path = join_path(dir, "tokenizer_config.json");
  if (!file_exists(config_path)) return opt;
  const json cfg = parse_json_file(config_path);
  try {
    opt.cls_token = config_token(cfg, "cls_token", config_token(cfg, "bos_token", opt.cls_token));
    opt.sep_token = config_token(cfg, "sep_token", config_token(cfg, "eos_token", opt.sep_token));
    opt.pad_token = config_token(cfg, "pad_token", opt.pad_token);
    opt.unk_token = config_token(cfg, "unk_token", opt.unk_token);
    opt.mask_token = config_token(cfg, "mask_token", opt.mask_token);
    opt.lstrip_tokens = {opt.mask_token};
    opt.add_prefix_space = cfg.value("add_prefix_space", false);
    opt.trim_offsets = cfg.value("trim_offsets", true);
  } catch (const json::exception& e) {
    fail("{}: {}", config_path, one_line(e.what()));
  }
  return opt;
}

// Token → id entries (a BPE model's vocab, vocab.json) and added tokens into one id-indexed
// vocabulary; ids must be 0..n-1, each once (an added token may repeat its vocab entry).
std::vector<std::string> id_indexed_vocab(const json& entries, const json& added, const std::string& where) {
  if (!entries.is_object()) fail("{}: the vocabulary must be an object of token: id (got {})", where, show_json(entries));
  if (entries.empty()) fail("{}: the vocabulary is empty", where);
  std::unordered_map<int64_t, std::string> by_id;
  int64_t top = -1;
  auto put = [&](const std::string& token, const json& id_json, const std::string& what) {
    const int64_t id = json_int64(id_json, where, what);
    if (id < 0 || id > std::numeric_limits<int32_t>::max()) fail("{}: {} = {} is out of range", where, what, id);
    auto [it, fresh] = by_id.emplace(id, token);
    if (!fresh && it->second != token)
      fail("{}: id {} is both '{}' and '{}'", where, id, one_line(it->second), one_line(token));
    top = std::max(top, id);
  };
  for (const auto& [token, id] : entries.items()) put(token, id, fmt::format("vocab['{}']", one_line(token)));
  if (added.is_array())
    for (const json& a : added) put(a.at("content").get<std::string>(), a.at("id"), "added_tokens[].id");
  if (static_cast<size_t>(top + 1) != by_id.size())
    fail("{}: vocabulary ids must be 0..{} without gaps ({} tokens)", where, top, by_id.size());
  std::vector<std::string> vocab(by_id.size());
  for (auto& [id, token] : by_id) vocab[static_cast<size_t>(id)] = std::move(token);
  return vocab;
}

std::pair<std::string, std::string> merge_pair(const json& m, const std::string& where) {
  if (m.is_array() && m.size() == 2) return {m[0].get<std::string>(), m[1].get<std::string>()};
  if (m.is_string()) {
    const std::string line = m.get<std::string>();
    const size_t space = line.find(' ');
    if (space != std::string::npos && space > 0 && space + 1 < line.size() && line.find(' ', space + 1) == std::string::npos)
      return {line.substr(0, space), line.substr(space + 1)};
  }
  fail("{}: a merge must be \"left right\" or [left, right] (got {})", where, show_json(m));
}

// tokenizer.json with a BPE model: byte-level (RoBERTa, GPT-2's alphabet), the ByteLevel
// pre-tokenizer and RobertaProcessing; anything else is an error naming the field.
Tokenizer byte_level_from_tokenizer_json(const json& doc, const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  TokenizerOptions opt = byte_level_options(dir.empty() ? "." : dir);
  const json& model = doc.at("model");
  auto unset = [&](const char* key) {
    return !model.contains(key) || model[key].is_null() || (model[key].is_string() && model[key] == "");
  };
  if (!unset("dropout") && model["dropout"].get<double>() != 0.0) fail("{}: model.dropout: BPE dropout is not supported", path);
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (!unset(key)) fail("{}: model.{} is not supported (byte-level BPE has none)", path, key);
  if (model.value("byte_fallback", false)) fail("{}: model.byte_fallback is not supported", path);
  opt.ignore_merges = model.value("ignore_merges", false);
  if (!unset("unk_token")) opt.unk_token = model["unk_token"].get<std::string>();

  if (doc.contains("normalizer") && !doc["normalizer"].is_null())
    fail("{}: normalizer {} is not supported with a BPE model (expected none)", path, show_json(doc["normalizer"]));
  const json pre = doc.value("pre_tokenizer", json());
  if (!pre.is_object() || pre.value("type", std::string()) != "ByteLevel" || !pre.value("use_regex", true))
    fail("{}: pre_tokenizer {} is not supported (expected ByteLevel with use_regex)", path, show_json(pre));
  opt.add_prefix_space = pre.value("add_prefix_space", false);
  const json post = doc.value("post_processor", json());
  if (!post.is_object() || post.value("type", std::string()) != "RobertaProcessing")
    fail("{}: post_processor {} is not supported (expected RobertaProcessing)", path, show_json(post));
  opt.cls_token = post.at("cls").at(0).get<std::string>();
  opt.sep_token = post.at("sep").at(0).get<std::string>();
  opt.trim_offsets = post.value("trim_offsets", true);
  if (post.value("add_prefix_space", opt.add_prefix_space) != opt.add_prefix_space)
    fail("{}: post_processor.add_prefix_space differs from pre_tokenizer.add_prefix_space", path);

  const json added = doc.value("added_tokens", json::array());
  std::vector<std::string> vocab = id_indexed_vocab(model.at("vocab"), added, path);
  opt.lstrip_tokens.clear();
  opt.rstrip_tokens.clear();
  for (const json& a : added) {
    const std::string content = a.at("content").get<std::string>();
    if (a.value("lstrip", false)) opt.lstrip_tokens.push_back(content);
    if (a.value("rstrip", false)) opt.rstrip_tokens.push_back(content);
  }
  std::vector<std::pair<std::string, std::string>> merges;
  const json& listed = model.at("merges");
  if (!listed.is_array()) fail("{}: model.merges must be an array", path);
  merges.reserve(listed.size());
  for (const json& m : listed) merges.push_back(merge_pair(m, path + ": model.merges"));
  try {
    return Tokenizer::byte_level_bpe(std::move(vocab), std::move(merges), std::move(opt));
  } catch (const Error& e) {
    fail("{}: {}", path, e.what());
  }
}

// RoBERTa's slow-tokenizer files: vocab.json (token → id) and merges.txt ("#version" line, then
// one "left right" pair a line).
Tokenizer byte_level_from_files(const std::string& dir) {
  const std::string vocab_path = join_path(dir, "vocab.json"), merges_path = join_path(dir, "merges.txt");
  std::vector<std::string> vocab = id_indexed_vocab(parse_json_file(vocab_path), json(), vocab_path);
  std::vector<std::pair<std::string, std::string>> merges;
  const std::vector<std::string> lines = parse_vocab_lines(read_file(merges_path));
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty() || (i == 0 && lines[i].rfind("#version", 0) == 0)) continue;
    merges.push_back(merge_pair(json(lines[i]), fmt::format("{}: line {}", merges_path, i + 1)));
  }
  TokenizerOptions options = byte_level_options(dir);  // its errors name tokenizer_config.json
  try {
    return Tokenizer::byte_level_bpe(std::move(vocab), std::move(merges), std::move(options));
  } catch (const Error& e) {
    fail("{}: {}", dir, e.what());
  }
}

// A SentencePiece tokenizer: the family from tokenizer_config.json's tokenizer_class (else from the
// model file's name), its special tokens, and the tokens added after the model's pieces (their ids
// from added_tokens_decoder; DeBERTa's [MASK] when the folder says nothing).
Tokenizer sentencepiece_from_dir(const std::string& dir, const std::string& model_path) {
  const std::string config_path = join_path(dir, "tokenizer_config.json");
  const json cfg = file_exists(config_path) ? parse_json_file(config_path) : json::object();
  std::shared_ptr<const spm::Model> model = spm::Model::load(model_path);
  try {
    std::string cls = cfg.value("tokenizer_class", std::string());
    if (cls.size() > 4 && cls.compare(cls.size() - 4, 4, "Fast") == 0) cls.resize(cls.size() - 4);
    if (cls.empty())
      cls = std::filesystem::path(model_path).filename() == "spm.model" ? "DebertaV2Tokenizer" : "XLMRobertaTokenizer";
    SentencePieceLayout layout;
    TokenizerOptions opt;
    if (cls == "XLMRobertaTokenizer") {
      layout = SentencePieceLayout::XlmRoberta;
      opt = TokenizerOptions::roberta();
    } else if (cls == "DebertaV2Tokenizer") {
      layout = SentencePieceLayout::DebertaV2;
      if (cfg.value("do_lower_case", false)) fail("{}: do_lower_case is not supported with DeBERTa's SentencePiece", config_path);
      if (cfg.value("split_by_punct", false)) fail("{}: split_by_punct is not supported", config_path);
    } else {
      fail("{}: tokenizer_class '{}' is not supported with a SentencePiece model (supported: XLMRobertaTokenizer, "
           "DebertaV2Tokenizer)", config_path, one_line(cls));
    }
    opt.cls_token = config_token(cfg, "cls_token", config_token(cfg, "bos_token", opt.cls_token));
    opt.sep_token = config_token(cfg, "sep_token", config_token(cfg, "eos_token", opt.sep_token));
    opt.pad_token = config_token(cfg, "pad_token", opt.pad_token);
    opt.unk_token = config_token(cfg, "unk_token", opt.unk_token);
    opt.mask_token = config_token(cfg, "mask_token", opt.mask_token);
    // XLMRobertaTokenizer's own <mask> (what HF writes when the folder names none): lstrip, normalized.
    if (layout == SentencePieceLayout::XlmRoberta) opt.lstrip_tokens = opt.normalized_tokens = {opt.mask_token};
    // Tokens past the layout's own, in id order; their lstrip / rstrip flags (XLM-R's <mask>).
    const int64_t own = layout == SentencePieceLayout::XlmRoberta ? model->size() + 2 : model->size();
    std::map<int64_t, std::string> added;
    if (cfg.contains("added_tokens_decoder")) {
      const json& decoder = cfg.at("added_tokens_decoder");
      if (!decoder.is_object()) fail("{}: added_tokens_decoder must be an object of id: token", config_path);
      opt.lstrip_tokens.clear();
      opt.normalized_tokens.clear();
      for (const auto& [key, entry] : decoder.items()) {
        if (key.empty() || key.size() > 9 || !std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; }))
          fail("{}: added_tokens_decoder key '{}' is not an id", config_path, one_line(key));
        const int64_t id = std::stoll(key);
        const std::string content = entry.at("content").get<std::string>();
        if (entry.value("lstrip", false)) opt.lstrip_tokens.push_back(content);
        if (entry.value("rstrip", false)) opt.rstrip_tokens.push_back(content);
        if (entry.value("normalized", false)) opt.normalized_tokens.push_back(content);
        if (id >= own) added[id] = content;
      }
    } else if (file_exists(join_path(dir, "added_tokens.json"))) {  // what transformers < 4.34 wrote
      const std::string added_path = join_path(dir, "added_tokens.json");
      const json entries = parse_json_file(added_path);
      if (!entries.is_object()) fail("{}: must be an object of token: id", added_path);
      for (const auto& [token, id] : entries.items()) {
        if (!id.is_number_integer()) fail("{}: the id of '{}' must be an integer", added_path, one_line(token));
        if (id.get<int64_t>() >= own) added[id.get<int64_t>()] = token;
      }
    } else if (layout == SentencePieceLayout::DebertaV2 && model->size() > 0) {
      bool has_mask = false;
      for (int i = 0; i < model->size() && !has_mask; ++i) has_mask = model->piece(i) == opt.mask_token;
      if (!has_mask) added[own] = opt.mask_token;  // DebertaV2Tokenizer adds its mask token after the pieces
    }
    std::vector<std::string> extra;
    for (const auto& [id, content] : added) {
      if (id != own + static_cast<int64_t>(extra.size()))
        fail("{}: added token '{}' has id {}, expected {} (ids follow the model's {} pieces without gaps)", config_path,
             one_line(content), id, own + static_cast<int64_t>(extra.size()), own);
      extra.push_back(content);
    }
    return Tokenizer::sentencepiece(std::move(model), layout, std::move(opt), extra);
  } catch (const json::exception& e) {
    fail("{}: {}", config_path, one_line(e.what()));
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.rfind(config_path, 0) == 0) throw;
    fail("{}: {}", dir, what);
  }
}

}  // namespace

Tokenizer Tokenizer::from_tokenizer_json(const std::string& path) {
  const json doc = parse_json_file(path);
  std::vector<std::string> vocab;
  TokenizerOptions opt;
  try {
    if (!doc.is_object() || !doc.contains("model"))
      fail("{}: not a Hugging Face tokenizer.json (no field 'model'; RoBERTa's vocab.json goes with "
           "merges.txt: give their folder)", path);
    const json& model = doc.at("model");
    // HF's conversion of a SentencePiece model (Unigram, or BPE split at "▁" by Metaspace): read the
    // model itself, from beside it.
    const json splitter = doc.value("pre_tokenizer", json());
    const bool metaspace = splitter.is_object() && splitter.dump().find("\"Metaspace\"") != std::string::npos;
    if (model.contains("type") && model["type"] == "BPE" && !metaspace) return byte_level_from_tokenizer_json(doc, path);
    if (model.contains("type") && (model["type"] == "Unigram" || model["type"] == "BPE")) {
      const std::string dir = std::filesystem::path(path).has_parent_path() ? std::filesystem::path(path).parent_path().string() : ".";
      const std::string spm_path = sentencepiece_file(dir);
      if (spm_path.empty())
        fail("{}: a {} tokenizer.json converted from SentencePiece is read through its SentencePiece model, which "
             "is not beside it (sentencepiece.bpe.model or spm.model)", path, model["type"].get<std::string>());
      return sentencepiece_from_dir(dir, spm_path);
    }
    if (model.contains("type") && model["type"] != "WordPiece")
      fail("{}: model.type is {}, only WordPiece, BPE and Unigram (with its SentencePiece model) are supported", path,
           show_json(model["type"]));
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
           show_json(pre));
  } catch (const json::exception& e) {
    fail("{}: {}", path, one_line(e.what()));
  }
  return build(std::move(vocab), std::move(opt), path);
}

Tokenizer Tokenizer::from_dir(const std::string& model_dir) { return from_folder(resolve_model_folder(model_dir)); }

Tokenizer Tokenizer::from_folder(const ModelFolder& folder) {
  const std::string& dir = folder.files;
  switch (folder.tokenizer) {
    case TokenizerFiles::sentencepiece: return sentencepiece_from_dir(dir, folder.tokenizer_path);
    case TokenizerFiles::tokenizer_json: return from_tokenizer_json(folder.tokenizer_path);
    case TokenizerFiles::vocab_json_merges: return byte_level_from_files(dir);
    case TokenizerFiles::vocab_txt: break;
    case TokenizerFiles::none:
      fail("{}: no tokenizer found (sentencepiece.bpe.model, spm.model, tokenizer.json, vocab.txt, or vocab.json with "
           "merges.txt)", dir);
  }
  const std::string& vocab_txt = folder.tokenizer_path;

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

Tokenizer Tokenizer::from_path(const std::string& path) {
  if (dir_exists(path)) return from_dir(path);
  // RoBERTa's pair of files: either names the two in its folder
  const std::filesystem::path file(path);
  if (file.filename() == "vocab.json" || file.filename() == "merges.txt") {
    const std::string dir = file.has_parent_path() ? file.parent_path().string() : ".";
    if (!file_exists(path)) fail("{}: no such file", path);
    if (!file_exists(join_path(dir, "vocab.json")) || !file_exists(join_path(dir, "merges.txt")))
      fail("{}: byte-level BPE needs vocab.json and merges.txt side by side", path);
    return byte_level_from_files(dir);
  }
  if (file.extension() == ".model") {
    if (!file_exists(path)) fail("{}: no such file", path);
    return sentencepiece_from_dir(file.has_parent_path() ? file.parent_path().string() : ".", path);
  }
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) return from_tokenizer_json(path);
  return from_vocab_file(path);
}

std::vector<int64_t> Tokenizer::ordinary_ids() const {
  std::vector<int64_t> ids;
  for (size_t i = 0; i < vocab_.size(); ++i) {
    const std::string& t = vocab_[i];
    const int64_t id = static_cast<int64_t>(i);
    if (is_structural(id) || id == mask_id_ || id == unk_id_) continue;
    if (t.size() > 2 && t.front() == '[' && t.back() == ']') continue;
    ids.push_back(id);
  }
  return ids;
}

Encoding Tokenizer::tokenize_byte_level(const std::string& text) const {
  Encoding enc;
  int64_t word = 0;
  std::string bytes;                              // the word's bytes (a prefixed space first)
  std::vector<std::pair<size_t, size_t>> spans;   // each byte's character in the text
  std::vector<byte_level::Symbol> symbols;
  auto on_special = [&](const Special& sp, size_t begin, size_t end) {
    push_token(enc, sp.id, vocab_[static_cast<size_t>(sp.id)], begin, end, word++, 0);
  };
  auto on_segment = [&](size_t seg_begin, size_t seg_end) {
    for (const byte_level::Word& w : byte_level::split(text, seg_begin, seg_end, options_.add_prefix_space)) {
      bytes.clear();
      spans.clear();
      const auto* raw = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
      for (size_t i = w.begin; i < w.end;) {
        utf8proc_int32_t cp;
        const auto n = utf8proc_iterate(raw + i, static_cast<utf8proc_ssize_t>(w.end - i), &cp);
        const size_t len = n > 0 ? static_cast<size_t>(n) : 1;
        if (w.prefixed && i == w.begin) {  // the added space takes the first character's offsets
          bytes += ' ';
          spans.emplace_back(i, i + len);
        }
        bytes.append(text, i, len);
        spans.insert(spans.end(), len, {i, i + len});
        i += len;
      }
      symbols.clear();
      std::string whole;
      for (size_t k = 0; k < bytes.size(); ++k) {
        const std::string& c = byte_level::byte_char(static_cast<unsigned char>(bytes[k]));
        symbols.push_back({c, k, k});
        whole += c;
      }
      if (options_.ignore_merges && index_.count(whole)) {
        symbols.assign(1, {whole, 0, bytes.size() - 1});
      } else {
        byte_level::merge(symbols, merge_rank_);
      }
      for (const byte_level::Symbol& sym : symbols) {
        auto it = index_.find(sym.text);
        int64_t id = it != index_.end() ? it->second : unk_id_;
        if (id < 0) continue;  // no such token and no unknown token: tokenizers drops it too
        size_t begin = spans[sym.first].first, end = spans[sym.last].second;
        if (options_.trim_offsets) {
          // tokenizers' ByteLevel::process_offsets: spaces at either end leave the range, one
          // character each. Counted through the spans, as tokenizers counts characters: the
          // prefixed space stands for the word's first character, however many bytes it has.
          size_t lead = 0, trail = 0;
          while (sym.first + lead <= sym.last && bytes[sym.first + lead] == ' ') ++lead;
          while (trail < sym.last - sym.first + 1 && bytes[sym.last - trail] == ' ') ++trail;
          if (lead > 0) {
            const bool first = enc.ids.empty() || begin == 0;
            if (!(first && options_.add_prefix_space && lead == 1))
              begin = std::min(spans[sym.first + lead - 1].second, end);
          }
          if (trail > 0) end = std::max(spans[sym.last - trail + 1].first, begin);
        }
        push_token(enc, id, vocab_[static_cast<size_t>(id)], begin, end, word, 0);
      }
      ++word;
    }
  };
  for_each_segment(text, special_tokens(*this), on_special, on_segment);
  return enc;
}

Encoding Tokenizer::tokenize_sentencepiece(const std::string& text) const {
  // The text's parts in order: special tokens (with the range they report) and the segments
  // between them. A segment's edge that borders a special token HF matches in normalized text is
  // not stripped (HF normalizes the two together), so each segment needs its neighbours.
  struct Part {
    const Special* special;  // null: a segment
    size_t begin, end;
  };
  std::vector<Part> parts;
  const std::vector<Special> specials = special_tokens(*this);
  for_each_segment(
      text, specials, [&](const Special& sp, size_t begin, size_t end) { parts.push_back({&sp, begin, end}); },
      [&](size_t begin, size_t end) { parts.push_back({nullptr, begin, end}); });
  Encoding enc;
  int64_t next_word = 0, word = -1;
  std::vector<spm::Piece> pieces;
  for (size_t k = 0; k < parts.size(); ++k) {
    const Part& part = parts[k];
    if (part.special) {
      push_token(enc, part.special->id, vocab_[static_cast<size_t>(part.special->id)], part.begin, part.end,
                 next_word++, 0);
      word = -1;
      continue;
    }
    const bool after_normalized = k > 0 && parts[k - 1].special->normalized;
    const bool before_normalized = k + 1 < parts.size() && parts[k + 1].special->normalized;
    spm_->encode(text, part.begin, part.end, layout_ == SentencePieceLayout::XlmRoberta || after_normalized,
                 before_normalized, pieces);
    for (const spm::Piece& p : pieces) {
      if (p.starts_word || word < 0) word = next_word++;
      const int64_t id = spm_ids_[static_cast<size_t>(p.spm_id)];
      push_token(enc, id, vocab_[static_cast<size_t>(id)], p.begin, p.end, word, 0);
    }
  }
  return enc;
}

bool Tokenizer::roberta_framing() const {
  return model_ == TokenizerModel::ByteLevelBpe ||
         (model_ == TokenizerModel::SentencePiece && layout_ == SentencePieceLayout::XlmRoberta);
}

Encoding Tokenizer::tokenize(const std::string& text) const {
  if (model_ == TokenizerModel::ByteLevelBpe) return tokenize_byte_level(text);
  if (model_ == TokenizerModel::SentencePiece) return tokenize_sentencepiece(text);
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

std::vector<std::pair<std::string, std::pair<size_t, size_t>>> Tokenizer::pre_tokenize(
    const std::string& text) const {
  std::vector<std::pair<std::string, std::pair<size_t, size_t>>> words;
  if (model_ == TokenizerModel::SentencePiece) {  // the words of Metaspace's split: each "▁" starts one
    const Encoding enc = tokenize_sentencepiece(text);
    for (size_t i = 0; i < enc.ids.size(); ++i) {
      if (i == 0 || enc.word_ids[i] != enc.word_ids[i - 1]) words.push_back({"", enc.offsets[i]});
      words.back().first += enc.tokens[i];
      words.back().second.second = enc.offsets[i].second;
    }
    return words;
  }
  if (model_ == TokenizerModel::ByteLevelBpe) {
    for_each_segment(
        text, special_tokens(*this),
        [&](const Special& sp, size_t begin, size_t end) { words.push_back({std::string(sp.text), {begin, end}}); },
        [&](size_t begin, size_t end) {
          for (const byte_level::Word& w : byte_level::split(text, begin, end, options_.add_prefix_space))
            words.push_back({(w.prefixed ? " " : "") + text.substr(w.begin, w.end - w.begin), {w.begin, w.end}});
        });
    return words;
  }
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

Encoding Tokenizer::encode(const std::string& text, const std::optional<std::string>& pair,
                                    int max_length, Truncation truncation) const {
  Encoding a = tokenize(text);
  std::optional<Encoding> b;
  if (pair) b = tokenize(*pair);
  const bool truncated = truncate_pair(a, b ? &*b : nullptr, max_length, truncation, special_tokens_count(b.has_value()));
  Encoding out = frame(a, b ? &*b : nullptr);
  out.truncated = truncated;
  return out;
}

size_t Tokenizer::special_tokens_count(bool pair) const { return pair ? (roberta_framing() ? 4 : 3) : 2; }

Encoding Tokenizer::frame(const Encoding& a, const Encoding* b) const {
  // RoBERTa (RobertaProcessing) and XLM-R: <s> A </s> </s> B </s>, type ids 0 throughout
  const bool roberta = roberta_framing();
  Encoding out;
  const size_t total = a.ids.size() + (b ? b->ids.size() : 0) + special_tokens_count(b != nullptr);
  out.ids.reserve(total);
  out.tokens.reserve(total);
  out.type_ids.reserve(total);
  out.offsets.reserve(total);
  out.word_ids.reserve(total);
  push_token(out, cls_id_, options_.cls_token, 0, 0, -1, 0);
  append_encoding(out, a, 0);
  push_token(out, sep_id_, options_.sep_token, 0, 0, -1, 0);
  if (b) {
    const int64_t type = roberta ? 0 : 1;
    if (roberta) push_token(out, sep_id_, options_.sep_token, 0, 0, -1, type);
    append_encoding(out, *b, type);
    push_token(out, sep_id_, options_.sep_token, 0, 0, -1, type);
  }
  return out;
}

int64_t Tokenizer::token_to_id(const std::string& token) const {
  auto it = index_.find(token);
  return it == index_.end() ? unk_id_ : it->second;
}

const std::string& Tokenizer::id_to_token(int64_t id) const {
  if (id < 0 || id >= static_cast<int64_t>(vocab_.size()))
    fail("token id {} is out of range (vocabulary size {})", id, vocab_.size());
  return vocab_[static_cast<size_t>(id)];
}

bool Tokenizer::has_token(const std::string& token) const {
  return index_.count(token) > 0;
}

bool Tokenizer::is_structural(int64_t id) const {
  return id >= 0 && (id == cls_id_ || id == sep_id_ || id == pad_id_);
}

bool Tokenizer::continues_word(const std::string& token) const {
  if (model_ == TokenizerModel::SentencePiece)  // special tokens in the text start words of their own
    return token.compare(0, 3, spm::kSpace) != 0 && !is_special_name(options_, token);
  if (model_ == TokenizerModel::ByteLevelBpe) {
    const std::string bytes = byte_level::decode(token);
    return !bytes.empty() && !is_ascii_whitespace(bytes[0]);
  }
  const std::string& prefix = options_.continuing_subword_prefix;
  return !prefix.empty() && token.compare(0, prefix.size(), prefix) == 0;
}

std::string Tokenizer::word_text(const std::string& token) const {
  if (model_ == TokenizerModel::SentencePiece) return continues_word(token) ? token : token.substr(3);
  if (model_ == TokenizerModel::ByteLevelBpe) {
    if (is_special_name(options_, token)) return token;
    const std::string bytes = byte_level::decode(token);
    const auto start = std::find_if_not(bytes.begin(), bytes.end(), is_ascii_whitespace);
    return start == bytes.end() ? bytes : std::string(start, bytes.end());
  }
  return continues_word(token) ? token.substr(options_.continuing_subword_prefix.size()) : token;
}

void Tokenizer::save(const std::string& dir) const {
  make_dirs(dir);
  const TokenizerOptions& o = options_;
  json special = {{"unk_token", o.unk_token}, {"sep_token", o.sep_token}, {"pad_token", o.pad_token},
                  {"cls_token", o.cls_token}, {"mask_token", o.mask_token}};
  json cfg;
  if (model_ == TokenizerModel::WordPiece) {
    save_vocab(join_path(dir, "vocab.txt"));
    cfg = {{"tokenizer_class", "BertTokenizer"},
           {"do_lower_case", o.lowercase},
           {"tokenize_chinese_chars", o.tokenize_chinese_chars}};
    cfg["strip_accents"] = o.strip_accents ? json(*o.strip_accents) : json(nullptr);
  } else if (model_ == TokenizerModel::SentencePiece) {
    const bool xlmr = layout_ == SentencePieceLayout::XlmRoberta;
    special["bos_token"] = o.cls_token;
    special["eos_token"] = o.sep_token;
    write_file_atomic(join_path(dir, xlmr ? "sentencepiece.bpe.model" : "spm.model"), spm_->serialized());
    cfg = {{"tokenizer_class", xlmr ? "XLMRobertaTokenizer" : "DebertaV2Tokenizer"}};
    if (!xlmr) cfg.update({{"do_lower_case", false}, {"split_by_punct", false}});
    json decoder = json::object();
    auto add = [&](const std::string& t, bool special) {
      decoder[std::to_string(token_to_id(t))] = {{"content", t}, {"lstrip", listed(o.lstrip_tokens, t)},
                                                 {"rstrip", listed(o.rstrip_tokens, t)},
                                                 {"normalized", listed(o.normalized_tokens, t)},
                                                 {"single_word", false}, {"special", special}};
    };
    for (const std::string* t : {&o.cls_token, &o.pad_token, &o.sep_token, &o.unk_token, &o.mask_token})
      if (has_token(*t)) add(*t, true);
    // every token after the layout's own (the model's pieces; XLM-R's fairseq four and <mask>)
    const size_t own = static_cast<size_t>(xlmr ? spm_->size() + 2 : spm_->size());
    for (size_t i = own; i < vocab_.size(); ++i)
      if (!decoder.contains(std::to_string(i))) add(vocab_[i], false);
    cfg["added_tokens_decoder"] = std::move(decoder);
  } else {
    special["bos_token"] = o.cls_token;
    special["eos_token"] = o.sep_token;
    json added = json::array(), entries = json::object(), merges = json::array();
    for (const std::string* t : {&o.cls_token, &o.pad_token, &o.sep_token, &o.unk_token, &o.mask_token})
      if (has_token(*t))
        added.push_back({{"id", token_to_id(*t)}, {"content", *t}, {"single_word", false},
                         {"lstrip", listed(o.lstrip_tokens, *t)}, {"rstrip", listed(o.rstrip_tokens, *t)},
                         {"normalized", false}, {"special", true}});
    std::stable_sort(added.begin(), added.end(), [](const json& a, const json& b) { return a["id"] < b["id"]; });
    for (size_t i = 0; i < vocab_.size(); ++i) entries[vocab_[i]] = static_cast<int64_t>(i);
    for (const auto& [left, right] : merges_) merges.push_back(left + " " + right);
    json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", o.add_prefix_space},
                       {"trim_offsets", true}, {"use_regex", true}};
    json model = {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", has_token(o.unk_token) ? json(o.unk_token) : json(nullptr)},
                  {"continuing_subword_prefix", ""}, {"end_of_word_suffix", ""}, {"fuse_unk", false},
                  {"byte_fallback", false}, {"vocab", std::move(entries)}, {"merges", std::move(merges)}};
    if (o.ignore_merges) model["ignore_merges"] = true;
    const json doc = {{"version", "1.0"}, {"truncation", nullptr}, {"padding", nullptr},
                      {"added_tokens", std::move(added)}, {"normalizer", nullptr}, {"pre_tokenizer", byte_level},
                      {"post_processor", {{"type", "RobertaProcessing"}, {"sep", {o.sep_token, sep_id_}},
                                          {"cls", {o.cls_token, cls_id_}}, {"trim_offsets", o.trim_offsets},
                                          {"add_prefix_space", o.add_prefix_space}}},
                      {"decoder", byte_level}, {"model", std::move(model)}};
    write_file_atomic(join_path(dir, "tokenizer.json"), doc.dump() + "\n");
    cfg = {{"tokenizer_class", "RobertaTokenizer"}, {"add_prefix_space", o.add_prefix_space},
           {"trim_offsets", o.trim_offsets}, {"bos_token", o.cls_token}, {"eos_token", o.sep_token}};
  }
  for (const auto& [key, value] : special.items()) cfg[key] = value;
  write_file_atomic(join_path(dir, "tokenizer_config.json"), cfg.dump(2) + "\n");
  write_file_atomic(join_path(dir, "special_tokens_map.json"), special.dump(2) + "\n");
}

void Tokenizer::save_vocab(const std::string& path) const {
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
