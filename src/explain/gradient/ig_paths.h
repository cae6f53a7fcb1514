#pragma once
// Integrated gradients' fast paths (internal to src/explain/gradient): the first layer in closed form
// along the straight line, under autograd (ig_alpha_gradient) or with every layer's backward
// written out on CPU (ig_alpha_gradient_fused). Both return F at each (example, point) row and
// ∂F/∂α per token, which is IG's summand; ig.cpp sums them with the quadrature weights.
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "explain/explainer.h"

namespace salient::explain {

// IG's first layer in closed form. At a point z = c + α·d (c: baseline word embedding plus
// position and type embeddings, d = x − x'), the embedding LayerNorm is
//   LN(z) = γ⊙(c̄ + α·d̄)/σ(α) + β,  σ(α)² = S_cc + 2α·S_cd + α²·S_dd + ε
// with c̄, d̄ centred and S the mean products, so e(α) = A·u + B·v + β with scalars A = 1/σ,
// B = α/σ and per-token vectors u = γ⊙c̄, v = γ⊙d̄; the first layer's Q/K/V are A·uWᵀ + B·vWᵀ +
// (βWᵀ + b) as well. uWᵀ and vWᵀ are computed once per example instead of once per point, and
// the backward pass stops at the scalars: with α a separate leaf per (point, token),
// ∂F/∂α_i = ⟨∇_{z_i}F, d_i⟩, which is exactly IG's summand for token i.
struct LinearEmbedding {
  torch::Tensor s_cc, s_cd, s_dd;       // [B, L], float64
  torch::Tensor u, v, beta;             // [B, L, Hd] ×2, [Hd]: e = A·u + B·v + beta
  torch::Tensor qkv_u, qkv_v, qkv_c;    // [B, L, 3Hd] ×2, [3Hd]: layer 0's Q|K|V likewise
  torch::Tensor grams, keys;            // [B, H, 4, L, L], [B, H, 2, L]: see ig_kernels.h
};

LinearEmbedding linear_embedding(const Transformer& m, const torch::Tensor& base, const torch::Tensor& diff,
                                 const torch::Tensor& types, const torch::Tensor& mask);
// The first layer's attention score terms of ig_kernels.h from le's Q|K|V parts, per example.
void add_first_score_terms(const Transformer& m, LinearEmbedding& le);
// F at the points for rows (example ex[r], quadrature point α_r), [R], and ∂F/∂α per token, [R, Lc].
std::pair<torch::Tensor, torch::Tensor> ig_alpha_gradient(const Transformer& m, const LinearEmbedding& le,
                                                          const torch::Tensor& ex, const torch::Tensor& alpha_rows,
                                                          int64_t Lc, const torch::Tensor& mask,
                                                          const torch::Tensor& targets, ModelOutput output);

// ---- IG's fused CPU path ----
// The same quantity as ig_alpha_gradient, computed without autograd: every layer (the last one for
// [CLS] only) is a fixed chain of ATen kernels and CBLAS calls whose backward is written out
// (input gradients only), with attention's per-(row, head) products read from and written to the
// Q|K|V and context buffers in place. Only the classifier head, O(rows), runs under autograd.
// A full layer's weights as the fused path reads them: Q|K|V stacked, and each forward weight also
// transposed once (x·Wᵀ from a contiguous Wᵀ runs ~10% faster in OpenBLAS at these shapes).
struct FusedLayer : Transformer::LayerWeights {
  torch::Tensor w_qkv, b_qkv;
  torch::Tensor w_qkv_t, o_w_t, i_w_t, out_w_t;
};

FusedLayer fused_layer(const Transformer& m, int64_t layer);
// ∂F/∂α per (row, token) as ig_alpha_gradient, on the fused path (CPU). layers: every layer; le
// with the first layer's score terms (add_first_score_terms) when there are two layers or more.
std::pair<torch::Tensor, torch::Tensor> ig_alpha_gradient_fused(const Transformer& m, const LinearEmbedding& le,
                                                                const std::vector<FusedLayer>& layers,
                                                                const torch::Tensor& ex, const torch::Tensor& alpha_rows,
                                                                int64_t Lc, const torch::Tensor& mask,
                                                                const torch::Tensor& targets, ModelOutput output);

}  // namespace salient::explain
