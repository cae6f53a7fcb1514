#include "text/tokenizer.h"

#include <algorithm>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_util.h"
#include "text/byte_level_bpe.h"
#include "util/error.h"
#include "util/io.h"

namespace {

using salient::Encoding;
using salient::Truncation;
using salient::Tokenizer;

const std::string kBertDir = "data/bert_base_uncased_tokenizer";

std::string bert_file(const std::string& name) {
  return salient::test::shared_path(kBertDir + "/" + name);
}

// A fresh scratch directory under $TMPDIR (or /tmp), removed when the test ends.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/salient_tok_XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return salient::join_path(path_, name); }

 private:
  std::string path_;
};

const Tokenizer& bert() {
  static const Tokenizer tok = Tokenizer::from_tokenizer_json(bert_file("tokenizer.json"));
  return tok;
}

// A small vocabulary for exact, hand-checkable expectations.
Tokenizer small(salient::TokenizerOptions opt = {}) {
  return Tokenizer({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", ",", "!",
                             "un", "##aff", "##able", "a", "##b", "cafe", "café", "中", "文", "the",
                             "cat", "sat", "on", "mat", "dog", "ran", "x"},
                            std::move(opt));
}

std::string slice(const std::string& text, const std::pair<size_t, size_t>& off) {
  return text.substr(off.first, off.second - off.first);
}

// Encodes every fixture line and compares ids (and tokens); returns mismatches, fails on < 1 line.
size_t fixture_mismatches(const Tokenizer& tok, size_t& lines, std::string& examples) {
  const std::string path = salient::test::shared_path("fixtures/tokenizer/bert-base-uncased.jsonl");
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::string line;
  size_t mismatches = 0, shown = 0;
  lines = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    ++lines;
    auto rec = salient::parse_json_line(line, path, lines);
    const auto text = rec.at("text").get<std::string>();
    const auto ids = rec.at("ids").get<std::vector<int64_t>>();
    const auto tokens = rec.at("tokens").get<std::vector<std::string>>();
    Encoding enc = tok.encode(text);
    if (enc.ids == ids && enc.tokens == tokens) continue;
    ++mismatches;
    if (shown++ < 5) {
      std::ostringstream os;
      os << "  line " << lines << ": " << nlohmann::json(text).dump() << "\n    expected "
         << nlohmann::json(tokens).dump() << "\n    got      " << nlohmann::json(enc.tokens).dump()
         << "\n";
      examples += os.str();
    }
  }
  return mismatches;
}

void expect_fixture_parity(const Tokenizer& tok) {
  size_t lines = 0;
  std::string examples;
  size_t mismatches = fixture_mismatches(tok, lines, examples);
  EXPECT_EQ(lines, 1819u);
  EXPECT_EQ(mismatches, 0u) << mismatches << " of " << lines << " lines differ:\n" << examples;
}

TEST(TokenizerFixture, TokenizerJsonMatchesEveryLine) {
  SALIENT_REQUIRE_SHARED(bert_file("tokenizer.json"));
  expect_fixture_parity(bert());
}

TEST(TokenizerFixture, VocabTxtWithConfigMatchesEveryLine) {
  SALIENT_REQUIRE_SHARED(bert_file("vocab.txt"));
  // A directory without tokenizer.json makes from_dir take the vocab.txt + tokenizer_config.json path.
  TempDir dir;
  for (const char* name : {"vocab.txt", "tokenizer_config.json"})
    salient::write_file_atomic(dir.file(name), salient::read_file(bert_file(name)));
  Tokenizer tok = Tokenizer::from_dir(dir.path());
  EXPECT_TRUE(tok.options().lowercase);
  EXPECT_EQ(tok.vocab_size(), 30522u);
  expect_fixture_parity(tok);
}

TEST(TokenizerFixture, LoadersAgree) {
  SALIENT_REQUIRE_SHARED(bert_file("vocab.txt"));
  Tokenizer from_txt = Tokenizer::from_vocab_file(bert_file("vocab.txt"));
  Tokenizer from_dir = Tokenizer::from_dir(salient::test::shared_path(kBertDir));
  EXPECT_EQ(from_txt.vocab(), bert().vocab());
  EXPECT_EQ(from_dir.vocab(), bert().vocab());
  EXPECT_EQ(bert().cls_id(), 101);
  EXPECT_EQ(bert().sep_id(), 102);
  EXPECT_EQ(bert().pad_id(), 0);
  EXPECT_EQ(bert().unk_id(), 100);
  EXPECT_EQ(bert().mask_id(), 103);
  EXPECT_EQ(bert().options().max_input_chars_per_word, 100);
  EXPECT_FALSE(bert().options().strip_accents.has_value());
}

TEST(Tokenizer, OffsetsSliceTheOriginalText) {
  SALIENT_REQUIRE_SHARED(bert_file("tokenizer.json"));
  const std::string text = "Héllo, world!";
  Encoding enc = bert().tokenize(text);
  ASSERT_EQ(enc.tokens, (std::vector<std::string>{"hello", ",", "world", "!"}));
  std::vector<std::string> slices;
  for (const auto& off : enc.offsets) slices.push_back(slice(text, off));
  EXPECT_EQ(slices, (std::vector<std::string>{"Héllo", ",", "world", "!"}));
}

TEST(Tokenizer, SubwordOffsetsAfterRemovedAndInsertedCharacters) {
  SALIENT_REQUIRE_SHARED(bert_file("tokenizer.json"));
  // Soft hyphen (Cf) is removed, CJK gets spaces, the accent is decomposed away: offsets must
  // still point into the original bytes.
  const std::string text = "mid\u00addle  東京 Tab\ts";
  Encoding enc = bert().tokenize(text);
  ASSERT_EQ(enc.tokens, (std::vector<std::string>{"middle", "東", "京", "tab", "s"}));
  std::vector<std::string> slices;
  for (const auto& off : enc.offsets) slices.push_back(slice(text, off));
  EXPECT_EQ(slices, (std::vector<std::string>{"mid\u00addle", "東", "京", "Tab", "s"}));

  const std::string pieces = "Supercalifragilistic";
  Encoding sub = bert().tokenize(pieces);
  ASSERT_GT(sub.tokens.size(), 1u);
  std::string joined;
  for (size_t i = 0; i < sub.tokens.size(); ++i) {
    std::string piece = sub.tokens[i].rfind("##", 0) == 0 ? sub.tokens[i].substr(2) : sub.tokens[i];
    std::string original = slice(pieces, sub.offsets[i]);
    for (char& c : original) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(original, piece);
    if (i > 0) {
      EXPECT_EQ(sub.offsets[i].first, sub.offsets[i - 1].second);
    }
    joined += piece;
  }
  EXPECT_EQ(joined, "supercalifragilistic");
}

