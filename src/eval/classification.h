#pragma once
// Classification metrics: accuracy, macro-F1 and Matthews correlation (multi-class form of
// Gorodkin 2004, which equals the binary MCC for two classes); regression metrics.
#include <cstdint>
#include <vector>

namespace salient {

struct ClassificationMetrics {
  double accuracy = 0, macro_f1 = 0, mcc = 0;
  int64_t count = 0;
};

ClassificationMetrics classification_metrics(const std::vector<int64_t>& gold, const std::vector<int64_t>& pred,
                                             int64_t num_classes);

// Regression (a one-output model): Pearson correlation and mean squared error against the targets.
struct RegressionMetrics {
  double pearson = 0, mse = 0;
  int64_t count = 0;
};
RegressionMetrics regression_metrics(const std::vector<double>& gold, const std::vector<double>& pred);
// Pearson's r; 0 when either side is constant (no linear association can be measured).
double pearson(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace salient
