#pragma once
// SentencePiece models (XLM-RoBERTa's sentencepiece.bpe.model, DeBERTa-v2/v3's spm.model) through
// Debian's libsentencepiece (called through a privately loaded shim: sentencepiece.cpp says why),
// with the byte offsets Hugging Face's fast tokenizers give. The library
// normalizes and segments exactly as HF's slow tokenizers do (they call it); the fast ones agree on
// the ids and place a token's offsets differently in three cases, which `encode` follows (below).
// The Tokenizer class (tokenizer.h) maps the pieces to the family's ids and frames them.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace salient::spm {

struct Piece {
  int spm_id;          // the model's own id (the Tokenizer maps it to the family's)
  size_t begin, end;   // bytes of the text the piece stands for, as HF's fast tokenizers give them
  bool starts_word;    // begins with "▁" (U+2581): a new word, as HF's Metaspace pre-tokenizer splits
};

class Model {
 public:
  // Reads a .model file; a file SentencePiece cannot read is an error naming it.
  static std::shared_ptr<const Model> load(const std::string& path);
  static std::shared_ptr<const Model> from_bytes(const std::string& serialized, const std::string& where);
  ~Model();

  int size() const;                          // pieces in the model
  const std::string& piece(int id) const;    // the piece's text ("▁the", "<unk>")
  bool is_unknown(int id) const;
  const std::string& serialized() const { return bytes_; }  // the .model file's bytes

  // The pieces of text[begin, end) (a segment between special tokens). With keep_leading_space
  // whitespace at the segment's start is the first piece's "▁" (XLM-R's normalizer strips only the
  // right end; DeBERTa's strips both); with keep_trailing_space whitespace at its end is a "▁" piece
  // of its own (HF normalizes a segment that borders a special token matched in normalized text
  // together with it, so the strip does not reach that side); a segment of whitespace alone is one
  // "▁" when both are kept. Offsets as HF's fast tokenizers align them:
  //  - a "▁" that stands for a run of whitespace covers its last character only (HF collapses the
  //    run onto it; SentencePiece covers the whole run, characters it deletes included);
  //  - a piece whose text comes from no character of its own (the "▁" SentencePiece prefixes to
  //    the segment, the "f" of "ﬁ" → "f" "i") covers the character that follows;
  //  - with keep_leading_space, the first "▁" covers the last whitespace character before the text;
  //  - a grapheme of under 6 bytes that normalizes to fewer characters (e + U+0301 → é) ends a
  //    piece at its first characters' end (HF aligns the result with them and the rest with none).
  void encode(const std::string& input, size_t begin, size_t end, bool keep_leading_space, bool keep_trailing_space,
              std::vector<Piece>& out) const;

 private:
  Model() = default;
  bool vanishes(const std::string& input, size_t at, size_t len) const;  // the normalizer deletes it
  size_t composed_end(const std::string& input, size_t begin, size_t end) const;
  int space_id_ = -1;  // the piece "▁" alone
  int unk_id_ = -1;    // the unknown piece
  void* handle_ = nullptr;  // the library's processor, through the shim (sentencepiece.cpp)
  std::vector<std::string> pieces_;
  std::string bytes_;
};

// "▁" (U+2581), SentencePiece's mark of a space.
inline constexpr const char* kSpace = "\xe2\x96\x81";

}  // namespace salient::spm
