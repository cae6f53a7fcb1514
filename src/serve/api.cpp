#include "serve/api.h"

#include <chrono>

#include "attattr/render.h"
#include "data/dataset.h"
#include "util/error.h"
#include "util/io.h"

namespace salient::serve {

namespace {

[[noreturn]] void bad_request(const std::string& message) { throw ApiError(400, message); }

const nlohmann::json& field(const nlohmann::json& body, const char* name) {
  if (!body.contains(name)) bad_request(fmt::format("body: missing field \"{}\"", name));
  return body.at(name);
}

std::string string_field(const nlohmann::json& body, const char* name) {
  const nlohmann::json& v = field(body, name);
  if (!v.is_string()) bad_request(fmt::format("body: field \"{}\" must be a string", name));
  return v.get<std::string>();
}

void check_object(const nlohmann::json& body) {
  if (!body.is_object()) bad_request("body: expected a JSON object");
}

std::string target_of(const nlohmann::json& body) {
  if (!body.contains("target") || body["target"].is_null()) return "pred";
  const nlohmann::json& t = body["target"];
  if (t.is_number_integer()) return std::to_string(t.get<int64_t>());
  if (t.is_string()) return t.get<std::string>();
  bad_request("body: field \"target\" must be \"pred\", a class index or a label name");
}

int64_t int_field(const nlohmann::json& body, const char* name, int64_t fallback) {
  if (!body.contains(name) || body[name].is_null()) return fallback;
  if (!body[name].is_number_integer()) bad_request(fmt::format("body: field \"{}\" must be an integer", name));
  return body[name].get<int64_t>();
}

nlohmann::json prediction_json(const Model& m, const Prediction& p, const Encoding& enc) {
  nlohmann::json j = p.to_json();
  j["tokens"] = enc.tokens;
  if (!p.value) j["labels"] = m.labels();
  return j;
}

}  // namespace

Api::Api(const std::vector<std::string>& model_dirs, const std::vector<std::string>& datasets, const std::string& data_dir,
         ApiLimits limits)
    : limits_(limits) {
  if (model_dirs.empty()) fail("--model: give at least one model directory");
  for (const std::string& dir : model_dirs) {
    std::string name = dir;
    while (name.size() > 1 && name.back() == '/') name.pop_back();
    name = name.substr(name.find_last_of('/') == std::string::npos ? 0 : name.find_last_of('/') + 1);
    const std::string base = name;
    for (int k = 2; std::any_of(models_.begin(), models_.end(), [&](const ServedModel& s) { return s.name == name; }); ++k)
      name = fmt::format("{}-{}", base, k);
    models_.push_back({name, dir, std::make_shared<const Model>(Model::load(dir))});
  }
  for (const std::string& spec : datasets) {
    if (datasets_.count(spec)) fail("--data: '{}' is given twice", spec);
    datasets_.emplace(spec, load_dataset(spec, data_dir.empty() ? shared_data_dir() : data_dir));
    dataset_order_.push_back(spec);
  }
}

const ServedModel& Api::model_of(const nlohmann::json& body) const {
  if (!body.contains("model") || body["model"].is_null()) return models_.front();
  if (!body["model"].is_string()) bad_request("body: field \"model\" must be a string");
  const std::string name = body["model"].get<std::string>();
  for (const auto& m : models_)
    if (m.name == name) return m;
  std::vector<std::string> names;
  for (const auto& m : models_) names.push_back(m.name);
  throw ApiError(404, fmt::format("model: no model '{}' is served (served: {})", one_line(name), fmt::join(names, ", ")));
}

TextInput Api::input_of(const nlohmann::json& body) const {
  TextInput in;
  in.text = string_field(body, "text");
  if (body.contains("text_pair") && !body["text_pair"].is_null()) in.text_pair = string_field(body, "text_pair");
  const size_t bytes = in.text.size() + (in.text_pair ? in.text_pair->size() : 0);
  if (split_whitespace(in.text).empty()) bad_request("text: empty (type a sentence)");
  if (bytes > limits_.max_text_bytes)
    throw ApiError(413, fmt::format("text: {} bytes, more than the server's limit of {} (--max-text-bytes)", bytes,
                                    limits_.max_text_bytes));
  return in;
}

nlohmann::json Api::models() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : models_) {
    const ModelConfig& c = m.model->config();
    out.push_back({{"name", m.name},
                   {"path", m.path},
                   {"model_type", c.model_type},
                   {"layers", c.num_hidden_layers},
                   {"heads", c.num_attention_heads},
                   {"hidden_size", c.hidden_size},
                   {"max_tokens", c.max_tokens()},
                   {"labels", m.model->labels()}});
  }
  return {{"models", out}};
}

