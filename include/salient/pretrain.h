#pragma once
// Pre-training (docs/pretraining.md): a corpus assembled from the shared data and two Debian
// dictionaries, and BERT masked-language-model pre-training of an encoder in Hugging Face's
// BertForMaskedLM layout, as `salient corpus build` and `salient pretrain`.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace salient {

namespace pretrain {

struct MaskingOptions {
  double rate = 0.15;             // share of the ordinary pieces predicted
  double mask_share = 0.8;        // of those: replaced by [MASK]
  double random_share = 0.1;      //           by a random ordinary piece (the rest stay unchanged)
  bool whole_word = false;        // choose words (a piece and its ## continuations) instead of pieces
};

struct PretrainOptions {
  std::vector<std::string> corpus;  // files or directories
  std::string vocab;                // vocab.txt, tokenizer.json or a tokenizer directory
  std::string output_dir;
  int64_t layers = 4, hidden = 256, heads = 8, intermediate = 1024, max_length = 128;
  int64_t batch_size = 32;
  double lr = 5e-4, weight_decay = 0.01, warmup_ratio = 0.06, clip_norm = 1.0, dropout = 0.1;
  int64_t max_steps = 10000;
  double max_minutes = 0;         // stop (and save) after this much training time; 0 = no limit
  double heldout_share = 0.01;    // of the packed sequences (at least 8) kept for evaluation
  int64_t eval_every = 500, save_every = 500;
  MaskingOptions masking;
  uint64_t seed = 0;
  bool resume = false;
  int64_t stop_after_steps = 0;   // end this invocation after that many steps in all (tests, resume)
  // Continue from a saved BertForMaskedLM (its encoder and MLM head; a fresh optimizer and
  // schedule): the shape must be the options'. When the directory records its own pre-training
  // (pretrain.json), the corpus, length and held-out share must match, and that run's held-out
  // slice (and its evaluation masking) is kept, so nothing it trained on is evaluated on here.
  std::string init_dir;
};

}  // namespace pretrain

// Pre-trains into options.output_dir and returns {steps, tokens, seconds, train_sequences,
// heldout_sequences, heldout_fingerprint, history}. With options.init_dir, the shape options
// (layers, hidden, heads, intermediate, max_length) and dropout not named in `given` take the
// encoder's own values; the ones given must agree with its shape. Under mpirun every rank calls it
// (the batches are shared out).
nlohmann::json pretrain_encoder(pretrain::PretrainOptions options, const std::vector<std::string>& given = {});

struct CorpusBuildOptions {
  std::string out;               // the corpus (one text per line); its report goes to OUT.json
  std::string data_dir;          // "": the shared data
  std::string vocab;             // "": data_dir/bert_base_uncased_tokenizer (word-piece counts)
  std::string gcide = "auto";    // PATH (dictd .dict.dz), auto (Debian's dict-gcide) or none
  std::string wordnet = "auto";  // DIR (data.noun, ...), auto (Debian's wordnet-base) or none
};
// The text of every task's train split, GCIDE and WordNet glosses, with every dev and test text
// removed: the corpus and its report (returned: sources, texts, words, pieces).
nlohmann::json build_corpus(const CorpusBuildOptions& options);

}  // namespace salient
