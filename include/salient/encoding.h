#pragma once
// A tokenized input: what `salient tokenize` writes and every model call reads.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace salient {

struct Encoding {
  std::vector<int64_t> ids;
  std::vector<std::string> tokens;
  std::vector<int64_t> type_ids;
  // Byte offsets [begin, end) into the original UTF-8 text of the segment the token came from
  // (segment given by type_ids); special tokens get (0, 0).
  std::vector<std::pair<size_t, size_t>> offsets;
  // Index of the pre-tokenized word (whitespace + punctuation split, as HF word_ids) within its
  // segment; -1 for special tokens.
  std::vector<int64_t> word_ids;
  bool truncated = false;  // tokens were dropped to fit max_length
};

}  // namespace salient
