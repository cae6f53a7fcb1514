#include "salient/salient.h"

#include <algorithm>
#include <numeric>
#include <cmath>

#include "attattr/attribution.h"
#include "attattr/render.h"
#include "attattr/report.h"
#include "data/dataset.h"
#include "eval/classification.h"
#include "eval/faithfulness.h"
#include "explain/long_inputs.h"
#include "explain/memory.h"
#include "model/checkpoint.h"
#include "model/classifier.h"
#include "model/windows.h"
#include "train/trainer.h"
#include "util/error.h"
#include "util/io.h"

namespace salient {

nlohmann::json Prediction::to_json() const {
  nlohmann::json j;
  if (value) {
    j["value"] = *value;
  } else {
    j["label"] = label;
    j["label_id"] = label_id;
    j["logits"] = logits;
    j["probs"] = probs;
  }
  if (truncated) j["truncated"] = true;
  if (windows > 0) j["windows"] = windows;
  return j;
}

Model::Model(Classifier classifier) : clf_(std::make_shared<const Classifier>(std::move(classifier))) {}

const ModelConfig& Model::config() const { return clf_->model.config(); }

Model Model::load(const std::string& dir, const LoadOptions& options) {
  LoadOptions with_head = options;
  with_head.allow_new_head = true;  // a base encoder gets a placeholder head that nothing reads
  LoadReport report;
  Model m(load_classifier(dir, with_head, &report));
  m.has_task_head_ = options.allow_new_head || report.initialised.empty();
  warn_unused_weights(report.weights, report);
  return m;
}

void Model::require_task_head() const {
  if (!has_task_head_)
    fail("{}: no classification head (a base encoder: its hidden states and attentions can be read); "
         "fine-tune it first (salient train --init {})", clf_->dir, clf_->dir);
}

ForwardOutputs Model::forward(const std::vector<Encoding>& inputs, bool hidden_states, bool attentions,
                              int64_t batch_size) const {
  if (batch_size <= 0) fail("batch_size: must be positive (got {})", batch_size);
  if (inputs.empty()) fail("inputs: empty");
  size_t longest = 0;
  for (const auto& e : inputs) longest = std::max(longest, e.ids.size());
  const int64_t pad = clf_->tokenizer.pad_id();
  // Pads a [b, l, ...] chunk to the overall longest input along `dims` (sequence axes).
  auto padded = [&](torch::Tensor t, std::initializer_list<int64_t> dims, double value) {
    for (int64_t d : dims) {
      const int64_t missing = static_cast<int64_t>(longest) - t.size(d);
      if (missing == 0) continue;
      std::vector<int64_t> shape = t.sizes().vec();
      shape[d] = missing;
      t = torch::cat({t, torch::full(shape, value, t.options())}, d);
    }
    return t;
  };
  std::vector<torch::Tensor> ids, types, masks, logits;
  std::vector<std::vector<torch::Tensor>> states, attns;
  torch::NoGradGuard no_grad;
  for (size_t s = 0; s < inputs.size(); s += static_cast<size_t>(batch_size)) {
    std::vector<const Encoding*> chunk;
    for (size_t i = s; i < std::min(inputs.size(), s + static_cast<size_t>(batch_size)); ++i) chunk.push_back(&inputs[i]);
    Batch b = make_batch(chunk, pad, clf_->model.device());
    ForwardRequest req = forward_request(b);
    req.want_hidden_states = hidden_states;
    req.want_attentions = attentions;
    const ForwardResult r = clf_->model.forward(req);
    auto cpu = [](const torch::Tensor& t) { return t.to(torch::kCPU, torch::kFloat32); };
    ids.push_back(padded(b.input_ids.cpu(), {1}, static_cast<double>(pad)));
    types.push_back(padded(b.token_type_ids.cpu(), {1}, 0));
    masks.push_back(padded(b.attention_mask.cpu().to(torch::kInt64), {1}, 0));
    if (has_task_head_) logits.push_back(cpu(r.logits));
    std::vector<torch::Tensor> st, at;
    for (const auto& h : r.hidden_states) st.push_back(padded(cpu(h), {1}, 0));
    for (const auto& a : r.attentions) at.push_back(padded(cpu(a), {2, 3}, 0));
    states.push_back(std::move(st));
    attns.push_back(std::move(at));
  }
  ForwardOutputs out;
  out.input_ids = torch::cat(ids);
  out.token_type_ids = torch::cat(types);
  out.attention_mask = torch::cat(masks);
  if (has_task_head_) out.logits = torch::cat(logits);
  auto concat = [](const std::vector<std::vector<torch::Tensor>>& per_chunk, std::vector<torch::Tensor>& dst) {
    for (size_t k = 0; k < per_chunk.front().size(); ++k) {
      std::vector<torch::Tensor> parts;
      for (const auto& c : per_chunk) parts.push_back(c[k]);
      dst.push_back(torch::cat(parts));
    }
  };
  concat(states, out.hidden_states);
  concat(attns, out.attentions);
  return out;
}

ModelInfo Model::info() const {
  const ModelConfig& c = config();
  return {c.model_type, c.num_hidden_layers, c.num_attention_heads, c.hidden_size, c.max_tokens(), labels()};
}

nlohmann::json Model::config_json() const { return config().to_json(); }

std::vector<std::string> Model::labels() const {
  std::vector<std::string> names;
  for (int64_t i = 0; i < config().num_labels; ++i) names.push_back(clf_->label_name(i));
  return names;
}

Encoding Model::tokenize(const TextInput& input, int max_length) const {
  if (max_length < 0) fail("max_length: must be >= 0 (got {})", max_length);
  return clf_->encode(input.text, input.text_pair, max_length);
}

std::vector<Prediction> Model::predict(const std::vector<Encoding>& inputs, int64_t batch_size) const {
  require_task_head();
  if (batch_size <= 0) fail("batch_size: must be positive (got {})", batch_size);
  // Batches of similar lengths, so that little padding is computed; each prediction goes back to
  // its input's place.
  std::vector<const Encoding*> ptrs;
  for (const Encoding& e : inputs) ptrs.push_back(&e);
  const std::vector<size_t> order = shortest_first(ptrs);
  std::vector<Prediction> out(inputs.size());
  torch::NoGradGuard no_grad;
  for (size_t s = 0; s < order.size(); s += static_cast<size_t>(batch_size)) {
    std::vector<const Encoding*> chunk;
    for (size_t i = s; i < std::min(order.size(), s + static_cast<size_t>(batch_size)); ++i)
      chunk.push_back(&inputs[order[i]]);
    Batch b = make_batch(chunk, clf_->tokenizer.pad_id(), clf_->model.device());
    torch::Tensor logits = clf_->model.logits(b.input_ids, b.token_type_ids, b.attention_mask).to(torch::kCPU, torch::kFloat64);
    torch::Tensor probs = torch::softmax(logits, -1);
    for (size_t i = 0; i < chunk.size(); ++i) {
      Prediction p;
      p.truncated = chunk[i]->truncated;
      const torch::Tensor l = logits[i].contiguous(), q = probs[i].contiguous();
      if (config().num_labels == 1) {  // a regression model: its one output
        p.value = l[0].item<double>();
      } else {
        p.label_id = q.argmax().item<int64_t>();
        p.label = clf_->label_name(p.label_id);
        p.logits.assign(l.data_ptr<double>(), l.data_ptr<double>() + l.numel());
        p.probs.assign(q.data_ptr<double>(), q.data_ptr<double>() + q.numel());
      }
      out[order[s + i]] = std::move(p);
    }
  }
  return out;
}

namespace {
// A method's parameters as given: an object of names to values, or null (a C++ caller's `{}`).
nlohmann::json params_object(const nlohmann::json& params) {
  if (params.is_null()) return nlohmann::json::object();
  if (!params.is_object()) fail("params: expected an object of parameter names to values, got {}", params.dump());
  return params;
}

void check_long_inputs(const LongInputs& l) {
  if (l.stride < 0) fail("stride: must be >= 0 (got {})", l.stride);
  if (l.stride != 0 && !l.windows) fail("stride: only with windows");
}
}  // namespace

namespace {
// The whole input, untruncated, and its windows (LongInputs).
std::pair<Encoding, std::vector<Window>> windows_of(const Classifier& clf, const TextInput& input,
                                                    const LongInputs& long_inputs) {
  if (input.text_pair) fail("text_pair: windows read one text, not a sentence pair");
  Encoding whole = clf.tokenizer.encode(input.text, std::nullopt, 0);
  std::vector<Window> windows = split_windows(whole, clf.model.config().max_tokens(), long_inputs.stride, "stride");
  return {std::move(whole), std::move(windows)};
}
}  // namespace

std::vector<Prediction> Model::predict(const std::vector<TextInput>& inputs, int64_t batch_size,
                                       const LongInputs& long_inputs) const {
  check_long_inputs(long_inputs);
  if (!long_inputs.windows) {
    std::vector<Encoding> encs;
    for (const auto& in : inputs) encs.push_back(tokenize(in));
    return predict(encs, batch_size);
  }
  // Every window of every input through the model together, then each input's mean logits.
  std::vector<TokenSequence> seqs;
  std::vector<int64_t> windows;
  for (const auto& in : inputs) {
    if (in.text_pair) fail("text_pair: windows read one text, not a sentence pair");
    seqs.push_back(to_sequence(clf_->tokenizer.encode(in.text, std::nullopt, 0)));
    windows.push_back(static_cast<int64_t>(
        window_starts(static_cast<int64_t>(seqs.back().ids.size()) - 2, config().max_tokens(), long_inputs.stride, "stride").size()));
  }
  const std::vector<std::vector<double>> logits = windowed_logits(*clf_, seqs, long_inputs.stride, BatchLimits{batch_size});
  std::vector<Prediction> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Prediction p;
    p.windows = windows[i];
    if (config().num_labels == 1) {
      p.value = logits[i][0];
    } else {
      p.logits = logits[i];
      p.probs = softmax_of(p.logits);
      p.label_id = std::max_element(p.logits.begin(), p.logits.end()) - p.logits.begin();
      p.label = clf_->label_name(p.label_id);
    }
    out.push_back(std::move(p));
  }
  return out;
}

