#pragma once
// The explanation metrics: the benchmark's registry (salient benchmark --metrics) and the
// per-example plausibility scores of importance scores against a binary human rationale (ERASER,
// ferret conventions). Each function takes one example's scores and gold mask of equal length;
// callers exclude special tokens beforehand. Errors (length mismatch, empty input) are salient::Error.
#include <cstdint>
#include <string>
#include <vector>

namespace salient {

struct MetricInfo {
  std::string name;
  std::string family;  // plausibility | faithfulness | cost | simulation (src/eval/metrics/, one file each)
  bool higher_is_better = true;
  std::string summary;
};
const std::vector<MetricInfo>& metric_registry();
const MetricInfo& metric_info(const std::string& name);  // one-line error listing the metrics

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
// Area under the same precision-recall points by the trapezoid rule, from (recall 0, precision 1):
// sklearn's auc(recall, precision) over precision_recall_curve, ferret's AUPRC. Linear
// interpolation between the points overstates precision, so it is above average precision
// wherever a threshold lowers precision; NaN when gold has no 1.
double auprc_trapezoid(const std::vector<double>& scores, const std::vector<int>& gold);

// IoU of the top-k binarisation with gold, averaged over the tied choices as token_prf_top_k.
double token_iou_top_k(const std::vector<double>& scores, const std::vector<int>& gold, int64_t k);

}  // namespace salient