TEST(Tokenizer, AccentsCaseAndCombiningMarks) {
  // Precomposed and decomposed accents, upper case: all reach "cafe" with the default options.
  auto tok = small();
  EXPECT_EQ(tok.tokenize("CAFÉ").tokens, std::vector<std::string>{"cafe"});
  EXPECT_EQ(tok.tokenize("cafe\u0301").tokens, std::vector<std::string>{"cafe"});
  // As in HF, a removed combining mark leaves the offsets (it follows the kept "e")...
  EXPECT_EQ(tok.tokenize("cafe\u0301").offsets[0], (std::pair<size_t, size_t>{0, 4}));
  // ...while a precomposed "é" is one original character and stays covered.
  EXPECT_EQ(tok.tokenize("café").offsets[0], (std::pair<size_t, size_t>{0, 5}));

  salient::TokenizerOptions keep;
  keep.strip_accents = false;  // lowercase only
  EXPECT_EQ(small(keep).tokenize("CAFÉ").tokens, std::vector<std::string>{"café"});

  salient::TokenizerOptions cased;
  cased.lowercase = false;  // strip_accents unset: follows lowercase, so accents stay
  EXPECT_EQ(small(cased).tokenize("café cafe").tokens, (std::vector<std::string>{"café", "cafe"}));
  EXPECT_EQ(small(cased).tokenize("Cafe").tokens, std::vector<std::string>{"[UNK]"});
}

TEST(Tokenizer, BertUnicodeEdgeCases) {
  SALIENT_REQUIRE_SHARED(bert_file("tokenizer.json"));
  auto tokens = [](const std::string& t) { return bert().tokenize(t).tokens; };
  EXPECT_EQ(tokens("ÀÉÎÕÜ ß"), (std::vector<std::string>{"ae", "##io", "##u", "ß"}));
  // Turkish dotted capital I: full lowercase gives i + U+0307, which strip_accents removes.
  EXPECT_EQ(tokens("\u0130stanbul"), std::vector<std::string>{"istanbul"});
  // Zero-width space and RLM are format characters: removed, so the words join.
  EXPECT_EQ(tokens("zero\u200bwidth"), tokens("zerowidth"));
  // Non-breaking and ideographic spaces split words; U+2028 line separator too.
  EXPECT_EQ(tokens("hello\u00a0world\u3000again\u2028x"), tokens("hello world again x"));
  // Curly quotes and « » are Unicode punctuation: each its own word.
  EXPECT_EQ(tokens("\u201csmart\u201d"), (std::vector<std::string>{"\u201c", "smart", "\u201d"}));
  // Emoji is neither punctuation nor in the vocabulary.
  EXPECT_EQ(tokens("ok\xF0\x9F\x98\x80"), (std::vector<std::string>{"[UNK]"}));
  EXPECT_EQ(tokens("ok \xF0\x9F\x98\x80"), (std::vector<std::string>{"ok", "[UNK]"}));
}

