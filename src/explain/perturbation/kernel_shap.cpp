// kernel_shap: KernelSHAP (Lundberg & Lee 2017) over token coalitions.
#include <cmath>
#include <numeric>

#include "explain/perturbation/surrogate.h"
#include "util/error.h"

namespace salient::explain {
namespace {

// KernelSHAP (Lundberg & Lee 2017). With d ≤ exact_max features (default 10) all 2^d − 2 proper
// coalitions are enumerated with Shapley kernel weights (d−1)/(C(d,s)·s·(d−s)), which gives the
// exact Shapley values. Otherwise `samples` coalitions (default 2d + 2048, shap's default) are
// drawn in complementary pairs, the size s with probability ∝ the kernel mass of size s, and
// weighted equally. Both solve the WLS with the efficiency constraint Σφ = v(1) − v(0) by
// eliminating the last feature (as shap does). Extras: base_value = v(0).
class KernelShap : public SurrogateExplainer {
 public:
  std::string name() const override { return "kernel_shap"; }

 protected:
  std::vector<std::vector<int>> sample(size_t d, const ExplainOptions& o, std::mt19937_64& rng) const override {
    std::vector<std::vector<int>> z{std::vector<int>(d, 0), std::vector<int>(d, 1)};  // v(0), v(1) first
    if (d < 2) return z;
    const int64_t exact_max = param_int(o, "exact_max");
    if (static_cast<int64_t>(d) <= exact_max) {
      for (uint64_t m = 1; m + 1 < (uint64_t(1) << d); ++m) {
        std::vector<int> zs(d);
        for (size_t j = 0; j < d; ++j) zs[j] = (m >> j) & 1;
        z.push_back(std::move(zs));
      }
      return z;
    }
    const int64_t budget = optional_param_int(o, "samples").value_or(2 * static_cast<int64_t>(d) + 2048);
    if (budget < 4) fail("--samples: need at least 4, got {}", budget);
    std::vector<double> size_w(d - 1);
    for (size_t s = 1; s < d; ++s) size_w[s - 1] = double(d - 1) / (double(s) * double(d - s));
    std::discrete_distribution<size_t> size_dist(size_w.begin(), size_w.end());
    std::vector<size_t> idx(d);
    while (static_cast<int64_t>(z.size()) + 2 <= budget) {
      const size_t k = size_dist(rng) + 1;
      std::iota(idx.begin(), idx.end(), 0);
      std::vector<int> zs(d, 0);
      for (size_t t = 0; t < k; ++t) {
        const size_t pick = std::uniform_int_distribution<size_t>(t, d - 1)(rng);
        std::swap(idx[t], idx[pick]);
        zs[idx[t]] = 1;
      }
      std::vector<int> comp(d);
      for (size_t j = 0; j < d; ++j) comp[j] = 1 - zs[j];
      z.push_back(std::move(zs));
      z.push_back(std::move(comp));
    }
    return z;
  }
  std::vector<double> fit(const std::vector<std::vector<int>>& z, const std::vector<double>& v, const ExplainOptions& o,
                          nlohmann::json& extras) const override {
    const size_t d = z[0].size();
    extras["base_value"] = v[0];
    if (d == 1) return {v[1] - v[0]};
    const bool exact = static_cast<int64_t>(d) <= param_int(o, "exact_max");
    extras["exact"] = exact;
    return kernel_shap_fit(z, v, exact);
  }
};

}  // namespace

std::vector<double> kernel_shap_fit(const std::vector<std::vector<int>>& z, const std::vector<double>& v, bool exact) {
  const size_t d = z[0].size();
  const double v0 = v[0], v1 = v[1];
  // Binomial coefficients in double (d ≤ exact_max in the exact branch).
  auto binom = [](double n, double k) {
    double r = 1;
    for (double i = 1; i <= k; ++i) r = r * (n - k + i) / i;
    return r;
  };
  std::vector<std::vector<double>> X;
  std::vector<double> y, w;
  for (size_t s = 2; s < z.size(); ++s) {
    const double size = std::accumulate(z[s].begin(), z[s].end(), 0.0);
    std::vector<double> row(d - 1);
    for (size_t j = 0; j + 1 < d; ++j) row[j] = double(z[s][j]) - double(z[s][d - 1]);
    X.push_back(std::move(row));
    y.push_back(v[s] - v0 - double(z[s][d - 1]) * (v1 - v0));
    w.push_back(exact ? double(d - 1) / (binom(double(d), size) * size * (double(d) - size)) : 1.0);
  }
  std::vector<double> phi = weighted_ridge(X, y, w, 0.0, false, nullptr);
  phi.push_back((v1 - v0) - std::accumulate(phi.begin(), phi.end(), 0.0));
  return phi;
}

ExplainerInfo kernel_shap_info() {
  return {"kernel_shap", "perturbation", "KernelSHAP: Shapley kernel regression, paired sampling, exact for short inputs",
          {int_param("samples", nullptr, 4, 1000000, "evaluation budget when sampling (no value: 2d + 2048, shap's)"),
           int_param("exact_max", 10, 0, 20, "enumerate every coalition up to this many tokens (exact Shapley values)"),
           removal_param()},
          [] { return std::unique_ptr<Explainer>(new KernelShap()); }, {Footprint::Pass::forward, /*fills_budget=*/true, 0, "samples"}};
}

}  // namespace salient::explain
