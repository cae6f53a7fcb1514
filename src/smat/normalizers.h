#pragma once
// The normalisations of SMaT's head coefficients (Fernandes et al., NeurIPS 2022): sparsemax
// (Martins & Astudillo 2016) and 1.5-entmax (Peters et al. 2019), exact sort-based forms along the
// last dimension. Both are written with differentiable tensor ops, so autograd gives their
// Jacobians (and the second-order terms the meta-gradient needs) with the support held fixed.
#include <torch/torch.h>

#include <string>

namespace salient::smat {

// argmin_p ||p − z||² over the simplex: p = [z − τ]₊ with τ from the sorted prefix sums.
torch::Tensor sparsemax(const torch::Tensor& z);
// The α = 1.5 entmax: p = [z/2 − τ]₊², Σp = 1, τ exact from the sorted moments.
torch::Tensor entmax15(const torch::Tensor& z);

enum class Normalizer { Sparsemax, Entmax15, Softmax, None };
Normalizer parse_normalizer(const std::string& name, const std::string& where);  // sparsemax|entmax15|softmax|none
std::string normalizer_name(Normalizer n);
torch::Tensor normalize(const torch::Tensor& z, Normalizer n);  // None: z unchanged

}  // namespace salient::smat