TEST(Tokenizer, ChineseCharactersAreSeparateWords) {
  auto tok = small();
  Encoding enc = tok.tokenize("中文");
  EXPECT_EQ(enc.tokens, (std::vector<std::string>{"中", "文"}));
  EXPECT_EQ(enc.word_ids, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(enc.offsets[1], (std::pair<size_t, size_t>{3, 6}));

  salient::TokenizerOptions no_cjk;
  no_cjk.tokenize_chinese_chars = false;
  // One word "中文": "中" matches but "##文" does not, so the word is unknown.
  EXPECT_EQ(small(no_cjk).tokenize("中文").tokens, std::vector<std::string>{"[UNK]"});
}

TEST(Tokenizer, ControlCharactersAndWhitespace) {
  auto tok = small();
  // NUL, U+FFFD, BEL and soft hyphen vanish without splitting; tab/newline/CR become spaces.
  std::string text = std::string("hel") + '\0' + "lo\xEF\xBF\xBD\a\u00ad\tworld\r\n!";
  Encoding enc = tok.tokenize(text);
  EXPECT_EQ(enc.tokens, (std::vector<std::string>{"hello", "world", "!"}));
  EXPECT_EQ(slice(text, enc.offsets[0]), text.substr(0, 6));

  salient::TokenizerOptions raw;
  raw.clean_text = false;  // controls survive and make the word unknown
  EXPECT_EQ(tok.tokenize("hello\a").tokens, std::vector<std::string>{"hello"});
  EXPECT_EQ(small(raw).tokenize("hello\a").tokens, std::vector<std::string>{"[UNK]"});
  // Invalid UTF-8 is read as U+FFFD, which clean_text removes.
  EXPECT_EQ(tok.tokenize("hel\xFFlo").tokens, std::vector<std::string>{"hello"});
  EXPECT_TRUE(tok.tokenize(" \t\n ").ids.empty());
}

TEST(Tokenizer, SpecialTokensAreNeverSplit) {
  SALIENT_REQUIRE_SHARED(bert_file("tokenizer.json"));
  const std::string text = "Hello [SEP] world[MASK]![UNK] [PAD]";
  Encoding enc = bert().tokenize(text);
  EXPECT_EQ(enc.tokens, (std::vector<std::string>{"hello", "[SEP]", "world", "[MASK]", "!", "[UNK]", "[PAD]"}));
  EXPECT_EQ(enc.ids, (std::vector<int64_t>{7592, 102, 2088, 103, 999, 100, 0}));
  EXPECT_EQ(slice(text, enc.offsets[3]), "[MASK]");
  EXPECT_EQ(enc.word_ids, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
  // Matching is on the raw text: a lowercase look-alike is ordinary text.
  EXPECT_EQ(bert().tokenize("[cls]").tokens, (std::vector<std::string>{"[", "cl", "##s", "]"}));
  EXPECT_EQ(bert().encode("a [CLS] b").ids, (std::vector<int64_t>{101, 1037, 101, 1038, 102}));
}

TEST(Tokenizer, WordLongerThanMaxInputCharsIsUnknown) {
  SALIENT_REQUIRE_SHARED(bert_file("tokenizer.json"));
  EXPECT_EQ(bert().tokenize(std::string(101, 'a')).tokens, std::vector<std::string>{"[UNK]"});
  EXPECT_NE(bert().tokenize(std::string(100, 'a')).tokens, std::vector<std::string>{"[UNK]"});
  // The limit counts characters, not bytes: 60 two-byte characters are fine, 101 are not.
  std::string u60, u101;
  for (int i = 0; i < 60; ++i) u60 += "\u00fc";
  for (int i = 0; i < 101; ++i) u101 += "\u00fc";
  EXPECT_NE(bert().tokenize(u60).tokens, std::vector<std::string>{"[UNK]"});
  Encoding unk = bert().tokenize(u101 + " x");
  EXPECT_EQ(unk.tokens, (std::vector<std::string>{"[UNK]", "x"}));
  EXPECT_EQ(unk.offsets[0], (std::pair<size_t, size_t>{0, 202}));
  // An unsplittable word is one [UNK] covering the whole word.
  Encoding bad = small().tokenize("hello zzz");
  EXPECT_EQ(bad.tokens, (std::vector<std::string>{"hello", "[UNK]"}));
  EXPECT_EQ(bad.offsets[1], (std::pair<size_t, size_t>{6, 9}));
}

TEST(Tokenizer, GreedyLongestMatchFirst) {
  Encoding enc = small().tokenize("unaffable ab");
  EXPECT_EQ(enc.tokens, (std::vector<std::string>{"un", "##aff", "##able", "a", "##b"}));
  EXPECT_EQ(enc.ids, (std::vector<int64_t>{9, 10, 11, 12, 13}));
  EXPECT_EQ(enc.word_ids, (std::vector<int64_t>{0, 0, 0, 1, 1}));
  EXPECT_EQ(enc.offsets[1], (std::pair<size_t, size_t>{2, 5}));
}

TEST(Tokenizer, SentencePairLayout) {
  auto tok = small();
  Encoding enc = tok.encode("hello world", std::string("cat, dog!"));
  EXPECT_EQ(enc.tokens,
            (std::vector<std::string>{"[CLS]", "hello", "world", "[SEP]", "cat", ",", "dog", "!", "[SEP]"}));
  EXPECT_EQ(enc.type_ids, (std::vector<int64_t>{0, 0, 0, 0, 1, 1, 1, 1, 1}));
  EXPECT_EQ(enc.word_ids, (std::vector<int64_t>{-1, 0, 1, -1, 0, 1, 2, 3, -1}));
  EXPECT_EQ(enc.offsets[0], (std::pair<size_t, size_t>{0, 0}));
  EXPECT_EQ(enc.offsets[4], (std::pair<size_t, size_t>{0, 3}));  // into the second text
  EXPECT_EQ(enc.offsets[6], (std::pair<size_t, size_t>{5, 8}));
  EXPECT_FALSE(enc.truncated);
  EXPECT_TRUE(tok.is_structural(enc.ids[0]));
  EXPECT_FALSE(tok.is_structural(enc.ids[1]));
  EXPECT_TRUE(tok.is_structural(tok.sep_id()));
  EXPECT_TRUE(tok.is_structural(tok.pad_id()));
  // [UNK] and [MASK] in an input are content: explained and perturbed like any token.
  EXPECT_FALSE(tok.is_structural(tok.unk_id()));
  EXPECT_FALSE(tok.is_structural(tok.mask_id()));

  Encoding single = tok.encode("");
  EXPECT_EQ(single.tokens, (std::vector<std::string>{"[CLS]", "[SEP]"}));
}

TEST(Tokenizer, TruncationLongestFirst) {
  auto tok = small();
  const std::string six = "the cat sat on the mat", two = "dog ran";
  Encoding single = tok.encode(six, std::nullopt, 5);
  EXPECT_EQ(single.tokens, (std::vector<std::string>{"[CLS]", "the", "cat", "sat", "[SEP]"}));
  EXPECT_TRUE(single.truncated);

  // The longer sequence absorbs the whole cut while the shorter fits.
  Encoding pair = tok.encode(six, two, 9);
  EXPECT_EQ(pair.tokens, (std::vector<std::string>{"[CLS]", "the", "cat", "sat", "on", "[SEP]", "dog", "ran", "[SEP]"}));
  EXPECT_TRUE(pair.truncated);
  // Both too long: halves, the longer one keeps the odd token.
  Encoding both = tok.encode(six, std::string("dog ran x x"), 8);
  EXPECT_EQ(both.tokens, (std::vector<std::string>{"[CLS]", "the", "cat", "sat", "[SEP]", "dog", "ran", "[SEP]"}));
  // Equal lengths: the second sequence keeps the odd token (HF tokenizers).
  Encoding tie = tok.encode("the cat sat", std::string("dog ran x"), 6);
  EXPECT_EQ(tie.tokens, (std::vector<std::string>{"[CLS]", "the", "[SEP]", "dog", "ran", "[SEP]"}));

  Encoding fits = tok.encode(six, two, 11);
  EXPECT_FALSE(fits.truncated);
  EXPECT_EQ(fits.ids.size(), 11u);
  EXPECT_THROW(tok.encode(six, two, 2), salient::Error);  // cannot hold [CLS] [SEP] [SEP]
}

TEST(Tokenizer, TruncationOnlyFirstOnlySecondAndNone) {
  auto tok = small();
  const std::string six = "the cat sat on the mat", two = "dog ran";
  Encoding first = tok.encode(six, two, 8, Truncation::OnlyFirst);
  EXPECT_EQ(first.tokens, (std::vector<std::string>{"[CLS]", "the", "cat", "sat", "[SEP]", "dog", "ran", "[SEP]"}));
  EXPECT_TRUE(first.truncated);

  Encoding second = tok.encode(two, six, 8, Truncation::OnlySecond);
  EXPECT_EQ(second.tokens, (std::vector<std::string>{"[CLS]", "dog", "ran", "[SEP]", "the", "cat", "sat", "[SEP]"}));
  EXPECT_EQ(second.type_ids, (std::vector<int64_t>{0, 0, 0, 0, 1, 1, 1, 1}));

  // The other sequence alone overflows: the named one cannot absorb the cut.
  EXPECT_THROW(tok.encode(two, six, 8, Truncation::OnlyFirst), salient::Error);
  EXPECT_THROW(tok.encode(six, two, 4, Truncation::OnlySecond), salient::Error);
  EXPECT_THROW(tok.encode(six, std::nullopt, 4, Truncation::OnlySecond), salient::Error);
  try {
    tok.encode(two, six, 8, Truncation::OnlyFirst);
  } catch (const salient::Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("only_first"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos);
  }

  Encoding none = tok.encode(six, two, 4, Truncation::DoNotTruncate);
  EXPECT_EQ(none.ids.size(), 11u);
  EXPECT_FALSE(none.truncated);
  EXPECT_EQ(tok.encode(six, two, 0).ids.size(), 11u);  // max_length <= 0: no truncation
}

TEST(Tokenizer, ParseTruncation) {
  EXPECT_EQ(salient::parse_truncation("longest_first"), Truncation::LongestFirst);
  EXPECT_EQ(salient::parse_truncation("only_first"), Truncation::OnlyFirst);
  EXPECT_EQ(salient::parse_truncation("only_second"), Truncation::OnlySecond);
  EXPECT_EQ(salient::parse_truncation("do_not_truncate"), Truncation::DoNotTruncate);
  try {
    salient::parse_truncation("shortest_first");
    FAIL() << "expected salient::Error";
  } catch (const salient::Error& e) {
    EXPECT_NE(std::string(e.what()).find("shortest_first"), std::string::npos);
  }
}

TEST(Tokenizer, WordIdsFollowThePreTokenizer) {
  SALIENT_REQUIRE_SHARED(bert_file("tokenizer.json"));
  const std::string text = "Don't stop-believing, 東京!";
  Encoding enc = bert().encode(text);
  auto words = bert().pre_tokenize(text);
  std::vector<std::string> word_texts;
  for (const auto& w : words) word_texts.push_back(w.first);
  EXPECT_EQ(word_texts, (std::vector<std::string>{"don", "'", "t", "stop", "-", "believing", ",", "東", "京", "!"}));
  EXPECT_EQ(slice(text, words[7].second), "東");
  ASSERT_EQ(enc.word_ids.size(), enc.ids.size());
  EXPECT_EQ(enc.word_ids.front(), -1);
  EXPECT_EQ(enc.word_ids.back(), -1);
  for (size_t i = 1; i + 1 < enc.ids.size(); ++i) {
    const auto& word = words.at(static_cast<size_t>(enc.word_ids[i]));
    // Each token lies inside its word.
    EXPECT_GE(enc.offsets[i].first, word.second.first);
    EXPECT_LE(enc.offsets[i].second, word.second.second);
  }
}

TEST(Tokenizer, WhitespaceWordIds) {
  auto tok = small();
  const std::string a = "hello,world  unaffable\tcat!", b = "dog ran";
  Encoding enc = tok.encode(a, b);
  // [CLS] hello , world [SEP]... split on whitespace: "hello,world" "unaffable" "cat!"
  ASSERT_EQ(enc.tokens, (std::vector<std::string>{"[CLS]", "hello", ",", "world", "un", "##aff", "##able",
                                                  "cat", "!", "[SEP]", "dog", "ran", "[SEP]"}));
  EXPECT_EQ(salient::whitespace_word_ids(a, enc, 0),
            (std::vector<int64_t>{-1, 0, 0, 0, 1, 1, 1, 2, 2, -1, -1, -1, -1}));
  EXPECT_EQ(salient::whitespace_word_ids(b, enc, 1),
            (std::vector<int64_t>{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, -1}));
  // Leading spaces and removed characters do not shift the words.
  const std::string c = "  \u00adhello  world";
  Encoding plain = tok.tokenize(c);
  EXPECT_EQ(salient::whitespace_word_ids(c, plain), (std::vector<int64_t>{0, 1}));
}

TEST(Tokenizer, VocabularyAccess) {
  auto tok = small();
  EXPECT_EQ(tok.token_to_id("hello"), 5);
  EXPECT_EQ(tok.token_to_id("nope"), tok.unk_id());
  EXPECT_TRUE(tok.has_token("##aff"));
  EXPECT_FALSE(tok.has_token("aff"));
  EXPECT_EQ(tok.id_to_token(6), "world");
  EXPECT_THROW(tok.id_to_token(-1), salient::Error);
  EXPECT_THROW(tok.id_to_token(static_cast<int64_t>(tok.vocab_size())), salient::Error);

  TempDir dir;
  const std::string path = dir.file("vocab.txt");
  tok.save_vocab(path);
  Tokenizer again = Tokenizer::from_vocab_file(path);
  EXPECT_EQ(again.vocab(), tok.vocab());
  EXPECT_EQ(again.tokenize("unaffable").ids, tok.tokenize("unaffable").ids);
}

// The message of the salient::Error that `run` throws ("" if none).
template <class Run>
std::string error_of(Run run) {
  try {
    run();
  } catch (const salient::Error& e) {
    return e.what();
  }
  return "";
}

// Loads `content` written to a scratch file with `load` and returns the error message ("" if none).
template <class Load>
std::string load_error(const std::string& name, const std::string& content, Load load) {
  TempDir dir;
  const std::string path = dir.file(name);
  salient::write_file_atomic(path, content);
  return error_of([&] { load(path); });
}

void expect_error_naming(const std::string& msg, const std::string& what) {
  EXPECT_NE(msg.find(what), std::string::npos) << "message: '" << msg << "' lacks '" << what << "'";
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(TokenizerErrors, MissingFilesAndDirectories) {
  try {
    Tokenizer::from_vocab_file("/nonexistent/vocab.txt");
    FAIL() << "expected salient::Error";
  } catch (const salient::Error& e) {
    expect_error_naming(e.what(), "/nonexistent/vocab.txt");
  }
  EXPECT_THROW(Tokenizer::from_tokenizer_json("/nonexistent/tokenizer.json"), salient::Error);
  TempDir empty_dir;
  try {
    Tokenizer::from_dir(empty_dir.path());
    FAIL() << "expected salient::Error";
  } catch (const salient::Error& e) {
    expect_error_naming(e.what(), empty_dir.path());
  }
}

TEST(TokenizerErrors, MalformedTokenizerJson) {
  auto load_json = [](const std::string& p) { Tokenizer::from_tokenizer_json(p); };
  std::string msg = load_error("tokenizer.json", "{\"model\": {\"vocab\": {\"a\": 0,", load_json);
  expect_error_naming(msg, "tokenizer.json");
  EXPECT_NE(msg.find("invalid JSON"), std::string::npos) << msg;

  msg = load_error("tokenizer.json", "{\"normalizer\": null}", load_json);
  expect_error_naming(msg, "model");

  msg = load_error("tokenizer.json", "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}", load_json);
  expect_error_naming(msg, "empty");

  const std::string no_cls =
      R"({"model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[UNK]": 0, "[SEP]": 1, "a": 2}},
          "normalizer": {"type": "BertNormalizer"}, "pre_tokenizer": {"type": "BertPreTokenizer"}})";
  msg = load_error("tokenizer.json", no_cls, load_json);
  expect_error_naming(msg, "[CLS]");
  expect_error_naming(msg, "tokenizer.json");

  const std::string bad_ids =
      R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "[CLS]": 5, "[SEP]": 1}},
          "normalizer": null, "pre_tokenizer": {"type": "BertPreTokenizer"}})";
  expect_error_naming(load_error("tokenizer.json", bad_ids, load_json), "[CLS]");

  const std::string word_level = R"({"model": {"type": "WordLevel", "vocab": {"a": 0}}})";
  expect_error_naming(load_error("tokenizer.json", word_level, load_json), "model.type");
  // HF's conversion of a SentencePiece model is read through the model file, which must be beside it
  const std::string unigram = R"({"model": {"type": "Unigram", "vocab": [["a", 0.0]]}})";
  expect_error_naming(load_error("tokenizer.json", unigram, load_json), "SentencePiece model");

  // libFuzzer (fuzz_vocab): an id beyond int64 is parsed as a double, and its conversion was
  // undefined behaviour; a float id or chars-per-word limit is an error too.
  for (const std::string& id : {"1000703947656021369476564000070394765602136947651369476564444400", "1.5"}) {
    const std::string huge = R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "made": )" +
                             id + R"(}}, "normalizer": null, "pre_tokenizer": {"type": "BertPreTokenizer"}})";
    msg = load_error("tokenizer.json", huge, load_json);
    expect_error_naming(msg, "model.vocab['made'] must be an integer");
  }
  const std::string bad_limit = R"({"model": {"type": "WordPiece", "max_input_chars_per_word": 0,
      "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2}}, "normalizer": null, "pre_tokenizer": {"type": "BertPreTokenizer"}})";
  expect_error_naming(load_error("tokenizer.json", bad_limit, load_json), "max_input_chars_per_word must be a positive");
}

