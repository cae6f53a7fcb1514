#pragma once
// BERT-family sequence classifier (and the vision transformer, ViT: patch embeddings in, pre-LN
// blocks) written as plain functions over named weight tensors, with the
// attention of every layer open to autograd: it can be read (probabilities, logits, queries, keys,
// hidden states) and replaced, scaled or head-masked, and every step is differentiable (also to
// second order). Weights live in one map under canonical BERT names; checkpoint.h maps them to
// each family's Hugging Face names.
#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/embeddings.h"
#include "model/heads.h"

namespace salient {

// A @ B for [..., M, K] × [..., K, N] with identical leading dimensions: on CPU (float32/64) one
// CBLAS gemm per matrix, spread over the intra-op threads; differentiable to any order. Other
// cases (broadcast leading dims, CUDA, other dtypes) are torch::matmul. Attention's QKᵀ and A·V
// are hundreds of small matrices per batch, where ATen's bmm costs ~3x more (docs/PERFORMANCE.md).
torch::Tensor batched_matmul(const torch::Tensor& a, const torch::Tensor& b);

// Per-layer interventions on the attention probabilities, applied in this order:
// override (replace softmax output) → scale (multiply) → head_mask (multiply per head).
// Undefined tensors are not applied.
struct LayerHooks {
  torch::Tensor attn_override;  // [B, H, L, L]
  torch::Tensor attn_scale;     // broadcastable to [B, H, L, L], e.g. [B,1,1,1] of α
  torch::Tensor head_mask;      // [H] or [B, H]
};

struct ForwardRequest {
  torch::Tensor input_ids;       // [B, L] int64 (may be undefined when inputs_embeds is given)
  torch::Tensor token_type_ids;  // [B, L] int64, optional (zeros)
  torch::Tensor attention_mask;  // [B, L] 1 = token, 0 = padding; optional (all ones)
  torch::Tensor inputs_embeds;   // [B, L, E]: used instead of the word-embedding lookup (ViT: [B, P, Hd]
                                 // patch embeddings instead of pixel_values)
  torch::Tensor pixel_values;    // ViT only: [B, C, H, W]
  std::vector<LayerHooks> hooks; // empty, or one per layer
  bool want_attentions = false;        // probabilities actually used (after hooks)
  bool want_attention_logits = false;  // scaled scores + mask, before softmax
  bool want_queries_keys = false;      // [B, H, L, D] each
  bool want_hidden_states = false;     // embeddings output + each layer's output
};

struct ForwardResult {
  torch::Tensor logits;  // [B, num_labels]
  std::vector<torch::Tensor> attentions, attention_logits, queries, keys;
  std::vector<torch::Tensor> hidden_states;  // num_layers + 1 when requested
};

// Q, K, V of one layer, already split into heads: [B, H, L, D].
struct QKV {
  torch::Tensor q, k, v;
};

class Transformer {
 public:
  Transformer() = default;
  // Random initialisation as in HF (normal(0, 0.02), zero biases, LayerNorm 1/0), seeded.
  Transformer(ModelConfig config, uint64_t seed);

  ForwardResult forward(const ForwardRequest& req) const;
  torch::Tensor logits(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids = {},
                       const torch::Tensor& attention_mask = {}) const;

