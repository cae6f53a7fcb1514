#include "attattr/analysis.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <cstdio>
#include <fstream>

#include "util/append_file.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/io.h"
#include "util/progress.h"

namespace salient::attattr {

namespace {

torch::Tensor ids_of(const Encoding& e) { return torch::tensor(e.ids, torch::kLong).unsqueeze(0); }
torch::Tensor types_of(const Encoding& e) {
  return e.type_ids.empty() ? torch::zeros({1, (int64_t)e.ids.size()}, torch::kLong)
                            : torch::tensor(e.type_ids, torch::kLong).unsqueeze(0);
}

std::vector<LayerHooks> mask_hooks(const Transformer& model, const torch::Tensor& head_mask) {
  std::vector<LayerHooks> hooks;
  if (!head_mask.defined()) return hooks;
  hooks.resize(model.num_layers());
  for (int64_t l = 0; l < model.num_layers(); ++l) hooks[l].head_mask = head_mask[l];
  return hooks;
}

// Predictions for a set, optionally head-masked.
std::vector<int64_t> predict(const Transformer& model, const std::vector<Encoding>& encs, const torch::Tensor& head_mask,
                             int64_t batch_size) {
  torch::NoGradGuard no_grad;
  std::vector<int64_t> preds;
  torch::Tensor hm = head_mask.defined() ? head_mask.to(model.device(), model.dtype()) : head_mask;
  // Sorting by length keeps padding (and wasted work) small.
  std::vector<size_t> order(encs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return encs[a].ids.size() < encs[b].ids.size(); });
  preds.assign(encs.size(), -1);
  for (size_t s = 0; s < order.size(); s += batch_size) {
    std::vector<const Encoding*> chunk;
    for (size_t i = s; i < std::min(order.size(), s + batch_size); ++i) chunk.push_back(&encs[order[i]]);
    Batch b = make_batch(chunk, 0, model.device());
    ForwardRequest req;
    req.input_ids = b.input_ids;
    req.token_type_ids = b.token_type_ids;
    req.attention_mask = b.attention_mask;
    req.hooks = mask_hooks(model, hm);
    torch::Tensor p = model.forward(req).logits.argmax(-1).to(torch::kCPU);
    for (size_t i = 0; i < chunk.size(); ++i) preds[order[s + i]] = p[i].item<int64_t>();
  }
  return preds;
}

}  // namespace

namespace {

std::pair<size_t, size_t> clamp(ExampleRange r, size_t n) {
  const size_t end = std::min(r.end, n);
  return {std::min(r.begin, end), end};
}

}  // namespace

torch::Tensor attattr_head_scores(const Transformer& model, const LabelledSet& data, const AttributionOptions& opts,
                                  bool use_gold, ExampleRange range, std::vector<torch::Tensor>* terms) {
  AttributionOptions all = opts;
  all.layers.clear();
  const auto [begin, end] = clamp(range, data.encodings.size());
  torch::Tensor total = torch::zeros({model.num_layers(), model.num_heads()}, torch::kFloat64);
  Progress progress("attattr head scores", static_cast<int64_t>(end - begin), "ex");
  for (size_t i = begin; i < end; ++i) {
    const Encoding& e = data.encodings[i];
    AttributionResult r = attribute(model, ids_of(e), types_of(e), use_gold ? data.labels[i] : -1, all);
    torch::Tensor term = head_importance(r).to(torch::kCPU, torch::kFloat64);
    total += term;
    if (terms) terms->push_back(term);
    progress.update();
  }
  progress.finish();
  return total;
}

torch::Tensor attention_head_scores(const Transformer& model, const LabelledSet& data, ExampleRange range,
                                    std::vector<torch::Tensor>* terms) {
  torch::NoGradGuard no_grad;
  const auto [begin, end] = clamp(range, data.encodings.size());
  torch::Tensor total = torch::zeros({model.num_layers(), model.num_heads()}, torch::kFloat64);
  for (size_t i = begin; i < end; ++i) {
    const Encoding& e = data.encodings[i];
    ForwardRequest req;
    req.input_ids = ids_of(e).to(model.device());
    req.token_type_ids = types_of(e).to(model.device());
    req.want_attentions = true;
    ForwardResult r = model.forward(req);
    torch::Tensor term = torch::zeros_like(total);
    for (int64_t l = 0; l < model.num_layers(); ++l)
      term[l] = std::get<0>(r.attentions[l][0].flatten(1).max(1)).to(torch::kCPU, torch::kFloat64);
    total += term;
    if (terms) terms->push_back(term);
  }
  return total;
}