MemoryEstimate Model::memory_estimate(int64_t tokens, const std::string& method, const nlohmann::json& params,
                                      int64_t max_batch_tokens) const {
  if (tokens <= 0) fail("tokens: must be positive (got {})", tokens);
  if (max_batch_tokens <= 0) fail("max_batch_tokens: must be positive (got {})", max_batch_tokens);
  const ExplainerInfo& info = explainer_info(method);  // an unknown name lists the valid ones
  ExplainOptions opts;
  opts.params = params_object(params);
  const ExplainOptions completed = with_declared_params(info, opts);  // the same one-line errors as explain()
  MemoryEstimate e;
  e.weight_bytes = weight_bytes();
  opts.max_batch_tokens = max_batch_tokens;
  e.request_bytes = explain_bytes(config(), info.footprint, completed.params, tokens, opts.limits());
  return e;
}

int64_t Model::weight_bytes() const { return salient::weight_bytes(clf_->model); }

std::map<std::string, int64_t> Model::memory_estimates(int64_t tokens, int64_t max_batch_tokens) const {
  if (max_batch_tokens <= 0) fail("max_batch_tokens: must be positive (got {})", max_batch_tokens);
  return explain_bytes_per_method(config(), tokens, BatchLimits{64, max_batch_tokens});
}

