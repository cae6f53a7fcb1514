#pragma once
// The model families salient reads, one row each (family.cpp): what config.json's names and
// defaults, the checkpoint's weight names, the embeddings and the classification head of a family
// are, and what the explainers' definitions cover. Code that depends on a family asks its row
// (ModelConfig::family()), never model_type. A family whose layers compute as one of these
// (post-LayerNorm blocks of self-attention, or DeBERTa's disentangled attention) is one new row;
// docs/adding-a-method.md, "A model family", says what else a new family touches.
#include <string>
#include <utility>
#include <vector>
#include <nlohmann/json.hpp>

namespace salient {

struct ModelConfig;
class FieldReader;

struct ModelFamily {
  enum class Input { Text, Image };
  // Relative-position terms in the attention scores (DeBERTa's DisentangledSelfAttention).
  enum class Attention { Standard, Disentangled };
  // A map from embedding_size to hidden_size: ELECTRA's embeddings_project after the embeddings'
  // LayerNorm (with a bias), DeBERTa's embed_proj before it (no bias, then the padding zeroed).
  enum class Projection { None, AfterNorm, BeforeNorm };
  // The head on the last layer: a dense layer and its activation on the first token, then the
  // output layer (FirstToken); or the encoder's final LayerNorm, then the classifier (FinalNorm, ViT).
  enum class Head { FirstToken, FinalNorm };
  enum class HeadActivation { Tanh, Gelu, Relu, PoolerHiddenAct };  // the last: DeBERTa's config field
  // Dropout before the dense layer: none (BERT, DistilBERT), the classifier's (RoBERTa's and
  // ELECTRA's ClassificationHead), the pooler's own (DeBERTa's ContextPooler).
  enum class DenseDropout { None, Classifier, Pooler };

  std::string model_type;    // config.json's model_type
  std::string architecture;  // what it computes as: XLM-RoBERTa is "roberta"
  std::string class_prefix;  // of HF's class names: "XLMRoberta" for XLMRobertaForSequenceClassification
  Input input = Input::Text;

  // config.json: the family's names for canonical (BertConfig) fields, its config class's defaults
  // for fields a file leaves out, and the fields only it has (read: taken from the reader, or read
  // from a copy where they stay in `extra`; write: into the file salient saves).
  std::vector<std::pair<std::string, std::string>> config_names;
  void (*set_defaults)(ModelConfig&) = nullptr;
  void (*read_fields)(FieldReader&, ModelConfig&, const std::string& path) = nullptr;
  void (*write_fields)(nlohmann::json&, const ModelConfig&) = nullptr;

  // Weights: HF's name of a canonical (BERT) name is weight_prefix + the name, with the layers
  // under layers_at and, inside a layer, the first of layer_names that matches renamed.
  std::string weight_prefix;
  std::string layers_at = "encoder.layer.";
  std::vector<std::pair<std::string, std::string>> layer_names;
  bool pooler_in_base = false;  // BERT's pooler sits inside the base model (bert.pooler.dense)

  bool positions_after_padding = false;  // RoBERTa numbers positions from pad_token_id + 1
  Projection projection = Projection::None;
  Attention attention = Attention::Standard;

  Head head = Head::FirstToken;
  std::string head_dense;   // canonical prefix of the dense layer (FinalNorm: of the LayerNorm)
  std::string head_output;  // canonical prefix of the output layer
  HeadActivation head_activation = HeadActivation::Tanh;
  DenseDropout dense_dropout = DenseDropout::None;
  bool dense_sized_by_pooler = false;  // DeBERTa's pooler_hidden_size, else hidden_size
  bool mix_replaces_dense = false;     // with a scalar mix the head is the output layer alone

  // The LRP rules (explain/lrp) follow BERT's modules: its pooler and classifier, its attention.
  bool lrp_rules = false;
  std::string lrp_refusal;  // why they cannot extend to the family, where its layers say so

  std::string config_name(const std::string& canonical) const;  // config.json's name of a field
  std::string hf_weight_name(const std::string& canonical) const;
};

const std::vector<ModelFamily>& model_families();
// The row of a model_type; nullptr when salient does not read it.
const ModelFamily* find_model_family(const std::string& model_type);
// "bert, roberta, ...": for errors that name the supported types.
std::string supported_model_types();
// Whether a canonical weight belongs to the task head (classifier, pooler, scalar mix), which
// base-model files and pre-training leave out.
bool is_head_weight(const std::string& canonical);
// The model_type of an HF class name ("BertForSequenceClassification" → "bert"); "" when not ours.
std::string model_type_from_architecture(const std::string& class_name);

}  // namespace salient