nlohmann::json Api::methods() const {
  nlohmann::json list = nlohmann::json::array();
  for (const ExplainerInfo& info : salient::methods()) list.push_back(method_json(info));
  return {{"methods", list}};
}

nlohmann::json Api::datasets() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& spec : dataset_order_) {
    const Dataset& d = datasets_.at(spec);
    out.push_back({{"name", spec}, {"examples", d.records.size()}, {"labels", d.label_names},
                   {"rationales", d.has_rationales()}});
  }
  return {{"datasets", out}};
}

nlohmann::json Api::examples(const std::string& data, int64_t offset, int64_t limit) const {
  auto it = datasets_.find(data);
  if (it == datasets_.end())
    throw ApiError(404, fmt::format("data: '{}' is not served (salient serve --data SPEC; served: {})", one_line(data),
                                    fmt::join(dataset_order_, ", ")));
  if (offset < 0) bad_request(fmt::format("offset: must be >= 0, got {}", offset));
  if (limit < 1 || limit > limits_.max_examples)
    bad_request(fmt::format("limit: must be in 1..{}, got {}", limits_.max_examples, limit));
  const Dataset& d = it->second;
  nlohmann::json out = nlohmann::json::array();
  for (int64_t i = offset; i < std::min<int64_t>(offset + limit, static_cast<int64_t>(d.records.size())); ++i) {
    const Record& r = d.records[static_cast<size_t>(i)];
    nlohmann::json j = {{"index", i}, {"id", r.id}, {"text", r.text}};
    if (r.text_pair) j["text_pair"] = *r.text_pair;
    if (r.label >= 0) {
      j["label"] = r.label;
      if (r.label < static_cast<int64_t>(d.label_names.size())) j["label_name"] = d.label_names[static_cast<size_t>(r.label)];
    }
    if (!r.rationale.empty()) {
      j["words"] = split_whitespace(r.text);
      j["rationale"] = r.rationale;
    }
    out.push_back(j);
  }
  return {{"data", data}, {"total", d.records.size()}, {"examples", out}};
}

nlohmann::json Api::predict(const nlohmann::json& body) const {
  check_object(body);
  const ServedModel& sm = model_of(body);
  const TextInput in = input_of(body);
  const Encoding enc = sm.model->tokenize(in);
  nlohmann::json j = prediction_json(*sm.model, sm.model->predict(std::vector<Encoding>{enc})[0], enc);
  j["model"] = sm.name;
  return j;
}