int64_t Model::predict_memory(int64_t tokens) const {
  return pass_bytes(config(), Footprint::Pass::forward, 1, pass_length(config(), tokens));
}

int64_t Model::attentions_memory(int64_t tokens) const {
  const ModelConfig& c = config();
  const int64_t L = pass_length(c, tokens);
  // The returned [layers][heads][L][L] doubles besides the pass.
  return pass_bytes(c, Footprint::Pass::attentions, 1, L) + c.num_hidden_layers * c.num_attention_heads * L * L * 8;
}

int64_t Model::faithfulness_memory(int64_t tokens) const {
  const int64_t L = pass_length(config(), tokens);
  return pass_bytes(config(), Footprint::Pass::forward, rows_per_pass(BatchLimits(), L), L);
}

int64_t Model::attattr_memory(int64_t tokens, const AttAttrOptions& options) const {
  const ModelConfig& c = config();
  const int64_t L = pass_length(c, tokens);
  // The first layer's chunk is the largest (its points run through every layer above it).
  const double point = attattr::bytes_per_point(clf_->model, 0, L);
  const double chunk = std::min(static_cast<double>(std::max(options.m, 1)) * point,
                                std::max(options.max_batch_mb * 1048576.0, point));
  // Per layer: attention, attribution and weighted gradient (float32), and the JSON's doubles.
  const int64_t maps = c.num_hidden_layers * c.num_attention_heads * L * L;
  return static_cast<int64_t>(chunk) + maps * (3 * 4 + 8 + 16) + pass_bytes(c, Footprint::Pass::forward, 1, L);
}

