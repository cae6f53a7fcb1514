#include "model/config.h"
#include "data/dataset.h"
#include "util/error.h"
#include "util/io.h"

#include <set>

namespace salient {

using nlohmann::json;

namespace {

// The model families salient reads: config.json's model_type, the architecture it computes with
// (XLM-RoBERTa is RoBERTa's: the same layers, embeddings, head and weight names) and the prefix of
// HF's class names ("XLMRobertaForSequenceClassification").
struct Family {
  const char* model_type;
  const char* architecture;
  const char* class_prefix;
};
constexpr Family kFamilies[] = {{"bert", "bert", "Bert"},
                                {"roberta", "roberta", "Roberta"},
                                {"xlm-roberta", "roberta", "XLMRoberta"},
                                {"electra", "electra", "Electra"},
                                {"distilbert", "distilbert", "DistilBert"},
                                {"deberta-v2", "deberta", "DebertaV2"},
                                {"vit", "vit", "ViT"}};
const char* const kSupportedTypes = "bert, roberta, xlm-roberta, electra, distilbert, deberta-v2, vit";

const Family* find_family(const std::string& t) {
  for (const Family& f : kFamilies)
    if (t == f.model_type) return &f;
  return nullptr;
}

bool is_supported_type(const std::string& t) { return find_family(t) != nullptr; }

// DistilBERT's config.json uses its own names for the shared fields.
std::string hf_field(const std::string& model_type, const std::string& canonical) {
  if (model_type != "distilbert") return canonical;
  static const std::map<std::string, std::string> distilbert_names = {
      {"hidden_size", "dim"},
      {"num_hidden_layers", "n_layers"},
      {"num_attention_heads", "n_heads"},
      {"intermediate_size", "hidden_dim"},
      {"hidden_act", "activation"},
      {"hidden_dropout_prob", "dropout"},
      {"attention_probs_dropout_prob", "attention_dropout"},
      {"classifier_dropout", "seq_classif_dropout"},
  };
  auto it = distilbert_names.find(canonical);
  return it == distilbert_names.end() ? canonical : it->second;
}

// "BertForSequenceClassification" -> "bert"; "" when the class is not one of ours.
std::string model_type_from_architecture(const std::string& arch) {
  // A class name starts with one prefix at most ("Bert" is no prefix of "DistilBert...").
  for (const Family& f : kFamilies) {
    const std::string p = f.class_prefix;
    if (arch.compare(0, p.size(), p) != 0) continue;
    std::string rest = arch.substr(p.size());
    // Require "...For*" or "...Model" so e.g. RobertaPreLayerNorm* is not taken for RoBERTa.
    if (rest.rfind("For", 0) == 0 || rest == "Model") return f.model_type;
  }
  return "";
}

// Takes fields out of a copy of config.json; what is left at the end becomes `extra`.
class FieldReader {
 public:
  FieldReader(const json& j, const std::string& path) : rest_(j), path_(path) {}

  // The raw value, removed from the leftovers; null json when absent.
  json take(const std::string& key) {
    auto it = rest_.find(key);
    if (it == rest_.end()) return json();
    json v = *it;
    rest_.erase(it);
    return v;
  }

  int64_t get_int(const std::string& key, int64_t fallback, bool null_means_default = false) {
    if (!rest_.contains(key)) return fallback;
    json v = take(key);
    if (v.is_null() && null_means_default) return fallback;
    if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX)) return v.get<int64_t>();
    fail("{}: field '{}' must be an integer (got {})", path_, key, show_json(v));
  }

  double get_double(const std::string& key, double fallback) {
    if (!rest_.contains(key)) return fallback;
    json v = take(key);
    if (v.is_number()) return v.get<double>();
    fail("{}: field '{}' must be a number (got {})", path_, key, show_json(v));
  }

  bool get_bool(const std::string& key, bool fallback) {
    if (!rest_.contains(key)) return fallback;
    json v = take(key);
    if (v.is_boolean()) return v.get<bool>();
    fail("{}: field '{}' must be true or false (got {})", path_, key, show_json(v));
  }