TaylorHeadScores taylor_head_scores(const Transformer& model, const LabelledSet& data, int64_t batch_size,
                                    ExampleRange range, std::vector<TaylorHeadScores>* batch_terms) {
  const int64_t n_layers = model.num_layers(), n_heads = model.num_heads();
  TaylorHeadScores sums{torch::zeros({n_layers, n_heads}, torch::kFloat64), torch::zeros({n_layers, n_heads}, torch::kFloat64)};
  const auto& encs = data.encodings;
  const auto [begin, end] = clamp(range, encs.size());
  for (size_t s = begin; s < end; s += batch_size) {
    std::vector<const Encoding*> chunk;
    std::vector<int64_t> labels;
    for (size_t i = s; i < std::min(end, s + batch_size); ++i) {
      chunk.push_back(&encs[i]);
      labels.push_back(data.labels[i]);
    }
    Batch b = make_batch(chunk, 0, model.device());
    const int64_t B = b.input_ids.size(0), L = b.input_ids.size(1);
    torch::AutoGradMode grad_on(true);
    // A scale ξ per (example, head, query row) on the attention probabilities: at ξ = 1,
    // ∂L/∂ξ_b,h,i = ctx_b,h,i · ∂L/∂ctx_b,h,i since ctx_i = Σ_j ξ_i A_ij V_j.
    std::vector<torch::Tensor> xi;
    std::vector<LayerHooks> hooks(n_layers);
    for (int64_t l = 0; l < n_layers; ++l) {
      xi.push_back(torch::ones({B, n_heads, L, 1}, torch::TensorOptions().dtype(model.dtype()).device(model.device()))
                       .requires_grad_(true));
      hooks[l].attn_scale = xi.back();
    }
    ForwardRequest req;
    req.input_ids = b.input_ids;
    req.token_type_ids = b.token_type_ids;
    req.attention_mask = b.attention_mask;
    req.hooks = hooks;
    torch::Tensor logits = model.forward(req).logits;
    // Summed, not averaged: each example weighs the same whatever the size of its batch.
    torch::Tensor loss = torch::nn::functional::cross_entropy(
        logits, torch::tensor(labels, torch::kLong).to(model.device()),
        torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
    std::vector<torch::Tensor> grads = torch::autograd::grad({loss}, xi);
    torch::Tensor real = b.attention_mask.to(torch::kCPU, torch::kFloat64).view({B, 1, L});
    TaylorHeadScores term{torch::zeros_like(sums.attattr), torch::zeros_like(sums.michel)};
    for (int64_t l = 0; l < n_layers; ++l) {
      torch::Tensor t = grads[l].to(torch::kCPU, torch::kFloat64).squeeze(-1) * real;  // [B, H, L]
      term.attattr[l] = t.abs().sum(std::vector<int64_t>{0, 2});
      term.michel[l] = t.sum(2).abs().sum(0);
    }
    sums.attattr += term.attattr;
    sums.michel += term.michel;
    if (batch_terms) batch_terms->push_back(term);
  }
  return normalise_taylor(sums);
}

TaylorHeadScores normalise_taylor(const TaylorHeadScores& sums) {
  auto normalised = [](const torch::Tensor& t) { return t / (t.norm(2, -1, true) + 1e-20); };
  return {normalised(sums.attattr), normalised(sums.michel)};
}

torch::Tensor random_head_scores(const Transformer& model, uint64_t seed) {
  auto gen = at::detail::createCPUGenerator(seed);
  return torch::rand({model.num_layers(), model.num_heads()}, gen, torch::kFloat64);
}

double masked_accuracy(const Transformer& model, const LabelledSet& data, const torch::Tensor& head_mask,
                       int64_t batch_size) {
  if (data.encodings.empty()) return 0;
  std::vector<int64_t> preds = predict(model, data.encodings, head_mask, batch_size);
  int64_t correct = 0;
  for (size_t i = 0; i < preds.size(); ++i) correct += preds[i] == data.labels[i];
  return double(correct) / preds.size();
}

namespace {
// Heads ordered by ascending score (ties: lower index first), as flat indices layer·H + head.
std::vector<int64_t> ascending_heads(const torch::Tensor& scores) {
  torch::Tensor flat = scores.to(torch::kCPU, torch::kFloat64).flatten().contiguous();
  const double* v = flat.data_ptr<double>();
  std::vector<int64_t> order(flat.numel());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return v[a] < v[b]; });
  return order;
}
}  // namespace

