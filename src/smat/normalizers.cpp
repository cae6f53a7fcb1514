#include "smat/normalizers.h"

#include "util/error.h"

namespace salient::smat {

namespace {
// 1, 2, ..., K along the last dimension, shaped to broadcast against z.
torch::Tensor ranks_like(const torch::Tensor& z) {
  std::vector<int64_t> shape(z.dim(), 1);
  shape.back() = z.size(-1);
  return torch::arange(1, z.size(-1) + 1, z.options()).view(shape);
}
}  // namespace

torch::Tensor sparsemax(const torch::Tensor& z) {
  torch::Tensor sorted = std::get<0>(z.sort(-1, /*descending=*/true));
  torch::Tensor k = ranks_like(z), cumsum = sorted.cumsum(-1);
  // Support size: the largest k with 1 + k·z_(k) > Σ_{j≤k} z_(j) (always ≥ 1).
  torch::Tensor support = (1 + k * sorted > cumsum).sum(-1, /*keepdim=*/true);
  torch::Tensor tau = (cumsum.gather(-1, support - 1) - 1) / support.to(z.scalar_type());
  return torch::clamp_min(z - tau, 0);
}

torch::Tensor entmax15(const torch::Tensor& z) {
  torch::Tensor x = z / 2;
  torch::Tensor sorted = std::get<0>(x.sort(-1, /*descending=*/true));
  torch::Tensor k = ranks_like(z);
  torch::Tensor mean = sorted.cumsum(-1) / k, mean_sq = (sorted * sorted).cumsum(-1) / k;
  // τ_k solves Σ_{j≤k} (x_(j) − τ)² = 1 with the top k entries: τ = mean − √((1 − k·var)/k).
  torch::Tensor delta = (1 - k * (mean_sq - mean * mean)) / k;
  torch::Tensor tau_k = mean - torch::sqrt(torch::clamp_min(delta, 0));
  torch::Tensor support = (tau_k <= sorted).sum(-1, /*keepdim=*/true);
  torch::Tensor tau = tau_k.gather(-1, support - 1);
  torch::Tensor p = torch::clamp_min(x - tau, 0);
  return p * p;
}

Normalizer parse_normalizer(const std::string& name, const std::string& where) {
  if (name == "sparsemax") return Normalizer::Sparsemax;
  if (name == "entmax15" || name == "entmax") return Normalizer::Entmax15;
  if (name == "softmax") return Normalizer::Softmax;
  if (name == "none") return Normalizer::None;
  fail("{}: expected sparsemax, entmax15, softmax or none, got '{}'", where, name);
}

std::string normalizer_name(Normalizer n) {
  switch (n) {
    case Normalizer::Sparsemax: return "sparsemax";
    case Normalizer::Entmax15: return "entmax15";
    case Normalizer::Softmax: return "softmax";
    case Normalizer::None: return "none";
  }
  return "none";
}

torch::Tensor normalize(const torch::Tensor& z, Normalizer n) {
  switch (n) {
    case Normalizer::Sparsemax: return sparsemax(z);
    case Normalizer::Entmax15: return entmax15(z);
    case Normalizer::Softmax: return torch::softmax(z, -1);
    case Normalizer::None: return z;
  }
  return z;
}

}  // namespace salient::smat
