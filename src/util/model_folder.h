#pragma once
// A model folder's layout, worked out in one place (issue #87): where its config.json, weights and
// tokenizer files are, for a Hugging Face folder and for an old-layout sentence-transformers one
// (modules.json at the top, the Transformer module's files in a sub-folder such as 0_Transformer).
// The checkpoint reader, the tokenizer, the masked-LM head's reader and the weights' fingerprint ask
// resolve_model_folder which folder and which files; only the tokenizer's own side files
// (tokenizer_config.json, added_tokens.json) are then read from the folder it names.
#include <string>

namespace salient {

// Which files a folder's tokenizer is read from, in the order Tokenizer looks for them.
enum class TokenizerFiles {
  none,
  sentencepiece,      // sentencepiece.bpe.model (XLM-R) or spm.model (DeBERTa-v2/v3)
  tokenizer_json,     // Hugging Face's tokenizer.json
  vocab_txt,          // BERT's WordPiece vocabulary
  vocab_json_merges,  // RoBERTa / GPT-2's byte-level BPE: vocab.json with merges.txt
};

struct ModelFolder {
  std::string dir;      // as the caller named it: errors name it
  std::string files;    // the folder holding the files: dir, or the sentence-transformers module's
  std::string config;   // files/config.json (perhaps missing: require_config)
  std::string weights;  // files/model.safetensors (perhaps missing: require_weights)
  TokenizerFiles tokenizer = TokenizerFiles::none;
  std::string tokenizer_path;  // the SentencePiece model, tokenizer.json or vocab.txt; `files` for vocab.json + merges.txt

  // config, else a one-line error: the directory is missing, or it has no config.json.
  const std::string& require_config() const;
  // weights, else a one-line error (naming pytorch_model.bin when only that is there).
  const std::string& require_weights() const;
};

// Never fails: what is missing is found out by the require_* calls, whose errors name `dir`.
ModelFolder resolve_model_folder(const std::string& dir);

// The SentencePiece model in `dir` (sentencepiece.bpe.model, spm.model), as XLMRobertaTokenizer and
// DebertaV2Tokenizer name it; "" when there is none.
std::string sentencepiece_file(const std::string& dir);

}  // namespace salient