MaskAccuracies::MaskAccuracies(std::string file, const nlohmann::json& settings) : file_(std::move(file)) {
  const std::string header = nlohmann::json{{"settings", settings}}.dump();
  std::string kept = header + "\n";
  if (file_exists(file_)) {
    std::ifstream in(file_);
    std::string line;
    if (!std::getline(in, line) || line != header) {
      nlohmann::json before = nlohmann::json::parse(line, nullptr, false);
      const std::string which = before.is_object() && before.contains("settings")
                                    ? differing_keys(before["settings"], settings)
                                    : std::string("an unreadable first line");
      fail("{}: partial results of another run (its {} differ); remove the file to start over", file_, which);
    }
    while (std::getline(in, line)) {
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_object() || !j.contains("mask") || !j.contains("accuracy")) break;  // an interrupted write
      known_[j["mask"].get<std::string>()] = j["accuracy"].get<double>();
      kept += line + "\n";
    }
  }
  write_file_atomic(file_, kept);
}

double MaskAccuracies::operator()(const Transformer& model, const LabelledSet& data, const torch::Tensor& head_mask) {
  torch::Tensor m = head_mask.to(torch::kCPU, torch::kFloat64).contiguous().view(-1);
  std::string key(static_cast<size_t>(m.numel()), '1');
  for (int64_t i = 0; i < m.numel(); ++i)
    if (m.data_ptr<double>()[i] == 0.0) key[static_cast<size_t>(i)] = '0';
  if (auto it = known_.find(key); it != known_.end()) return it->second;
  const double accuracy = masked_accuracy(model, data, head_mask);
  ++evaluated_;
  known_[key] = accuracy;
  if (!file_.empty()) AppendFile(file_).write(nlohmann::json{{"mask", key}, {"accuracy", accuracy}}.dump() + "\n");
  return accuracy;
}

void MaskAccuracies::remove_file() const {
  if (!file_.empty()) std::remove(file_.c_str());
}

std::vector<PruneStep> pruning_curve(const Transformer& model, const LabelledSet& data, const torch::Tensor& scores,
                                     int steps, MaskAccuracies* accuracies) {
  MaskAccuracies own;
  if (!accuracies) accuracies = &own;
  const int64_t n_heads = model.num_layers() * model.num_heads();
  if (scores.numel() != n_heads) fail("prune: head scores have {} entries, the model has {} heads", scores.numel(), n_heads);
  std::vector<int64_t> order = ascending_heads(scores);
  std::vector<PruneStep> curve;
  for (int s = 0; s <= steps; ++s) {
    PruneStep step;
    step.fraction = double(s) / steps;
    step.removed = static_cast<int64_t>(std::floor(step.fraction * n_heads + 1e-9));
    torch::Tensor mask = torch::ones({n_heads}, torch::kFloat64);
    for (int64_t i = 0; i < step.removed; ++i) mask[order[i]] = 0.0;
    step.accuracy = (*accuracies)(model, data, mask.view({model.num_layers(), model.num_heads()}));
    curve.push_back(step);
  }
  return curve;
}