TEST(TokenizerErrors, BadVocabTxt) {
  auto load_txt = [](const std::string& p) { Tokenizer::from_vocab_file(p); };
  expect_error_naming(load_error("vocab.txt", "", load_txt), "empty");
  std::string msg = load_error("vocab.txt", "[PAD]\n[UNK]\n[SEP]\nhello\n", load_txt);
  expect_error_naming(msg, "[CLS]");
  expect_error_naming(msg, "vocab.txt");
  EXPECT_THROW(Tokenizer({}, {}), salient::Error);
}

// Byte-level BPE (RoBERTa). A tiny vocabulary: RoBERTa's five special tokens, GPT-2's 256 byte
// characters (sorted, as tokenizers' ByteLevel.alphabet()) and the tokens of 11 merges. Every
// expectation below is what Hugging Face tokenizers 0.19.1 (BPE + ByteLevel + RobertaProcessing,
// <mask> with lstrip) gives for the same vocabulary and merges.
const std::vector<std::pair<std::string, std::string>>& tiny_merges() {
  static const std::vector<std::pair<std::string, std::string>> merges = {
      {"Ġ", "h"}, {"h", "e"}, {"l", "l"}, {"he", "ll"}, {"Ġh", "e"}, {"Ġhe", "ll"},
      {"hell", "o"}, {"Ġhell", "o"}, {"b", "c"}, {"a", "b"}, {"Ã", "©"}};
  return merges;
}