  // Building blocks, for methods that re-run part of the network (e.g. attention attribution
  // reuses the layers below the attributed one). The text ones are a one-line error on a ViT and
  // the image ones on a text model.
  torch::Tensor word_embeddings(const torch::Tensor& input_ids) const;  // [B, L, E]
  torch::Tensor embed(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                      const torch::Tensor& attention_mask, const torch::Tensor& inputs_embeds = {}) const;
  // Position (+ token type) embeddings [B, L, E]: what embed() adds to the word embeddings
  // before its LayerNorm.
  torch::Tensor embedding_offsets(const torch::Tensor& token_type_ids, const torch::Tensor& attention_mask,
                                  int64_t batch, int64_t length) const;
  // ViT: each patch's projection [B, P, Hd] (PatchEmbeddings::patches), and [CLS] + positions on
  // top of them: the encoder's input [B, 1 + P, Hd].
  torch::Tensor patch_embeddings(const torch::Tensor& pixel_values) const;
  torch::Tensor embed_patches(const torch::Tensor& patch_embeds) const;
  // Additive mask [B, 1, 1, L]: 0 for tokens, -10000 for padding.
  torch::Tensor extended_mask(const torch::Tensor& attention_mask, int64_t batch, int64_t length) const;
  // What a layer's attention reads: its input, or in a pre-LN block (ViT) LN_before(input).
  torch::Tensor attention_input(int64_t layer, const torch::Tensor& hidden) const;
  QKV project_qkv(int64_t layer, const torch::Tensor& hidden) const;
  // Pre-softmax scores of `layer`: QKᵀ/√D + mask, and for DeBERTa the disentangled terms
  // (content→position, position→content over bucketed relative positions) with its √(D·(1 + terms)).
  torch::Tensor attention_scores(int64_t layer, const QKV& qkv, const torch::Tensor& ext_mask) const;
  // Context from probabilities and V, then output projection, residual, LayerNorm, feed-forward.
  torch::Tensor finish_layer(int64_t layer, const torch::Tensor& hidden, const torch::Tensor& probs,
                             const torch::Tensor& v) const;
  // The same from the context [B, L, Hd] (heads concatenated): output projection onwards.
  torch::Tensor finish_from_context(int64_t layer, const torch::Tensor& hidden, const torch::Tensor& context) const;
  // The layer's output at the first token only, [B, 1, Hd] (what a classifier head reads from the
  // last layer). Keys and values are never formed: q·(W_k h + b_k) = (W_kᵀq)·h + q·b_k, where
  // q·b_k is the same for every key and cancels in the softmax, and Σ_j p_j (W_v h_j + b_v) =
  // W_v (Σ_j p_j h_j) + b_v since Σ_j p_j = 1. A row costs O(H·L·Hd + Hd²) instead of O(L·Hd²).
  // Equal to layer_forward's first row up to rounding; no hooks.
  torch::Tensor first_token_layer(int64_t layer, const torch::Tensor& hidden, const torch::Tensor& ext_mask) const;
  torch::Tensor layer_forward(int64_t layer, const torch::Tensor& hidden, const torch::Tensor& ext_mask,
                              const LayerHooks* hooks = nullptr, ForwardResult* record = nullptr,
                              const ForwardRequest* req = nullptr) const;
  // Runs layers [from, num_layers) with optional hooks (indexed by absolute layer); `states`
  // (optional) gets each layer's output appended.
  torch::Tensor run_layers(int64_t from, torch::Tensor hidden, const torch::Tensor& ext_mask,
                           const std::vector<LayerHooks>& hooks = {}, std::vector<torch::Tensor>* states = nullptr) const;
  // The config's hidden activation (GELU exact/tanh, ReLU), also what an MLM head applies.
  torch::Tensor activation(const torch::Tensor& x) const;
  // The task head (model/heads.h) on the last hidden states: [B, L, Hd] → logits. Only for a
  // head that reads the last layer (config().pools_every_layer() false; else a one-line error).
  torch::Tensor classify(const torch::Tensor& last_hidden) const;
  // The task head on every state: the embeddings' output and each layer's (num_layers + 1, as
  // ForwardResult::hidden_states; batch sizes may mix 1 and B). For any pooling.
  torch::Tensor classify_states(const std::vector<torch::Tensor>& states, const torch::Tensor& attention_mask) const;
  // The head reads every layer (a scalar mix, config.h), so methods that re-run the last layers
  // must keep every state, and the first-token shortcut (first_token_layer) does not apply.
  bool pools_every_layer() const { return config_.pools_every_layer(); }
  const TaskHead& head() const { return *head_; }

