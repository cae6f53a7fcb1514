#include "eval/plausibility.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "util/error.h"

namespace salient {
namespace {

void check_pair(size_t n_scores, size_t n_gold, const char* what) {
  if (n_scores != n_gold) fail("{}: {} scores but {} gold labels", what, n_scores, n_gold);
  if (n_scores == 0) fail("{}: empty input", what);
}

PrfScores prf(const std::vector<int>& predicted, const std::vector<int>& gold) {
  PrfScores s;
  for (size_t i = 0; i < gold.size(); ++i) {
    s.predicted += predicted[i] != 0;
    s.gold += gold[i] != 0;
    s.true_positives += (predicted[i] != 0) && (gold[i] != 0);
  }
  s.precision = s.predicted ? double(s.true_positives) / s.predicted : 0.0;
  s.recall = s.gold ? double(s.true_positives) / s.gold : 0.0;
  s.f1 = s.precision + s.recall > 0 ? 2 * s.precision * s.recall / (s.precision + s.recall) : 0.0;
  return s;
}

}  // namespace

std::vector<int> top_k_mask(const std::vector<double>& scores, int64_t k) {
  const int64_t n = static_cast<int64_t>(scores.size());
  k = std::clamp<int64_t>(k, 0, n);
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  // Stable sort: equal scores keep their position order, so earlier tokens win ties.
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  std::vector<int> mask(n, 0);
  for (int64_t i = 0; i < k; ++i) mask[order[i]] = 1;
  return mask;
}

PrfScores token_prf_top_k(const std::vector<double>& scores, const std::vector<int>& gold, int64_t k) {
  check_pair(scores.size(), gold.size(), "token_prf_top_k");
  return prf(top_k_mask(scores, k), gold);
}

PrfScores token_prf_threshold(const std::vector<double>& scores, const std::vector<int>& gold, double threshold) {
  check_pair(scores.size(), gold.size(), "token_prf_threshold");
  std::vector<int> predicted(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) predicted[i] = scores[i] >= threshold;
  return prf(predicted, gold);
}

double token_iou(const std::vector<int>& predicted, const std::vector<int>& gold) {
  check_pair(predicted.size(), gold.size(), "token_iou");
  int64_t inter = 0, uni = 0;
  for (size_t i = 0; i < gold.size(); ++i) {
    inter += (predicted[i] != 0) && (gold[i] != 0);
    uni += (predicted[i] != 0) || (gold[i] != 0);
  }
  return uni ? double(inter) / uni : 0.0;
}

double auroc(const std::vector<double>& scores, const std::vector<int>& gold) {
  check_pair(scores.size(), gold.size(), "auroc");
  // Mann–Whitney U from mid-ranks: ties between a positive and a negative count 1/2.
  const size_t n = scores.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  std::vector<double> rank(n);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && scores[order[j + 1]] == scores[order[i]]) ++j;
    double mid = 0.5 * double(i + j) + 1.0;
    for (size_t t = i; t <= j; ++t) rank[order[t]] = mid;
    i = j + 1;
  }
  double pos = 0, rank_sum = 0;
  for (size_t i = 0; i < n; ++i)
    if (gold[i]) {
      pos += 1;
      rank_sum += rank[i];
    }
  const double neg = double(n) - pos;
  if (pos == 0 || neg == 0) return std::numeric_limits<double>::quiet_NaN();
  return (rank_sum - pos * (pos + 1) / 2) / (pos * neg);
}

double auprc(const std::vector<double>& scores, const std::vector<int>& gold) {
  check_pair(scores.size(), gold.size(), "auprc");
  const size_t n = scores.size();
  double total_pos = 0;
  for (int g : gold) total_pos += g != 0;
  if (total_pos == 0) return std::numeric_limits<double>::quiet_NaN();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  // One threshold per distinct score (sklearn): AP = Σ (R_t − R_{t−1}) · P_t.
  double tp = 0, fp = 0, prev_recall = 0, ap = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && scores[order[j]] == scores[order[i]]) {
      (gold[order[j]] ? tp : fp) += 1;
      ++j;
    }
    const double recall = tp / total_pos, precision = tp / (tp + fp);
    ap += (recall - prev_recall) * precision;
    prev_recall = recall;
    i = j;
  }
  return ap;
}

PlausibilitySummary summarize_plausibility(const std::vector<std::vector<double>>& scores,
                                           const std::vector<std::vector<int>>& gold, int64_t fixed_k) {
  if (scores.size() != gold.size())
    fail("summarize_plausibility: {} score vectors but {} gold masks", scores.size(), gold.size());
  PlausibilitySummary s;
  int64_t tp = 0, predicted = 0, gold_total = 0;
  double auprc_sum = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    int64_t k = 0;
    for (int g : gold[i]) k += g != 0;
    check_pair(scores[i].size(), gold[i].size(), "summarize_plausibility");
    if (k == 0) {
      ++s.skipped_empty;
      continue;
    }
    ++s.examples;
    std::vector<int> mask = top_k_mask(scores[i], k);
    PrfScores p = prf(mask, gold[i]);
    s.f1_top_k_mean += p.f1;
    s.precision_mean += p.precision;
    s.recall_mean += p.recall;
    s.iou_mean += token_iou(mask, gold[i]);
    tp += p.true_positives;
    predicted += p.predicted;
    gold_total += p.gold;
    s.f1_fixed_k_mean += token_prf_top_k(scores[i], gold[i], fixed_k).f1;
    auprc_sum += auprc(scores[i], gold[i]);
    double roc = auroc(scores[i], gold[i]);
    if (!std::isnan(roc)) {
      s.auroc_mean += roc;
      ++s.auroc_examples;
    }
  }
  if (s.examples == 0) fail("summarize_plausibility: no example has a non-empty rationale");
  const double n = double(s.examples);
  s.f1_top_k_mean /= n;
  s.precision_mean /= n;
  s.recall_mean /= n;
  s.iou_mean /= n;
  s.f1_fixed_k_mean /= n;
  s.auprc_mean = auprc_sum / n;
  s.auroc_mean = s.auroc_examples ? s.auroc_mean / double(s.auroc_examples) : std::numeric_limits<double>::quiet_NaN();
  const double P = predicted ? double(tp) / predicted : 0.0, R = gold_total ? double(tp) / gold_total : 0.0;
  s.f1_top_k_pooled = P + R > 0 ? 2 * P * R / (P + R) : 0.0;
  return s;
}

}  // namespace salient
