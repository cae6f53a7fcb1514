#pragma once
// The tokenizers of the model families salient reads, as Hugging Face's: WordPiece (BertTokenizer /
// tokenizers' BertNormalizer + BertPreTokenizer + WordPiece), byte-level BPE (RobertaTokenizer /
// tokenizers' ByteLevel + BPE + RobertaProcessing) and SentencePiece (XLMRobertaTokenizer,
// DebertaV2Tokenizer: the .model file through libsentencepiece), with offsets and word alignment.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "salient/encoding.h"

namespace salient {

struct ModelFolder;  // util/model_folder.h

namespace spm {
class Model;
}

enum class Truncation { LongestFirst, OnlyFirst, OnlySecond, DoNotTruncate };
Truncation parse_truncation(const std::string& name);  // "longest_first", "only_first", ...

struct TokenizerOptions {
  bool lowercase = true;
  std::optional<bool> strip_accents;  // unset: follows lowercase (HF behaviour)
  bool tokenize_chinese_chars = true;
  bool clean_text = true;
  int max_input_chars_per_word = 100;
  std::string unk_token = "[UNK]", cls_token = "[CLS]", sep_token = "[SEP]", pad_token = "[PAD]",
              mask_token = "[MASK]";
  std::string continuing_subword_prefix = "##";
  // Special tokens that absorb the whitespace before (lstrip) or after (rstrip) them when found in
  // the text, as HF AddedToken's flags (RoBERTa's <mask> has lstrip).
  std::vector<std::string> lstrip_tokens, rstrip_tokens;
  // Special tokens matched in HF's normalized text (AddedToken normalized=true): their offsets take
  // in the whitespace they strip, as HF's alignment does (XLM-R's converted <mask>).
  std::vector<std::string> normalized_tokens;
  // Byte-level BPE only: the ByteLevel pre-tokenizer's add_prefix_space, RobertaProcessing's
  // trim_offsets, the BPE model's ignore_merges.
  bool add_prefix_space = false, trim_offsets = true, ignore_merges = false;

  // RoBERTa's special tokens (<s>, </s>, <pad>, <unk>, <mask> with lstrip), the defaults of
  // RobertaTokenizer.
  static TokenizerOptions roberta();
};

enum class TokenizerModel { WordPiece, ByteLevelBpe, SentencePiece };

// How a SentencePiece model's pieces become a family's ids and inputs:
//   XlmRoberta  fairseq's ids (<s> 0, <pad> 1, </s> 2, <unk> 3, the model's pieces one further on,
//               <mask> last), RoBERTa's framing (<s> A </s></s> B </s>, token types 0), whitespace
//               at the start of a text kept as the first piece's "▁" (XLMRobertaTokenizer)
//   DebertaV2   the model's own ids, then the added tokens ([MASK]); BERT's framing ([CLS] A [SEP]
//               B [SEP], B of type 1); the text stripped at both ends (DebertaV2Tokenizer)
enum class SentencePieceLayout { XlmRoberta, DebertaV2 };

class Tokenizer {
 public:
  Tokenizer() = default;
  Tokenizer(std::vector<std::string> vocab, TokenizerOptions options);  // WordPiece
  // Byte-level BPE: vocab (tokens in GPT-2's byte-to-character alphabet, "Ġ" for a space) and the
  // merges in rank order; options name the special tokens (<s>, </s>, <pad>, <unk>, <mask>).
  static Tokenizer byte_level_bpe(std::vector<std::string> vocab,
                                  std::vector<std::pair<std::string, std::string>> merges, TokenizerOptions options);

  // SentencePiece: the model, the family's layout, its special tokens (options) and the tokens
  // added after the layout's own (DeBERTa's [MASK]), in id order.
  static Tokenizer sentencepiece(std::shared_ptr<const spm::Model> model, SentencePieceLayout layout,
                                 TokenizerOptions options, const std::vector<std::string>& added = {});

  // vocab.txt: one token per line, line index = id.
  static Tokenizer from_vocab_file(const std::string& path, TokenizerOptions options = {});
  // tokenizer.json (HF fast tokenizer): a WordPiece model with BertNormalizer and
  // BertPreTokenizer, or a BPE model with the ByteLevel pre-tokenizer and RobertaProcessing.
  static Tokenizer from_tokenizer_json(const std::string& path);
  // A model directory: a SentencePiece model (sentencepiece.bpe.model or spm.model, with
  // tokenizer_config.json's class and added tokens; read before a tokenizer.json beside it, whose
  // Unigram model is the same one converted), else tokenizer.json, else vocab.txt (+
  // tokenizer_config.json for do_lower_case / strip_accents), else RoBERTa's vocab.json +
  // merges.txt (+ tokenizer_config.json).
  static Tokenizer from_dir(const std::string& dir);
  // The same, for a folder resolved once (util/model_folder.h picks the files in the order above).
  static Tokenizer from_folder(const ModelFolder& folder);
  // A tokenizer directory, a tokenizer.json, a vocab.txt, a SentencePiece .model, or RoBERTa's
  // vocab.json or merges.txt (the pair from their folder): what --vocab and --tokenizer options take.
  static Tokenizer from_path(const std::string& path);