std::vector<std::string> tiny_bpe_vocab() {
  std::vector<std::string> vocab = {"<s>", "<pad>", "</s>", "<unk>", "<mask>"};
  std::vector<std::string> bytes;
  for (int b = 0; b < 256; ++b) bytes.push_back(salient::byte_level::byte_char(static_cast<unsigned char>(b)));
  std::sort(bytes.begin(), bytes.end());  // UTF-8 byte order is code point order
  vocab.insert(vocab.end(), bytes.begin(), bytes.end());
  for (const auto& [left, right] : tiny_merges())
    if (std::find(vocab.begin(), vocab.end(), left + right) == vocab.end()) vocab.push_back(left + right);
  return vocab;
}

Tokenizer tiny_bpe(bool add_prefix_space = false) {
  salient::TokenizerOptions opt = salient::TokenizerOptions::roberta();
  opt.add_prefix_space = add_prefix_space;
  return Tokenizer::byte_level_bpe(tiny_bpe_vocab(), tiny_merges(), opt);
}

using Offsets = std::vector<std::pair<size_t, size_t>>;

TEST(ByteLevelBpe, MergesByRankNotLeftToRight) {
  const Tokenizer tok = tiny_bpe();
  ASSERT_EQ(tok.vocab_size(), 272u);
  Encoding e = tok.encode("hello hello");
  EXPECT_EQ(e.ids, (std::vector<int64_t>{0, 267, 268, 2}));
  EXPECT_EQ(e.tokens, (std::vector<std::string>{"<s>", "hello", "Ġhello", "</s>"}));
  EXPECT_EQ(e.offsets, (Offsets{{0, 0}, {0, 5}, {6, 11}, {0, 0}}));
  // "b c" ranks before "a b": abc is a + bc, though "a b" comes first in the text
  e = tok.encode("abc");
  EXPECT_EQ(e.ids, (std::vector<int64_t>{0, 69, 269, 2}));
  EXPECT_EQ(e.offsets, (Offsets{{0, 0}, {0, 1}, {1, 3}, {0, 0}}));
  EXPECT_EQ(e.word_ids, (std::vector<int64_t>{-1, 0, 0, -1}));
}

TEST(ByteLevelBpe, Gpt2PatternContractionsSpacesAndNumbers) {
  const Tokenizer tok = tiny_bpe();
  Encoding e = tok.encode("I'll go  now 42!");
  EXPECT_EQ(e.ids, (std::vector<int64_t>{0, 45, 11, 263, 225, 75, 83, 225, 225, 82, 83, 91, 225, 24, 22, 5, 2}));
  EXPECT_EQ(e.offsets, (Offsets{{0, 0}, {0, 1}, {1, 2}, {2, 4}, {5, 5}, {5, 6}, {6, 7}, {8, 8}, {9, 9}, {9, 10},
                                {10, 11}, {11, 12}, {13, 13}, {13, 14}, {14, 15}, {15, 16}, {0, 0}}));
  EXPECT_EQ(e.word_ids, (std::vector<int64_t>{-1, 0, 1, 1, 2, 2, 2, 3, 4, 4, 4, 4, 5, 5, 5, 6, -1}));
  // "\s+(?!\S)": of two newlines before a word, each is a word of its own; a final space too
  e = tok.encode("hello\n\nworld ");
  EXPECT_EQ(e.ids, (std::vector<int64_t>{0, 267, 203, 203, 91, 83, 86, 80, 72, 225, 2}));
  EXPECT_EQ(e.offsets, (Offsets{{0, 0}, {0, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 9}, {9, 10}, {10, 11}, {11, 12},
                                {13, 13}, {0, 0}}));
  EXPECT_EQ(e.word_ids, (std::vector<int64_t>{-1, 0, 1, 2, 3, 3, 3, 3, 3, 4, -1}));
}

TEST(ByteLevelBpe, MultiByteCharactersAndTheirOffsets) {
  const Tokenizer tok = tiny_bpe();
  const std::string text = "café é";
  Encoding e = tok.encode(text);
  EXPECT_EQ(e.ids, (std::vector<int64_t>{0, 71, 69, 74, 271, 225, 271, 2}));
  EXPECT_EQ(e.tokens[4], "Ã©");  // é's two bytes in the byte alphabet
  EXPECT_EQ(e.offsets, (Offsets{{0, 0}, {0, 1}, {1, 2}, {2, 3}, {3, 5}, {6, 6}, {6, 8}, {0, 0}}));
  EXPECT_EQ(slice(text, e.offsets[4]), "é");
  EXPECT_EQ(tok.word_text("Ã©"), "é");
  EXPECT_EQ(tok.word_text("Ġhello"), "hello");
  EXPECT_TRUE(tok.continues_word("bc"));
  EXPECT_FALSE(tok.continues_word("Ġhello"));
}