nlohmann::json Api::explain(const nlohmann::json& body) const {
  check_object(body);
  const auto start = std::chrono::steady_clock::now();
  const ServedModel& sm = model_of(body);
  const TextInput in = input_of(body);
  const nlohmann::json& methods = field(body, "methods");
  if (!methods.is_array() || methods.empty()) bad_request("body: field \"methods\" must be a non-empty list");
  if (static_cast<int64_t>(methods.size()) > limits_.max_methods)
    bad_request(fmt::format("methods: {} asked, at most {} per request", methods.size(), limits_.max_methods));
  const std::string target = target_of(body);
  bool with_faithfulness = true;
  if (body.contains("faithfulness")) {
    if (!body["faithfulness"].is_boolean()) bad_request("body: field \"faithfulness\" must be true or false");
    with_faithfulness = body["faithfulness"].get<bool>();
  }
  // Every method is checked before any runs: a typo in the last one costs nothing.
  struct Asked {
    std::string name, output;
    nlohmann::json params;
  };
  std::vector<Asked> asked;
  for (size_t i = 0; i < methods.size(); ++i) {
    const nlohmann::json& m = methods[i];
    Asked a{"", "", nlohmann::json::object()};
    if (m.is_string()) {
      a.name = m.get<std::string>();
    } else if (m.is_object()) {
      a.name = string_field(m, "name");
      if (m.contains("params") && !m["params"].is_null()) {
        if (!m["params"].is_object()) bad_request(fmt::format("methods[{}]: \"params\" must be an object", i));
        a.params = m["params"];
      }
      if (m.contains("output") && !m["output"].is_null()) a.output = string_field(m, "output");
    } else {
      bad_request(fmt::format("methods[{}]: expected a method name or {{\"name\", \"params\"}}", i));
    }
    const ExplainerInfo& info = explainer_info(a.name);  // unknown names list the valid ones
    ExplainOptions eo;
    eo.params = a.params;
    with_declared_params(info, eo);  // unknown parameters and bad values are errors now
    if (!a.output.empty()) parse_model_output(a.output);
    asked.push_back(a);
  }
  const Encoding enc = sm.model->tokenize(in);
  const Prediction pred = sm.model->predict(std::vector<Encoding>{enc})[0];
  nlohmann::json out = {{"model", sm.name}, {"prediction", prediction_json(*sm.model, pred, enc)}};
  // The predicted class is known: naming it spares every method a forward pass to find it again.
  const std::string explained = target == "pred" && !pred.value ? std::to_string(pred.label_id) : target;
  nlohmann::json explanations = nlohmann::json::array();
  for (const Asked& a : asked) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > limits_.max_seconds) {
      explanations.push_back({{"method", a.name},
                              {"error", fmt::format("not run: the request took {:.0f} s, over the server's limit of {:.0f} s "
                                                    "(--max-seconds)", elapsed, limits_.max_seconds)}});
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    nlohmann::json e = sm.model->explain({in}, a.name, a.params, explained, a.output)[0];
    e["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (with_faithfulness && !pred.value)
      e["faithfulness"] = sm.model->faithfulness(in, e["token_scores"].get<std::vector<double>>(), e["target"].get<int64_t>());
    explanations.push_back(std::move(e));
  }
  out["explanations"] = std::move(explanations);
  return out;
}

nlohmann::json Api::attattr(const nlohmann::json& body) const {
  check_object(body);
  const ServedModel& sm = model_of(body);
  const TextInput in = input_of(body);
  const std::string target = target_of(body);
  const int64_t layers = sm.model->config().num_hidden_layers;
  const int64_t layer = int_field(body, "layer", layers - 1);
  if (layer < 0 || layer >= layers) bad_request(fmt::format("layer: must be in 0..{}, got {}", layers - 1, layer));
  const int64_t m = int_field(body, "m", 20);
  if (m < 1 || m > limits_.max_attattr_steps)
    bad_request(fmt::format("m: must be in 1..{} (--max-attattr-steps), got {}", limits_.max_attattr_steps, m));
  AttAttrOptions o;
  o.m = static_cast<int>(m);
  nlohmann::json tree;
  const nlohmann::json all = sm.model->attattr(in, target, o, &tree);  // one attribution for both
  tree["svg"] = attattr::tree_svg(tree);
  return {{"model", sm.name},
          {"tokens", all["tokens"]},
          {"target", all["target"]},
          {"target_label", all["target_label"]},
          {"m", all["m"]},
          {"rule", all["rule"]},
          {"layer", layer},
          {"heads", all["layers"][static_cast<size_t>(layer)]},
          {"completeness", all["completeness"][static_cast<size_t>(layer)]},
          {"head_importance", all["head_importance"]},
          {"tree", tree}};
}

nlohmann::json Api::attention(const nlohmann::json& body) const {
  check_object(body);
  const ServedModel& sm = model_of(body);
  const TextInput in = input_of(body);
  return {{"model", sm.name}, {"tokens", sm.model->tokenize(in).tokens}, {"attentions", sm.model->attentions(in)}};
}

}  // namespace salient::serve
