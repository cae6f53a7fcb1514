#include "attattr/attribution.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "util/error.h"
#include "util/tensor_values.h"

namespace salient::attattr {

std::vector<int64_t> checked_layers(const Transformer& model, const AttributionOptions& opts) {
  make_quadrature(opts.rule, opts.m);  // validates m
  if (!(opts.max_batch_mb > 0)) fail("--max-batch-mb: must be positive (got {})", opts.max_batch_mb);
  const int64_t n = model.num_layers();
  std::vector<int64_t> layers = opts.layers;
  if (layers.empty())
    for (int64_t l = 0; l < n; ++l) layers.push_back(l);
  for (int64_t l : layers)
    if (l < 0 || l >= n) fail("--layers: layer {} out of range (the model has layers 0..{})", l, n - 1);
  return layers;
}

namespace {

struct Prepared {
  torch::Tensor ids, types;
  ForwardResult base;  // hidden states and attentions of the unmodified forward, no graph
  torch::Tensor probs;
  int64_t target = 0;
  int64_t length = 0;
};

Prepared prepare(const Transformer& model, const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                 int64_t target) {
  if (!input_ids.defined() || input_ids.dim() != 2 || input_ids.size(0) != 1)
    fail("attattr: input_ids must be one example of shape [1, L]");
  if (input_ids.size(1) > model.config().max_tokens())
    fail("input: {} tokens but the model allows at most {}", input_ids.size(1), model.config().max_tokens());
  if (model.training()) fail("attattr: the model must be in eval mode (attention dropout off)");
  Prepared p;
  p.ids = input_ids.to(model.device());
  p.types = token_type_ids.defined() ? token_type_ids.to(model.device()) : torch::zeros_like(p.ids);
  p.length = p.ids.size(1);
  torch::NoGradGuard no_grad;
  ForwardRequest req;
  req.input_ids = p.ids;
  req.token_type_ids = p.types;
  req.want_hidden_states = true;
  req.want_attentions = true;
  p.base = model.forward(req);
  p.probs = torch::softmax(p.base.logits[0], -1);
  const int64_t labels = p.probs.size(0);
  if (target >= labels) fail("--target: class {} out of range (the model has {} labels)", target, labels);
  p.target = target < 0 ? p.probs.argmax().item<int64_t>() : target;
  return p;
}

// Class probabilities from the attributed layer's output h ([1 or c, L, Hd]): the layers above it,
// then the head; a head that mixes every layer also reads the states below, which do not change.
torch::Tensor probabilities_from_layer(const Transformer& model, const Prepared& p, int64_t layer,
                                       const torch::Tensor& h, const torch::Tensor& ext) {
  if (!model.pools_every_layer()) return torch::softmax(model.classify(model.run_layers(layer + 1, h, ext)), -1);
  std::vector<torch::Tensor> states(p.base.hidden_states.begin(), p.base.hidden_states.begin() + layer + 1);
  states.push_back(h);
  model.run_layers(layer + 1, h, ext, {}, &states);
  return torch::softmax(model.classify_states(states, {}), -1);
}

// F at α = 0 and α = 1 through the same partial network (completeness check).
std::pair<double, double> endpoint_values(const Transformer& model, const Prepared& p, int64_t layer,
                                          const torch::Tensor& v, const torch::Tensor& ext) {
  torch::NoGradGuard no_grad;
  const torch::Tensor& A = p.base.attentions[layer];
  torch::Tensor both = torch::cat({A * 0.0, A}, 0);
  torch::Tensor h = model.finish_layer(layer, p.base.hidden_states[layer], both, v);
  torch::Tensor f = probabilities_from_layer(model, p, layer, h, ext).select(1, p.target).to(torch::kFloat64);
  return {f[0].item<double>(), f[1].item<double>()};
}

void finish(LayerAttribution& la, const torch::Tensor& A, const torch::Tensor& weighted_grad) {
  la.attention = A[0];
  la.attribution = (A * weighted_grad)[0];
  la.attribution_sum = la.attribution.sum().to(torch::kFloat64).item<double>();
}

}  // namespace

double bytes_per_point(const Transformer& model, int64_t layer, int64_t length) {
  const auto& c = model.config();
  const double L = length, Hd = c.hidden_size, I = c.intermediate_size, H = c.num_attention_heads;
  // Saved activations per layer (linear inputs, LayerNorm/GELU inputs, context, probabilities and
  // scores) with some slack; measured peak is below this for BERT-base shapes.
  double per_layer = L * (12 * Hd + 4 * I) + 4 * H * L * L;
  if (c.is_deberta() && c.deberta.relative_attention) {
    // DeBERTa's disentangled terms: per term a [H, L, 2S] product and an [H, L, L] gather, the
    // bias they add up to, and the projected relative table [2S, Hd].
    const double S = static_cast<double>(c.deberta.span(c.max_position_embeddings)),
                 terms = (c.deberta.c2p ? 1 : 0) + (c.deberta.p2c ? 1 : 0);
    per_layer += terms * (H * L * 2 * S + H * L * L + 2 * S * Hd) + H * L * L;
  }
  return per_layer * double(c.num_hidden_layers - layer) * torch::elementSize(model.dtype());
}

AttributionResult attribute(const Transformer& model, const torch::Tensor& input_ids,
                            const torch::Tensor& token_type_ids, int64_t target, const AttributionOptions& opts) {
  std::vector<int64_t> layers = checked_layers(model, opts);
  Quadrature q = make_quadrature(opts.rule, opts.m);
  Prepared p = prepare(model, input_ids, token_type_ids, target);
  AttributionResult result;
  result.target = p.target;
  result.probs = p.probs;
  const auto opts_t = torch::TensorOptions().dtype(model.dtype()).device(model.device());
  const torch::Tensor ext = model.extended_mask({}, 1, p.length);
  const int64_t m = static_cast<int64_t>(q.alphas.size());
  for (int64_t layer : layers) {
    const torch::Tensor& hidden = p.base.hidden_states[layer];
    const torch::Tensor& A = p.base.attentions[layer];  // [1, H, L, L]
    torch::Tensor v;
    {
      torch::NoGradGuard no_grad;
      v = model.project_qkv(layer, hidden).v;  // Q/K/V of the attributed layer: once
    }
    const int64_t chunk = std::clamp<int64_t>(
        static_cast<int64_t>(opts.max_batch_mb * 1048576.0 / bytes_per_point(model, layer, p.length)), 1, m);
    torch::Tensor weighted_grad = torch::zeros_like(A);
    for (int64_t s = 0; s < m; s += chunk) {
      const int64_t c = std::min(chunk, m - s);
      std::vector<double> a(q.alphas.begin() + s, q.alphas.begin() + s + c);
      std::vector<double> w(q.weights.begin() + s, q.weights.begin() + s + c);
      torch::Tensor alphas = torch::tensor(a, torch::kFloat64).to(opts_t).view({c, 1, 1, 1});
      torch::Tensor weights = torch::tensor(w, torch::kFloat64).to(opts_t);
      torch::AutoGradMode grad_on(true);
      torch::Tensor scaled = (alphas * A).detach().requires_grad_(true);  // [c, H, L, L]
      torch::Tensor h = model.finish_layer(layer, hidden, scaled, v);
      torch::Tensor f = probabilities_from_layer(model, p, layer, h, ext).select(1, p.target);  // [c]
      // Points are independent rows, so the gradient of Σ w_k F_k is w_k ∂F_k/∂(α_k A) per row.
      torch::Tensor g = torch::autograd::grad({(f * weights).sum()}, {scaled})[0];
      weighted_grad += g.sum(0, true).detach();
    }
    LayerAttribution la;
    la.layer = layer;
    finish(la, A, weighted_grad);
    std::tie(la.f_zero, la.f_full) = endpoint_values(model, p, layer, v, ext);
    result.layers.push_back(std::move(la));
  }
  return result;
}

AttributionResult attribute_straightforward(const Transformer& model, const torch::Tensor& input_ids,
                                            const torch::Tensor& token_type_ids, int64_t target,
                                            const AttributionOptions& opts) {
  std::vector<int64_t> layers = checked_layers(model, opts);
  Quadrature q = make_quadrature(opts.rule, opts.m);
  Prepared p = prepare(model, input_ids, token_type_ids, target);
  AttributionResult result;
  result.target = p.target;
  result.probs = p.probs;
  const torch::Tensor ext = model.extended_mask({}, 1, p.length);
  for (int64_t layer : layers) {
    const torch::Tensor& A = p.base.attentions[layer];
    torch::Tensor weighted_grad = torch::zeros_like(A);
    for (size_t k = 0; k < q.alphas.size(); ++k) {
      torch::AutoGradMode grad_on(true);
      ForwardRequest req;
      req.input_ids = p.ids;
      req.token_type_ids = p.types;
      req.hooks.resize(model.num_layers());
      torch::Tensor scaled = (A * q.alphas[k]).detach().requires_grad_(true);
      req.hooks[layer].attn_override = scaled;
      torch::Tensor f = torch::softmax(model.forward(req).logits, -1)[0][p.target];
      weighted_grad += torch::autograd::grad({f}, {scaled})[0].detach() * q.weights[k];
    }
    LayerAttribution la;
    la.layer = layer;
    finish(la, A, weighted_grad);
    torch::Tensor v;
    {
      torch::NoGradGuard no_grad;
      v = model.project_qkv(layer, p.base.hidden_states[layer]).v;
    }
    std::tie(la.f_zero, la.f_full) = endpoint_values(model, p, layer, v, ext);
    result.layers.push_back(std::move(la));
  }
  return result;
}

torch::Tensor head_importance(const AttributionResult& result) {
  std::vector<torch::Tensor> rows;
  for (const auto& la : result.layers) rows.push_back(std::get<0>(la.attribution.flatten(1).max(1)));
  return torch::stack(rows);
}

torch::Tensor layer_sum(const LayerAttribution& layer) { return layer.attribution.sum(0); }


TokenFlow token_flow(const LayerAttribution& layer) {
  torch::Tensor s = layer_sum(layer);
  return {tensor_values(s.sum(1)), tensor_values(s.sum(0))};
}

WordFlow word_flow(const LayerAttribution& layer, const std::vector<std::string>& tokens,
                   const std::vector<int64_t>& word_ids, const std::vector<int64_t>& type_ids,
                   const Tokenizer& tokenizer) {
  TokenFlow t = token_flow(layer);
  const size_t n = t.out.size();
  if (word_ids.size() != n || tokens.size() != n) fail("attattr: word_ids/tokens do not match the attribution length");
  WordFlow w;
  // A unit is a run of tokens with the same (segment, word id); special tokens stand alone.
  int64_t prev_word = -2, prev_type = -1;
  for (size_t i = 0; i < n; ++i) {
    const int64_t type = i < type_ids.size() ? type_ids[i] : 0;
    const bool same = word_ids[i] >= 0 && word_ids[i] == prev_word && type == prev_type;
    if (!same) {
      w.labels.push_back(tokenizer.word_text(tokens[i]));
      w.out.push_back(0);
      w.in.push_back(0);
    } else {
      w.labels.back() += tokenizer.word_text(tokens[i]);
    }
    w.out.back() += t.out[i];
    w.in.back() += t.in[i];
    prev_word = word_ids[i];
    prev_type = type;
  }
  return w;
}

}  // namespace salient::attattr
