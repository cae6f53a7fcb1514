#include "explain/gradient/ig_kernels.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

// load/store pass vectors by value; they are always inlined, so the ABI note is moot.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace salient::explain {
namespace {

// Vectors of `Bytes` bytes (GCC/Clang vector extensions): 32 (one AVX register) in the AVX2/FMA
// build of each kernel, 16 (one SSE register) in the baseline build.
template <typename T, int Bytes>
struct Lanes {
  typedef T type __attribute__((vector_size(Bytes)));
  static constexpr int64_t width = Bytes / sizeof(T);
};

template <typename V, typename T>
inline __attribute__((always_inline)) V load(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename V, typename T>
inline __attribute__((always_inline)) void store(T* p, V v) {
  std::memcpy(p, &v, sizeof v);
}
template <typename V, typename T>
inline __attribute__((always_inline)) V splat(T c) {
  return V{} + c;
}

template <int Bytes, typename T>
inline __attribute__((always_inline)) void forward_body(const FirstScoreTerms<T>& t, int64_t R, int64_t H, int64_t L,
                                                        const int64_t* ex, const T* A, const T* B, const T* mask,
                                                        T* scores) {
  using V = typename Lanes<T, Bytes>::type;
  constexpr int64_t W = Lanes<T, Bytes>::width;
  const int64_t ld = t.ld, kk = ld * ld;
  std::vector<T> w(L);
  for (int64_t r = 0; r < R; ++r) {
    const T *a = A + r * L, *b = B + r * L, *m = mask + r * L;
    for (int64_t h = 0; h < H; ++h) {
      const T* g = t.grams + ex[r] * t.gram_stride + h * 4 * kk;
      const T *cu = t.keys + ex[r] * t.key_stride + h * 2 * ld, *cv = cu + ld;
      for (int64_t j = 0; j < L; ++j) w[j] = a[j] * cu[j] + b[j] * cv[j] + m[j];
      for (int64_t i = 0; i < L; ++i) {
        const T *uu = g + i * ld, *uv = uu + kk, *vu = uv + kk, *vv = vu + kk;
        const T ai = a[i], bi = b[i];
        T* s = scores + ((r * H + h) * L + i) * L;
        int64_t j = 0;
        for (; j + W <= L; j += W)
          store(s + j, load<V>(a + j) * (ai * load<V>(uu + j) + bi * load<V>(vu + j)) +
                           load<V>(b + j) * (ai * load<V>(uv + j) + bi * load<V>(vv + j)) + load<V>(w.data() + j));
        for (; j < L; ++j) s[j] = a[j] * (ai * uu[j] + bi * vu[j]) + b[j] * (ai * uv[j] + bi * vv[j]) + w[j];
      }
    }
  }
}

template <int Bytes, typename T>
inline __attribute__((always_inline)) void backward_body(const FirstScoreTerms<T>& t, int64_t R, int64_t H, int64_t L,
                                                         const int64_t* ex, const T* A, const T* B, const T* dscores,
                                                         T* ga, T* gb) {
  using V = typename Lanes<T, Bytes>::type;
  constexpr int64_t W = Lanes<T, Bytes>::width;
  const int64_t ld = t.ld, kk = ld * ld;
  std::vector<T> col_a(L), col_b(L);  // ∂F/∂A_j, ∂F/∂B_j through the keys
  for (int64_t r = 0; r < R; ++r) {
    const T *a = A + r * L, *b = B + r * L;
    std::fill(col_a.begin(), col_a.end(), T(0));
    std::fill(col_b.begin(), col_b.end(), T(0));
    for (int64_t h = 0; h < H; ++h) {
      const T* g = t.grams + ex[r] * t.gram_stride + h * 4 * kk;
      const T *cu = t.keys + ex[r] * t.key_stride + h * 2 * ld, *cv = cu + ld;
      for (int64_t i = 0; i < L; ++i) {
        const T *uu = g + i * ld, *uv = uu + kk, *vu = uv + kk, *vv = vu + kk;
        const T ai = a[i], bi = b[i];
        const T* d = dscores + ((r * H + h) * L + i) * L;
        V row_a{}, row_b{};  // ∂F/∂A_i, ∂F/∂B_i through the queries, lane-wise
        int64_t j = 0;
        for (; j + W <= L; j += W) {
          const V dv = load<V>(d + j), uuv = load<V>(uu + j), uvv = load<V>(uv + j), vuv = load<V>(vu + j),
                  vvv = load<V>(vv + j), aj = load<V>(a + j), bj = load<V>(b + j);
          row_a += dv * (aj * uuv + bj * uvv);
          row_b += dv * (aj * vuv + bj * vvv);
          store(col_a.data() + j, load<V>(col_a.data() + j) + dv * (ai * uuv + bi * vuv + load<V>(cu + j)));
          store(col_b.data() + j, load<V>(col_b.data() + j) + dv * (ai * uvv + bi * vvv + load<V>(cv + j)));
        }
        T sa = 0, sb = 0;
        for (; j < L; ++j) {
          sa += d[j] * (a[j] * uu[j] + b[j] * uv[j]);
          sb += d[j] * (a[j] * vu[j] + b[j] * vv[j]);
          col_a[j] += d[j] * (ai * uu[j] + bi * vu[j] + cu[j]);
          col_b[j] += d[j] * (ai * uv[j] + bi * vv[j] + cv[j]);
        }
        for (int64_t l = 0; l < W; ++l) {
          sa += row_a[l];
          sb += row_b[l];
        }
        ga[r * L + i] += sa;
        gb[r * L + i] += sb;
      }
    }
    for (int64_t j = 0; j < L; ++j) {
      ga[r * L + j] += col_a[j];
      gb[r * L + j] += col_b[j];
    }
  }
}

// GELU and its derivative on one vector of floats: with e = exp(−x²/2), erf(|x|/√2) = 1 − q·e
// where q is A&S 7.1.26's polynomial in t = 1/(1 + p|x|/√2), and φ(x) = e/√(2π).
template <int Bytes>
inline __attribute__((always_inline)) void gelu_block(const float* x, float* y, float* dy) {
  using VF = typename Lanes<float, Bytes>::type;
  typedef int32_t VI __attribute__((vector_size(Bytes)));
  const VF v = load<VF>(x);
  const VF a = v < 0 ? -v : v;
  // exp(s), s = −x²/2 ≤ 0 (Cephes expf).
  const VF s_in = -0.5f * v * v;
  const VF s = s_in < -80.0f ? splat<VF>(-80.0f) : s_in;
  const VI k = -__builtin_convertvector(s * -1.44269504088896341f + 0.5f, VI);  // round(s/ln 2)
  const VF kf = __builtin_convertvector(k, VF);
  const VF r = (s - kf * 0.693359375f) - kf * -2.12194440e-4f;
  VF p = splat<VF>(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const VI bits = (k + 127) << 23;
  VF scale;
  std::memcpy(&scale, &bits, sizeof scale);
  // Past |x| ≈ 12.6, e and Φ(−|x|) < 1e−35 are set to 0: denormals would cost ~100 cycles each.
  const VF e = s_in < -80.0f ? splat<VF>(0.0f) : (p * r * r + r + 1.0f) * scale;
  const VF t = 1.0f / (1.0f + 0.3275911f * 0.70710678118654752f * a);
  VF q = splat<VF>(1.061405429f);
  q = q * t - 1.453152027f;
  q = q * t + 1.421413741f;
  q = q * t - 0.284496736f;
  q = q * t + 0.254829592f;
  const VF tail = 0.5f * q * t * e;  // Φ(−|x|)
  const VF cdf = v < 0 ? tail : 1.0f - tail;
  store(y, v * cdf);
  store(dy, cdf + v * e * 0.398942280401432678f);
}

template <int Bytes>
inline __attribute__((always_inline)) void gelu_body(int64_t n, const float* x, float* y, float* dy) {
  constexpr int64_t W = Lanes<float, Bytes>::width;
  int64_t i = 0;
  for (; i + W <= n; i += W) gelu_block<Bytes>(x + i, y + i, dy + i);
  if (i < n) {  // the tail through the same code, so every element gets the same formula
    float xb[W] = {}, yb[W], db[W];
    std::memcpy(xb, x + i, (n - i) * sizeof(float));
    gelu_block<Bytes>(xb, yb, db);
    std::memcpy(y + i, yb, (n - i) * sizeof(float));
    std::memcpy(dy + i, db, (n - i) * sizeof(float));
  }
}

// Each kernel twice: for x86-64-v3 (AVX2, FMA) with 32-byte vectors, and for baseline x86-64 with
// 16-byte ones; `fast()` picks one per call.
#define SALIENT_V3 __attribute__((target("arch=x86-64-v3")))

std::atomic<bool> force_baseline{false};

bool fast() {
  static const bool has_v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has_v3 && !force_baseline.load(std::memory_order_relaxed);
}

template <typename T>
SALIENT_V3 void forward_v3(const FirstScoreTerms<T>& t, int64_t R, int64_t H, int64_t L, const int64_t* ex,
                           const T* A, const T* B, const T* mask, T* scores) {
  forward_body<32>(t, R, H, L, ex, A, B, mask, scores);
}
template <typename T>
SALIENT_V3 void backward_v3(const FirstScoreTerms<T>& t, int64_t R, int64_t H, int64_t L, const int64_t* ex,
                            const T* A, const T* B, const T* dscores, T* ga, T* gb) {
  backward_body<32>(t, R, H, L, ex, A, B, dscores, ga, gb);
}
SALIENT_V3 void gelu_v3(int64_t n, const float* x, float* y, float* dy) { gelu_body<32>(n, x, y, dy); }

}  // namespace

void use_baseline_kernels(bool on) { force_baseline = on; }

template <typename T>
void first_scores_forward(const FirstScoreTerms<T>& t, int64_t R, int64_t H, int64_t L, const int64_t* ex,
                          const T* A, const T* B, const T* mask, T* scores) {
  if (fast()) {
    forward_v3(t, R, H, L, ex, A, B, mask, scores);
  } else {
    forward_body<16>(t, R, H, L, ex, A, B, mask, scores);
  }
}

template <typename T>
void first_scores_backward(const FirstScoreTerms<T>& t, int64_t R, int64_t H, int64_t L, const int64_t* ex,
                           const T* A, const T* B, const T* dscores, T* ga, T* gb) {
  if (fast()) {
    backward_v3(t, R, H, L, ex, A, B, dscores, ga, gb);
  } else {
    backward_body<16>(t, R, H, L, ex, A, B, dscores, ga, gb);
  }
}

template void first_scores_forward<float>(const FirstScoreTerms<float>&, int64_t, int64_t, int64_t, const int64_t*,
                                          const float*, const float*, const float*, float*);
template void first_scores_forward<double>(const FirstScoreTerms<double>&, int64_t, int64_t, int64_t,
                                           const int64_t*, const double*, const double*, const double*, double*);
template void first_scores_backward<float>(const FirstScoreTerms<float>&, int64_t, int64_t, int64_t, const int64_t*,
                                           const float*, const float*, const float*, float*, float*);
template void first_scores_backward<double>(const FirstScoreTerms<double>&, int64_t, int64_t, int64_t,
                                            const int64_t*, const double*, const double*, const double*, double*,
                                            double*);

template <>
void gelu_with_derivative<float>(int64_t n, const float* x, float* y, float* dy) {
  if (fast()) {
    gelu_v3(n, x, y, dy);
  } else {
    gelu_body<16>(n, x, y, dy);
  }
}
template <>
void gelu_with_derivative<double>(int64_t n, const double* x, double* y, double* dy) {
  for (int64_t i = 0; i < n; ++i) {
    const double cdf = 0.5 * std::erfc(-x[i] * 0.70710678118654752440);
    y[i] = x[i] * cdf;
    dy[i] = cdf + x[i] * std::exp(-0.5 * x[i] * x[i]) * 0.39894228040143267794;
  }
}

}  // namespace salient::explain