TEST(ByteLevelBpe, MaskStripsTheSpaceBeforeItAndPairsAreRoberta) {
  const Tokenizer tok = tiny_bpe();
  Encoding e = tok.encode("a <mask> b");
  EXPECT_EQ(e.ids, (std::vector<int64_t>{0, 69, 4, 225, 70, 2}));
  EXPECT_EQ(e.offsets, (Offsets{{0, 0}, {0, 1}, {2, 8}, {9, 9}, {9, 10}, {0, 0}}));
  EXPECT_EQ(e.word_ids, (std::vector<int64_t>{-1, 0, 1, 2, 2, -1}));
  e = tok.encode("hello", std::string("abc"));
  EXPECT_EQ(e.ids, (std::vector<int64_t>{0, 267, 2, 2, 69, 269, 2}));
  EXPECT_EQ(e.type_ids, std::vector<int64_t>(7, 0));
  // four special tokens in a pair: max_length 6 leaves two for the texts
  e = tok.encode("hello hello", std::string("abc"), 6);
  EXPECT_EQ(e.ids, (std::vector<int64_t>{0, 267, 2, 2, 69, 2}));
  EXPECT_TRUE(e.truncated);
  EXPECT_THROW(tok.encode("a", std::string("b"), 3), salient::Error);
}

TEST(ByteLevelBpe, AddPrefixSpace) {
  const Tokenizer tok = tiny_bpe(true);
  Encoding e = tok.encode("hello hello");
  EXPECT_EQ(e.ids, (std::vector<int64_t>{0, 268, 268, 2}));
  EXPECT_EQ(e.offsets, (Offsets{{0, 0}, {0, 5}, {6, 11}, {0, 0}}));
  e = tok.encode("abc");
  EXPECT_EQ(e.ids, (std::vector<int64_t>{0, 225, 69, 269, 2}));
  EXPECT_EQ(e.offsets, (Offsets{{0, 0}, {0, 0}, {0, 1}, {1, 3}, {0, 0}}));
  e = tok.encode("café é");
  EXPECT_EQ(e.ids, (std::vector<int64_t>{0, 225, 71, 69, 74, 271, 225, 271, 2}));
  e = tok.encode("hello", std::string("abc"));
  EXPECT_EQ(e.ids, (std::vector<int64_t>{0, 268, 2, 2, 225, 69, 269, 2}));
}

TEST(ByteLevelBpe, SavedAndReadBackFromTokenizerJsonAndSlowFiles) {
  const Tokenizer tok = tiny_bpe(true);
  TempDir dir;
  tok.save(dir.path());
  const Tokenizer back = Tokenizer::from_dir(dir.path());
  EXPECT_EQ(back.model(), salient::TokenizerModel::ByteLevelBpe);
  EXPECT_EQ(back.vocab(), tok.vocab());
  EXPECT_EQ(back.merges(), tok.merges());
  EXPECT_TRUE(back.options().add_prefix_space);
  for (const std::string text : {"hello hello", "I'll go  now 42!", "a <mask> b", "café é"})
    EXPECT_EQ(back.encode(text).ids, tok.encode(text).ids) << text;

  // RoBERTa's vocab.json + merges.txt ("#version" first), with tokenizer_config.json
  TempDir slow;
  nlohmann::json vocab = nlohmann::json::object();
  for (size_t i = 0; i < tok.vocab_size(); ++i) vocab[tok.vocab()[i]] = i;
  std::string merges = "#version: 0.2\n";
  for (const auto& [left, right] : tok.merges()) merges += left + " " + right + "\n";
  salient::write_file_atomic(slow.file("vocab.json"), vocab.dump());
  salient::write_file_atomic(slow.file("merges.txt"), merges);
  EXPECT_EQ(Tokenizer::from_dir(slow.path()).encode("hello hello").ids, (std::vector<int64_t>{0, 267, 268, 2}));
  salient::write_file_atomic(slow.file("tokenizer_config.json"), R"({"add_prefix_space": true})");
  EXPECT_EQ(Tokenizer::from_dir(slow.path()).encode("hello hello").ids, (std::vector<int64_t>{0, 268, 268, 2}));
  // either file of the pair, as --tokenizer and --vocab take them, reads both
  for (const char* name : {"vocab.json", "merges.txt"})
    EXPECT_EQ(Tokenizer::from_path(slow.file(name)).encode("hello hello").ids, (std::vector<int64_t>{0, 268, 268, 2}))
        << name;
  TempDir lone;
  salient::write_file_atomic(lone.file("vocab.json"), vocab.dump());
  try {
    Tokenizer::from_path(lone.file("vocab.json"));
    FAIL() << "expected salient::Error";
  } catch (const salient::Error& e) {
    expect_error_naming(e.what(), "vocab.json and merges.txt side by side");
  }
  try {  // read as a tokenizer.json: it has no 'model'
    Tokenizer::from_tokenizer_json(lone.file("vocab.json"));
    FAIL() << "expected salient::Error";
  } catch (const salient::Error& e) {
    expect_error_naming(e.what(), "not a Hugging Face tokenizer.json (no field 'model'");
  }

  salient::write_file_atomic(slow.file("merges.txt"), "#version: 0.2\nh e\nl l l\n");
  try {
    Tokenizer::from_dir(slow.path());
    FAIL() << "expected salient::Error";
  } catch (const salient::Error& e) {
    expect_error_naming(e.what(), "merges.txt: line 3");
  }
  salient::write_file_atomic(slow.file("merges.txt"), merges);
  auto load_slow = [&] { Tokenizer::from_dir(slow.path()); };
  salient::write_file_atomic(slow.file("tokenizer_config.json"), R"({"add_prefix_space": "yes"})");
  std::string msg = error_of(load_slow);  // the config's error names the config file, once
  expect_error_naming(msg, "tokenizer_config.json: ");
  EXPECT_EQ(msg.find(slow.path() + ": "), std::string::npos) << msg;
  salient::write_file_atomic(slow.file("tokenizer_config.json"), R"({"bos_token": "<start>"})");
  msg = error_of(load_slow);  // a special token the vocabulary lacks, named with the folder
  expect_error_naming(msg, "vocabulary has no '<start>' token");
  expect_error_naming(msg, slow.path());
}

