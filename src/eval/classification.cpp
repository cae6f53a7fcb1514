#include "eval/classification.h"

#include <cmath>

#include "util/error.h"

namespace salient {

ClassificationMetrics classification_metrics(const std::vector<int64_t>& gold, const std::vector<int64_t>& pred,
                                             int64_t num_classes) {
  if (gold.size() != pred.size()) fail("classification_metrics: {} gold labels but {} predictions", gold.size(), pred.size());
  ClassificationMetrics m;
  m.count = static_cast<int64_t>(gold.size());
  if (gold.empty()) return m;
  const int64_t K = num_classes;
  std::vector<double> confusion(K * K, 0.0);  // [gold][pred]
  for (size_t i = 0; i < gold.size(); ++i) {
    if (gold[i] < 0 || gold[i] >= K || pred[i] < 0 || pred[i] >= K)
      fail("classification_metrics: label out of range 0..{} at index {}", K - 1, i);
    confusion[gold[i] * K + pred[i]] += 1;
  }
  std::vector<double> t(K, 0), p(K, 0);  // true and predicted counts per class
  double correct = 0, n = static_cast<double>(gold.size());
  for (int64_t g = 0; g < K; ++g)
    for (int64_t q = 0; q < K; ++q) {
      t[g] += confusion[g * K + q];
      p[q] += confusion[g * K + q];
      if (g == q) correct += confusion[g * K + q];
    }
  m.accuracy = correct / n;
  double f1_sum = 0;
  for (int64_t k = 0; k < K; ++k) {
    double tp = confusion[k * K + k];
    double denom = t[k] + p[k];
    f1_sum += denom > 0 ? 2 * tp / denom : 0.0;
  }
  m.macro_f1 = f1_sum / K;
  double tp_sum = 0, pp = 0, tt = 0;
  for (int64_t k = 0; k < K; ++k) {
    tp_sum += t[k] * p[k];
    pp += p[k] * p[k];
    tt += t[k] * t[k];
  }
  double denom = std::sqrt((n * n - pp) * (n * n - tt));
  m.mcc = denom > 0 ? (correct * n - tp_sum) / denom : 0.0;
  return m;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) fail("pearson: {} values against {}", a.size(), b.size());
  if (a.empty()) fail("pearson: no values");
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ma += a[i] / n;
    mb += b[i] / n;
  }
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0.0;
}

RegressionMetrics regression_metrics(const std::vector<double>& gold, const std::vector<double>& pred) {
  RegressionMetrics m;
  m.count = static_cast<int64_t>(gold.size());
  if (gold.empty()) return m;
  m.pearson = pearson(gold, pred);
  for (size_t i = 0; i < gold.size(); ++i) m.mse += (gold[i] - pred[i]) * (gold[i] - pred[i]) / static_cast<double>(gold.size());
  return m;
}

}  // namespace salient
