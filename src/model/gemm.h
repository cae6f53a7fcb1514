#pragma once
// A grid of small row-major matrix products at fixed strides, for code that keeps attention's
// per-(row, head) matrices inside larger buffers (e.g. Q|K|V side by side) and wants no copies.
#include <cstdint>

namespace salient {

// One operand: element (r, c) of matrix (i, j) is at base[i·s1 + j·s2 + r·ld + c].
template <typename T>
struct GridOperand {
  T* base;
  int64_t ld, s1, s2;
};

// C(i,j) = op(A(i,j)) · op(B(i,j)) (+ C(i,j) when accumulate) for i < n1, j < n2, where op
// transposes when asked; C is M×N, op(A) M×K. One CBLAS gemm per matrix, spread over the intra-op
// threads (ATen's mm when built without CBLAS). Defined for float and double.
template <typename T>
void gemm_grid(bool trans_a, bool trans_b, int64_t n1, int64_t n2, int64_t M, int64_t N, int64_t K,
               GridOperand<const T> a, GridOperand<const T> b, GridOperand<T> c, bool accumulate = false);

}  // namespace salient
