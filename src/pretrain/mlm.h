#pragma once
// BERT masked-language-model pre-training (Devlin et al. 2019): the MLM head in Hugging Face's
// BertForMaskedLM layout, dynamic masking, packing of a plain-text corpus into full-length
// sequences, and the training loop (AdamW, warmup + linear decay, clipping, checkpoints with exact
// resume, a held-out slice for MLM loss and accuracy).
#include <torch/torch.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/checkpoint.h"
#include "salient/pretrain.h"  // MaskingOptions, PretrainOptions
#include "model/transformer.h"
#include "text/tokenizer.h"

namespace salient::pretrain {

// cls.predictions: transform.dense (Hd → Hd), the config's activation, transform.LayerNorm, then
// the decoder tied to the word embeddings plus its own bias (`cls.predictions.bias`).
struct MlmHead {
  torch::Tensor dense_w, dense_b, ln_w, ln_b, bias;
  std::vector<std::pair<std::string, torch::Tensor>> named() const;  // HF names, e.g. cls.predictions.bias
};
// HF's initialisation (normal(0, 0.02) weights, zero biases, LayerNorm 1/0), seeded; on the model's device.
MlmHead init_mlm_head(const Transformer& model, uint64_t seed);
// Vocabulary logits [N, V] of hidden states [N, Hd]. Callers pass only the masked positions: the
// vocabulary projection is the costliest product and is computed nowhere else.
torch::Tensor mlm_logits(const Transformer& model, const MlmHead& head, const torch::Tensor& hidden);

// ---- masking ----
struct MaskedBatch {
  torch::Tensor input_ids;       // [B, L]
  torch::Tensor labels;          // [B, L] original id where predicted, -100 elsewhere
  torch::Tensor attention_mask;  // [B, L]
};
// Token level: each ordinary piece independently with probability `rate` (HF's
// DataCollatorForLanguageModeling). Whole words: words in random order until round(rate × pieces)
// pieces are chosen, a word never split (HF's DataCollatorForWholeWordMask). Structural tokens
// ([CLS], [SEP], padding) are never chosen. `ordinary` = tokenizer.ordinary_ids().
MaskedBatch mask_batch(const std::vector<std::vector<int64_t>>& sequences, const Tokenizer& tokenizer,
                       const std::vector<int64_t>& ordinary, const MaskingOptions& options, std::mt19937_64& rng);

// Texts tokenized and concatenated with [SEP] after each, cut into sequences of max_length:
// [CLS] + max_length − 1 pieces (the last, shorter remainder is dropped).
std::vector<std::vector<int64_t>> pack_texts(const std::vector<std::string>& texts, const Tokenizer& tokenizer,
                                             int64_t max_length);

// Lines of plain-text files (one sentence or paragraph per line; blank lines skipped); a directory
// stands for its regular files in name order. Missing paths and an empty result are errors.
std::vector<std::string> read_corpus(const std::vector<std::string>& paths);

// ---- checkpoints in BertForMaskedLM layout ----
// config.json (architectures BertForMaskedLM), model.safetensors (bert.* encoder without pooler,
// cls.predictions.*; the decoder weight is the word embedding, stored once as HF does), vocab.
void save_mlm_model(const Transformer& model, const MlmHead& head, const Tokenizer& tokenizer,
                    const std::string& dir);
struct MlmModel {
  Transformer model;
  MlmHead head;
  Tokenizer tokenizer;
};
// `options`: e.g. another dropout (allow_new_head is always set: the file has no classifier).
MlmModel load_mlm_model(const std::string& dir, LoadOptions options = {});

// ---- training ----
// The shape flags of `salient pretrain` and the config fields they set. With --init,
// pretrain_encoder (salient/pretrain.h) gives the unset ones the encoder's values and pretrain_mlm
// checks that the others agree.
struct EncoderShapeField {
  const char* flag;
  int64_t ModelConfig::*config;
  int64_t PretrainOptions::*option;
};
inline constexpr EncoderShapeField kEncoderShapeFields[] = {
    {"--layers", &ModelConfig::num_hidden_layers, &PretrainOptions::layers},
    {"--hidden", &ModelConfig::hidden_size, &PretrainOptions::hidden},
    {"--heads", &ModelConfig::num_attention_heads, &PretrainOptions::heads},
    {"--intermediate", &ModelConfig::intermediate_size, &PretrainOptions::intermediate},
    {"--max-length", &ModelConfig::max_position_embeddings, &PretrainOptions::max_length}};
struct HeldoutEval {
  int64_t step = 0;
  double loss = 0, accuracy = 0;
};
struct PretrainResult {
  int64_t steps = 0, tokens = 0;  // tokens: non-padding pieces seen in training
  double seconds = 0;
  int64_t train_sequences = 0, heldout_sequences = 0;
  std::string heldout_fingerprint;   // a hash of the held-out pieces (an --init run checks its encoder's)
  std::vector<HeldoutEval> history;  // step 0 = before training
  nlohmann::json to_json() const;
};
PretrainResult pretrain_mlm(const PretrainOptions& options);
// MLM loss and accuracy over `sequences` with masking drawn from `seed` (the same every call).
HeldoutEval evaluate_mlm(const Transformer& model, const MlmHead& head, const Tokenizer& tokenizer,
                         const std::vector<std::vector<int64_t>>& sequences, const MaskingOptions& masking,
                         uint64_t seed, int64_t batch_size);

}  // namespace salient::pretrain