  std::string get_string(const std::string& key, const std::string& fallback) {
    if (!rest_.contains(key)) return fallback;
    json v = take(key);
    if (v.is_string()) return v.get<std::string>();
    fail("{}: field '{}' must be a string (got {})", path_, key, show_json(v));
  }

  const json& rest() const { return rest_; }

 private:
  json rest_;
  std::string path_;
};

// Hugging Face's defaults per config class, for fields a config.json leaves out.
ModelConfig defaults_for(const std::string& model_type) {
  ModelConfig c;  // BertConfig defaults
  c.model_type = model_type;
  if (model_type == "roberta") {
    c.vocab_size = 50265;
    c.pad_token_id = 1;
  } else if (model_type == "xlm-roberta") {
    c.pad_token_id = 1;  // XLMRobertaConfig keeps BertConfig's vocab_size default
  } else if (model_type == "electra") {
    c.embedding_size = 128;
    c.hidden_size = 256;
    c.num_attention_heads = 4;
    c.intermediate_size = 1024;
  } else if (model_type == "deberta-v2") {  // DebertaV2Config's defaults
    c.vocab_size = 128100;
    c.hidden_size = 1536;
    c.num_hidden_layers = 24;
    c.num_attention_heads = 24;
    c.intermediate_size = 6144;
    c.type_vocab_size = 0;
    c.layer_norm_eps = 1e-7;
  } else if (model_type == "distilbert") {
    c.num_hidden_layers = 6;
    c.classifier_dropout = 0.2;  // seq_classif_dropout
    c.type_vocab_size = 0;
  } else if (model_type == "vit") {
    // ViTConfig: no vocabulary, positions or token types; no dropout by default.
    c.vocab_size = 0;
    c.type_vocab_size = 0;
    c.hidden_dropout_prob = 0.0;
    c.attention_probs_dropout_prob = 0.0;
    c.max_position_embeddings = 0;
  }
  return c;
}

// A canonical non-negative decimal ("0", "12"; not "01", "+1", " 1") below `limit`, else -1.
int64_t parse_index(const std::string& s, int64_t limit) {
  if (s.empty() || s.size() > 18 || (s.size() > 1 && s[0] == '0')) return -1;
  for (char ch : s)
    if (ch < '0' || ch > '9') return -1;
  int64_t v = std::stoll(s);
  return v < limit ? v : -1;
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

// id2label, label2id and num_labels agree with each other; names are unique.
void read_labels(FieldReader& r, ModelConfig& c, const std::string& path) {
  json id2label = r.take("id2label");
  json label2id = r.take("label2id");
  bool has_num_labels = r.rest().contains("num_labels");
  int64_t num_labels = r.get_int("num_labels", 2);
  std::vector<std::string> names;

  if (!id2label.is_null()) {
    if (!id2label.is_object() || id2label.empty())
      fail("{}: field 'id2label' must be a non-empty object like {{\"0\": \"NEGATIVE\"}} (got {})", path, show_json(id2label));
    int64_t n = static_cast<int64_t>(id2label.size());
    names.resize(id2label.size());
    for (const auto& [key, value] : id2label.items()) {
      int64_t index = parse_index(key, n);
      if (index < 0) fail("{}: field 'id2label': key '{}' is not a label index 0..{}", path, one_line(key), n - 1);
      if (!value.is_string())
        fail("{}: field 'id2label': label {} must be a string (got {})", path, key, show_json(value));
      names[index] = value.get<std::string>();
    }
    if (has_num_labels && num_labels != n)
      fail("{}: field 'num_labels' is {} but id2label has {} labels", path, num_labels, n);
  } else if (!label2id.is_null()) {
    // Only label2id given: rebuild id2label from it.
    if (!label2id.is_object() || label2id.empty())
      fail("{}: field 'label2id' must be a non-empty object like {{\"NEGATIVE\": 0}} (got {})", path, show_json(label2id));
    int64_t n = static_cast<int64_t>(label2id.size());
    names.resize(label2id.size());
    std::vector<bool> seen(label2id.size(), false);
    for (const auto& [name, value] : label2id.items()) {
      if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() >= n ||
          seen[value.get<int64_t>()])
        fail("{}: field 'label2id': label '{}' has id {}, expected distinct ids 0..{}", path, one_line(name),
             show_json(value), n - 1);
      seen[value.get<int64_t>()] = true;
      names[value.get<int64_t>()] = name;
    }
    if (has_num_labels && num_labels != n)
      fail("{}: field 'num_labels' is {} but label2id has {} labels", path, num_labels, n);
  } else {
    if (num_labels < 1) fail("{}: field 'num_labels' must be at least 1 (got {})", path, num_labels);
    if (num_labels > kMaxLabels) fail("{}: field 'num_labels' is implausibly large ({})", path, num_labels);
    for (int64_t i = 0; i < num_labels; ++i) names.push_back("LABEL_" + std::to_string(i));
  }

  std::set<std::string> unique;
  for (const auto& name : names)
    if (!unique.insert(name).second) fail("{}: field 'id2label': label '{}' appears twice", path, one_line(name));

  if (!label2id.is_null() && !id2label.is_null()) {
    if (!label2id.is_object() || label2id.size() != names.size())
      fail("{}: field 'label2id' does not match id2label ({} labels)", path, names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      auto it = label2id.find(names[i]);
      if (it == label2id.end() || !it->is_number_integer() || it->get<int64_t>() != static_cast<int64_t>(i))
        fail("{}: field 'label2id' does not match id2label: label '{}' should map to {}", path, one_line(names[i]), i);
    }
  }
  c.id2label = names;
  c.num_labels = static_cast<int64_t>(names.size());
}

