#include "model/family.h"

#include <algorithm>
#include <cctype>

#include "model/config.h"
#include "model/config_fields.h"

namespace salient {

using nlohmann::json;

namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// ---- config.json: each config class's defaults and the fields only some families have ----

void roberta_defaults(ModelConfig& c) {
  c.vocab_size = 50265;
  c.pad_token_id = 1;
}

void xlm_roberta_defaults(ModelConfig& c) { c.pad_token_id = 1; }  // BertConfig's vocab_size default

void electra_defaults(ModelConfig& c) {
  c.embedding_size = 128;
  c.hidden_size = 256;
  c.num_attention_heads = 4;
  c.intermediate_size = 1024;
}

void deberta_defaults(ModelConfig& c) {  // DebertaV2Config's
  c.vocab_size = 128100;
  c.hidden_size = 1536;
  c.num_hidden_layers = 24;
  c.num_attention_heads = 24;
  c.intermediate_size = 6144;
  c.type_vocab_size = 0;
  c.layer_norm_eps = 1e-7;
}

void distilbert_defaults(ModelConfig& c) {
  c.num_hidden_layers = 6;
  c.classifier_dropout = 0.2;  // seq_classif_dropout
  c.type_vocab_size = 0;
}

void vit_defaults(ModelConfig& c) {  // ViTConfig: no vocabulary, positions or token types; no dropout
  c.vocab_size = 0;
  c.type_vocab_size = 0;
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.0;
  c.max_position_embeddings = 0;
}

void read_positions(FieldReader& r, ModelConfig& c) {
  c.max_position_embeddings = r.get_int("max_position_embeddings", c.max_position_embeddings);
  c.pad_token_id = r.get_int("pad_token_id", c.pad_token_id, /*null_means_default=*/true);
}

void read_dropout_and_norm(FieldReader& r, ModelConfig& c) {
  // classifier_dropout: null means "use hidden_dropout_prob".
  if (r.rest().contains("classifier_dropout") && r.rest()["classifier_dropout"].is_null())
    r.take("classifier_dropout");
  else
    c.classifier_dropout = r.get_double("classifier_dropout", c.classifier_dropout);
  c.layer_norm_eps = r.get_double("layer_norm_eps", c.layer_norm_eps);
}

void read_text(FieldReader& r, ModelConfig& c, const std::string&) {
  read_positions(r, c);
  read_dropout_and_norm(r, c);
  c.type_vocab_size = r.get_int("type_vocab_size", c.type_vocab_size);
}

void write_positions(json& j, const ModelConfig& c) {
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["pad_token_id"] = c.pad_token_id;
}

void write_dropout_and_norm(json& j, const ModelConfig& c) {
  j["classifier_dropout"] = c.classifier_dropout >= 0 ? json(c.classifier_dropout) : json(nullptr);
  j["layer_norm_eps"] = c.layer_norm_eps;
}

void write_text(json& j, const ModelConfig& c) {
  write_positions(j, c);
  write_dropout_and_norm(j, c);
  j["type_vocab_size"] = c.type_vocab_size;
}

void read_electra(FieldReader& r, ModelConfig& c, const std::string& path) {
  read_text(r, c, path);
  c.embedding_size = r.get_int("embedding_size", c.embedding_size);
}

void write_electra(json& j, const ModelConfig& c) {
  write_text(j, c);
  j["embedding_size"] = c.embed_dim();
}

void read_distilbert(FieldReader& r, ModelConfig& c, const std::string&) {
  read_positions(r, c);
  c.classifier_dropout = r.get_double("seq_classif_dropout", c.classifier_dropout);
  c.sinusoidal_pos_embds = r.get_bool("sinusoidal_pos_embds", false);
  // DistilBERT has no token types and hard-codes LayerNorm eps=1e-12.
  c.type_vocab_size = 0;
  c.layer_norm_eps = 1e-12;
}

void write_distilbert(json& j, const ModelConfig& c) {
  write_positions(j, c);
  j["seq_classif_dropout"] = c.classifier_dropout_prob();  // a plain float in DistilBertConfig
  j["sinusoidal_pos_embds"] = c.sinusoidal_pos_embds;
}

void read_vit(FieldReader& r, ModelConfig& c, const std::string& path) {
  c.image_size = r.get_int("image_size", c.image_size);
  c.patch_size = r.get_int("patch_size", c.patch_size);
  c.num_channels = r.get_int("num_channels", c.num_channels);
  // Without biases on Q/K/V the canonical weights would not match; refuse rather than guess.
  if (!r.get_bool("qkv_bias", true)) fail("{}: field 'qkv_bias' is false: only ViTs with Q/K/V biases are supported", path);
  // validate() names a non-positive size; num_patches() would divide by it.
  c.max_position_embeddings = c.patch_size > 0 ? 1 + c.num_patches() : 0;
  read_dropout_and_norm(r, c);
}

void write_vit(json& j, const ModelConfig& c) {
  j["image_size"] = c.image_size;
  j["patch_size"] = c.patch_size;
  j["num_channels"] = c.num_channels;
  j["qkv_bias"] = true;
  write_dropout_and_norm(j, c);
}

// DebertaV2Config's fields (HF's getattr defaults where the config leaves them out). What salient
// does not compute (a convolution after the first layer, another head size) is an error, not a guess.
void read_deberta(FieldReader r, ModelConfig& c, const std::string& path) {
  ModelConfig::Deberta& d = c.deberta;
  d.relative_attention = r.get_bool("relative_attention", false);
  d.max_relative_positions = r.get_int("max_relative_positions", -1);
  d.position_buckets = r.get_int("position_buckets", -1);
  d.share_att_key = r.get_bool("share_att_key", false);
  d.position_biased_input = r.get_bool("position_biased_input", true);
  const nlohmann::json types = r.take("pos_att_type");
  std::vector<std::string> kinds;
  if (types.is_string()) {
    std::string s = types.get<std::string>();
    for (size_t at = 0; at <= s.size();) {
      const size_t bar = std::min(s.find('|', at), s.size());
      kinds.push_back(s.substr(at, bar - at));
      at = bar + 1;
    }
  } else if (types.is_array()) {
    for (const nlohmann::json& t : types) {
      if (!t.is_string()) fail("{}: field 'pos_att_type' must be a list of strings (got {})", path, show_json(types));
      kinds.push_back(t.get<std::string>());
    }
  } else if (!types.is_null()) {
    fail("{}: field 'pos_att_type' must be a string or a list (got {})", path, show_json(types));
  }
  for (std::string k : kinds) {
    for (char& ch : k) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    k.erase(0, k.find_first_not_of(' '));
    k.erase(k.find_last_not_of(' ') + 1);
    if (k == "c2p") d.c2p = true;
    else if (k == "p2c") d.p2c = true;
    else if (!k.empty() && k != "none")
      fail("{}: field 'pos_att_type': unsupported '{}' (supported: c2p, p2c)", path, one_line(k));
  }
  const std::string norm = r.get_string("norm_rel_ebd", "none");
  d.norm_rel_ebd = norm.find("layer_norm") != std::string::npos;
  d.pooler_hidden_size = r.get_int("pooler_hidden_size", c.hidden_size);
  d.pooler_hidden_act = parse_activation(r.get_string("pooler_hidden_act", "gelu"),
                                         fmt::format("{}: field 'pooler_hidden_act'", path));
  d.pooler_dropout = r.get_double("pooler_dropout", 0);
  c.embedding_size = r.get_int("embedding_size", c.hidden_size);
  if (r.rest().contains("cls_dropout") && !r.rest()["cls_dropout"].is_null())
    c.classifier_dropout = r.get_double("cls_dropout", c.classifier_dropout);  // the classifier's dropout
  if (r.get_int("conv_kernel_size", 0) > 0)
    fail("{}: field 'conv_kernel_size': DeBERTa's convolution layer is not supported", path);
  const int64_t head = r.get_int("attention_head_size", c.hidden_size / std::max<int64_t>(c.num_attention_heads, 1));
  if (head * c.num_attention_heads != c.hidden_size)
    fail("{}: field 'attention_head_size' ({}) × heads must equal hidden_size ({})", path, head, c.hidden_size);
  if (d.relative_attention && d.span(c.max_position_embeddings) < 1)
    fail("{}: the relative attention span must be positive", path);
}

void read_deberta_v2(FieldReader& r, ModelConfig& c, const std::string& path) {
  read_text(r, c, path);
  read_deberta(FieldReader(r.rest(), path), c, path);  // a copy: the fields stay in extra, written back as read
}

// ---- the table ----

std::vector<ModelFamily> make_families() {
  using F = ModelFamily;
  std::vector<ModelFamily> rows;

  F bert;
  bert.model_type = bert.architecture = "bert";
  bert.class_prefix = "Bert";
  bert.read_fields = read_text;
  bert.write_fields = write_text;
  bert.weight_prefix = "bert.";
  bert.pooler_in_base = true;
  bert.head_dense = "pooler.dense";
  bert.head_output = "classifier";
  bert.mix_replaces_dense = true;  // the SMaT authors' models: the mix, then the classifier
  bert.lrp_rules = true;
  rows.push_back(bert);

  F roberta;
  roberta.model_type = roberta.architecture = "roberta";
  roberta.class_prefix = "Roberta";
  roberta.set_defaults = roberta_defaults;
  roberta.read_fields = read_text;
  roberta.write_fields = write_text;
  roberta.weight_prefix = "roberta.";
  roberta.positions_after_padding = true;  // HF create_position_ids_from_input_ids
  roberta.head_dense = "classifier.dense";
  roberta.head_output = "classifier.out_proj";
  roberta.dense_dropout = F::DenseDropout::Classifier;
  rows.push_back(roberta);

  F xlmr = roberta;  // RoBERTa's layers, embeddings, head and weight names (self.roberta)
  xlmr.model_type = "xlm-roberta";
  xlmr.class_prefix = "XLMRoberta";
  xlmr.set_defaults = xlm_roberta_defaults;
  rows.push_back(xlmr);

  F electra = roberta;  // ELECTRA's ClassificationHead is RoBERTa's with GELU
  electra.model_type = electra.architecture = "electra";
  electra.class_prefix = "Electra";
  electra.set_defaults = electra_defaults;
  electra.read_fields = read_electra;
  electra.write_fields = write_electra;
  electra.weight_prefix = "electra.";
  electra.positions_after_padding = false;
  electra.projection = F::Projection::AfterNorm;
  electra.head_activation = F::HeadActivation::Gelu;
  rows.push_back(electra);

  F distil;
  distil.model_type = distil.architecture = "distilbert";
  distil.class_prefix = "DistilBert";
  distil.config_names = {{"hidden_size", "dim"},
                         {"num_hidden_layers", "n_layers"},
                         {"num_attention_heads", "n_heads"},
                         {"intermediate_size", "hidden_dim"},
                         {"hidden_act", "activation"},
                         {"hidden_dropout_prob", "dropout"},
                         {"attention_probs_dropout_prob", "attention_dropout"},
                         {"classifier_dropout", "seq_classif_dropout"}};
  distil.set_defaults = distilbert_defaults;
  distil.read_fields = read_distilbert;
  distil.write_fields = write_distilbert;
  distil.weight_prefix = "distilbert.";
  distil.layers_at = "transformer.layer.";
  distil.layer_names = {{"attention.self.query.", "attention.q_lin."},     {"attention.self.key.", "attention.k_lin."},
                        {"attention.self.value.", "attention.v_lin."},     {"attention.output.dense.", "attention.out_lin."},
                        {"attention.output.LayerNorm.", "sa_layer_norm."}, {"intermediate.dense.", "ffn.lin1."},
                        {"output.dense.", "ffn.lin2."},                    {"output.LayerNorm.", "output_layer_norm."}};
  distil.head_dense = "pre_classifier";
  distil.head_output = "classifier";
  distil.head_activation = F::HeadActivation::Relu;
  rows.push_back(distil);

  F deberta;
  deberta.model_type = "deberta-v2";
  deberta.architecture = "deberta";
  deberta.class_prefix = "DebertaV2";
  deberta.set_defaults = deberta_defaults;
  deberta.read_fields = read_deberta_v2;
  deberta.write_fields = write_text;
  deberta.weight_prefix = "deberta.";
  // DisentangledSelfAttention's query_proj, key_proj, value_proj
  deberta.layer_names = {{"attention.self.query.", "attention.self.query_proj."},
                         {"attention.self.key.", "attention.self.key_proj."},
                         {"attention.self.value.", "attention.self.value_proj."}};
  deberta.projection = F::Projection::BeforeNorm;
  deberta.attention = F::Attention::Disentangled;
  deberta.head_dense = "pooler.dense";  // ContextPooler beside the encoder, then the classifier
  deberta.head_output = "classifier";
  deberta.head_activation = F::HeadActivation::PoolerHiddenAct;
  deberta.dense_dropout = F::DenseDropout::Pooler;
  deberta.dense_sized_by_pooler = true;
  deberta.lrp_refusal = "DeBERTa's disentangled attention has no LRP rule";
  rows.push_back(deberta);

  F vit;
  vit.model_type = vit.architecture = "vit";
  vit.class_prefix = "ViT";
  vit.input = F::Input::Image;
  vit.set_defaults = vit_defaults;
  vit.read_fields = read_vit;
  vit.write_fields = write_vit;
  vit.weight_prefix = "vit.";
  vit.layer_names = {{"attention.self.", "attention.attention."}};  // ViTSelfAttention at attention.attention
  vit.head = F::Head::FinalNorm;
  vit.head_dense = "layernorm";
  vit.head_output = "classifier";
  vit.mix_replaces_dense = true;  // the mix skips the final LayerNorm
  rows.push_back(vit);
  return rows;
}

}  // namespace

