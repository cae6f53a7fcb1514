#pragma once
// Plausibility of token/word importance scores against binary human rationales (ERASER, ferret
// conventions). All functions take one example's scores and gold mask of equal length; callers
// exclude special tokens beforehand. Errors (length mismatch, empty input) are salient::Error.
#include <cstdint>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace salient {

struct PrfScores {
  double precision = 0, recall = 0, f1 = 0;
  double true_positives = 0;       // expected count under top-k ties (see token_prf_top_k)
  int64_t predicted = 0, gold = 0;  // counts, for pooled (micro) aggregation
};

// Binarise by the k highest scores (k clipped to the length) and compare with the gold mask.
// Tied scores at the cut-off are not broken by position (which would favour early tokens when a
// method gives many exact zeros): the result is the exact average over every choice of the tied
// positions, i.e. the expectation when the k − a places left after the a strictly higher scores
// go to a uniformly random subset of the tied ones. Precision is 0 when nothing is predicted,
// recall 0 when gold is empty, F1 0 when both are 0.
PrfScores token_prf_top_k(const std::vector<double>& scores, const std::vector<int>& gold, int64_t k);
// Binarise by score >= threshold.
PrfScores token_prf_threshold(const std::vector<double>& scores, const std::vector<int>& gold, double threshold);
// |predicted ∩ gold| / |predicted ∪ gold| of two binary masks; 0 when both are empty.
double token_iou(const std::vector<int>& predicted, const std::vector<int>& gold);
// Area under the ROC curve (ties count 1/2); NaN when gold is all 0 or all 1.
double auroc(const std::vector<double>& scores, const std::vector<int>& gold);
// Average precision (step-wise, as sklearn's average_precision_score); NaN when gold has no 1.
double auprc(const std::vector<double>& scores, const std::vector<int>& gold);

// IoU of the top-k binarisation with gold, averaged over the tied choices as token_prf_top_k.
double token_iou_top_k(const std::vector<double>& scores, const std::vector<int>& gold, int64_t k);

// A word rationale (one value per whitespace word of `text`) projected onto the tokens: every
// piece of a word with value >= 0.5 is 1, other pieces 0, and -1 for tokens that carry no label
// (structural tokens, the pair segment). Errors name `where` when the rationale is empty or
// shorter than the text's words. ExpNet's training labels and the benchmark's gold use it.
std::vector<int> project_rationale(const std::string& text, const Encoding& enc, const std::vector<float>& rationale,
                                   const std::string& where);

// Per-example mean and pooled (micro) aggregation over a dataset.
struct PlausibilitySummary {
  double f1_top_k_mean = 0, f1_top_k_pooled = 0;  // k = rationale length
  double precision_mean = 0, recall_mean = 0;     // of the top-k binarisation
  double f1_fixed_k_mean = 0;                     // fixed k (ERASER/ferret: 5)
  double iou_mean = 0;                            // of the top-k binarisation
  double auroc_mean = 0, auprc_mean = 0;          // over examples where defined
  int64_t examples = 0, auroc_examples = 0;
  int64_t skipped_empty = 0;  // examples whose gold mask has no 1 (not scored)
};

// Summarises examples (scores[i] and gold[i] of equal length). Examples with an empty gold mask
// are skipped and counted; it is an error when every example is empty.
PlausibilitySummary summarize_plausibility(const std::vector<std::vector<double>>& scores,
                                           const std::vector<std::vector<int>>& gold, int64_t fixed_k = 5);

}  // namespace salient
