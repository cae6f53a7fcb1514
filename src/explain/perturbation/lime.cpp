// lime: LIME for text (Ribeiro et al. 2016; lime's LimeTextExplainer).
#include <cmath>
#include <numeric>

#include "explain/perturbation/surrogate.h"
#include "util/error.h"

namespace salient::explain {
namespace {

// LIME for text (Ribeiro et al. 2016; lime's LimeTextExplainer): features are distinct words
// (bag of words, lime's default; `features positions` makes each token a feature); sample 0 is
// the input itself; each other sample removes a uniformly drawn number (1..d) of uniformly drawn
// features. Weights: sqrt(exp(−D²/width²)) with D = 100 · cosine distance to the all-ones mask
// (width 25). Surrogate: weighted ridge (α = 1) with intercept on all features, i.e. lime with
// num_features = d (its default of 10 refits on the 10 largest).
class Lime : public SurrogateExplainer {
 public:
  std::string name() const override { return "lime"; }

 protected:
  std::vector<Feature> features_of(const Classifier& clf, const Encoding& enc, const ExplainOptions& o) const override {
    const std::string kind = param_string(o, "features");
    if (kind == "words") return word_features(clf, enc);
    if (kind == "positions") return token_features(clf, enc);
    fail("--lime-features: unknown value '{}' (words or positions)", kind);
  }
  std::vector<std::vector<int>> sample(size_t d, const ExplainOptions& o, std::mt19937_64& rng) const override {
    const int64_t n = param_int(o, "samples");
    if (n < 2) fail("--samples: need at least 2, got {}", n);
    std::vector<std::vector<int>> z{std::vector<int>(d, 1)};
    if (d == 0) return z;
    std::vector<size_t> idx(d);
    for (int64_t s = 1; s < n; ++s) {
      const size_t k = std::uniform_int_distribution<size_t>(1, d)(rng);
      std::iota(idx.begin(), idx.end(), 0);
      std::vector<int> zs(d, 1);
      for (size_t t = 0; t < k; ++t) {  // partial Fisher–Yates: k distinct features
        const size_t pick = std::uniform_int_distribution<size_t>(t, d - 1)(rng);
        std::swap(idx[t], idx[pick]);
        zs[idx[t]] = 0;
      }
      z.push_back(std::move(zs));
    }
    return z;
  }
  std::vector<double> fit(const std::vector<std::vector<int>>& z, const std::vector<double>& v, const ExplainOptions& o,
                          nlohmann::json& extras) const override {
    const double width = param_double(o, "kernel_width");
    if (!(width > 0)) fail("--kernel-width: must be positive (got {})", width);
    double intercept = 0;
    std::vector<double> beta = lime_fit(z, v, width, &intercept);
    extras["intercept"] = intercept;
    return beta;
  }
};

}  // namespace

std::vector<double> lime_fit(const std::vector<std::vector<int>>& z, const std::vector<double>& v, double kernel_width,
                             double* intercept) {
  const size_t d = z[0].size();
  std::vector<std::vector<double>> X;
  std::vector<double> w;
  for (const auto& zs : z) {
    const double on = std::accumulate(zs.begin(), zs.end(), 0.0);
    const double dist = 100.0 * (1.0 - (on > 0 ? std::sqrt(on / double(d)) : 0.0));
    w.push_back(std::sqrt(std::exp(-dist * dist / (kernel_width * kernel_width))));
    X.emplace_back(zs.begin(), zs.end());
  }
  return weighted_ridge(X, v, w, 1.0, true, intercept);
}

ExplainerInfo lime_info() {
  return {"lime", "perturbation", "LIME for text: masked samples, cosine kernel, weighted ridge (Ribeiro et al. 2016)",
          {int_param("samples", 5000, 2, 1000000, "perturbed samples per input (lime's default)"),
           choice_param("features", "words", {"words", "positions"},
                        "words: lime's bag of words (a word and all its occurrences); positions: each token"),
           number_param("kernel_width", 25.0, 1e-12, kInf, "width of the exponential kernel on the cosine distance"),
           removal_param()},
          [] { return std::unique_ptr<Explainer>(new Lime()); }, {Footprint::Pass::forward, /*fills_budget=*/true, 0, "samples"}};
}

}  // namespace salient::explain
