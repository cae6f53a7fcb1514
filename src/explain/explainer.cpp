// Registry, shared helpers, predicted classes, word alignment and batched sequence scoring.
#include "explain/explainer.h"

#include <algorithm>
#include <unordered_map>
#include <cmath>

#include "data/dataset.h"
#include "explain/methods.h"
#include "util/error.h"

namespace salient {

ModelOutput parse_model_output(const std::string& name) {
  if (name == "prob" || name == "probability") return ModelOutput::Probability;
  if (name == "logit") return ModelOutput::Logit;
  fail("--output: unknown value '{}' (expected prob or logit)", name);
}

const std::vector<ExplainerInfo>& explainer_registry() {
  using namespace explain;
  static const std::vector<ExplainerInfo> registry = {
      {"random", "uniform random scores (a floor for every metric)", make_random},
      {"saliency", "L2 norm of the gradient w.r.t. the word embedding (Simonyan et al. 2014)", make_saliency},
      {"grad_x_input", "gradient · word embedding, summed over the hidden dimension", make_grad_x_input},
      {"ig", "integrated gradients on the word embeddings (Sundararajan et al. 2017)", make_integrated_gradients},
      {"occlusion", "leave-one-out: output drop when a token is masked or deleted", make_occlusion},
      {"raw_attention", "last layer, [CLS] row, mean over heads", make_raw_attention},
      {"attention_mean", "attention to each token, mean over all layers, heads and queries (SMaT)",
       make_attention_mean_all},
      {"attention_mean_last", "as attention_mean over the last layer only (SMaT)", make_attention_mean_last},
      {"rollout", "attention rollout with the residual identity (Abnar & Zuidema 2020)", make_rollout},
      {"attention_gradcam", "GradCAM on the last layer's attention (Chefer et al. 2021 code)", make_attention_gradcam},
      {"cam", "last layer: attention gradient, mean over heads and queries, positive part (Mask-LRP's generate_gradcam)",
       make_attention_cam},
      {"gae", "generic attention explainability (Chefer et al. 2021b)", make_gae},
      {"attcat", "attentive class activation tokens (Qiang et al. 2022)", make_attcat},
      {"lrp_partial", "LRP relevance of the last layer's attention, [CLS] row (Chefer et al. 2021 code)", make_lrp_partial},
      {"lrp_full", "LRP relevance at the encoder input, summed over the hidden dimension (Chefer et al. code)",
       make_lrp_full},
      {"transformer_attribution", "Chefer et al. 2021: (∇A ⊙ R_A)⁺ head mean, rolled out", make_transformer_attribution},
      {"mgae", "masked GAE (Mask-LRP, Song et al. 2024): transformer attribution, relevance passed down only through kept heads (positional, or --heads)",
       make_mgae},
      {"lime", "LIME for text: masked samples, cosine kernel, weighted ridge (Ribeiro et al. 2016)", make_lime},
      {"kernel_shap", "KernelSHAP: Shapley kernel regression, paired sampling, exact for short inputs",
       make_kernel_shap},
  };
  return registry;
}

std::vector<std::string> explainer_names() {
  std::vector<std::string> names;
  for (const auto& e : explainer_registry()) names.push_back(e.name);
  return names;
}

std::unique_ptr<Explainer> make_explainer(const std::string& name) {
  for (const auto& e : explainer_registry())
    if (e.name == name) return e.make();
  std::string valid;
  for (const auto& n : explainer_names()) valid += (valid.empty() ? "" : ", ") + n;
  fail("--method: unknown method '{}' (valid: {})", name, valid);
}

std::vector<int64_t> predicted_classes(const Classifier& clf, const std::vector<const Encoding*>& inputs) {
  torch::NoGradGuard no_grad;
  std::vector<int64_t> out;
  const size_t chunk = 64;
  for (size_t s = 0; s < inputs.size(); s += chunk) {
    std::vector<const Encoding*> part(inputs.begin() + s, inputs.begin() + std::min(inputs.size(), s + chunk));
    Batch b = make_batch(part, clf.tokenizer.pad_id(), clf.model.device());
    torch::Tensor pred = clf.model.logits(b.input_ids, b.token_type_ids, b.attention_mask).argmax(-1).cpu();
    for (int64_t i = 0; i < pred.size(0); ++i) out.push_back(pred[i].item<int64_t>());
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

std::vector<bool> removable_positions(const Classifier& clf, const Encoding& enc) {
  std::vector<bool> r(enc.ids.size());
  for (size_t i = 0; i < enc.ids.size(); ++i) r[i] = !clf.tokenizer.is_structural(enc.ids[i]);
  return r;
}

std::vector<double> score_sequences(const Classifier& clf, const std::vector<TokenSequence>& seqs,
                                    const std::vector<int64_t>& targets, ModelOutput output, int64_t batch_size) {
  if (seqs.size() != targets.size()) fail("score_sequences: {} sequences but {} targets", seqs.size(), targets.size());
  torch::NoGradGuard no_grad;
  batch_size = std::max<int64_t>(batch_size, 1);
  // Identical (sequence, target) pairs are scored once: LIME and KernelSHAP draw the same coalition
  // many times on short inputs (every one-token removal, the empty input), and the result is exact.
  std::vector<size_t> unique_of(seqs.size()), uniques;
  {
    std::unordered_map<std::string, size_t> seen;
    std::string key;
    for (size_t i = 0; i < seqs.size(); ++i) {
      const uint64_t n = seqs[i].ids.size();  // length first, so ids and type ids cannot run into each other
      key.assign(reinterpret_cast<const char*>(&n), sizeof(n));
      key.append(reinterpret_cast<const char*>(seqs[i].ids.data()), seqs[i].ids.size() * sizeof(int64_t));
      key.append(reinterpret_cast<const char*>(seqs[i].type_ids.data()), seqs[i].type_ids.size() * sizeof(int64_t));
      key.append(reinterpret_cast<const char*>(&targets[i]), sizeof(int64_t));
      auto [it, fresh] = seen.emplace(key, uniques.size());
      if (fresh) uniques.push_back(i);
      unique_of[i] = it->second;
    }
  }
  // Sort by length so each padded batch wastes little; results go back to the input order.
  std::vector<size_t> order = uniques;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return seqs[a].ids.size() < seqs[b].ids.size(); });
  std::vector<double> value(seqs.size());  // by sequence index, filled for the unique ones
  const int64_t pad = clf.tokenizer.pad_id();
  for (size_t s = 0; s < order.size(); s += batch_size) {
    const size_t e = std::min(order.size(), s + static_cast<size_t>(batch_size));
    int64_t L = 1;
    for (size_t i = s; i < e; ++i) L = std::max<int64_t>(L, seqs[order[i]].ids.size());
    const int64_t B = static_cast<int64_t>(e - s);
    auto ids = torch::full({B, L}, pad, torch::kLong), types = torch::zeros({B, L}, torch::kLong),
         mask = torch::zeros({B, L}, torch::kLong);
    auto tg = torch::empty({B}, torch::kLong);
    auto ia = ids.accessor<int64_t, 2>(), ta = types.accessor<int64_t, 2>(), ma = mask.accessor<int64_t, 2>();
    for (int64_t b = 0; b < B; ++b) {
      const TokenSequence& q = seqs[order[s + b]];
      for (size_t j = 0; j < q.ids.size(); ++j) {
        ia[b][j] = q.ids[j];
        ta[b][j] = j < q.type_ids.size() ? q.type_ids[j] : 0;
        ma[b][j] = 1;
      }
      tg[b] = targets[order[s + b]];
    }
    const torch::Device dev = clf.model.device();
    torch::Tensor logits = explain::cls_logits(clf.model, ids.to(dev), types.to(dev), mask.to(dev));
    torch::Tensor v = explain::target_output(logits, tg.to(dev), output).to(torch::kDouble).cpu().contiguous();
    const double* vp = v.data_ptr<double>();
    for (int64_t b = 0; b < B; ++b) value[order[s + b]] = vp[b];
  }
  std::vector<double> out(seqs.size());
  for (size_t i = 0; i < seqs.size(); ++i) out[i] = value[uniques[unique_of[i]]];
  return out;
}

namespace explain {

torch::Tensor cls_logits(const Transformer& m, const torch::Tensor& ids, const torch::Tensor& types,
                         const torch::Tensor& mask, const torch::Tensor& inputs_embeds) {
  const torch::Tensor& shape = inputs_embeds.defined() ? inputs_embeds : ids;
  const int64_t B = shape.size(0), L = shape.size(1), last = m.num_layers() - 1;
  torch::Tensor ext = m.extended_mask(mask, B, L);
  torch::Tensor h = m.embed(ids, types, mask, inputs_embeds);
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

int64_t param_int(const ExplainOptions& o, const std::string& name, int64_t fallback) {
  if (!o.params.contains(name) || o.params[name].is_null()) return fallback;
  const auto& v = o.params[name];
  if (!v.is_number_integer()) fail("--{}: expected an integer, got {}", name, v.dump());
  return v.get<int64_t>();
}

double param_double(const ExplainOptions& o, const std::string& name, double fallback) {
  if (!o.params.contains(name) || o.params[name].is_null()) return fallback;
  const auto& v = o.params[name];
  if (!v.is_number()) fail("--{}: expected a number, got {}", name, v.dump());
  return v.get<double>();
}

std::string param_string(const ExplainOptions& o, const std::string& name, const std::string& fallback) {
  if (!o.params.contains(name) || o.params[name].is_null()) return fallback;
  const auto& v = o.params[name];
  if (!v.is_string()) fail("--{}: expected a string, got {}", name, v.dump());
  return v.get<std::string>();
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

}  // namespace explain
}  // namespace salient