// Labels as stored, or HF's LABEL_i names when a config was built in code without them.
std::vector<std::string> label_names(const ModelConfig& c) {
  if (!c.id2label.empty()) return c.id2label;
  std::vector<std::string> names;
  for (int64_t i = 0; i < c.num_labels; ++i) names.push_back("LABEL_" + std::to_string(i));
  return names;
}

}  // namespace

std::string ModelConfig::family() const {
  const Family* f = find_family(model_type);
  return f ? f->architecture : model_type;
}

Activation parse_activation(const std::string& name, const std::string& where) {
  if (name == "gelu") return Activation::GeluExact;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::GeluTanh;
  if (name == "relu") return Activation::Relu;
  fail("{}unsupported activation '{}' (supported: gelu, gelu_new, gelu_pytorch_tanh, gelu_fast, relu)",
       where.empty() ? "" : where + ": ", one_line(name));
}

std::string activation_name(Activation a) {
  switch (a) {
    case Activation::GeluExact: return "gelu";
    case Activation::GeluTanh: return "gelu_new";
    case Activation::Relu: return "relu";
  }
  return "gelu";
}

namespace {

// DebertaV2Config's fields (HF's getattr defaults where the config leaves them out). What salient
// does not compute (a convolution after the first layer, another head size) is an error, not a guess.
void read_deberta(FieldReader r, ModelConfig& c, const std::string& path) {
  ModelConfig::Deberta& d = c.deberta;
  d.relative_attention = r.get_bool("relative_attention", false);
  d.max_relative_positions = r.get_int("max_relative_positions", -1);
  d.position_buckets = r.get_int("position_buckets", -1);
  d.share_att_key = r.get_bool("share_att_key", false);
  d.position_biased_input = r.get_bool("position_biased_input", true);
  const json types = r.take("pos_att_type");
  std::vector<std::string> kinds;
  if (types.is_string()) {
    std::string s = types.get<std::string>();
    for (size_t at = 0; at <= s.size();) {
      const size_t bar = std::min(s.find('|', at), s.size());
      kinds.push_back(s.substr(at, bar - at));
      at = bar + 1;
    }
  } else if (types.is_array()) {
    for (const json& t : types) {
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

}  // namespace

ModelConfig ModelConfig::from_json(const json& j, const std::string& path) {
  if (!j.is_object()) fail("{}: config must be a JSON object (got {})", path, show_json(j));
  FieldReader r(j, path);

  std::vector<std::string> architectures;
  json arch = r.take("architectures");
  if (!arch.is_null()) {
    if (!arch.is_array()) fail("{}: field 'architectures' must be a list of strings (got {})", path, show_json(arch));
    for (const auto& a : arch) {
      if (!a.is_string()) fail("{}: field 'architectures' must be a list of strings (got {})", path, show_json(a));
      architectures.push_back(a.get<std::string>());
    }
  }

  std::string type;
  if (r.rest().contains("model_type")) {
    type = r.get_string("model_type", "");
  } else {
    if (!architectures.empty()) type = model_type_from_architecture(architectures[0]);
    if (type.empty()) fail("{}: missing field 'model_type'", path);
  }
  if (!is_supported_type(type))
    fail("{}: unsupported model_type '{}' (supported: {})", path, one_line(type), kSupportedTypes);

  ModelConfig c = defaults_for(type);
  c.architectures = architectures;
  auto field = [&](const char* canonical) { return hf_field(type, canonical); };

  if (type != "vit") c.vocab_size = r.get_int("vocab_size", c.vocab_size);
  c.hidden_size = r.get_int(field("hidden_size"), c.hidden_size);
  c.num_hidden_layers = r.get_int(field("num_hidden_layers"), c.num_hidden_layers);
  c.num_attention_heads = r.get_int(field("num_attention_heads"), c.num_attention_heads);
  c.intermediate_size = r.get_int(field("intermediate_size"), c.intermediate_size);
  c.hidden_act = parse_activation(r.get_string(field("hidden_act"), "gelu"),
                                  fmt::format("{}: field '{}'", path, field("hidden_act")));
  c.hidden_dropout_prob = r.get_double(field("hidden_dropout_prob"), c.hidden_dropout_prob);
  c.attention_probs_dropout_prob = r.get_double(field("attention_probs_dropout_prob"), c.attention_probs_dropout_prob);
  if (type == "vit") {
    c.image_size = r.get_int("image_size", c.image_size);
    c.patch_size = r.get_int("patch_size", c.patch_size);
    c.num_channels = r.get_int("num_channels", c.num_channels);
    // Without biases on Q/K/V the canonical weights would not match; refuse rather than guess.
    if (!r.get_bool("qkv_bias", true)) fail("{}: field 'qkv_bias' is false: only ViTs with Q/K/V biases are supported", path);
    // validate() names a non-positive size; num_patches() would divide by it.
    c.max_position_embeddings = c.patch_size > 0 ? 1 + c.num_patches() : 0;
  } else {
    c.max_position_embeddings = r.get_int("max_position_embeddings", c.max_position_embeddings);
    c.pad_token_id = r.get_int("pad_token_id", c.pad_token_id, /*null_means_default=*/true);
  }

  if (type == "distilbert") {
    c.classifier_dropout = r.get_double("seq_classif_dropout", c.classifier_dropout);
    c.sinusoidal_pos_embds = r.get_bool("sinusoidal_pos_embds", false);
    // DistilBERT has no token types and hard-codes LayerNorm eps=1e-12.
    c.type_vocab_size = 0;
    c.layer_norm_eps = 1e-12;
  } else {
    // classifier_dropout: null means "use hidden_dropout_prob".
    if (r.rest().contains("classifier_dropout") && r.rest()["classifier_dropout"].is_null())
      r.take("classifier_dropout");
    else
      c.classifier_dropout = r.get_double("classifier_dropout", c.classifier_dropout);
    c.layer_norm_eps = r.get_double("layer_norm_eps", c.layer_norm_eps);
    if (type != "vit") c.type_vocab_size = r.get_int("type_vocab_size", c.type_vocab_size);
  }
  if (type == "electra") c.embedding_size = r.get_int("embedding_size", c.embedding_size);
  if (type == "deberta-v2") read_deberta(FieldReader(r.rest(), path), c, path);  // a copy: the fields stay in extra
  // HF create_position_ids_from_input_ids: positions start after the padding index.
  if (c.family() == "roberta") c.position_offset = c.pad_token_id + 1;

  read_labels(r, c, path);
  c.pooling = r.get_string("salient_pooling", c.pooling);

  json problem = r.take("problem_type");
  if (problem.is_null()) {
    // HF infers it at training time; for a single output that is regression.
    c.problem_type = c.num_labels == 1 ? "regression" : "single_label_classification";
  } else if (problem.is_string()) {
    c.problem_type = problem.get<std::string>();
  } else {
    fail("{}: field 'problem_type' must be a string (got {})", path, show_json(problem));
  }

  // Only absolute position embeddings are implemented; relative ones would silently give wrong outputs.
  if (r.rest().contains("position_embedding_type")) {
    const json& pet = r.rest()["position_embedding_type"];
    if (!pet.is_string() || pet.get<std::string>() != "absolute")
      fail("{}: unsupported position_embedding_type {} (supported: \"absolute\")", path, show_json(pet));
  }

  c.extra = r.rest();
  c.validate(path);
  return c;
}

ModelConfig ModelConfig::from_file(const std::string& path) { return from_json(parse_json_file(path), path); }

void ModelConfig::validate(const std::string& path) const {
  if (!is_supported_type(model_type))
    fail("{}: unsupported model_type '{}' (supported: {})", path, one_line(model_type), kSupportedTypes);
  auto field = [&](const char* canonical) { return hf_field(model_type, canonical); };

  const std::pair<const char*, int64_t> positive_sizes[] = {
      {"hidden_size", hidden_size},
      {"num_hidden_layers", num_hidden_layers},
      {"num_attention_heads", num_attention_heads},
      {"intermediate_size", intermediate_size},
  };
  for (const auto& [name, value] : positive_sizes)
    if (value <= 0) fail("{}: field '{}' must be positive (got {})", path, field(name), value);
  if (is_vision()) {
    for (const auto& [name, value] : {std::pair<const char*, int64_t>{"image_size", image_size},
                                      {"patch_size", patch_size}, {"num_channels", num_channels}})
      if (value <= 0) fail("{}: field '{}' must be positive (got {})", path, name, value);
    if (image_size % patch_size != 0)
      fail("{}: field 'image_size' ({}) is not divisible by 'patch_size' ({})", path, image_size, patch_size);
  } else {
    if (vocab_size <= 0) fail("{}: field 'vocab_size' must be positive (got {})", path, vocab_size);
    if (max_position_embeddings <= 0)
      fail("{}: field 'max_position_embeddings' must be positive (got {})", path, max_position_embeddings);
  }
  if (hidden_size % num_attention_heads != 0)
    fail("{}: field '{}' ({}) is not divisible by '{}' ({})", path, field("hidden_size"), hidden_size,
         field("num_attention_heads"), num_attention_heads);
  if (embedding_size == 0 || embedding_size < -1)
    fail("{}: field 'embedding_size' must be positive (got {})", path, embedding_size);
  if (type_vocab_size < 0) fail("{}: field 'type_vocab_size' must be >= 0 (got {})", path, type_vocab_size);

  const std::pair<const char*, double> probabilities[] = {
      {"hidden_dropout_prob", hidden_dropout_prob},
      {"attention_probs_dropout_prob", attention_probs_dropout_prob},
  };
  for (const auto& [name, value] : probabilities)
    if (!(value >= 0 && value <= 1)) fail("{}: field '{}' must be in [0, 1] (got {})", path, field(name), value);
  if (classifier_dropout != -1 && !(classifier_dropout >= 0 && classifier_dropout <= 1))
    fail("{}: field '{}' must be in [0, 1] or null (got {})", path, field("classifier_dropout"), classifier_dropout);
  if (!(layer_norm_eps > 0)) fail("{}: field 'layer_norm_eps' must be positive (got {})", path, layer_norm_eps);

  if (!is_vision() && (pad_token_id < 0 || pad_token_id >= vocab_size))
    fail("{}: field 'pad_token_id' ({}) must be in [0, vocab_size {})", path, pad_token_id, vocab_size);
  if (position_offset < 0 || position_offset >= max_position_embeddings)
    fail("{}: field 'max_position_embeddings' ({}) leaves no positions after the offset {} (pad_token_id + 1)", path,
         max_position_embeddings, position_offset);

  if (!is_supported_pooling(pooling))
    fail("{}: field 'salient_pooling': unsupported value '{}' (supported: first_token, scalar_mix, scalar_mix_cls)",
         path, one_line(pooling));
  if (num_labels < 1) fail("{}: field 'num_labels' must be at least 1 (got {})", path, num_labels);
  if (!id2label.empty() && static_cast<int64_t>(id2label.size()) != num_labels)
    fail("{}: field 'num_labels' is {} but id2label has {} labels", path, num_labels, id2label.size());
  if (problem_type != "single_label_classification" && problem_type != "multi_label_classification" &&
      problem_type != "regression")
    fail("{}: field 'problem_type': unsupported value '{}' (supported: single_label_classification, "
         "multi_label_classification, regression)",
         path, one_line(problem_type));
}

json ModelConfig::to_json() const {
  json j = extra.is_object() ? extra : json::object();
  auto field = [&](const char* canonical) { return hf_field(model_type, canonical); };

  j["model_type"] = model_type;
  if (!architectures.empty()) j["architectures"] = architectures;
  if (!is_vision()) j["vocab_size"] = vocab_size;
  j[field("hidden_size")] = hidden_size;
  j[field("num_hidden_layers")] = num_hidden_layers;
  j[field("num_attention_heads")] = num_attention_heads;
  j[field("intermediate_size")] = intermediate_size;
  j[field("hidden_act")] = activation_name(hidden_act);
  j[field("hidden_dropout_prob")] = hidden_dropout_prob;
  j[field("attention_probs_dropout_prob")] = attention_probs_dropout_prob;
  if (is_vision()) {
    j["image_size"] = image_size;
    j["patch_size"] = patch_size;
    j["num_channels"] = num_channels;
    j["qkv_bias"] = true;
  } else {
    j["max_position_embeddings"] = max_position_embeddings;
    j["pad_token_id"] = pad_token_id;
  }
  if (model_type == "distilbert") {
    j["seq_classif_dropout"] = classifier_dropout_prob();  // a plain float in DistilBertConfig
    j["sinusoidal_pos_embds"] = sinusoidal_pos_embds;
  } else {
    j["classifier_dropout"] = classifier_dropout >= 0 ? json(classifier_dropout) : json(nullptr);
    j["layer_norm_eps"] = layer_norm_eps;
    if (!is_vision()) j["type_vocab_size"] = type_vocab_size;
  }
  if (model_type == "electra") j["embedding_size"] = embed_dim();

  std::vector<std::string> names = label_names(*this);
  json id2label_json = json::object(), label2id_json = json::object();
  for (size_t i = 0; i < names.size(); ++i) {
    id2label_json[std::to_string(i)] = names[i];
    label2id_json[names[i]] = i;
  }
  j["id2label"] = id2label_json;
  j["label2id"] = label2id_json;
  j["num_labels"] = static_cast<int64_t>(names.size());
  j["problem_type"] = problem_type;
  if (pools_every_layer()) j["salient_pooling"] = pooling;  // absent means first_token, as in HF's files
  return j;
}

int64_t ModelConfig::label_id(const std::string& label) const {
  std::vector<std::string> names = label_names(*this);
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == label) return static_cast<int64_t>(i);
  int64_t index = parse_index(label, static_cast<int64_t>(names.size()));
  if (index >= 0) return index;
  fail("unknown label '{}' (labels: {})", one_line(label), join(names, ", "));
}

}  // namespace salient