TEST(TokenizerErrors, UnsupportedBpeTokenizerJson) {
  auto load_json = [](const std::string& p) { Tokenizer::from_tokenizer_json(p); };
  const std::string model = R"("model": {"type": "BPE", "vocab": {"<s>": 0, "</s>": 1, "a": 2}, "merges": ["a a"]})";
  const std::string pre = R"("pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true})";
  const std::string post = R"("post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 1], "cls": ["<s>", 0]})";
  TempDir dir;
  salient::write_file_atomic(dir.file("tokenizer.json"), "{" + model + ", " + pre + ", " + post + "}");
  EXPECT_EQ(Tokenizer::from_tokenizer_json(dir.file("tokenizer.json")).vocab_size(), 3u);
  expect_error_naming(load_error("tokenizer.json", "{" + model + ", " + post + "}", load_json), "pre_tokenizer");
  expect_error_naming(load_error("tokenizer.json", "{" + model + ", " + pre + "}", load_json), "post_processor");
  expect_error_naming(load_error("tokenizer.json", "{" + model + ", \"normalizer\": {\"type\": \"NFC\"}, " + pre + ", " + post + "}",
                                 load_json), "normalizer");
  const std::string dropout = R"("model": {"type": "BPE", "dropout": 0.1, "vocab": {"<s>": 0, "</s>": 1}, "merges": []})";
  expect_error_naming(load_error("tokenizer.json", "{" + dropout + ", " + pre + ", " + post + "}", load_json), "model.dropout");
  const std::string bad_merge = R"("model": {"type": "BPE", "vocab": {"<s>": 0, "</s>": 1}, "merges": ["a"]})";
  expect_error_naming(load_error("tokenizer.json", "{" + bad_merge + ", " + pre + ", " + post + "}", load_json), "model.merges");
  const std::string gap = R"("model": {"type": "BPE", "vocab": {"<s>": 0, "</s>": 2}, "merges": []})";
  expect_error_naming(load_error("tokenizer.json", "{" + gap + ", " + pre + ", " + post + "}", load_json), "without gaps");
  const std::string no_cls = R"("model": {"type": "BPE", "vocab": {"</s>": 0, "a": 1}, "merges": []})";
  expect_error_naming(load_error("tokenizer.json", "{" + no_cls + ", " + pre + ", " + post + "}", load_json), "<s>");
}

TEST(Tokenizer, ConfigOptionsForVocabTxt) {
  TempDir dir;
  salient::write_file_atomic(dir.file("vocab.txt"),
                             "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ncafé\ncafe\nCafé\r\n");
  salient::write_file_atomic(dir.file("tokenizer_config.json"),
                             R"({"do_lower_case": false, "strip_accents": null})");
  Tokenizer cased = Tokenizer::from_dir(dir.path());
  EXPECT_FALSE(cased.options().lowercase);
  EXPECT_EQ(cased.tokenize("Café").tokens, std::vector<std::string>{"Café"});  // CRLF line read

  salient::write_file_atomic(dir.file("tokenizer_config.json"), "{\"do_lower_case\": [");
  EXPECT_THROW(Tokenizer::from_dir(dir.path()), salient::Error);
}

}  // namespace

// SentencePiece (XLM-R, DeBERTa-v2/v3). The models in tests/data/sentencepiece were trained here by
// Debian's spm_train on 2,000 SST-2 sentences and two accented / CJK lines (vocabulary 200; the
// XLM-R one with SentencePiece's default nmt_nfkc normalizer, the DeBERTa one with [PAD] [CLS] [SEP]
// [UNK] as ids 0-3 and no normalization). The expected ids and byte offsets are HF's fast
// tokenizers' (XLMRobertaTokenizerFast / DebertaV2TokenizerFast(vocab_file=...), transformers
// 4.44.2); tests/hf/test_hf_sentencepiece.py compares on 1,230 texts with larger models.
namespace {

// A folder (xlmr, deberta) or file of tests/data/sentencepiece.
std::string spm_dir(const char* name) { return std::string(SALIENT_TEST_DATA) + "/sentencepiece/" + name; }

using Offsets = std::vector<std::pair<size_t, size_t>>;

}  // namespace

TEST(SentencePiece, XlmRobertaIdsOffsetsAndPairsAsHf) {
  const Tokenizer t = Tokenizer::from_dir(spm_dir("xlmr"));
  EXPECT_EQ(t.model(), salient::TokenizerModel::SentencePiece);
  EXPECT_EQ(t.vocab_size(), 202u);  // fairseq's four specials, the model's 197 other pieces, <mask>
  EXPECT_EQ(std::vector<int64_t>({t.cls_id(), t.pad_id(), t.sep_id(), t.unk_id(), t.mask_id()}),
            (std::vector<int64_t>{0, 1, 2, 3, 201}));
  Encoding e = t.encode("the movie  is great", std::string("a pair"));
  EXPECT_EQ(e.ids, (std::vector<int64_t>{0, 16, 105, 64, 60, 28, 8, 6, 2, 2, 13, 135, 94, 2}));
  EXPECT_EQ(e.offsets, (Offsets{{0, 0}, {0, 3}, {3, 9}, {10, 13}, {13, 15}, {15, 17}, {17, 18}, {18, 19}, {0, 0},
                                {0, 0}, {0, 1}, {1, 4}, {4, 6}, {0, 0}}));
  EXPECT_EQ(e.type_ids, std::vector<int64_t>(14, 0));
  // leading spaces kept as the first "▁" (on the last of them); <mask> takes the space before it
  e = t.encode("  Café <mask> naïve 中文");
  EXPECT_EQ(e.ids, (std::vector<int64_t>{0, 5, 191, 8, 43, 171, 201, 102, 8, 193, 69, 5, 197, 199, 2}));
  EXPECT_EQ(e.offsets, (Offsets{{0, 0}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 7}, {7, 14}, {14, 16}, {16, 17}, {17, 19},
                                {19, 21}, {21, 22}, {22, 25}, {25, 28}, {0, 0}}));
  EXPECT_EQ(e.tokens[1], "\xe2\x96\x81");  // "▁" alone: "C" is no piece of this model
  EXPECT_EQ(e.word_ids, (std::vector<int64_t>{-1, 0, 0, 0, 0, 0, 1, 2, 2, 2, 2, 3, 3, 3, -1}));
  // e + U+0301 composes to é (aligned with the e alone); ﬁ becomes "f" "i" (both on ﬁ)
  e = t.encode("e\xcc\x81 \xef\xac\x81ne [MASK] end");
  EXPECT_EQ(e.ids, (std::vector<int64_t>{0, 5, 171, 34, 40, 7, 5, 3, 5, 30, 11, 2}));
  EXPECT_EQ(e.offsets, (Offsets{{0, 0}, {0, 1}, {0, 1}, {3, 7}, {4, 8}, {8, 9}, {9, 10}, {10, 16}, {16, 17}, {17, 19},
                                {19, 20}, {0, 0}}));
  EXPECT_EQ(t.word_text("\xe2\x96\x81" "movie"), "movie");
  EXPECT_FALSE(t.continues_word("\xe2\x96\x81" "movie"));
  EXPECT_TRUE(t.continues_word("ie"));
}

