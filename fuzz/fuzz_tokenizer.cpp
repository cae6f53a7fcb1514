// libFuzzer harness: the WordPiece tokenizer (BERT-base uncased vocabulary) on arbitrary bytes,
// invalid UTF-8 included; a 0 byte splits text and pair. Checks the encoding's invariants.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "text/tokenizer.h"
#include "util/error.h"
#include "util/io.h"

namespace {
const salient::WordPieceTokenizer& tokenizer() {
  static const salient::WordPieceTokenizer tok = [] {
    const std::string dir = salient::shared_data_dir();
    if (dir.empty()) std::abort();  // set SALIENT_SHARED
    return salient::WordPieceTokenizer::from_dir(salient::join_path(dir, "bert_base_uncased_tokenizer"));
  }();
  return tok;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const size_t zero = bytes.find('\0');
  const std::string text = bytes.substr(0, zero);
  const std::optional<std::string> pair =
      zero == std::string::npos ? std::nullopt : std::optional<std::string>(bytes.substr(zero + 1));
  salient::Encoding e;
  try {
    e = tokenizer().encode(text, pair, 64, salient::Truncation::LongestFirst);
  } catch (const salient::Error&) {
    return 0;
  }
  if (e.ids.size() > 64 || e.ids.size() < 2 || e.tokens.size() != e.ids.size() || e.offsets.size() != e.ids.size() ||
      e.type_ids.size() != e.ids.size() || e.word_ids.size() != e.ids.size())
    std::abort();
  for (size_t i = 0; i < e.ids.size(); ++i) {
    if (e.ids[i] < 0 || e.ids[i] >= static_cast<int64_t>(tokenizer().vocab_size())) std::abort();
    const size_t limit = e.type_ids[i] == 0 ? text.size() : (pair ? pair->size() : 0);
    if (e.offsets[i].first > e.offsets[i].second || e.offsets[i].second > limit) std::abort();
  }
  return 0;
}