std::vector<double> prune_layer_top_k(const Transformer& model, const LabelledSet& data, const torch::Tensor& scores,
                                      int64_t layer, MaskAccuracies* accuracies) {
  MaskAccuracies own;
  if (!accuracies) accuracies = &own;
  if (layer < 0 || layer >= model.num_layers())
    fail("--layer: layer {} out of range (the model has layers 0..{})", layer, model.num_layers() - 1);
  std::vector<int64_t> order = ascending_heads(scores[layer]);
  std::reverse(order.begin(), order.end());  // highest first
  std::vector<double> acc;
  for (int64_t k = 0; k <= model.num_heads(); ++k) {
    torch::Tensor mask = torch::ones({model.num_layers(), model.num_heads()}, torch::kFloat64);
    for (int64_t i = 0; i < k; ++i) mask[layer][order[i]] = 0.0;
    acc.push_back((*accuracies)(model, data, mask));
  }
  return acc;
}

AttributionTree build_tree(const torch::Tensor& per_layer_in, double tau, double top_tau, int64_t top_layer) {
  torch::Tensor att = per_layer_in.to(torch::kCPU, torch::kFloat64).contiguous();
  if (att.dim() != 3 || att.size(1) != att.size(2)) fail("tree: attributions must be [layers, L, L]");
  const int64_t n_layers = att.size(0), L = att.size(1);
  if (n_layers < 2) fail("tree: needs at least 2 layers (got {})", n_layers);
  if (L < 3) fail("tree: needs at least 3 tokens (got {})", L);
  if (top_layer < 0) top_layer = n_layers - 2;
  if (top_layer >= n_layers) fail("--top-layer: layer {} out of range (0..{})", top_layer, n_layers - 1);
  // Per-layer normalisation by the max over query rows 1… ([CLS] is the root only), then threshold.
  torch::Tensor prop = att.clone();
  for (int64_t l = 0; l < n_layers; ++l) {
    double mx = std::abs(att[l].slice(0, 1).max().item<double>());
    if (mx > 0) prop[l] /= mx;
    const double t = l == top_layer ? top_tau : tau;
    prop[l] *= (prop[l] > t).to(torch::kFloat64);
  }
  auto P = prop.accessor<double, 3>();

  AttributionTree tree;
  tree.top_layer = top_layer;
  tree.height.assign(L, 0.0);
  tree.state.assign(L, -1);
  // Root: over all layers, normalised by the global max; no self edges, negatives or [CLS] row.
  torch::Tensor combined = att.sum(0);
  double gmax = std::abs(combined.max().item<double>());
  if (gmax > 0) combined /= gmax;
  combined *= (1 - torch::eye(L, torch::kFloat64)) * (combined > 0).to(torch::kFloat64);
  combined[0].zero_();
  torch::Tensor row_sum = combined.sum(-1);
  // argsort descending (numpy's argsort is not stable in reverse: ties take the higher index).
  std::vector<int64_t> order(L);
  std::iota(order.begin(), order.end(), 0);
  auto rs = row_sum.accessor<double, 1>();
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return rs[a] < rs[b]; });
  std::reverse(order.begin(), order.end());
  const int64_t root = order[0] != 0 ? order[0] : order[1];
  tree.root = root;
  const double unit = 1.0 / n_layers;
  tree.height[root] = (n_layers - 1) * unit;  // 11/12 in the original
  tree.state[root] = 0;
  auto has_edge = [&](int64_t i, int64_t j) {
    for (const auto& e : tree.edges)
      if (e.from == i && e.to == j) return true;
    return false;
  };
  for (int64_t j = 0; j < L; ++j) {
    if (j != root && P[top_layer][root][j] > top_tau) {
      tree.state[j] = 0;
      // The original leaves the root's children at height 0 (drawing only); one level below the root.
      tree.height[j] = tree.height[root] - unit;
      tree.state[root] = 1;
      tree.edges.push_back({root, j, top_layer, P[top_layer][root][j]});
    }
  }
  for (int64_t layer = top_layer - 1; layer >= 0; --layer) {
    for (int64_t i = 1; i < L; ++i) {
      for (int64_t j = 0; j < L; ++j) {
        const double p = P[layer][i][j];
        if (p < tau || p == 0 || tree.state[i] == -1) continue;
        if (tree.state[j] == 1) continue;
        if (has_edge(i, j)) continue;
        if (tree.state[j] == 0) continue;  // both (0,0) and (1,0) are skipped
        if (tree.state[i] == 0) {  // and j == -1: expand i, place j one level lower
          tree.state[i] = 1;
          tree.state[j] = 0;
          tree.height[j] = tree.height[i] - unit;
        } else {  // i fixed, j new: the original puts j at the lowest height in use
          tree.state[j] = 0;
          tree.height[j] = *std::min_element(tree.height.begin(), tree.height.end());
        }
        tree.edges.push_back({i, j, layer, p});
      }
    }
  }
  return tree;
}

