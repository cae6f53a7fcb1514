// libFuzzer harness: the tokenizers on arbitrary bytes, invalid UTF-8 included; a 0 byte splits
// text and pair. WordPiece with BERT-base uncased's vocabulary, a byte-level BPE (GPT-2's byte
// alphabet and a few merges, RoBERTa's special tokens, <mask> with lstrip) with and without
// add_prefix_space, and the SentencePiece models of tests/data/sentencepiece in XLM-R's and
// DeBERTa's layouts (their offset rules walk the text's bytes). Checks the encoding's invariants.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "text/byte_level_bpe.h"
#include "text/tokenizer.h"
#include "util/error.h"
#include "util/io.h"

namespace {
const salient::Tokenizer& wordpiece() {
  static const salient::Tokenizer tok = [] {
    const std::string dir = salient::shared_data_dir();
    if (dir.empty()) std::abort();  // set SALIENT_SHARED
    return salient::Tokenizer::from_dir(salient::join_path(dir, "bert_base_uncased_tokenizer"));
  }();
  return tok;
}

salient::Tokenizer make_bpe(bool add_prefix_space) {
  std::vector<std::string> vocab = {"<s>", "<pad>", "</s>", "<unk>", "<mask>"};
  for (int b = 0; b < 256; ++b) vocab.push_back(salient::byte_level::byte_char(static_cast<unsigned char>(b)));
  const std::vector<std::pair<std::string, std::string>> merges = {
      {"Ġ", "t"}, {"h", "e"}, {"Ġt", "he"}, {"i", "n"}, {"e", "r"}, {"Ġ", "a"}, {"r", "e"}, {"o", "n"},
      {"Ġ", "Ġ"}, {"ĠĠ", "ĠĠ"}, {"Ã", "©"}, {"in", "g"}, {"Ġ", "in"}};
  for (const auto& [left, right] : merges) vocab.push_back(left + right);
  salient::TokenizerOptions opt = salient::TokenizerOptions::roberta();
  opt.add_prefix_space = add_prefix_space;
  return salient::Tokenizer::byte_level_bpe(vocab, merges, opt);
}

void check(const salient::Tokenizer& tok, const std::string& text, const std::optional<std::string>& pair) {
  salient::Encoding e;
  try {
    e = tok.encode(text, pair, 64, salient::Truncation::LongestFirst);
  } catch (const salient::Error&) {
    return;
  }
  if (e.ids.size() > 64 || e.ids.size() < 2 || e.tokens.size() != e.ids.size() || e.offsets.size() != e.ids.size() ||
      e.type_ids.size() != e.ids.size() || e.word_ids.size() != e.ids.size())
    std::abort();
  // RoBERTa's and XLM-R's type ids are 0 throughout and a "</s>" in the text is its special token:
  // its offsets are bounded by the longer text alone
  const bool roberta = tok.special_tokens_count(true) == 4;
  const size_t longer = std::max(text.size(), pair ? pair->size() : 0);
  for (size_t i = 0; i < e.ids.size(); ++i) {
    if (e.ids[i] < 0 || e.ids[i] >= static_cast<int64_t>(tok.vocab_size())) std::abort();
    if (e.tokens[i] != tok.id_to_token(e.ids[i])) std::abort();
    const size_t limit = roberta ? longer : e.type_ids[i] == 0 ? text.size() : (pair ? pair->size() : 0);
    if (e.offsets[i].first > e.offsets[i].second || e.offsets[i].second > limit) std::abort();
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const salient::Tokenizer bpe = make_bpe(false), bpe_prefixed = make_bpe(true),
                                  xlmr = salient::Tokenizer::from_dir(SALIENT_TEST_DATA "/sentencepiece/xlmr"),
                                  deberta = salient::Tokenizer::from_dir(SALIENT_TEST_DATA "/sentencepiece/deberta");
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const size_t zero = bytes.find('\0');
  const std::string text = bytes.substr(0, zero);
  const std::optional<std::string> pair =
      zero == std::string::npos ? std::nullopt : std::optional<std::string>(bytes.substr(zero + 1));
  check(wordpiece(), text, pair);
  check(bpe, text, pair);
  check(bpe_prefixed, text, pair);
  check(xlmr, text, pair);
  check(deberta, text, pair);
  return 0;
}