std::vector<Explanation> Model::explain(const std::vector<TextInput>& inputs, const std::string& method,
                                        const nlohmann::json& params, const std::string& target,
                                        const std::string& output, int64_t batch_size, uint64_t seed,
                                        const LongInputs& long_inputs, int64_t max_batch_tokens) const {
  require_task_head();
  // Gradient methods need autograd whatever the caller's grad mode (in Python, torch.no_grad() or
  // torch.set_grad_enabled(False) switch it off for this thread in the libtorch salient shares).
  torch::AutoGradMode grad_on(true);
  if (batch_size <= 0) fail("batch_size: must be positive (got {})", batch_size);
  if (max_batch_tokens <= 0) fail("max_batch_tokens: must be positive (got {})", max_batch_tokens);
  const nlohmann::json given = params_object(params);
  auto explainer = make_explainer(method);  // an unknown name lists the valid ones
  ExplainOptions opts;
  opts.params = given;
  opts.seed = seed;
  opts.max_batch_tokens = max_batch_tokens;
  if (!output.empty()) opts.output = parse_model_output(output);
  const int64_t fixed_target = target == "pred" ? -1 : config().label_id(target);  // errors name the labels
  check_long_inputs(long_inputs);
  if (long_inputs.windows) {
    // Each input's windows explained for one class (the whole input's prediction, or the one
    // asked for), their scores stitched onto the whole input.
    const std::vector<Prediction> preds =
        fixed_target < 0 ? predict(inputs, batch_size, long_inputs) : std::vector<Prediction>();
    std::vector<Explanation> out;
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto [whole, windows] = windows_of(*clf_, inputs[i], long_inputs);
      const int64_t t = fixed_target < 0 ? preds[i].label_id : fixed_target;
      Explanation stitched = explain_windows(*explainer, *clf_, windows, whole.ids.size(), t, opts, batch_size);
      // The stride read, so the explanation can be scored as it was made (faithfulness, evaluate).
      stitched.extras["stride"] = resolved_stride(config().max_tokens(), long_inputs.stride);
      out.push_back(complete_explanation(*clf_, whole, stitched, inputs[i].text, /*word_max=*/false));
    }
    return out;
  }
  std::vector<Encoding> encs;
  for (const auto& in : inputs) encs.push_back(tokenize(in));
  std::vector<Explanation> out;
  for (size_t s = 0; s < encs.size(); s += static_cast<size_t>(batch_size)) {
    std::vector<const Encoding*> chunk;
    for (size_t i = s; i < std::min(encs.size(), s + static_cast<size_t>(batch_size)); ++i) chunk.push_back(&encs[i]);
    std::vector<int64_t> targets =
        fixed_target < 0 ? predicted_classes(*clf_, chunk) : std::vector<int64_t>(chunk.size(), fixed_target);
    std::vector<Explanation> ex = explainer->explain(*clf_, chunk, targets, opts);
    for (size_t i = 0; i < chunk.size(); ++i)
      out.push_back(complete_explanation(*clf_, *chunk[i], std::move(ex[i]), inputs[s + i].text, /*word_max=*/false));
  }
  return out;
}

