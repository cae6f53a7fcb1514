// Perturbation explainers that fit a surrogate over token-presence masks: LIME for text and
// KernelSHAP. Features are the non-special tokens; a removed token is replaced by [MASK] (default)
// or deleted. All perturbed inputs of a call are scored in padded batches (internal_batch rows).
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <utf8proc.h>

#include "explain/methods.h"
#include "util/error.h"

namespace salient::explain {
namespace {

// Solves A x = b (A symmetric positive semi-definite, small) by Gaussian elimination with partial
// pivoting; a tiny ridge keeps rank-deficient sampled designs solvable.
std::vector<double> solve(std::vector<std::vector<double>> a, std::vector<double> b) {
  const size_t n = b.size();
  for (size_t i = 0; i < n; ++i) a[i][i] += 1e-12;
  for (size_t c = 0; c < n; ++c) {
    size_t piv = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::abs(a[r][c]) > std::abs(a[piv][c])) piv = r;
    std::swap(a[c], a[piv]);
    std::swap(b[c], b[piv]);
    if (std::abs(a[c][c]) < 1e-300) continue;
    for (size_t r = c + 1; r < n; ++r) {
      const double f = a[r][c] / a[c][c];
      if (f == 0) continue;
      for (size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(n, 0.0);
  for (size_t i = n; i-- > 0;) {
    double s = b[i];
    for (size_t k = i + 1; k < n; ++k) s -= a[i][k] * x[k];
    x[i] = std::abs(a[i][i]) < 1e-300 ? 0.0 : s / a[i][i];
  }
  return x;
}

// Weighted least squares: minimise Σ_s w_s (y_s − c − X_s·β)² + ridge·|β|² (c only when
// intercept). Returns β and sets *c.
std::vector<double> weighted_ridge(const std::vector<std::vector<double>>& X, const std::vector<double>& y,
                                   const std::vector<double>& w, double ridge, bool intercept, double* c) {
  const size_t n = X.size(), d = n ? X[0].size() : 0;
  std::vector<double> xm(d, 0.0);
  double ym = 0, wsum = 0;
  if (intercept) {
    for (size_t s = 0; s < n; ++s) {
      wsum += w[s];
      ym += w[s] * y[s];
      for (size_t j = 0; j < d; ++j) xm[j] += w[s] * X[s][j];
    }
    ym /= wsum;
    for (double& v : xm) v /= wsum;
  }
  std::vector<std::vector<double>> a(d, std::vector<double>(d, 0.0));
  std::vector<double> b(d, 0.0), xc(d);
  for (size_t s = 0; s < n; ++s) {
    for (size_t j = 0; j < d; ++j) xc[j] = X[s][j] - xm[j];
    const double yc = y[s] - ym;
    for (size_t j = 0; j < d; ++j) {
      if (xc[j] == 0) continue;
      b[j] += w[s] * xc[j] * yc;
      for (size_t k = 0; k < d; ++k) a[j][k] += w[s] * xc[j] * xc[k];
    }
  }
  for (size_t j = 0; j < d; ++j) a[j][j] += ridge;
  std::vector<double> beta = solve(std::move(a), std::move(b));
  if (c) *c = ym - std::inner_product(xm.begin(), xm.end(), beta.begin(), 0.0);
  return beta;
}

// A feature is removed as a whole: its occurrences (runs of token positions; one word's pieces).
using Feature = std::vector<std::vector<size_t>>;

// One feature per removable token.
std::vector<Feature> token_features(const Classifier& clf, const Encoding& enc) {
  std::vector<bool> r = removable_positions(clf, enc);
  std::vector<Feature> f;
  for (size_t i = 0; i < r.size(); ++i)
    if (r[i]) f.push_back({{i}});
  return f;
}

// Python's \w: a letter, a digit or '_' (lime splits text on \W+, so a word without one, such as
// punctuation, is never a feature).
bool has_word_character(const std::string& s) {
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(s.size());
  while (left > 0) {
    utf8proc_int32_t c = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(p, left, &c);
    if (n <= 0) return false;
    if (c == '_') return true;
    switch (utf8proc_category(c)) {
      case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
      case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
        return true;
      default: break;
    }
    p += n;
    left -= n;
  }
  return false;
}

// lime's bag-of-words features (LimeTextExplainer, bow=True): one feature per distinct word, holding
// every occurrence of it, so removing it removes the word everywhere. Words are WordPiece's: a
// piece starting with "##" continues the word before it (this needs no text, so inputs given as
// ids work too); words without a letter or digit are not features.
std::vector<Feature> word_features(const Classifier& clf, const Encoding& enc) {
  std::vector<bool> r = removable_positions(clf, enc);
  std::vector<std::pair<std::string, std::vector<size_t>>> words;  // occurrences in input order
  for (size_t t = 0; t < enc.ids.size(); ++t) {
    if (!r[t]) continue;
    const std::string& tok = enc.tokens[t];
    const bool continues = tok.rfind("##", 0) == 0 && t > 0 && r[t - 1] && !words.empty() && words.back().second.back() == t - 1;
    if (!continues) words.push_back({"", {}});
    words.back().first += continues ? tok.substr(2) : tok;
    words.back().second.push_back(t);
  }
  std::map<std::string, size_t> index;  // word → feature
  std::vector<Feature> f;
  for (auto& [word, pieces] : words) {
    if (!has_word_character(word)) continue;
    auto [it, fresh] = index.emplace(word, f.size());
    if (fresh) f.emplace_back();
    f[it->second].push_back(std::move(pieces));
  }
  return f;
}

// The input with the features whose z is 0 removed.
TokenSequence perturb(const TokenSequence& x, const std::vector<Feature>& features, const std::vector<int>& z,
                      Removal removal, int64_t mask_id) {
  std::vector<int> rm(x.ids.size(), 0);
  for (size_t j = 0; j < features.size(); ++j)
    if (!z[j])
      for (const auto& occurrence : features[j])
        for (size_t t : occurrence) rm[t] = 1;
  return remove_positions(x, rm, removal, mask_id);
}

// Shared driver: each input gets a set of coalitions z (from `sample`), all inputs' perturbations
// are scored together, then `fit` turns (z, values) into per-feature scores.
class SurrogateExplainer : public Explainer {
 public:
  std::vector<Explanation> compute(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                   const std::vector<int64_t>& targets, const ExplainOptions& o) override {
    check_inputs(inputs, targets, clf.model.config().num_labels);
    const Removal removal = parse_removal(param_string(o, "removal"));
    std::vector<std::vector<Feature>> features(inputs.size());
    std::vector<std::vector<std::vector<int>>> coalitions(inputs.size());
    std::vector<TokenSequence> seqs;
    std::vector<int64_t> seq_targets;
    for (size_t i = 0; i < inputs.size(); ++i) {
      features[i] = features_of(clf, *inputs[i], o);
      auto rng = example_rng(o.seed, *inputs[i]);
      coalitions[i] = sample(features[i].size(), o, rng);
      const TokenSequence x = to_sequence(*inputs[i]);
      for (const auto& z : coalitions[i]) {
        seqs.push_back(perturb(x, features[i], z, removal, clf.tokenizer.mask_id()));
        seq_targets.push_back(targets[i]);
      }
    }
    const std::vector<double> values = score_sequences(clf, seqs, seq_targets, output_of(o), o.internal_batch);
    std::vector<Explanation> out;
    size_t at = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::vector<double> v(values.begin() + at, values.begin() + at + coalitions[i].size());
      at += coalitions[i].size();
      Explanation e{name(), targets[i], std::vector<double>(inputs[i]->ids.size(), 0.0), nlohmann::json::object()};
      if (!features[i].empty()) {
        std::vector<double> phi = fit(coalitions[i], v, o, e.extras);
        // A feature's weight is shared by the pieces of each occurrence, so they sum to it (the
        // word's score); every occurrence of a word shows it in full.
        for (size_t j = 0; j < features[i].size(); ++j)
          for (const auto& occurrence : features[i][j])
            for (size_t t : occurrence) e.scores[t] = phi[j] / double(occurrence.size());
      }
      e.extras["evaluations"] = coalitions[i].size();
      out.push_back(std::move(e));
    }
    return out;
  }

 protected:
  virtual std::vector<Feature> features_of(const Classifier& clf, const Encoding& enc, const ExplainOptions&) const {
    return token_features(clf, enc);
  }
  virtual std::vector<std::vector<int>> sample(size_t d, const ExplainOptions& o, std::mt19937_64& rng) const = 0;
  virtual std::vector<double> fit(const std::vector<std::vector<int>>& z, const std::vector<double>& v,
                                  const ExplainOptions& o, nlohmann::json& extras) const = 0;
};

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

ExplainerInfo lime_info() {
  return {"lime", "perturbation", "LIME for text: masked samples, cosine kernel, weighted ridge (Ribeiro et al. 2016)",
          {int_param("samples", 5000, 2, kInf, "perturbed samples per input (lime's default)"),
           choice_param("features", "words", {"words", "positions"},
                        "words: lime's bag of words (a word and all its occurrences); positions: each token"),
           number_param("kernel_width", 25.0, 1e-12, kInf, "width of the exponential kernel on the cosine distance"),
           removal_param()},
          [] { return std::unique_ptr<Explainer>(new Lime()); }};
}
ExplainerInfo kernel_shap_info() {
  return {"kernel_shap", "perturbation", "KernelSHAP: Shapley kernel regression, paired sampling, exact for short inputs",
          {int_param("samples", nullptr, 4, kInf, "evaluation budget when sampling (no value: 2d + 2048, shap's)"),
           int_param("exact_max", 10, 0, 20, "enumerate every coalition up to this many tokens (exact Shapley values)"),
           removal_param()},
          [] { return std::unique_ptr<Explainer>(new KernelShap()); }};
}

}  // namespace salient::explain