const std::vector<ModelFamily>& model_families() {
  static const std::vector<ModelFamily> rows = make_families();
  return rows;
}

const ModelFamily* find_model_family(const std::string& model_type) {
  for (const ModelFamily& f : model_families())
    if (f.model_type == model_type) return &f;
  return nullptr;
}

std::string supported_model_types() {
  std::string s;
  for (const ModelFamily& f : model_families()) s += (s.empty() ? "" : ", ") + f.model_type;
  return s;
}

std::string model_type_from_architecture(const std::string& class_name) {
  // A class name starts with one prefix at most ("Bert" is no prefix of "DistilBert...").
  for (const ModelFamily& f : model_families()) {
    if (!starts_with(class_name, f.class_prefix)) continue;
    const std::string rest = class_name.substr(f.class_prefix.size());
    // Require "...For*" or "...Model" so e.g. RobertaPreLayerNorm* is not taken for RoBERTa.
    if (rest.rfind("For", 0) == 0 || rest == "Model") return f.model_type;
  }
  return "";
}

std::string ModelFamily::config_name(const std::string& canonical) const {
  for (const auto& [from, to] : config_names)
    if (from == canonical) return to;
  return canonical;
}

bool is_head_weight(const std::string& canonical) {
  return starts_with(canonical, "classifier.") || starts_with(canonical, "pooler.") ||
         starts_with(canonical, "pre_classifier.") || starts_with(canonical, "scalar_mix.");
}

std::string ModelFamily::hf_weight_name(const std::string& canonical) const {
  if (is_head_weight(canonical) && !(pooler_in_base && starts_with(canonical, "pooler."))) return canonical;
  std::string n = canonical;
  const std::string layers = "encoder.layer.";
  if (starts_with(n, layers)) {
    n.replace(0, layers.size(), layers_at);
    for (const auto& [from, to] : layer_names) {
      const size_t at = n.find(from);
      if (at == std::string::npos) continue;
      n.replace(at, from.size(), to);
      break;
    }
  }
  return weight_prefix + n;
}

}  // namespace salient