TEST(SentencePiece, DebertaV2IdsOffsetsAndPairsAsHf) {
  const Tokenizer t = Tokenizer::from_dir(spm_dir("deberta"));
  EXPECT_EQ(t.vocab_size(), 201u);  // the model's 200 pieces, then [MASK]
  EXPECT_EQ(std::vector<int64_t>({t.pad_id(), t.cls_id(), t.sep_id(), t.unk_id(), t.mask_id()}),
            (std::vector<int64_t>{0, 1, 2, 3, 200}));
  Encoding e = t.encode("the movie  is great", std::string("a pair"));
  EXPECT_EQ(e.ids, (std::vector<int64_t>{1, 16, 105, 64, 60, 28, 8, 6, 2, 13, 135, 94, 2}));
  EXPECT_EQ(e.type_ids, (std::vector<int64_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1}));
  // both ends stripped: the first "▁" is SentencePiece's own, on the first character
  e = t.encode("  Caf\xc3\xa9 <mask> na\xc3\xafve \xe4\xb8\xad\xe6\x96\x87");
  EXPECT_EQ(e.ids, (std::vector<int64_t>{1, 5, 190, 8, 43, 170, 5, 3, 12, 8, 4, 39, 3, 102, 8, 192, 69, 5, 196, 198, 2}));
  EXPECT_EQ(e.offsets, (Offsets{{0, 0}, {2, 3}, {2, 3}, {3, 4}, {4, 5}, {5, 7}, {7, 8}, {8, 9}, {9, 10}, {10, 11},
                                {11, 12}, {12, 13}, {13, 14}, {14, 16}, {16, 17}, {17, 19}, {19, 21}, {21, 22},
                                {22, 25}, {25, 28}, {0, 0}}));
  e = t.encode("e\xcc\x81 \xef\xac\x81ne [MASK] end");
  EXPECT_EQ(e.ids, (std::vector<int64_t>{1, 100, 3, 5, 3, 89, 200, 5, 30, 11, 2}));
  EXPECT_EQ(e.offsets, (Offsets{{0, 0}, {0, 1}, {1, 3}, {3, 4}, {4, 7}, {7, 9}, {10, 16}, {17, 18}, {17, 19}, {19, 20},
                                {0, 0}}));
}

TEST(SentencePiece, SavedFilesReadBackAndOrdinaryIds) {
  for (const char* family : {"xlmr", "deberta"}) {
    const Tokenizer t = Tokenizer::from_dir(spm_dir(family));
    TempDir dir;
    t.save(dir.path());
    const bool xlmr = std::string(family) == "xlmr";
    EXPECT_TRUE(salient::file_exists(dir.file(xlmr ? "sentencepiece.bpe.model" : "spm.model"))) << family;
    const nlohmann::json cfg = nlohmann::json::parse(salient::read_file(dir.file("tokenizer_config.json")));
    EXPECT_EQ(cfg.at("tokenizer_class"), xlmr ? "XLMRobertaTokenizer" : "DebertaV2Tokenizer");
    EXPECT_EQ(cfg.at("added_tokens_decoder").at(std::to_string(t.mask_id())).at("lstrip"), xlmr);
    const Tokenizer back = Tokenizer::from_dir(dir.path());
    EXPECT_EQ(back.vocab(), t.vocab()) << family;
    for (const std::string text : {"the movie  is great", "  Caf\xc3\xa9 <mask> [MASK] x", "e\xcc\x81 end"})
      EXPECT_EQ(back.encode(text).offsets, t.encode(text).offsets) << family << ": " << text;
    // a .model file names its folder's tokenizer, as --tokenizer takes it
    EXPECT_EQ(Tokenizer::from_path(dir.file(xlmr ? "sentencepiece.bpe.model" : "spm.model")).vocab(), t.vocab());
    const std::vector<int64_t> ordinary = t.ordinary_ids();
    for (int64_t id : {t.cls_id(), t.sep_id(), t.pad_id(), t.unk_id(), t.mask_id()})
      EXPECT_FALSE(std::binary_search(ordinary.begin(), ordinary.end(), id)) << family << " " << id;
  }
}

TEST(SentencePiece, AddedTokensAreReadAndSavedWhateverFileHoldsThem) {
  TempDir dir;
  std::filesystem::copy_file(spm_dir("deberta") + "/spm.model", dir.file("spm.model"));
  // transformers < 4.34 wrote added_tokens.json; later ones added_tokens_decoder
  salient::write_file_atomic(dir.file("tokenizer_config.json"), R"({"tokenizer_class": "DebertaV2Tokenizer"})");
  salient::write_file_atomic(dir.file("added_tokens.json"), R"({"[MASK]": 200, "<extra>": 201})");
  const Tokenizer t = Tokenizer::from_dir(dir.path());
  ASSERT_EQ(t.vocab_size(), 202u);
  EXPECT_EQ(t.vocab()[201], "<extra>");
  TempDir saved;
  t.save(saved.path());
  EXPECT_EQ(Tokenizer::from_dir(saved.path()).vocab(), t.vocab());
}

TEST(TokenizerErrors, SentencePieceFolders) {
  TempDir dir;
  salient::write_file_atomic(dir.file("spm.model"), "not a model");
  expect_error_naming(error_of([&] { Tokenizer::from_dir(dir.path()); }), dir.file("spm.model"));
  expect_error_naming(error_of([&] { Tokenizer::from_dir(dir.path()); }), "not a SentencePiece model");
  // libFuzzer (fuzz_vocab): a model whose pieces libsentencepiece's trie builder throws on (a C++
  // exception that crossed the shim's C interface and terminated the program)
  std::filesystem::copy_file(spm_dir("malformed-trie.model"), dir.file("spm.model"),
                             std::filesystem::copy_options::overwrite_existing);
  expect_error_naming(error_of([&] { Tokenizer::from_dir(dir.path()); }), "not a SentencePiece model");

  TempDir other;
  std::filesystem::copy_file(spm_dir("deberta") + "/spm.model", other.file("spm.model"));
  salient::write_file_atomic(other.file("tokenizer_config.json"), R"({"tokenizer_class": "AlbertTokenizer"})");
  std::string msg = error_of([&] { Tokenizer::from_dir(other.path()); });
  expect_error_naming(msg, "AlbertTokenizer");
  expect_error_naming(msg, "tokenizer_config.json");
  // an added token must follow the model's pieces without a gap
  salient::write_file_atomic(other.file("tokenizer_config.json"),
                             R"({"tokenizer_class": "DebertaV2Tokenizer",
                                 "added_tokens_decoder": {"205": {"content": "[MASK]"}}})");
  expect_error_naming(error_of([&] { Tokenizer::from_dir(other.path()); }), "expected 200");
  salient::write_file_atomic(other.file("tokenizer_config.json"),
                             R"({"tokenizer_class": "DebertaV2Tokenizer", "split_by_punct": true})");
  expect_error_naming(error_of([&] { Tokenizer::from_dir(other.path()); }), "split_by_punct");
}