  // Full encoding with [CLS] A [SEP] ([B SEP]), or RoBERTa's <s> A </s> (</s> B </s>); type ids 0
  // for A, 1 for B (RoBERTa: 0 throughout, as HF). max_length <= 0 means no truncation.
  Encoding encode(const std::string& text, const std::optional<std::string>& pair = std::nullopt,
                  int max_length = 0, Truncation truncation = Truncation::LongestFirst) const;

  // The special tokens of the family's framing around one text or a pair, with its token types:
  // [CLS] A [SEP] (B [SEP], B of type 1), or RoBERTa's and XLM-R's <s> A </s> (</s> B </s>, type
  // 0 throughout). `encode` is tokenize, truncate, frame; a caller with tokens of its own frames
  // them here (no truncation).
  size_t special_tokens_count(bool pair) const;
  Encoding frame(const Encoding& a, const Encoding* b = nullptr) const;

  // Normalize + pre-tokenize + WordPiece without special tokens. Offsets into `text`.
  Encoding tokenize(const std::string& text) const;

  // Words as the pre-tokenizer sees them, with byte offsets (byte-level BPE: the text of each piece,
  // its leading space included).
  std::vector<std::pair<std::string, std::pair<size_t, size_t>>> pre_tokenize(const std::string& text) const;

  int64_t token_to_id(const std::string& token) const;  // unk id when absent
  const std::string& id_to_token(int64_t id) const;     // throws salient::Error when out of range
  bool has_token(const std::string& token) const;
  size_t vocab_size() const { return vocab_.size(); }
  const std::vector<std::string>& vocab() const { return vocab_; }
  const TokenizerOptions& options() const { return options_; }
  TokenizerModel model() const { return model_; }
  SentencePieceLayout sentencepiece_layout() const { return layout_; }
  // Byte-level BPE's merges in rank order (empty for WordPiece).
  const std::vector<std::pair<std::string, std::string>>& merges() const { return merges_; }
  // Whether a token continues the word of the token before it: WordPiece's "##" pieces; in
  // byte-level BPE every piece that does not start a word with "Ġ" (a space), in SentencePiece with
  // "▁". And the token's text as a word shows it (the "##" or the leading space dropped; BPE's
  // bytes decoded).
  bool continues_word(const std::string& token) const;
  std::string word_text(const std::string& token) const;

  int64_t cls_id() const { return cls_id_; }
  int64_t sep_id() const { return sep_id_; }
  int64_t pad_id() const { return pad_id_; }
  int64_t unk_id() const { return unk_id_; }
  int64_t mask_id() const { return mask_id_; }
  // [CLS], [SEP] and [PAD] (<s>, </s>, <pad> for RoBERTa): the tokens that frame an input rather
  // than carry its content. Explanations and perturbations leave them out; [UNK] and [MASK] in the
  // input are ordinary tokens (the authors' codes and Captum explain them like any other).
  bool is_structural(int64_t id) const;
  // Every id but the structural ones, [MASK] and bracketed entries ([UNK], [unused0]...): what a
  // random replacement draws from (MLM masking, SST's probabilistic fills). Ascending.
  std::vector<int64_t> ordinary_ids() const;

  // The tokenizer's files into a model directory, atomically, for salient and HF to read back:
  // WordPiece vocab.txt + tokenizer_config.json (BertTokenizer); byte-level BPE tokenizer.json +
  // tokenizer_config.json (RobertaTokenizerFast); SentencePiece the .model file under the family's
  // name + tokenizer_config.json (XLMRobertaTokenizer, DebertaV2Tokenizer: HF converts it to its
  // fast tokenizer); special_tokens_map.json for all.
  void save(const std::string& dir) const;
  void save_vocab(const std::string& path) const;  // WordPiece's vocab.txt alone, atomically

 private:
  void index_vocab();  // index_ and the special tokens' ids from vocab_ and options_
  Encoding tokenize_byte_level(const std::string& text) const;
  Encoding tokenize_sentencepiece(const std::string& text) const;
  // <s> A </s></s> B </s> with one token type (RoBERTa, XLM-R) rather than BERT's framing.
  bool roberta_framing() const;

  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int64_t> index_;
  TokenizerOptions options_;
  TokenizerModel model_ = TokenizerModel::WordPiece;
  std::vector<std::pair<std::string, std::string>> merges_;
  std::unordered_map<std::string, int> merge_rank_;  // "left right" → rank
  std::shared_ptr<const spm::Model> spm_;
  SentencePieceLayout layout_ = SentencePieceLayout::XlmRoberta;
  std::vector<int64_t> spm_ids_;  // the SentencePiece model's id → this vocabulary's
  int64_t cls_id_ = -1, sep_id_ = -1, pad_id_ = -1, unk_id_ = -1, mask_id_ = -1;
};

// For every token of `enc` (from segment `segment`), the index of the whitespace-separated word of
// `text` that contains the token's first byte; -1 for special tokens and other segments. Used to
// project word-level rationales (datasets store words split on whitespace) onto word pieces.
std::vector<int64_t> whitespace_word_ids(const std::string& text, const Encoding& enc, int64_t segment = 0);

}  // namespace salient
