#include "explain/perturbation/surrogate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <utf8proc.h>

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

}  // namespace

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

std::vector<Feature> token_features(const Classifier& clf, const Encoding& enc) {
  std::vector<bool> r = removable_positions(clf, enc);
  std::vector<Feature> f;
  for (size_t i = 0; i < r.size(); ++i)
    if (r[i]) f.push_back({{i}});
  return f;
}

std::vector<Feature> word_features(const Classifier& clf, const Encoding& enc) {
  std::vector<bool> r = removable_positions(clf, enc);
  std::vector<std::pair<std::string, std::vector<size_t>>> words;  // occurrences in input order
  for (size_t t = 0; t < enc.ids.size(); ++t) {
    if (!r[t]) continue;
    const std::string& tok = enc.tokens[t];
    const bool continues = clf.tokenizer.continues_word(tok) && t > 0 && r[t - 1] && !words.empty() &&
                           words.back().second.back() == t - 1;
    if (!continues) words.push_back({"", {}});
    words.back().first += clf.tokenizer.word_text(tok);
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

TokenSequence perturb(const TokenSequence& x, const std::vector<Feature>& features, const std::vector<int>& z,
                      Removal removal, int64_t mask_id) {
  std::vector<int> rm(x.ids.size(), 0);
  for (size_t j = 0; j < features.size(); ++j)
    if (!z[j])
      for (const auto& occurrence : features[j])
        for (size_t t : occurrence) rm[t] = 1;
  return remove_positions(x, rm, removal, mask_id);
}

std::vector<Explanation> SurrogateExplainer::compute(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                                   const std::vector<int64_t>& targets, const ExplainOptions& o) {
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
  const std::vector<double> values = score_sequences(clf, seqs, seq_targets, output_of(o), o.limits());
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

}  // namespace salient::explain
