#pragma once
// Input embeddings: what turns a model's input into the encoder's first hidden states, one piece
// per kind of input, so a new modality adds a piece instead of editing the encoder (as the task
// heads of heads.h do at the other end).
//   TextEmbeddings   word + position (+ token type) embeddings, LayerNorm, dropout, and ELECTRA's
//                    projection when its embedding size differs from the hidden size
//   PatchEmbeddings  a ViT's: each patch_size² patch projected (HF's Conv2d with stride = kernel),
//                    a learned [CLS] in front, learned position embeddings, dropout
// Both are bound to tensors of the Transformer's weight map (they train and move with it).
#include <torch/torch.h>

#include <functional>
#include <string>

#include "model/config.h"

namespace salient {

using WeightLookup = std::function<const torch::Tensor&(const std::string&)>;
using OptionalWeightLookup = std::function<torch::Tensor(const std::string&)>;

struct TextEmbeddingWeights {
  torch::Tensor word, position, token_type;  // token_type undefined without token types (DistilBERT)
  torch::Tensor ln_w, ln_b;
  torch::Tensor project_w, project_b;        // ELECTRA's embeddings_project, else undefined
};

class TextEmbeddings {
 public:
  TextEmbeddings() = default;
  TextEmbeddings(const ModelConfig& config, const WeightLookup& weight, const OptionalWeightLookup& optional);

  torch::Tensor words(const torch::Tensor& input_ids) const;  // [B, L, E]
  // Position (+ token type) embeddings [B, L, E]: what forward() adds to the word embeddings
  // before its LayerNorm.
  torch::Tensor offsets(const torch::Tensor& token_type_ids, const torch::Tensor& attention_mask, int64_t batch,
                        int64_t length) const;
  // [B, L, Hd]; inputs_embeds (word embeddings) replace the lookup of input_ids when given.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                        const torch::Tensor& attention_mask, const torch::Tensor& inputs_embeds, bool training) const;
  const TextEmbeddingWeights& weights() const { return w_; }

 private:
  ModelConfig config_;
  TextEmbeddingWeights w_;
};

struct PatchEmbeddingWeights {
  torch::Tensor projection_w, projection_b;  // [Hd, C, p, p], [Hd]
  torch::Tensor cls_token;                   // [1, 1, Hd]
  torch::Tensor position;                    // [1, 1 + P, Hd]
};

class PatchEmbeddings {
 public:
  PatchEmbeddings() = default;
  PatchEmbeddings(const ModelConfig& config, const WeightLookup& weight);

  // pixel_values [B, C, H, W] (H = W = image_size) → each patch's projection [B, P, Hd], patches
  // in row-major order: the analogue of word embeddings, what gradient explainers attribute to.
  torch::Tensor patches(const torch::Tensor& pixel_values) const;
  // [CLS] + patch embeddings + positions, dropout: [B, 1 + P, Hd].
  torch::Tensor forward(const torch::Tensor& patch_embeds, bool training) const;
  const PatchEmbeddingWeights& weights() const { return w_; }

 private:
  ModelConfig config_;
  PatchEmbeddingWeights w_;
};

}  // namespace salient
