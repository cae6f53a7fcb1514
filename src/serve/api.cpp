#include "serve/api.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace salient::serve {

namespace {

TextInput input_of(const TextRequest& r) { return TextInput{r.text, r.text_pair}; }
LongInputs long_inputs_of(const TextRequest& r) { return LongInputs{r.windows, r.stride}; }

// Whether `path` is `folder` or lies below it (both canonical).
bool inside(const std::filesystem::path& path, const std::filesystem::path& folder) {
  auto p = path.begin();
  for (auto f = folder.begin(); f != folder.end(); ++f, ++p)
    if (f->empty() && std::next(f) == folder.end()) return true;  // a trailing separator
    else if (p == path.end() || *p != *f) return false;
  return true;
}

nlohmann::json prediction_json(const Model& m, const Prediction& p, const Encoding& enc) {
  nlohmann::json j = p.to_json();
  j["tokens"] = enc.tokens;
  if (!p.value) j["labels"] = m.labels();
  return j;
}

// What nlohmann::json holds and writes for one number of a reply (a value, its place in an array,
// up to 20 characters of text, the copy httplib sends), measured on /api/attention's replies.
constexpr int64_t kReplyBytesPerNumber = 64;

// The server's bound on one chunk of AttAttr's integration points (AttAttrOptions::max_batch_mb).
constexpr double kAttAttrBatchMb = 256;

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
    datasets_.emplace(spec, load_dataset(spec, data_dir));  // "": the shared data
    dataset_order_.push_back(spec);
  }
}

const ServedModel& Api::model_of(const TextRequest& request) const {
  if (!request.model) return models_.front();
  for (const auto& m : models_)
    if (m.name == *request.model) return m;
  std::vector<std::string> names;
  for (const auto& m : models_) names.push_back(m.name);
  throw ApiError(404, fmt::format("model: no model '{}' is served (served: {})", one_line(*request.model),
                                  fmt::join(names, ", ")));
}

void Api::set_memory_budget(int64_t request_bytes) {
  gate_ = request_bytes > 0 ? std::make_unique<MemoryGate>(request_bytes, limits_.max_queue, limits_.max_wait_seconds)
                            : nullptr;
}

void Api::set_artifact_folders(const std::vector<std::string>& dirs) {
  artifact_folders_.clear();
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) fail("--artifacts: '{}' is not a directory", dir);
    artifact_folders_.push_back(std::filesystem::canonical(dir));
  }
}

std::string Api::artifact_path(const std::string& param, const nlohmann::json& value) const {
  namespace fs = std::filesystem;
  const std::string given = value.get<std::string>();  // check_method_call saw a string
  if (artifact_folders_.empty())
    throw ApiError(403, fmt::format("{}: this server reads no artifacts (start it with --artifacts DIR)", param));
  // Symbolic links and ".." resolved before the check; nothing outside the folders is opened, and
  // the answer is the same whether or not such a path exists.
  const fs::path p(given);
  std::optional<fs::path> first_inside;
  for (const fs::path& folder : artifact_folders_) {
    std::error_code ec;
    const fs::path candidate = fs::weakly_canonical(p.is_absolute() ? p : folder / p, ec);
    if (ec || !inside(candidate, folder)) continue;
    if (fs::exists(candidate, ec)) return candidate.string();
    if (!first_inside) first_inside = candidate;
  }
  if (first_inside) return first_inside->string();  // its loader says what is missing
  throw ApiError(403, fmt::format("{}: '{}' is not under the server's artifact folders (salient serve --artifacts DIR)",
                                  param, one_line(given)));
}

std::optional<MemoryGate::Admission> Api::admit(int64_t bytes, const std::string& what) const {
  if (!gate_) return std::nullopt;
  return gate_->admit(bytes, what);
}

int64_t Api::explain_bytes(const ServedModel& sm, const ExplainRequest& request, int64_t tokens) const {
  int64_t most = sm.model->predict_memory(tokens);
  for (const MethodRequest& a : request.methods)
    most = std::max(most, sm.model->memory_estimate(tokens, a.name, a.params, limits_.max_batch_tokens).request_bytes);
  // Faithfulness's perturbed inputs, and a windowed prediction (all windows at once), fill passes
  // of the default token budget.
  if (request.faithfulness || request.text.windows) most = std::max(most, sm.model->faithfulness_memory(tokens));
  return most;
}

int64_t Api::attention_bytes(const ServedModel& sm, int64_t tokens) const {
  const ModelInfo c = sm.model->info();
  const int64_t L = std::min(tokens, c.max_tokens);
  return sm.model->attentions_memory(tokens) + c.layers * c.heads * L * L * kReplyBytesPerNumber;
}

int64_t Api::attattr_bytes(const ServedModel& sm, const AttAttrRequest& request, int64_t tokens) const {
  const ModelInfo c = sm.model->info();
  const int64_t L = std::min(tokens, c.max_tokens);
  AttAttrOptions o;
  o.m = static_cast<int>(request.m);
  o.max_batch_mb = kAttAttrBatchMb;
  // The reply holds one layer's heads.
  return sm.model->attattr_memory(tokens, o) + c.heads * L * L * kReplyBytesPerNumber;
}

