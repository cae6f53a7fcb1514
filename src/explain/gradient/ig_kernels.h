#pragma once
// CPU kernels of the fused IG path (gradient/ig_paths.cpp): the first layer's attention scores in
// closed form, and GELU with its derivative in one pass.
//
// Along IG's line the first layer's queries and keys of token i are A_i·u_i + B_i·v_i + c with
// per-(point, token) scalars A_i, B_i and per-token vectors u_i, v_i fixed per example (see
// LinearEmbedding in gradient/ig_paths.h). So the scaled score of head h is
//   S_ij = A_i(A_j·uu_ij + B_j·uv_ij) + B_i(A_j·vu_ij + B_j·vv_ij) + A_j·cu_j + B_j·cv_j + const_i
// with the four grams uu = scale·Q(u)K(u)ᵀ, uv = scale·Q(u)K(v)ᵀ, … and cu_j = scale·c_q·K(u)_j,
// computed once per example. const_i does not change softmax over j and is left out. A point's
// scores then cost 6 multiply-adds per (i, j) instead of a head_dim-long dot product, and the
// backward pass gives ∂F/∂A and ∂F/∂B directly, without forming ∂Q and ∂K.
#include <cstdint>

namespace salient::explain {

// Where one example's precomputed terms are: grams (h, k, i, j) for k = uu, uv, vu, vv at
// grams[ex·gram_stride + ((h·4 + k)·ld + i)·ld + j]; key terms (h, k, j) for k = cu, cv at
// keys[ex·key_stride + (h·2 + k)·ld + j].
template <typename T>
struct FirstScoreTerms {
  const T* grams;
  const T* keys;
  int64_t gram_stride, key_stride, ld;
};

// scores[r, h, i, j] = S_ij (above) + mask[r, j] for rows r < R (example ex[r]), heads h < H and
// i, j < L. A, B and mask are [R, L]; scores is [R, H, L, L].
template <typename T>
void first_scores_forward(const FirstScoreTerms<T>& terms, int64_t R, int64_t H, int64_t L, const int64_t* ex,
                          const T* A, const T* B, const T* mask, T* scores);

// From dS = ∂F/∂scores [R, H, L, L]: ga[r, i] += ∂F/∂A_i and gb[r, i] += ∂F/∂B_i through the scores.
template <typename T>
void first_scores_backward(const FirstScoreTerms<T>& terms, int64_t R, int64_t H, int64_t L, const int64_t* ex,
                           const T* A, const T* B, const T* dscores, T* ga, T* gb);

// y = x·Φ(x) (exact GELU) and dy = Φ'(x)·x + Φ(x), its derivative, for n elements. float uses
// 8-lane exp and Abramowitz–Stegun 7.1.26 erf (|error| < 2e-7, as ATen's vectorised erf);
// double uses std::erfc and std::exp. Debian's ATen is slow at erf (torch::erf ~4.3 ns per element here); its
// gelu_backward costs ~5.5 ns per element here on typical pre-activations; this ~1.2 ns for
// both outputs (0.6M elements, bound by memory traffic).
template <typename T>
void gelu_with_derivative(int64_t n, const T* x, T* y, T* dy);

// The kernels run an AVX2/FMA build where the CPU has it and a baseline x86-64 build elsewhere;
// on = true forces the baseline build (so tests cover it on any machine).
void use_baseline_kernels(bool on);

}  // namespace salient::explain
