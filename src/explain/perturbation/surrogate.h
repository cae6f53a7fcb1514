#pragma once
// What LIME and KernelSHAP share (internal to src/explain): features over token positions (single
// tokens, or lime's bag of words), the perturbed inputs of a coalition, a weighted least-squares
// solver, and a driver that scores every input's coalitions in padded batches (internal_batch rows)
// and fits a surrogate per input. A removed token is replaced by [MASK] (default) or deleted.
#include <random>
#include <string>
#include <vector>

#include "explain/methods.h"

namespace salient::explain {

// Weighted least squares: minimise Σ_s w_s (y_s − c − X_s·β)² + ridge·|β|² (c only when
// intercept). Returns β and sets *c.
std::vector<double> weighted_ridge(const std::vector<std::vector<double>>& X, const std::vector<double>& y,
                                   const std::vector<double>& w, double ridge, bool intercept, double* c);

// A feature is removed as a whole: its occurrences (runs of token positions; one word's pieces).
using Feature = std::vector<std::vector<size_t>>;

// One feature per removable token.
std::vector<Feature> token_features(const Classifier& clf, const Encoding& enc);

// lime's bag-of-words features (LimeTextExplainer, bow=True): one feature per distinct word, holding
// every occurrence of it, so removing it removes the word everywhere. Words are the tokenizer's: a
// piece that continues the word before it (WordPiece's "##", byte-level BPE's pieces without a
// leading space) joins it (this needs no text, so inputs given as ids work too); words without a
// letter or digit are not features.
std::vector<Feature> word_features(const Classifier& clf, const Encoding& enc);

// The input with the features whose z is 0 removed.
TokenSequence perturb(const TokenSequence& x, const std::vector<Feature>& features, const std::vector<int>& z,
                      Removal removal, int64_t mask_id);

// Shared driver: each input gets a set of coalitions z (from `sample`), all inputs' perturbations
// are scored together, then `fit` turns (z, values) into per-feature scores.
class SurrogateExplainer : public Explainer {
 public:
  std::vector<Explanation> compute(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                   const std::vector<int64_t>& targets, const ExplainOptions& o) override;

 protected:
  virtual std::vector<Feature> features_of(const Classifier& clf, const Encoding& enc, const ExplainOptions&) const {
    return token_features(clf, enc);
  }
  virtual std::vector<std::vector<int>> sample(size_t d, const ExplainOptions& o, std::mt19937_64& rng) const = 0;
  virtual std::vector<double> fit(const std::vector<std::vector<int>>& z, const std::vector<double>& v,
                                  const ExplainOptions& o, nlohmann::json& extras) const = 0;
};

}  // namespace salient::explain
