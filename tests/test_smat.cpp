// SMaT's normalisers: sparsemax and 1.5-entmax against hand-computed closed forms, an independent
// bisection for τ, the simplex (sum 1, exact zeros) and their Jacobians against finite differences.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "smat/normalizers.h"
#include "test_util.h"

using namespace salient;
using namespace salient::smat;

namespace {

// p = [z/(α−1)… ] by bisection on τ: Σ f(z_i − τ) = 1, f(u) = [u]₊ (sparsemax) or [u/2]₊² shifted
// (entmax15: p_i = [z_i/2 − τ]₊²). Independent of the sort-based forms.
torch::Tensor by_bisection(const torch::Tensor& z, bool entmax) {
  auto zz = z.to(torch::kFloat64).contiguous();
  std::vector<double> v(zz.data_ptr<double>(), zz.data_ptr<double>() + zz.numel()), p(v.size());
  auto mass = [&](double tau) {
    double s = 0;
    for (double x : v) {
      const double u = std::max(0.0, (entmax ? x / 2 : x) - tau);
      s += entmax ? u * u : u;
    }
    return s;
  };
  double lo = -1e3, hi = 1e3;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (mass(mid) > 1 ? lo : hi) = mid;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    const double u = std::max(0.0, (entmax ? v[i] / 2 : v[i]) - lo);
    p[i] = entmax ? u * u : u;
  }
  return torch::tensor(p, torch::kFloat64);
}

// ∂p/∂z by central differences, [K, K] (row i: ∂p_i/∂z_·).
torch::Tensor jacobian_fd(const std::function<torch::Tensor(const torch::Tensor&)>& f, const torch::Tensor& z) {
  const int64_t K = z.size(0);
  torch::Tensor J = torch::zeros({K, K}, torch::kFloat64);
  const double h = 1e-6;
  for (int64_t j = 0; j < K; ++j) {
    torch::Tensor zp = z.clone(), zm = z.clone();
    zp[j] += h;
    zm[j] -= h;
    J.select(1, j).copy_((f(zp) - f(zm)) / (2 * h));
  }
  return J;
}

torch::Tensor jacobian_autograd(const std::function<torch::Tensor(const torch::Tensor&)>& f, const torch::Tensor& z) {
  const int64_t K = z.size(0);
  torch::Tensor J = torch::zeros({K, K}, torch::kFloat64);
  for (int64_t i = 0; i < K; ++i) {
    torch::Tensor x = z.clone().requires_grad_(true);
    J[i].copy_(torch::autograd::grad({f(x)[i]}, {x})[0]);
  }
  return J;
}

}  // namespace

TEST(Sparsemax, HandCasesSimplexAndExactZeros) {
  auto p = sparsemax(torch::tensor({1.0, 0.5, -1.0}, torch::kFloat64));
  EXPECT_LT((p - torch::tensor({0.75, 0.25, 0.0}, torch::kFloat64)).abs().max().item<double>(), 1e-15);
  EXPECT_EQ(p[2].item<double>(), 0.0);  // exactly zero, not small
  // Equal scores (SMaT's initialisation): the uniform distribution.
  EXPECT_LT((sparsemax(torch::full({6}, 0.3, torch::kFloat64)) - 1.0 / 6).abs().max().item<double>(), 1e-15);
  torch::manual_seed(0);
  torch::Tensor z = torch::randn({7, 12}, torch::kFloat64) * 2;
  torch::Tensor batch = sparsemax(z);
  EXPECT_LT((batch.sum(-1) - 1).abs().max().item<double>(), 1e-12);
  EXPECT_GT(batch.eq(0).sum().item<int64_t>(), 0);
  for (int64_t r = 0; r < 7; ++r)
    EXPECT_LT((batch[r] - by_bisection(z[r], false)).abs().max().item<double>(), 1e-10) << r;
}

TEST(Sparsemax, JacobianIsTheClosedFormAndMatchesFiniteDifferences) {
  torch::Tensor z = torch::tensor({0.9, 0.1, 0.6, -1.2, 0.45}, torch::kFloat64);
  torch::Tensor p = sparsemax(z);
  torch::Tensor s = p.gt(0).to(torch::kFloat64);
  torch::Tensor closed = torch::diag(s) - torch::outer(s, s) / s.sum();  // Martins & Astudillo, eq. 13
  torch::Tensor J = jacobian_autograd(sparsemax, z);
  EXPECT_LT((J - closed).abs().max().item<double>(), 1e-12);
  EXPECT_LT((J - jacobian_fd(sparsemax, z)).abs().max().item<double>(), 1e-6);
}

TEST(Entmax15, HandCasesBisectionAndFiniteDifferences) {
  // z = (1, 0): (1/2 − τ)² + τ² = 1 → τ = (1 − √7)/4.
  const double tau = (1 - std::sqrt(7.0)) / 4;
  auto p = entmax15(torch::tensor({1.0, 0.0}, torch::kFloat64));
  EXPECT_NEAR(p[0].item<double>(), (0.5 - tau) * (0.5 - tau), 1e-14);
  EXPECT_NEAR(p[1].item<double>(), tau * tau, 1e-14);
  // z = (2, 0): all the mass on the first, the second exactly zero.
  auto q = entmax15(torch::tensor({2.0, 0.0}, torch::kFloat64));
  EXPECT_NEAR(q[0].item<double>(), 1.0, 1e-14);
  EXPECT_EQ(q[1].item<double>(), 0.0);
  EXPECT_LT((entmax15(torch::full({5}, -2.0, torch::kFloat64)) - 0.2).abs().max().item<double>(), 1e-14);
  torch::manual_seed(1);
  torch::Tensor z = torch::randn({6, 10}, torch::kFloat64) * 3;
  torch::Tensor batch = entmax15(z);
  EXPECT_LT((batch.sum(-1) - 1).abs().max().item<double>(), 1e-12);
  EXPECT_GT(batch.eq(0).sum().item<int64_t>(), 0);
  for (int64_t r = 0; r < 6; ++r)
    EXPECT_LT((batch[r] - by_bisection(z[r], true)).abs().max().item<double>(), 1e-10) << r;
  torch::Tensor x = torch::tensor({0.8, 0.2, -0.3, 1.1, -2.0}, torch::kFloat64);
  EXPECT_LT((jacobian_autograd(entmax15, x) - jacobian_fd(entmax15, x)).abs().max().item<double>(), 1e-6);
}

TEST(Normalizers, NamesAndErrors) {
  for (const char* n : {"sparsemax", "entmax15", "softmax", "none"})
    EXPECT_EQ(normalizer_name(parse_normalizer(n, "--normalizer")), n);
  EXPECT_NE(test::error_of([] { parse_normalizer("sparse", "--normalizer"); }).find("--normalizer: expected"), std::string::npos);
  torch::Tensor z = torch::tensor({0.2, -0.1}, torch::kFloat64);
  EXPECT_TRUE(torch::equal(normalize(z, Normalizer::None), z));
  EXPECT_LT((normalize(z, Normalizer::Softmax) - torch::softmax(z, 0)).abs().max().item<double>(), 1e-15);
}
