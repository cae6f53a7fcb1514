#pragma once
// Self-Attention Attribution (Hao et al., AAAI 2021): integrated gradients over the attention
// probabilities of one layer at a time, with a zero-attention baseline.
//
//   Attr_h(A) = A_h ⊙ ∫0^1 ∂F(α·A)/∂(α·A_h) dα  ≈  A_h ⊙ Σ_k w_k ∂F(α_k·A)/∂(α_k·A_h)
//
// F is the softmax probability of the target class; the other layers' attention is computed
// normally from their inputs. The default rule (left Riemann sum, α_k = k/m, w_k = 1/m) is the
// authors' code; the others are there to reach the same accuracy with fewer points.
#include <torch/torch.h>

#include <string>
#include <vector>

#include "model/transformer.h"
#include "text/tokenizer.h"
#include "util/quadrature.h"

namespace salient::attattr {

// Quadrature rules and points: util/quadrature.h (the names IG uses too). AttAttr uses the exact
// convention (α_k = k/m for the left rule, as the authors' code), and `--m` names the count.
inline Quadrature make_quadrature(Rule rule, int m) {
  return salient::make_quadrature(rule, m, QuadratureConvention::Exact, "--m");
}

struct AttributionOptions {
  int m = 20;
  Rule rule = Rule::Left;
  std::vector<int64_t> layers;  // empty: every layer
  // Bound on the autograd memory of one chunk of integration points (MiB, estimated).
  double max_batch_mb = 2048;
};

struct LayerAttribution {
  int64_t layer = 0;
  torch::Tensor attribution;  // [H, L, L] in the model's dtype
  torch::Tensor attention;    // [H, L, L] the probabilities A
  // Completeness: Σ attribution should approach F(A) − F(0·A) as the rule gets exact.
  double attribution_sum = 0, f_full = 0, f_zero = 0;
  double completeness_gap() const { return attribution_sum - (f_full - f_zero); }
};

struct AttributionResult {
  int64_t target = 0;
  torch::Tensor probs;  // [num_labels] of the unmodified forward
  std::vector<LayerAttribution> layers;
};

// Validates m, the rule's minimum points, the layer indices and the input length; returns the
// layers to attribute (all when opts.layers is empty). Errors are one line naming the argument.
std::vector<int64_t> checked_layers(const Transformer& model, const AttributionOptions& opts);

// One example: input_ids / token_type_ids are [1, L] without padding. target < 0 means the
// predicted class. Fast path: the layers below l run once, layer l's Q/K/V once, and only
// finish_layer(l) and the layers above run on chunks of scaled attention maps; gradients are
// taken with respect to the scaled attention only.
AttributionResult attribute(const Transformer& model, const torch::Tensor& input_ids,
                            const torch::Tensor& token_type_ids, int64_t target, const AttributionOptions& opts);

// Reference path as the authors' code computes it in effect: for every layer and every point a
// full forward from the embeddings with the scaled attention substituted, and a backward pass.
AttributionResult attribute_straightforward(const Transformer& model, const torch::Tensor& input_ids,
                                            const torch::Tensor& token_type_ids, int64_t target,
                                            const AttributionOptions& opts);

// ---- views ----
// [num attributed layers, H]: max over each head's [L, L] matrix.
torch::Tensor head_importance(const AttributionResult& result);
// Sum over heads: [L, L] (query i → key j).
torch::Tensor layer_sum(const LayerAttribution& layer);
// Per token, summed over heads: out[i] = Σ_j a[i, j] (as query), in[j] = Σ_i a[i, j] (as key).
struct TokenFlow {
  std::vector<double> out, in;
};
TokenFlow token_flow(const LayerAttribution& layer);
// The same summed over the tokens of each word (word_ids from the Encoding, -1 = special token,
// kept as its own entry). words = number of distinct word ids + special tokens, in order.
struct WordFlow {
  std::vector<std::string> labels;  // each unit's text: its tokens as the tokenizer's word_text joins them
  std::vector<double> out, in;
};
WordFlow word_flow(const LayerAttribution& layer, const std::vector<std::string>& tokens,
                   const std::vector<int64_t>& word_ids, const std::vector<int64_t>& type_ids,
                   const Tokenizer& tokenizer);

// Estimated autograd memory per integration point when attributing `layer` at length L (bytes).
double bytes_per_point(const Transformer& model, int64_t layer, int64_t length);

}  // namespace salient::attattr
