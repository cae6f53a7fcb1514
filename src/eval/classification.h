#pragma once
// Classification metrics: accuracy, macro-F1 and Matthews correlation (multi-class form of
// Gorodkin 2004, which equals the binary MCC for two classes).
#include <cstdint>
#include <vector>

namespace salient {

struct ClassificationMetrics {
  double accuracy = 0, macro_f1 = 0, mcc = 0;
  int64_t count = 0;
};

ClassificationMetrics classification_metrics(const std::vector<int64_t>& gold, const std::vector<int64_t>& pred,
                                             int64_t num_classes);

}  // namespace salient