std::vector<int64_t> TriggerPattern::positions(bool use_both) const {
  std::vector<int64_t> pos = {pos1[0], pos1[1]};
  if (use_both || (score1 != 0 && score2 / score1 >= 0.2)) pos.insert(pos.end(), {pos2[0], pos2[1]});
  std::sort(pos.begin(), pos.end());
  pos.erase(std::unique(pos.begin(), pos.end()), pos.end());
  std::vector<int64_t> clean;
  for (int64_t p : pos)
    if (!structural.at(static_cast<size_t>(p))) clean.push_back(p);
  return clean;
}

void TriggerPattern::set_example(const Encoding& e, const Tokenizer& tokenizer) {
  tokens = e.tokens;
  structural.assign(e.ids.size(), false);
  for (size_t i = 0; i < e.ids.size(); ++i) structural[i] = tokenizer.is_structural(e.ids[i]);
  seg_pos = std::find(e.ids.begin() + (e.ids.empty() ? 0 : 1), e.ids.end(), tokenizer.sep_id()) - e.ids.begin();
  // A pair's second text starts after the framing's separators: one [SEP], or RoBERTa's </s></s>.
  b_start = seg_pos + 1 + static_cast<int64_t>(tokenizer.special_tokens_count(true) - 3);
}

std::string TriggerPattern::label(bool use_both) const {
  std::string s;
  for (int64_t p : positions(use_both)) s += (s.empty() ? "" : " ") + tokens[p] + "@" + std::to_string(p);
  return s;
}

std::vector<TriggerPattern> mine_trigger_patterns(const Classifier& clf, const LabelledSet& data,
                                                  const AttributionOptions& opts, double min_score) {
  AttributionOptions all = opts;
  all.layers.clear();
  std::vector<TriggerPattern> patterns;
  Progress progress("trigger patterns", (int64_t)data.encodings.size(), "ex");
  for (size_t i = 0; i < data.encodings.size(); ++i) {
    const Encoding& e = data.encodings[i];
    progress.update();
    const int64_t L = (int64_t)e.ids.size();
    if (L < 3) continue;
    AttributionResult r = attribute(clf.model, ids_of(e), types_of(e), -1, all);
    // The head holding the single largest entry over all layers (ties: the lower layer, as the
    // original keeps the first layer unless a later one is strictly larger).
    TriggerPattern p;
    double best = -INFINITY;
    torch::Tensor best_head;
    for (const auto& la : r.layers) {
      torch::Tensor flat = la.attribution.to(torch::kCPU, torch::kFloat64).flatten(1);
      const int64_t h = flat.flatten().argmax().item<int64_t>() / (L * L);
      double v = flat[h].max().item<double>();
      if (v > best) {
        best = v;
        best_head = flat[h];
        p.layer = la.layer;
        p.head = h;
      }
    }
    torch::Tensor sorted_idx = std::get<1>(best_head.sort(0, /*descending=*/true));
    int64_t k1 = sorted_idx[0].item<int64_t>(), k2 = sorted_idx[1].item<int64_t>();
    p.example = (int64_t)i;
    p.score1 = best_head[k1].item<double>();
    p.score2 = best_head[k2].item<double>();
    p.pos1 = {k1 / L, k1 % L};
    p.pos2 = {k2 / L, k2 % L};
    p.set_example(e, clf.tokenizer);
    p.target_label = r.target;
    p.gold_label = data.labels[i];
    patterns.push_back(std::move(p));
  }
  progress.finish();
  std::stable_sort(patterns.begin(), patterns.end(),
                   [](const TriggerPattern& a, const TriggerPattern& b) { return a.score_sum() > b.score_sum(); });
  patterns.erase(std::remove_if(patterns.begin(), patterns.end(),
                                [&](const TriggerPattern& p) { return p.score_sum() < min_score; }),
                 patterns.end());
  return patterns;
}