nlohmann::json Api::models() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : models_) {
    const ModelInfo c = m.model->info();
    out.push_back({{"name", m.name},
                   {"path", m.path},
                   {"model_type", c.model_type},
                   {"layers", c.layers},
                   {"heads", c.heads},
                   {"hidden_size", c.hidden_size},
                   {"max_tokens", c.max_tokens},
                   {"labels", c.labels},
                   {"memory", {{"weight_bytes", m.model->weight_bytes()},
                               {"longest_input_tokens", c.max_tokens},
                               {"explain_bytes", m.model->memory_estimates(c.max_tokens, limits_.max_batch_tokens)},
                               {"attention_bytes", attention_bytes(m, c.max_tokens)}}}});
  }
  nlohmann::json memory = {{"max_batch_tokens", limits_.max_batch_tokens}};
  if (gate_) {
    memory["budget_bytes"] = gate_->capacity();
    memory["in_use_bytes"] = gate_->in_use();
    memory["waiting"] = gate_->waiting();
  }
  return {{"models", out}, {"memory", memory}};
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
  check_examples_window(offset, limit, limits_);
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
  const TextRequest request = parse_text_request(body, limits_);
  const ServedModel& sm = model_of(request);
  const TextInput in = input_of(request);
  const LongInputs long_inputs = long_inputs_of(request);
  const Encoding enc = sm.model->tokenize(in, long_inputs);
  const int64_t tokens = static_cast<int64_t>(enc.ids.size());
  const auto admission =
      admit(request.windows ? sm.model->faithfulness_memory(tokens) : sm.model->predict_memory(tokens), "predict");
  const Prediction p = request.windows ? sm.model->predict({in}, 32, long_inputs)[0]
                                       : sm.model->predict(std::vector<Encoding>{enc})[0];
  nlohmann::json j = prediction_json(*sm.model, p, enc);
  j["model"] = sm.name;
  return j;
}

nlohmann::json Api::explain(const nlohmann::json& body) const {
  const auto start = std::chrono::steady_clock::now();
  const ExplainRequest request = parse_explain_request(body, limits_);
  const ServedModel& sm = model_of(request.text);
  const TextInput in = input_of(request.text);
  const std::string& target = request.target;
  const LongInputs long_inputs = long_inputs_of(request.text);
  // Every method is checked before any runs: a typo in the last one costs nothing.
  std::vector<MethodRequest> methods = request.methods;
  for (MethodRequest& a : methods) {
    check_method_call(a.name, a.params, a.output);
    const ExplainerInfo& info =
        *std::find_if(salient::methods().begin(), salient::methods().end(), [&](const ExplainerInfo& i) { return i.name == a.name; });
    for (const ParamSpec& p : info.params)
      if (p.path && a.params.contains(p.name) && !a.params.at(p.name).is_null())
        a.params[p.name] = artifact_path(p.name, a.params.at(p.name));
  }
  const Encoding enc = sm.model->tokenize(in, long_inputs);
  const auto admission = admit(explain_bytes(sm, request, static_cast<int64_t>(enc.ids.size())), "explain");
  const Prediction pred = request.text.windows ? sm.model->predict({in}, 32, long_inputs)[0]
                                               : sm.model->predict(std::vector<Encoding>{enc})[0];
  nlohmann::json out = {{"model", sm.name}, {"prediction", prediction_json(*sm.model, pred, enc)}};
  // The predicted class is known: naming it spares every method a forward pass to find it again.
  const std::string explained = target == "pred" && !pred.value ? std::to_string(pred.label_id) : target;
  nlohmann::json explanations = nlohmann::json::array();
  for (const MethodRequest& a : methods) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > limits_.max_seconds) {
      explanations.push_back({{"method", a.name},
                              {"error", fmt::format("not run: the request took {:.0f} s, over the server's limit of {:.0f} s "
                                                    "(--max-seconds)", elapsed, limits_.max_seconds)}});
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    // Windows one at a time: the memory estimate counts one.
    const Explanation ex = sm.model->explain({in}, a.name, a.params, explained, a.output, request.text.windows ? 1 : 8, 0,
                                             long_inputs, limits_.max_batch_tokens)[0];
    nlohmann::json e = ex.to_json();
    e["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (request.faithfulness && !pred.value)
      e["faithfulness"] = sm.model->faithfulness(in, ex.scores, ex.target, "prob", 0, "mask", long_inputs, request.aopc_bins);
    explanations.push_back(std::move(e));
  }
  out["explanations"] = std::move(explanations);
  return out;
}

nlohmann::json Api::attattr(const nlohmann::json& body) const {
  const AttAttrRequest request = parse_attattr_request(body, limits_);
  refuse_windows(request.text, "/api/attattr");
  const ServedModel& sm = model_of(request.text);
  const TextInput in = input_of(request.text);
  const std::string& target = request.target;
  const int64_t layers = sm.model->info().layers;
  const int64_t layer = request.layer.value_or(layers - 1);
  if (layer < 0 || layer >= layers) bad_request(fmt::format("layer: must be in 0..{}, got {}", layers - 1, layer));
  AttAttrOptions o;
  o.m = static_cast<int>(request.m);
  o.max_batch_mb = kAttAttrBatchMb;
  const auto admission =
      admit(attattr_bytes(sm, request, static_cast<int64_t>(sm.model->tokenize(in).ids.size())), "attattr");
  nlohmann::json tree;
  const nlohmann::json all = sm.model->attattr(in, target, o, &tree);  // one attribution for both
  tree["svg"] = attattr_tree_svg(tree);
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
  const TextRequest request = parse_text_request(body, limits_);
  refuse_windows(request, "/api/attention");
  const ServedModel& sm = model_of(request);
  const TextInput in = input_of(request);
  const Encoding enc = sm.model->tokenize(in);
  const auto admission = admit(attention_bytes(sm, static_cast<int64_t>(enc.ids.size())), "attention");
  return {{"model", sm.name}, {"tokens", enc.tokens}, {"attentions", sm.model->attentions(in)}};
}

}  // namespace salient::serve
