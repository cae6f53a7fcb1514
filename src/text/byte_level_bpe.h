#pragma once
// The pieces of GPT-2 / RoBERTa byte-level BPE, as Hugging Face tokenizers' ByteLevel pre-tokenizer
// and BPE model compute them: the regex split into words, the byte-to-character alphabet and the
// merge loop. The Tokenizer class (tokenizer.h) puts them together.
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace salient::byte_level {

// A pre-tokenized word: bytes [begin, end) of the text. A word from add_prefix_space starts with a
// space that is not in the text (prefixed).
struct Word {
  size_t begin, end;
  bool prefixed = false;
};

// GPT-2's pattern 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ over
// text[begin, end), matched as its alternatives would be, left to right. Invalid UTF-8 bytes are
// single characters of no letter or number class.
std::vector<Word> split(std::string_view text, size_t begin, size_t end, bool add_prefix_space);

// GPT-2's bytes_to_unicode: the UTF-8 of the printable character that stands for each byte.
const std::string& byte_char(unsigned char b);

// A symbol of a word under BPE: its text in the byte alphabet and the bytes of the word it covers.
struct Symbol {
  std::string text;
  size_t first, last;  // byte indices into the word (inclusive)
};

// Merges the word's byte symbols by rank ("left right" → rank, lowest first), as tokenizers' BPE
// (every occurrence of the best pair, left to right, until no pair has a rank).
void merge(std::vector<Symbol>& symbols, const std::unordered_map<std::string, int>& ranks);

// The bytes a token of the byte alphabet stands for (characters outside it are kept as they are).
std::string decode(const std::string& token);

}  // namespace salient::byte_level