Encoding insert_pattern(const Classifier& clf, const TriggerPattern& pattern, const std::string& text,
                        const std::optional<std::string>& pair, bool use_both) {
  std::vector<int64_t> pos = pattern.positions(use_both);
  const int64_t sep = pattern.seg_pos, n_tok = (int64_t)pattern.tokens.size();
  std::vector<double> rel_a, rel_b;
  std::vector<std::string> add_a, add_b;
  for (int64_t p : pos) {
    if (p < sep) {
      rel_a.push_back(sep > 1 ? double(p) / (sep - 1) : 0.0);
      add_a.push_back(pattern.tokens[p]);
    } else if (p >= pattern.b_start) {
      // B's tokens are b_start … n_tok − 2 (its closing separator last), as the authors' p − sep over
      // BERT's [SEP] B [SEP]
      const int64_t len_b = n_tok - 1 - pattern.b_start;
      rel_b.push_back(len_b > 0 ? double(p - pattern.b_start + 1) / len_b : 0.0);
      add_b.push_back(pattern.tokens[p]);
    }
  }
  auto insert = [&](std::vector<std::string>& toks, const std::vector<double>& rel, const std::vector<std::string>& add) {
    const int64_t original = (int64_t)toks.size(), count = (int64_t)add.size();
    int64_t prev = -1;
    for (size_t i = 0; i < add.size(); ++i) {
      // Python's round(): half to even, as std::nearbyint in the default rounding mode.
      int64_t cur = (int64_t)std::nearbyint((original + count) * rel[i]);
      if (cur == prev) cur += 1;
      prev = cur;
      cur = std::clamp<int64_t>(cur, 0, (int64_t)toks.size());
      toks.insert(toks.begin() + cur, add[i]);
    }
  };
  std::vector<std::string> a = clf.tokenizer.tokenize(text).tokens, b;
  insert(a, rel_a, add_a);
  if (pair) {
    b = clf.tokenizer.tokenize(*pair).tokens;
    insert(b, rel_b, add_b);
  }
  // Longest-first truncation to the model's limit, then the family's framing ([CLS] a [SEP] (b
  // [SEP]), or RoBERTa's and XLM-R's <s> a </s> (</s> b </s>)).
  const int64_t budget = clf.model.config().max_tokens() - static_cast<int64_t>(clf.tokenizer.special_tokens_count(pair.has_value()));
  while ((int64_t)(a.size() + b.size()) > budget) (a.size() > b.size() ? a : b).pop_back();
  auto pieces = [&](const std::vector<std::string>& tokens) {
    Encoding e;
    for (const auto& t : tokens) {
      e.ids.push_back(clf.tokenizer.token_to_id(t));
      e.tokens.push_back(t);
      e.type_ids.push_back(0);
      e.offsets.emplace_back(0, 0);
      e.word_ids.push_back(-1);
    }
    return e;
  };
  const Encoding ea = pieces(a), eb = pieces(b);
  const Encoding framed = clf.tokenizer.frame(ea, pair ? &eb : nullptr);
  return clf.encode_ids(framed.ids, framed.type_ids, "trigger insertion");
}

std::vector<double> accuracy_per_class(const Transformer& model, const LabelledSet& data, int64_t num_labels) {
  std::vector<int64_t> preds = predict(model, data.encodings, {}, 64);
  std::vector<double> correct(num_labels, 0), count(num_labels, 0);
  for (size_t i = 0; i < preds.size(); ++i) {
    const int64_t y = data.labels[i];
    if (y < 0 || y >= num_labels) continue;
    count[y] += 1;
    correct[y] += preds[i] == y;
  }
  for (int64_t c = 0; c < num_labels; ++c) correct[c] = count[c] > 0 ? correct[c] / count[c] : 0;
  return correct;
}

}  // namespace salient::attattr