Encoding Model::tokenize(const TextInput& input, const LongInputs& long_inputs) const {
  check_long_inputs(long_inputs);
  return long_inputs.windows ? windows_of(*clf_, input, long_inputs).first : tokenize(input);
}

nlohmann::json Model::faithfulness(const TextInput& input, const std::vector<double>& token_scores, int64_t target,
                                   const std::string& output, int64_t k, const std::string& removal,
                                   const LongInputs& long_inputs, const std::string& aopc_bins) const {
  require_task_head();
  if (aopc_bins != "deciles" && aopc_bins != "eraser")
    fail("aopc_bins: unknown value '{}' (expected deciles or eraser)", aopc_bins);
  const Encoding enc = tokenize(input, long_inputs);
  if (token_scores.size() != enc.ids.size())
    fail("token_scores: {} scores for {} tokens", token_scores.size(), enc.ids.size());
  if (target < 0 || target >= config().num_labels)
    fail("target: class {} out of range (the model has {})", target, config().num_labels);
  const ModelOutput measured = parse_model_output(output);
  FaithfulnessOptions fopts;
  fopts.removal = parse_removal(removal);
  fopts.mask_id = clf_->tokenizer.mask_id();
  if (aopc_bins == "eraser") {  // DeYoung et al. 2020's bins; no deletion / insertion curves
    fopts.aopc_fractions = {0.01, 0.05, 0.1, 0.2, 0.5};
    fopts.curve_steps = 0;
  }
  const std::vector<bool> removable = removable_positions(*clf_, enc);
  if (std::count(removable.begin(), removable.end(), true) == 0) fail("input: no token that can be removed");
  SequenceScorer scorer = [&](const std::vector<TokenSequence>& seqs) {
    const std::vector<int64_t> targets(seqs.size(), target);
    return long_inputs.windows
               ? score_sequences_windowed(*clf_, seqs, targets, measured, long_inputs.stride, BatchLimits())
               : score_sequences(*clf_, seqs, targets, measured, BatchLimits());
  };
  const FaithfulnessResult r = evaluate_faithfulness(scorer, to_sequence(enc), token_scores, removable, k, fopts);
  auto num = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
  nlohmann::json j = {{"output", model_output_name(measured)},
                      {"removal", removal},
                      {"aopc_bins", aopc_bins},
                      {"k", r.k},
                      {"full", r.full},
                      {"comprehensiveness", num(r.comprehensiveness)},
                      {"sufficiency", num(r.sufficiency)},
                      {"aopc_comprehensiveness", num(r.aopc_comprehensiveness)},
                      {"aopc_sufficiency", num(r.aopc_sufficiency)}};
  if (fopts.curve_steps > 0) {
    j["deletion_auc"] = r.deletion_auc;
    j["insertion_auc"] = r.insertion_auc;
  }
  return j;
}

std::vector<std::vector<std::vector<std::vector<double>>>> Model::attentions(const TextInput& input) const {
  const Encoding enc = tokenize(input);
  Batch b = make_batch(std::vector<Encoding>{enc}, clf_->tokenizer.pad_id(), clf_->model.device());
  torch::NoGradGuard no_grad;
  ForwardRequest req = forward_request(b);
  req.want_attentions = true;
  const ForwardResult r = clf_->model.forward(req);
  std::vector<std::vector<std::vector<std::vector<double>>>> out;
  for (const torch::Tensor& layer : r.attentions) {
    const torch::Tensor a = layer[0].to(torch::kCPU, torch::kFloat64).contiguous();  // [H, L, L]
    const int64_t H = a.size(0), L = a.size(1);
    const double* p = a.data_ptr<double>();
    std::vector<std::vector<std::vector<double>>> heads(H, std::vector<std::vector<double>>(L));
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < L; ++i) heads[h][i].assign(p + (h * L + i) * L, p + (h * L + i + 1) * L);
    out.push_back(std::move(heads));
  }
  return out;
}

