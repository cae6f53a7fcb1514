#include "model/config.h"
#include "model/config_fields.h"
#include "data/dataset.h"
#include "util/error.h"
#include "util/io.h"

#include <set>

namespace salient {

using nlohmann::json;

namespace {

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

const ModelFamily& ModelConfig::family() const {
  const ModelFamily* f = find_model_family(model_type);
  if (!f) fail("unsupported model_type '{}' (supported: {})", one_line(model_type), supported_model_types());
  return *f;
}

std::string ModelConfig::lrp_refusal() const {
  const ModelFamily& f = family();
  if (!f.lrp_refusal.empty()) return "BERT models only: " + f.lrp_refusal;
  if (!f.lrp_rules) return "BERT models (pooler + classifier) only; this one is '" + model_type + "'";
  if (pools_every_layer())
    return "BERT models whose head is the pooler on the last layer's [CLS]; this one mixes every layer (salient_pooling " +
           pooling + ")";
  return "";
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
  const ModelFamily* family = find_model_family(type);
  if (!family) fail("{}: unsupported model_type '{}' (supported: {})", path, one_line(type), supported_model_types());

  ModelConfig c;  // BertConfig's defaults, then the family's config class's
  c.model_type = type;
  if (family->set_defaults) family->set_defaults(c);
  c.architectures = architectures;
  auto field = [&](const char* canonical) { return family->config_name(canonical); };

  if (family->input == ModelFamily::Input::Text) c.vocab_size = r.get_int("vocab_size", c.vocab_size);
  c.hidden_size = r.get_int(field("hidden_size"), c.hidden_size);
  c.num_hidden_layers = r.get_int(field("num_hidden_layers"), c.num_hidden_layers);
  c.num_attention_heads = r.get_int(field("num_attention_heads"), c.num_attention_heads);
  c.intermediate_size = r.get_int(field("intermediate_size"), c.intermediate_size);
  c.hidden_act = parse_activation(r.get_string(field("hidden_act"), "gelu"),
                                  fmt::format("{}: field '{}'", path, field("hidden_act")));
  c.hidden_dropout_prob = r.get_double(field("hidden_dropout_prob"), c.hidden_dropout_prob);
  c.attention_probs_dropout_prob = r.get_double(field("attention_probs_dropout_prob"), c.attention_probs_dropout_prob);
  family->read_fields(r, c, path);
  // HF create_position_ids_from_input_ids: positions start after the padding index.
  if (family->positions_after_padding) c.position_offset = c.pad_token_id + 1;

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
  if (!find_model_family(model_type))
    fail("{}: unsupported model_type '{}' (supported: {})", path, one_line(model_type), supported_model_types());
  auto field = [&](const char* canonical) { return family().config_name(canonical); };

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
  const ModelFamily& f = family();
  auto field = [&](const char* canonical) { return f.config_name(canonical); };

  j["model_type"] = model_type;
  if (!architectures.empty()) j["architectures"] = architectures;
  if (f.input == ModelFamily::Input::Text) j["vocab_size"] = vocab_size;
  j[field("hidden_size")] = hidden_size;
  j[field("num_hidden_layers")] = num_hidden_layers;
  j[field("num_attention_heads")] = num_attention_heads;
  j[field("intermediate_size")] = intermediate_size;
  j[field("hidden_act")] = activation_name(hidden_act);
  j[field("hidden_dropout_prob")] = hidden_dropout_prob;
  j[field("attention_probs_dropout_prob")] = attention_probs_dropout_prob;
  f.write_fields(j, *this);

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