  const ModelConfig& config() const { return config_; }
  int64_t num_layers() const { return config_.num_hidden_layers; }
  int64_t num_heads() const { return config_.num_attention_heads; }

  // Canonical name → tensor. Names are BERT's without the "bert." prefix, e.g.
  // "encoder.layer.0.attention.self.query.weight"; see checkpoint.cpp for the other families.
  const std::map<std::string, torch::Tensor>& weights() const { return weights_; }
  std::vector<std::string> expected_weight_names() const;
  // Replaces the weights (after validation of names and shapes by the caller) and rebinds.
  void set_weights(std::map<std::string, torch::Tensor> weights);
  std::vector<torch::Tensor> parameters() const;
  void set_requires_grad(bool on);
  void to(torch::Device device, torch::Dtype dtype);
  void to(torch::Dtype dtype);
  torch::Device device() const;
  torch::Dtype dtype() const;
  int64_t parameter_count() const;

  // Typed views of the weights (the same tensors as weights()), for code that re-runs parts of the
  // network (IG's fused path, LRP): no string lookups outside src/model.
  // ln1 follows the attention (post-LN) or precedes it (pre-LN, ViT's layernorm_before); ln2
  // follows the feed-forward or precedes it (layernorm_after).
  struct LayerWeights {
    torch::Tensor q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b, ln1_w, ln1_b, i_w, i_b, out_w, out_b, ln2_w, ln2_b;
    torch::Tensor pos_key_w, pos_key_b, pos_query_w, pos_query_b;  // DeBERTa without share_att_key
  };
  using EmbeddingWeights = TextEmbeddingWeights;
  struct PoolerClassifierWeights {  // BERT's head: tanh pooler on [CLS], then the classifier
    torch::Tensor pooler_w, pooler_b, classifier_w, classifier_b;
  };
  const LayerWeights& layer(int64_t i) const { return layers_.at(i); }
  const EmbeddingWeights& embedding_weights() const { return text_embeddings().weights(); }
  // The input pieces (model/embeddings.h); one-line error for the other modality.
  const TextEmbeddings& text_embeddings() const;
  const PatchEmbeddings& patch_embedding_piece() const;
  // One-line error for model types whose head is not BERT's pooler + classifier.
  PoolerClassifierWeights pooler_classifier(const std::string& who) const;

  bool training() const { return training_; }
  void train(bool on = true) { training_ = on; }
  void eval() { training_ = false; }
  // A deep copy (independent weights).
  Transformer clone() const;
  // A deep copy whose position table has `positions` rows (max_position_embeddings). Rows beyond
  // the learned ones repeat the learned table cyclically, as Longformer initialised its longer
  // table from RoBERTa's (Beltagy et al. 2020), so fine-tuning starts from sensible statistics.
  Transformer with_position_table(int64_t positions) const;

 private:
  void bind();
  torch::Tensor dropout(const torch::Tensor& x, double p) const;
  // DeBERTa: the relative positions of L tokens (bucketed as HF's build_relative_position) and the
  // disentangled attention terms of a layer, already divided by their scale.
  torch::Tensor relative_positions(int64_t length) const;
  torch::Tensor disentangled_bias(int64_t layer, const QKV& qkv) const;
  const torch::Tensor& w(const std::string& name) const;

  ModelConfig config_;
  std::map<std::string, torch::Tensor> weights_;
  std::vector<LayerWeights> layers_;
  torch::Tensor rel_embeddings_, rel_ln_w_, rel_ln_b_;  // DeBERTa's relative position table (+ LayerNorm)
  TextEmbeddings text_;       // bound by bind() for text models
  PatchEmbeddings patches_;   // bound by bind() for a ViT
  std::shared_ptr<const TaskHead> head_;  // bound to weights_' tensors by bind()
  bool training_ = false;
};

// Shapes of every canonical weight for a config (used for init and checkpoint validation).
std::map<std::string, std::vector<int64_t>> weight_shapes(const ModelConfig& config);

}  // namespace salient