namespace {

attattr::AttributionOptions attribution_options(const Transformer& model, const AttAttrOptions& a) {
  attattr::AttributionOptions o;
  o.m = a.m;
  o.rule = parse_rule(a.rule, "rule");
  o.max_batch_mb = a.max_batch_mb;
  o.layers = a.layers;
  attattr::make_quadrature(o.rule, o.m);  // m and rule checked before any work
  attattr::checked_layers(model, o);
  if (!(a.max_batch_mb > 0)) fail("max_batch_mb: must be > 0 (got {})", a.max_batch_mb);
  return o;
}

torch::Tensor ids_row(const std::vector<int64_t>& v) { return torch::tensor(v, torch::kLong).unsqueeze(0); }

}  // namespace

nlohmann::json Model::attattr(const TextInput& input, const std::string& target, const AttAttrOptions& options,
                              nlohmann::json* tree, double tau) const {
  require_task_head();
  torch::AutoGradMode grad_on(true);  // as explain()
  const attattr::AttributionOptions o = attribution_options(clf_->model, options);
  if (tree && !options.layers.empty()) fail("layers: the attribution tree needs every layer");
  if (tree && !(tau > 0)) fail("tau: must be positive (got {})", tau);
  const int64_t t = target == "pred" ? -1 : config().label_id(target);
  const Encoding e = tokenize(input);
  const attattr::AttributionResult r = attattr::attribute(clf_->model, ids_row(e.ids), ids_row(e.type_ids), t, o);
  if (tree) *tree = attattr::tree_json(*clf_, e, r, o, tau, tau, -1);
  return attattr::attribution_json(*clf_, e, r, o, attattr::checked_layers(clf_->model, o));
}

nlohmann::json Model::attattr_tree(const TextInput& input, const std::string& target, double tau,
                                   const AttAttrOptions& options) const {
  AttAttrOptions all = options;
  all.layers.clear();  // the tree spans every layer
  nlohmann::json tree;
  attattr(input, target, all, &tree, tau);
  return tree;
}

nlohmann::json Model::attattr_heads(const std::string& data, int64_t limit, const std::string& target,
                                    const AttAttrOptions& options, const std::string& data_dir, uint64_t seed) const {
  require_task_head();
  torch::AutoGradMode grad_on(true);  // Taylor scores and AttAttr need gradients, as explain()
  if (target != "gold" && target != "pred") fail("target: must be gold or pred (got '{}')", target);
  if (limit < 0) fail("limit: must be >= 0 (got {})", limit);
  const attattr::AttributionOptions o = attribution_options(clf_->model, options);
  const attattr::LabelledSet set =
      attattr::load_labelled_set(*clf_, data, data_dir.empty() ? shared_data_dir() : data_dir, limit, "data");
  nlohmann::json j = attattr::head_scores_json(*clf_, set, o, target == "gold", 32, seed);
  j["data"] = data;
  return j;
}

nlohmann::json Model::attattr_prune(const std::string& eval_data, const nlohmann::json& head_scores, int steps,
                                    int64_t layer, const std::string& data, int64_t limit, const std::string& target,
                                    const AttAttrOptions& options, const std::string& data_dir, uint64_t seed) const {
  require_task_head();
  torch::AutoGradMode grad_on(true);  // Taylor scores and AttAttr need gradients, as explain()
  if (steps <= 0) fail("steps: must be positive (got {})", steps);
  if (layer < -1 || layer >= clf_->model.num_layers())
    fail("layer: {} out of range (-1 for none, or 0..{})", layer, clf_->model.num_layers() - 1);
  const nlohmann::json scores =
      head_scores.is_null() ? attattr_heads(data, limit, target, options, data_dir, seed) : head_scores;
  const attattr::LabelledSet eval =
      attattr::load_labelled_set(*clf_, eval_data, data_dir.empty() ? shared_data_dir() : data_dir, 0, "eval_data");
  return attattr::pruning_json(*clf_, scores, "head_scores", eval, eval_data, steps, layer);
}

nlohmann::json Model::evaluate(const std::string& spec, const std::string& data_dir, int64_t batch_size,
                               int64_t max_length, const LongInputs& long_inputs) const {
  return evaluate(load_dataset(spec, data_dir), batch_size, max_length,
                  long_inputs);
}

