#pragma once
// Model configuration read from (and written to) a Hugging Face config.json. One canonical set of
// fields (BertConfig's names) covers every family salient reads; `model_type` names the family,
// whose row (model/family.h) says how its file, weights, embeddings and head differ.
#include <cstdint>
#include <map>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "model/family.h"

namespace salient {

enum class Activation { GeluExact, GeluTanh, Relu };
Activation parse_activation(const std::string& name, const std::string& where);
std::string activation_name(Activation a);

struct ModelConfig {
  std::string model_type = "bert";  // bert | roberta | xlm-roberta | electra | distilbert | deberta-v2 | vit
  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;
  int64_t embedding_size = -1;  // ELECTRA may differ from hidden_size (then a projection); -1 = hidden_size
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  Activation hidden_act = Activation::GeluExact;
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  double classifier_dropout = -1;  // -1: use hidden_dropout_prob
  double layer_norm_eps = 1e-12;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;  // 0 for DistilBERT (no token-type embeddings)
  int64_t pad_token_id = 0;
  // RoBERTa numbers positions from pad_token_id + 1 and skips padding.
  int64_t position_offset = 0;
  bool sinusoidal_pos_embds = false;  // DistilBERT option (weights still stored)
  int64_t num_labels = 2;
  std::vector<std::string> id2label;  // size num_labels
  std::string problem_type = "single_label_classification";
  std::vector<std::string> architectures;
  // ViT (ViTConfig): square images of num_channels × image_size², cut into patch_size² patches.
  int64_t image_size = 224, patch_size = 16, num_channels = 3;
  // What the classification head reads (config.json "salient_pooling", absent = first_token):
  //   first_token     the last layer's first token ([CLS]/<s>), as Hugging Face's heads
  //   scalar_mix      γ · Σ_l softmax(c)_l · mean over non-padding tokens of state l, over the
  //                   embeddings' output and every layer's (L + 1 states): the pooling of the
  //                   SMaT authors' models (learning-scaffold, smat/models/scalar_mix.py)
  //   scalar_mix_cls  the same mix of every state's first token instead of the token mean
  // With a scalar mix, BERT's head is its classifier alone (no pooler) and ViT's skips the final
  // LayerNorm, as in the authors' models; the other families keep their two-layer head.
  std::string pooling = "first_token";
  // DeBERTa-v2/v3 (DebertaV2Config), read from config.json and kept there (extra) unchanged:
  // disentangled attention over relative positions (Transformer::attention_scores), the embeddings
  // multiplied by the mask, and ContextPooler's head.
  struct Deberta {
    bool relative_attention = false;
    int64_t max_relative_positions = -1;  // < 1: max_position_embeddings
    int64_t position_buckets = -1;        // > 0: log buckets (HF make_log_bucket_position)
    bool c2p = false, p2c = false;        // pos_att_type
    bool share_att_key = false;           // positions projected by the layer's query/key maps
    bool norm_rel_ebd = false;            // "layer_norm" in norm_rel_ebd: LayerNorm on the relative embeddings
    bool position_biased_input = true;    // absolute position embeddings added to the input
    int64_t pooler_hidden_size = -1;      // -1: hidden_size
    Activation pooler_hidden_act = Activation::GeluExact;
    double pooler_dropout = 0;
    // Rows of the relative embedding table: 2 × the attention span.
    int64_t span(int64_t max_position_embeddings) const {
      return position_buckets > 0 ? position_buckets
                                  : max_relative_positions < 1 ? max_position_embeddings : max_relative_positions;
    }
  } deberta;
  nlohmann::json extra;  // unknown fields, written back unchanged

  // Images in, patch embeddings, pre-LayerNorm blocks (HF ViTLayer), a final LayerNorm.
  bool is_vision() const { return family().input == ModelFamily::Input::Image; }
  // Relative-position terms in the attention (DeBERTa), read into `deberta`.
  bool is_deberta() const { return family().attention == ModelFamily::Attention::Disentangled; }
  // The row of model_type in the family table (model/family.h); throws when salient does not read it.
  // Code that depends on the layers, embeddings, head or weight names asks this, not model_type.
  const ModelFamily& family() const;
  bool pre_layer_norm() const { return is_vision(); }
  bool pools_every_layer() const { return pooling != "first_token"; }
  // Why the LRP methods (their rules need BERT's pooler + classifier on the last layer's [CLS])
  // cannot run on this model, as one line; empty when they can.
  std::string lrp_refusal() const;
  static bool is_supported_pooling(const std::string& name) {
    return name == "first_token" || name == "scalar_mix" || name == "scalar_mix_cls";
  }
  int64_t num_patches() const { return (image_size / patch_size) * (image_size / patch_size); }

  int64_t head_dim() const { return hidden_size / num_attention_heads; }
  int64_t embed_dim() const { return embedding_size > 0 ? embedding_size : hidden_size; }
  double classifier_dropout_prob() const { return classifier_dropout >= 0 ? classifier_dropout : hidden_dropout_prob; }
  // Sequence length limit: the position table after the offset; a ViT's [CLS] and its patches.
  int64_t max_tokens() const { return is_vision() ? 1 + num_patches() : max_position_embeddings - position_offset; }

  // Throws salient::Error naming `path` and the field.
  static ModelConfig from_json(const nlohmann::json& j, const std::string& path);
  static ModelConfig from_file(const std::string& path);
  nlohmann::json to_json() const;  // HF field names for this model_type
  void validate(const std::string& path) const;
  int64_t label_id(const std::string& label) const;  // throws on unknown label name
};

}  // namespace salient
