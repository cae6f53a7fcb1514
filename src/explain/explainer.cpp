// Registry, shared helpers, predicted classes, word alignment and batched sequence scoring.
#include "explain/explainer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <cmath>

#include "data/dataset.h"
#include "explain/methods.h"
#include "util/error.h"

namespace salient {

ModelOutput parse_model_output(const std::string& name) {
  if (name == "prob" || name == "probability") return ModelOutput::Probability;
  if (name == "logit") return ModelOutput::Logit;
  fail("--score: unknown value '{}' (expected prob or logit)", name);
}

namespace {

std::string number_text(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == std::floor(v) && std::abs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

}  // namespace

std::string param_flag(const std::string& name) {
  std::string f = "--" + name;
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

std::string ParamSpec::flag() const { return param_flag(name); }

std::string model_output_name(ModelOutput output) { return output == ModelOutput::Logit ? "logit" : "prob"; }

std::string ParamSpec::type_name() const {
  switch (type) {
    case Type::Int: return "int";
    case Type::Number: return "number";
    case Type::String: return "string";
  }
  return "?";
}

bool ParamSpec::names(const std::string& value) const {
  return type != Type::String && std::find(choices.begin(), choices.end(), value) != choices.end();
}

std::string ParamSpec::describe() const {
  std::string range;
  if (type == Type::String && !choices.empty()) range = fmt::format("{}", fmt::join(choices, " | "));
  else if (type != Type::String && (std::isfinite(min) || std::isfinite(max)))
    range = std::isfinite(max) ? fmt::format("{} in [{}, {}]", type_name(), number_text(min), number_text(max))
                               : fmt::format("{} >= {}", type_name(), number_text(min));
  else range = type_name();
  if (type != Type::String && !choices.empty()) range += fmt::format(" | {}", fmt::join(choices, " | "));
  const std::string def = default_value.is_null() ? "no default"
                          : default_value.is_string() ? "default '" + default_value.get<std::string>() + "'"
                                                       : "default " + default_value.dump();
  return fmt::format("{} ({}; {}): {}", flag(), range, def, doc);
}

const std::vector<ExplainerInfo>& explainer_registry() {
  using namespace explain;
  static const std::vector<ExplainerInfo> registry = {
#define SALIENT_EXPLAINER(id) id##_info(),
#include "explain/registry.inc"
#undef SALIENT_EXPLAINER
  };
  return registry;
}

std::vector<std::string> explainer_names() {
  std::vector<std::string> names;
  for (const auto& e : explainer_registry()) names.push_back(e.name);
  return names;
}

std::vector<std::string> post_hoc_explainer_names() {
  std::vector<std::string> names;
  for (const auto& e : explainer_registry())
    if (e.family != "learned") names.push_back(e.name);
  return names;
}

const ExplainerInfo& explainer_info(const std::string& name) {
  for (const auto& e : explainer_registry())
    if (e.name == name) return e;
  fail("--method: unknown method '{}' (valid: {})", name, fmt::join(explainer_names(), ", "));
}

std::unique_ptr<Explainer> make_explainer(const std::string& name) {
  const ExplainerInfo& info = explainer_info(name);
  std::unique_ptr<Explainer> e = info.make();
  e->info_ = &info;
  return e;
}

ExplainOptions with_declared_params(const ExplainerInfo& info, const ExplainOptions& options) {
  if (!options.params.is_object()) fail("{}: parameters must be a JSON object", info.name);
  ExplainOptions o = options;
  auto declared = [&](const std::string& key) -> const ParamSpec* {
    for (const auto& p : info.params)
      if (p.name == key) return &p;
    return nullptr;
  };
  for (const auto& [key, value] : options.params.items()) {
    const ParamSpec* p = declared(key);
    if (!p) {
      std::vector<std::string> flags;
      for (const auto& q : info.params) flags.push_back(q.flag());
      fail("{}: method '{}' takes no such parameter ({})", param_flag(key), info.name,
           flags.empty() ? "it takes none" : fmt::format("it takes {}", fmt::join(flags, ", ")));
    }
    if (value.is_null()) {
      o.params.erase(key);
      continue;
    }
    if (value.is_string() && p->names(value.get<std::string>())) continue;  // "auto": the method works it out
    switch (p->type) {
      case ParamSpec::Type::Int:
        if (!value.is_number_integer())
          fail("{}: expected an integer{}, got {}", p->flag(),
               p->choices.empty() ? "" : fmt::format(" or {}", fmt::join(p->choices, ", ")), value.dump());
        break;
      case ParamSpec::Type::Number:
        if (!value.is_number()) fail("{}: expected a number, got {}", p->flag(), value.dump());
        break;
      case ParamSpec::Type::String:
        if (!value.is_string()) fail("{}: expected a string, got {}", p->flag(), value.dump());
        break;
    }
    if (p->type != ParamSpec::Type::String) {
      const double v = value.get<double>();
      if (!(v >= p->min && v <= p->max))
        fail("{}: {} is out of range ({})", p->flag(), value.dump(),
             std::isfinite(p->max) ? fmt::format("{} to {}", number_text(p->min), number_text(p->max))
                                   : fmt::format("at least {}", number_text(p->min)));
    } else if (p->type == ParamSpec::Type::String && !p->choices.empty() &&
               std::find(p->choices.begin(), p->choices.end(), value.get<std::string>()) == p->choices.end()) {
      fail("{}: unknown value '{}' for method '{}' (valid: {})", p->flag(), value.get<std::string>(), info.name,
           fmt::join(p->choices, ", "));
    }
  }
  for (const auto& p : info.params)
    if (!o.params.contains(p.name) && !p.default_value.is_null()) o.params[p.name] = p.default_value;
  return o;
}

std::vector<Explanation> Explainer::explain(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                            const std::vector<int64_t>& targets, const ExplainOptions& options) {
  ExplainOptions o = info_ ? with_declared_params(*info_, options) : options;
  // A regression model (one output) is explained on its value: a softmax over one output is 1.
  if (clf.model.config().num_labels == 1 && uses_model_output()) {
    if (o.output && *o.output == ModelOutput::Probability)
      fail("--score: a regression model (one output) is explained on its value; use --score logit, not prob");
    o.output = ModelOutput::Logit;
  }
  std::vector<Explanation> out = compute(clf, inputs, targets, o);
  for (auto& e : out) {
    e.params = o.params;
    if (uses_model_output()) e.output = output_of(o);
  }
  return out;
}

Explanation complete_explanation(const Classifier& clf, const Encoding& enc, Explanation e,
                                 const std::optional<std::string>& text, bool word_max, const nlohmann::json& id) {
  e.target_label = clf.label_name(e.target);
  e.tokens = enc.tokens;
  if (text) {
    e.words = split_whitespace(*text);
    e.word_scores = word_scores(*text, enc, e.scores, word_max);
  }
  e.truncated = enc.truncated;
  e.id = id;
  return e;
}

nlohmann::json explanation_json(const Classifier& clf, const Encoding& enc, const Explanation& e,
                                const std::optional<std::string>& text, bool word_max, const nlohmann::json& id) {
  return complete_explanation(clf, enc, e, text, word_max, id).to_json();
}

nlohmann::json Explanation::to_json() const {
  nlohmann::json j;
  if (!id.is_null()) j["id"] = id;
  j["method"] = method;
  j["params"] = params;
  j["output"] = output ? nlohmann::json(model_output_name(*output)) : nlohmann::json(nullptr);
  j["target"] = target;
  j["target_label"] = target_label;
  j["tokens"] = tokens;
  j["token_scores"] = scores;
  if (words) j["words"] = *words;
  if (word_scores) j["word_scores"] = *word_scores;
  j["extras"] = extras.is_null() ? nlohmann::json::object() : extras;
  if (truncated) j["truncated"] = true;
  return j;
}

Explanation Explanation::from_json(const nlohmann::json& j) {
  if (!j.is_object()) fail("explanation: expected a JSON object, got {}", j.type_name());
  // The field `name`, checked to be of JSON type `is` (one of the schema's), converted to T.
  auto field = [&](const char* name, bool (nlohmann::json::*is)() const noexcept, const char* type) -> const nlohmann::json& {
    auto it = j.find(name);
    if (it == j.end()) fail("explanation: field '{}' is missing", name);
    if (!((*it).*is)()) fail("explanation: field '{}' must be {}, got {}", name, type, it->type_name());
    return *it;
  };
  auto numbers = [&](const char* name) {
    const nlohmann::json& a = field(name, &nlohmann::json::is_array, "an array of numbers");
    std::vector<double> out;
    for (const auto& v : a) {
      if (!v.is_number()) fail("explanation: field '{}' must hold numbers, got {}", name, v.type_name());
      out.push_back(v.get<double>());
    }
    return out;
  };
  auto strings = [&](const char* name) {
    const nlohmann::json& a = field(name, &nlohmann::json::is_array, "an array of strings");
    std::vector<std::string> out;
    for (const auto& v : a) {
      if (!v.is_string()) fail("explanation: field '{}' must hold strings, got {}", name, v.type_name());
      out.push_back(v.get<std::string>());
    }
    return out;
  };
  Explanation e;
  e.method = field("method", &nlohmann::json::is_string, "a string").get<std::string>();
  e.params = field("params", &nlohmann::json::is_object, "an object");
  auto out = j.find("output");
  if (out == j.end()) fail("explanation: field 'output' is missing");
  if (!out->is_null()) {
    if (!out->is_string() || (*out != "prob" && *out != "logit"))
      fail("explanation: field 'output' must be \"prob\", \"logit\" or null, got {}", out->dump());
    e.output = parse_model_output(out->get<std::string>());
  }
  e.target = field("target", &nlohmann::json::is_number_integer, "an integer").get<int64_t>();
  e.target_label = field("target_label", &nlohmann::json::is_string, "a string").get<std::string>();
  e.tokens = strings("tokens");
  e.scores = numbers("token_scores");
  if (e.scores.size() != e.tokens.size())
    fail("explanation: {} token_scores for {} tokens", e.scores.size(), e.tokens.size());
  if (j.contains("words") != j.contains("word_scores")) fail("explanation: 'words' and 'word_scores' go together");
  if (j.contains("words")) {
    e.words = strings("words");
    e.word_scores = numbers("word_scores");
    if (e.words->size() != e.word_scores->size())
      fail("explanation: {} word_scores for {} words", e.word_scores->size(), e.words->size());
  }
  e.extras = field("extras", &nlohmann::json::is_object, "an object");
  if (j.contains("truncated")) e.truncated = field("truncated", &nlohmann::json::is_boolean, "true").get<bool>();
  if (j.contains("id")) e.id = j["id"];
  return e;
}

std::vector<size_t> shortest_first(const std::vector<const Encoding*>& inputs) {
  std::vector<size_t> order(inputs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return inputs[a]->ids.size() < inputs[b]->ids.size(); });
  return order;
}

std::vector<int64_t> predicted_classes(const Classifier& clf, const std::vector<const Encoding*>& inputs) {
  torch::NoGradGuard no_grad;
  const std::vector<size_t> order = shortest_first(inputs);
  std::vector<const Encoding*> sorted;
  for (size_t i : order) sorted.push_back(inputs[i]);
  std::vector<int64_t> out(inputs.size());
  for (const auto& [s, e] : passes_in_order(sorted, BatchLimits())) {
    std::vector<const Encoding*> part(sorted.begin() + s, sorted.begin() + e);
    Batch b = make_batch(part, clf.tokenizer.pad_id(), clf.model.device());
    torch::Tensor pred = clf.model.logits(b.input_ids, b.token_type_ids, b.attention_mask).argmax(-1).cpu();
    for (int64_t i = 0; i < pred.size(0); ++i) out[order[s + i]] = pred[i].item<int64_t>();
  }
  return out;
}

std::vector<double> word_scores(const std::string& text, const Encoding& enc, const std::vector<double>& token_scores,
                                bool use_max) {
  if (token_scores.size() != enc.ids.size())
    fail("word_scores: {} scores for {} tokens", token_scores.size(), enc.ids.size());
  const std::vector<int64_t> word_of = whitespace_word_ids(text, enc, 0);
  std::vector<double> words(split_whitespace(text).size(), 0.0);
  std::vector<bool> seen(words.size(), false);
  for (size_t t = 0; t < word_of.size(); ++t) {
    const int64_t w = word_of[t];
    if (w < 0 || w >= static_cast<int64_t>(words.size())) continue;
    if (use_max) words[w] = seen[w] ? std::max(words[w], token_scores[t]) : token_scores[t];
    else words[w] += token_scores[t];
    seen[w] = true;
  }
  return words;
}

TokenSequence to_sequence(const Encoding& enc) {
  TokenSequence s{enc.ids, enc.type_ids};
  if (s.type_ids.empty()) s.type_ids.assign(s.ids.size(), 0);
  return s;
}

int64_t rows_per_pass(const BatchLimits& limits, int64_t length) {
  return std::max<int64_t>(1, std::min(limits.rows, limits.tokens / std::max<int64_t>(length, 1)));
}

std::vector<std::pair<size_t, size_t>> passes_in_order(const std::vector<int64_t>& lengths, const BatchLimits& limits) {
  if (limits.rows < 1) fail("internal batch: must be at least 1 row (got {})", limits.rows);
  if (limits.tokens < 1) fail("max batch tokens: must be at least 1 (got {})", limits.tokens);
  std::vector<std::pair<size_t, size_t>> passes;
  for (size_t s = 0; s < lengths.size();) {
    int64_t longest = std::max<int64_t>(lengths[s], 1);
    size_t e = s + 1;
    for (; e < lengths.size(); ++e) {
      const int64_t L = std::max(longest, lengths[e]);
      if (static_cast<int64_t>(e - s + 1) > limits.rows || static_cast<int64_t>(e - s + 1) * L > limits.tokens) break;
      longest = L;
    }
    passes.emplace_back(s, e);
    s = e;
  }
  return passes;
}

std::vector<std::pair<size_t, size_t>> passes_in_order(const std::vector<const Encoding*>& inputs,
                                                       const BatchLimits& limits) {
  std::vector<int64_t> lengths;
  for (const Encoding* e : inputs) lengths.push_back(static_cast<int64_t>(e->ids.size()));
  return passes_in_order(lengths, limits);
}

std::vector<bool> removable_positions(const Classifier& clf, const Encoding& enc) {
  std::vector<bool> r(enc.ids.size());
  for (size_t i = 0; i < enc.ids.size(); ++i) r[i] = !clf.tokenizer.is_structural(enc.ids[i]);
  return r;
}

namespace {

// The logits of the sequences at `rows` (indices into seqs), in that order, in padded batches
// within `limits`; use(index in `rows` of the batch's first, its logits [B, C] on the model's
// device). No gradients.
void batched_logits(const Classifier& clf, const std::vector<TokenSequence>& seqs, const std::vector<size_t>& rows,
                    const BatchLimits& limits, const std::function<void(size_t, const torch::Tensor&)>& use) {
  torch::NoGradGuard no_grad;
  const int64_t pad = clf.tokenizer.pad_id();
  const torch::Device dev = clf.model.device();
  std::vector<int64_t> lengths(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) lengths[i] = static_cast<int64_t>(seqs[rows[i]].ids.size());
  for (const auto& [s, e] : passes_in_order(lengths, limits)) {
    const int64_t L = std::max<int64_t>(1, *std::max_element(lengths.begin() + s, lengths.begin() + e));
    const int64_t B = static_cast<int64_t>(e - s);
    auto ids = torch::full({B, L}, pad, torch::kLong), types = torch::zeros({B, L}, torch::kLong),
         mask = torch::zeros({B, L}, torch::kLong);
    auto ia = ids.accessor<int64_t, 2>(), ta = types.accessor<int64_t, 2>(), ma = mask.accessor<int64_t, 2>();
    for (int64_t b = 0; b < B; ++b) {
      const TokenSequence& q = seqs[rows[s + b]];
      for (size_t j = 0; j < q.ids.size(); ++j) {
        ia[b][j] = q.ids[j];
        ta[b][j] = j < q.type_ids.size() ? q.type_ids[j] : 0;
        ma[b][j] = 1;
      }
    }
    use(s, explain::cls_logits(clf.model, ids.to(dev), types.to(dev), mask.to(dev)));
  }
}

// For each sequence the index (into the second list) of its first identical copy (by ids, type ids
// and `key_extra`), and the first copies' sequence indices.
std::pair<std::vector<size_t>, std::vector<size_t>> unique_sequences(const std::vector<TokenSequence>& seqs,
                                                                     const std::vector<int64_t>* key_extra) {
  std::vector<size_t> unique_of(seqs.size()), uniques;
  std::unordered_map<std::string, size_t> seen;
  std::string key;
  for (size_t i = 0; i < seqs.size(); ++i) {
    const uint64_t n = seqs[i].ids.size();  // length first, so ids and type ids cannot run into each other
    key.assign(reinterpret_cast<const char*>(&n), sizeof(n));
    key.append(reinterpret_cast<const char*>(seqs[i].ids.data()), seqs[i].ids.size() * sizeof(int64_t));
    key.append(reinterpret_cast<const char*>(seqs[i].type_ids.data()), seqs[i].type_ids.size() * sizeof(int64_t));
    if (key_extra) key.append(reinterpret_cast<const char*>(&(*key_extra)[i]), sizeof(int64_t));
    auto [it, fresh] = seen.emplace(key, uniques.size());
    if (fresh) uniques.push_back(i);
    unique_of[i] = it->second;
  }
  return {std::move(unique_of), std::move(uniques)};
}

// `rows` sorted by their sequences' length (stable), so each padded batch wastes little.
std::vector<size_t> by_length(const std::vector<TokenSequence>& seqs, std::vector<size_t> rows) {
  std::stable_sort(rows.begin(), rows.end(), [&](size_t a, size_t b) { return seqs[a].ids.size() < seqs[b].ids.size(); });
  return rows;
}

}  // namespace

std::vector<double> score_sequences(const Classifier& clf, const std::vector<TokenSequence>& seqs,
                                    const std::vector<int64_t>& targets, ModelOutput output, const BatchLimits& limits) {
  if (seqs.size() != targets.size()) fail("score_sequences: {} sequences but {} targets", seqs.size(), targets.size());
  // Identical (sequence, target) pairs are scored once: LIME and KernelSHAP draw the same coalition
  // many times on short inputs (every one-token removal, the empty input), and the result is exact.
  const auto [unique_of, uniques] = unique_sequences(seqs, &targets);
  const std::vector<size_t> rows = by_length(seqs, uniques);
  std::vector<double> value(seqs.size());  // by sequence index, filled for the unique ones
  batched_logits(clf, seqs, rows, limits, [&](size_t s, const torch::Tensor& logits) {
    const int64_t B = logits.size(0);
    auto tg = torch::empty({B}, torch::kLong);
    for (int64_t b = 0; b < B; ++b) tg[b] = targets[rows[s + b]];
    torch::Tensor v = explain::target_output(logits, tg.to(logits.device()), output).to(torch::kDouble).cpu().contiguous();
    for (int64_t b = 0; b < B; ++b) value[rows[s + b]] = v.data_ptr<double>()[b];
  });
  std::vector<double> out(seqs.size());
  for (size_t i = 0; i < seqs.size(); ++i) out[i] = value[uniques[unique_of[i]]];
  return out;
}

std::vector<std::vector<double>> sequence_logits(const Classifier& clf, const std::vector<TokenSequence>& seqs,
                                                 const BatchLimits& limits) {
  const auto [unique_of, uniques] = unique_sequences(seqs, nullptr);
  const std::vector<size_t> rows = by_length(seqs, uniques);
  std::vector<std::vector<double>> value(seqs.size());
  batched_logits(clf, seqs, rows, limits, [&](size_t s, const torch::Tensor& logits) {
    torch::Tensor l = logits.to(torch::kDouble).cpu().contiguous();
    const int64_t C = l.size(1);
    for (int64_t b = 0; b < l.size(0); ++b)
      value[rows[s + b]].assign(l.data_ptr<double>() + b * C, l.data_ptr<double>() + (b + 1) * C);
  });
  std::vector<std::vector<double>> out(seqs.size());
  for (size_t i = 0; i < seqs.size(); ++i) out[i] = value[uniques[unique_of[i]]];
  return out;
}

namespace explain {

torch::Tensor cls_logits(const Transformer& m, const torch::Tensor& ids, const torch::Tensor& types,
                         const torch::Tensor& mask, const torch::Tensor& inputs_embeds) {
  return cls_logits_from_embedding_output(m, m.embed(ids, types, mask, inputs_embeds), mask);
}

torch::Tensor cls_logits_from_embedding_output(const Transformer& m, torch::Tensor h, const torch::Tensor& mask) {
  const int64_t B = h.size(0), L = h.size(1), last = m.num_layers() - 1;
  torch::Tensor ext = m.extended_mask(mask, B, L);
  if (m.pools_every_layer()) {  // the head reads every layer's states: no first-token shortcut
    std::vector<torch::Tensor> states{h};
    m.run_layers(0, h, ext, {}, &states);
    return m.classify_states(states, mask);
  }
  for (int64_t i = 0; i < last; ++i) h = m.layer_forward(i, h, ext);
  return m.classify(m.first_token_layer(last, h, ext));
}

torch::Tensor target_output(const torch::Tensor& logits, const torch::Tensor& targets, ModelOutput output) {
  torch::Tensor t = targets.to(logits.device()).view({-1, 1});
  torch::Tensor v = output == ModelOutput::Probability ? torch::softmax(logits, -1) : logits;
  return v.gather(1, t).squeeze(1);
}

torch::Tensor targets_tensor(const std::vector<int64_t>& targets) {
  return torch::tensor(std::vector<int64_t>(targets.begin(), targets.end()), torch::kLong);
}

namespace {
const nlohmann::json& declared_value(const ExplainOptions& o, const std::string& name) {
  auto it = o.params.find(name);
  if (it == o.params.end() || it->is_null())
    fail("parameter '{}' has no value (a method must declare its parameters with a default)", name);
  return *it;
}
}  // namespace

int64_t param_int(const ExplainOptions& o, const std::string& name) {
  const auto& v = declared_value(o, name);
  if (!v.is_number_integer()) fail("--{}: expected an integer, got {}", name, v.dump());
  return v.get<int64_t>();
}

double param_double(const ExplainOptions& o, const std::string& name) {
  const auto& v = declared_value(o, name);
  if (!v.is_number()) fail("--{}: expected a number, got {}", name, v.dump());
  return v.get<double>();
}

std::string param_string(const ExplainOptions& o, const std::string& name) {
  const auto& v = declared_value(o, name);
  if (!v.is_string()) fail("--{}: expected a string, got {}", name, v.dump());
  return v.get<std::string>();
}

std::optional<int64_t> optional_param_int(const ExplainOptions& o, const std::string& name) {
  if (!o.params.contains(name) || o.params[name].is_null()) return std::nullopt;
  return param_int(o, name);
}

std::optional<std::string> optional_param_string(const ExplainOptions& o, const std::string& name) {
  if (!o.params.contains(name) || o.params[name].is_null()) return std::nullopt;
  return param_string(o, name);
}

std::mt19937_64 example_rng(uint64_t seed, const Encoding& enc) {
  uint64_t h = 1469598103934665603ULL ^ seed;  // FNV-1a over the ids
  for (int64_t id : enc.ids) {
    h ^= static_cast<uint64_t>(id);
    h *= 1099511628211ULL;
  }
  std::seed_seq seq{static_cast<uint32_t>(h), static_cast<uint32_t>(h >> 32), static_cast<uint32_t>(seed),
                    static_cast<uint32_t>(seed >> 32)};
  return std::mt19937_64(seq);
}

std::vector<double> row_scores(const torch::Tensor& t, int64_t b, int64_t length) {
  torch::Tensor r = t[b].slice(0, 0, length).to(torch::kDouble).cpu().contiguous();
  return std::vector<double>(r.data_ptr<double>(), r.data_ptr<double>() + length);
}

void check_inputs(const std::vector<const Encoding*>& inputs, const std::vector<int64_t>& targets, int64_t num_labels) {
  if (inputs.size() != targets.size()) fail("explain: {} inputs but {} targets", inputs.size(), targets.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i]->ids.empty()) fail("explain: input {} is empty", i);
    if (targets[i] < 0 || targets[i] >= num_labels)
      fail("--target: class {} out of range for a model with {} labels", targets[i], num_labels);
  }
}

ParamSpec int_param(std::string name, nlohmann::json def, double min, double max, std::string doc) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = ParamSpec::Type::Int;
  p.default_value = std::move(def);
  p.min = min;
  p.max = max;
  p.doc = std::move(doc);
  return p;
}
ParamSpec auto_int_param(std::string name, nlohmann::json def, double min, double max, std::string doc) {
  ParamSpec p = int_param(std::move(name), std::move(def), min, max, std::move(doc));
  p.choices = {"auto"};
  return p;
}
ParamSpec number_param(std::string name, double def, double min, double max, std::string doc) {
  ParamSpec p = int_param(std::move(name), def, min, max, std::move(doc));
  p.type = ParamSpec::Type::Number;
  return p;
}
ParamSpec choice_param(std::string name, std::string def, std::vector<std::string> choices, std::string doc) {
  ParamSpec p;
  p.name = std::move(name);
  p.default_value = std::move(def);
  p.choices = std::move(choices);
  p.doc = std::move(doc);
  return p;
}
ParamSpec string_param(std::string name, nlohmann::json def, std::string doc) {
  ParamSpec p;
  p.name = std::move(name);
  p.default_value = std::move(def);
  p.doc = std::move(doc);
  return p;
}

ParamSpec path_param(std::string name, nlohmann::json def, std::string doc) {
  ParamSpec p = string_param(std::move(name), std::move(def), std::move(doc));
  p.path = true;
  return p;
}

ParamSpec removal_param() {
  return choice_param("removal", "mask", {"mask", "delete"}, "a removed token is replaced by [MASK] or deleted");
}
ParamSpec start_layer_param() { return int_param("start_layer", 0, 0, kInf, "first layer rolled out"); }
int64_t start_layer(const ExplainOptions& o, size_t layers) {
  const int64_t s = param_int(o, "start_layer");
  if (s < 0 || s >= static_cast<int64_t>(layers)) fail("--start-layer: {} out of range for {} layers", s, layers);
  return s;
}

}  // namespace explain
}  // namespace salient