nlohmann::json Model::evaluate(const Dataset& data, int64_t batch_size, int64_t max_length,
                               const LongInputs& long_inputs) const {
  require_task_head();
  if (batch_size <= 0) fail("batch_size: must be positive (got {})", batch_size);
  if (max_length < 0) fail("max_length: must be >= 0 (got {})", max_length);
  check_long_inputs(long_inputs);
  if (long_inputs.windows) {
    if (max_length > 0) fail("max_length: windows read whole inputs (give one or the other)");
    if (config().num_labels == 1) fail("windows: evaluate reads windows for classifiers only");
    std::vector<TextInput> inputs;
    std::vector<int64_t> gold, pred;
    for (size_t i = 0; i < data.records.size(); ++i) {
      if (data.records[i].label < 0) fail("--data: '{}' record {} has no label", data.name, i + 1);
      inputs.push_back({data.records[i].text, data.records[i].text_pair});
      gold.push_back(data.records[i].label);
    }
    int64_t windows = 0;
    for (const Prediction& p : predict(inputs, batch_size, long_inputs)) {
      pred.push_back(p.label_id);
      windows += p.windows;
    }
    const ClassificationMetrics m = classification_metrics(gold, pred, config().num_labels);
    return {{"data", data.name}, {"examples", m.count}, {"accuracy", m.accuracy}, {"macro_f1", m.macro_f1},
            {"mcc", m.mcc}, {"windows", windows},
            {"stride", resolved_stride(config().max_tokens(), long_inputs.stride)}};
  }
  const int64_t length = max_length > 0 ? max_length : config().max_tokens();
  if (config().num_labels == 1) {
    const RegressionMetrics m = evaluate_regressor(*clf_, data, length, batch_size);
    return {{"data", data.name}, {"examples", m.count}, {"pearson", m.pearson}, {"mse", m.mse}, {"max_length", length}};
  }
  for (size_t i = 0; i < data.records.size(); ++i)
    if (data.records[i].label < 0) fail("--data: '{}' record {} has no label", data.name, i + 1);
  const ClassificationMetrics m = evaluate_classifier(*clf_, data, length, batch_size);
  return {{"data", data.name}, {"examples", m.count}, {"accuracy", m.accuracy}, {"macro_f1", m.macro_f1},
          {"mcc", m.mcc}, {"max_length", length}};
}

const std::vector<ExplainerInfo>& methods() { return explainer_registry(); }

void check_method_call(const std::string& method, const nlohmann::json& params, const std::string& output) {
  ExplainOptions o;
  o.params = params_object(params);
  with_declared_params(explainer_info(method), o);  // unknown names list the valid ones
  if (!output.empty()) parse_model_output(output);
}

std::string attattr_tree_svg(const nlohmann::json& tree) { return attattr::tree_svg(tree); }

nlohmann::json method_json(const ExplainerInfo& info) {
  nlohmann::json params = nlohmann::json::array();
  for (const ParamSpec& p : info.params) {
    nlohmann::json j = {{"name", p.name}, {"type", p.type_name()}, {"default", p.default_value},
                        {"choices", p.choices}, {"doc", p.doc}, {"describe", p.describe()}, {"path", p.path}};
    j["min"] = std::isfinite(p.min) ? nlohmann::json(p.min) : nlohmann::json(nullptr);
    j["max"] = std::isfinite(p.max) ? nlohmann::json(p.max) : nlohmann::json(nullptr);
    params.push_back(j);
  }
  const auto explainer = info.make();
  return {{"name", info.name},
          {"family", info.family},
          {"summary", info.summary},
          {"default_output", explainer->uses_model_output() ? model_output_name(explainer->default_output()) : ""},
          {"params", params}};
}

std::string error_message(const std::exception& e) {
  if (const auto* torch_error = dynamic_cast<const c10::Error*>(&e)) return one_line(torch_error->what_without_backtrace());
  return one_line(e.what());
}

}  // namespace salient
