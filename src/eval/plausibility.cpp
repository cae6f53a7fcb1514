#include "eval/plausibility.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <utility>

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
  s.precision = s.predicted ? s.true_positives / double(s.predicted) : 0.0;
  s.recall = s.gold ? s.true_positives / double(s.gold) : 0.0;
  s.f1 = s.precision + s.recall > 0 ? 2 * s.precision * s.recall / (s.precision + s.recall) : 0.0;
  return s;
}

// The top-k cut-off of one example: `above` positions score strictly higher than the k-th
// score (above_gold of them gold), `tied` positions share it (tied_gold gold), and `take` = k −
// above of the tied ones are selected.
struct TopKCut {
  int64_t k = 0, gold = 0, above_gold = 0, tied = 0, tied_gold = 0, take = 0;
};

TopKCut top_k_cut(const std::vector<double>& scores, const std::vector<int>& gold, int64_t k) {
  const int64_t n = static_cast<int64_t>(scores.size());
  TopKCut c;
  c.k = std::clamp<int64_t>(k, 0, n);
  for (int g : gold) c.gold += g != 0;
  if (c.k == 0) return c;
  std::vector<double> sorted = scores;
  std::nth_element(sorted.begin(), sorted.begin() + (c.k - 1), sorted.end(), std::greater<double>());
  const double kth = sorted[c.k - 1];
  int64_t above = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (scores[i] > kth) {
      ++above;
      c.above_gold += gold[i] != 0;
    } else if (scores[i] == kth) {
      ++c.tied;
      c.tied_gold += gold[i] != 0;
    }
  }
  c.take = c.k - above;
  return c;
}

// E[f(TP)] where TP = above_gold + X and X, the gold positions among `take` drawn from the tied
// ones, is hypergeometric.
template <typename F>
double expected_over_ties(const TopKCut& c, F f) {
  if (c.take == 0 || c.take == c.tied) return f(double(c.above_gold + (c.take == 0 ? 0 : c.tied_gold)));
  auto log_choose = [](int64_t n, int64_t r) {
    return std::lgamma(double(n) + 1) - std::lgamma(double(r) + 1) - std::lgamma(double(n - r) + 1);
  };
  const double log_total = log_choose(c.tied, c.take);
  double e = 0;
  for (int64_t x = std::max<int64_t>(0, c.take - (c.tied - c.tied_gold)); x <= std::min(c.take, c.tied_gold); ++x)
    e += std::exp(log_choose(c.tied_gold, x) + log_choose(c.tied - c.tied_gold, c.take - x) - log_total) *
         f(double(c.above_gold + x));
  return e;
}

}  // namespace

PrfScores token_prf_top_k(const std::vector<double>& scores, const std::vector<int>& gold, int64_t k) {
  check_pair(scores.size(), gold.size(), "token_prf_top_k");
  const TopKCut c = top_k_cut(scores, gold, k);
  PrfScores s;
  s.predicted = c.k;
  s.gold = c.gold;
  // Precision, recall and F1 = 2·TP/(k + gold) are linear in TP: their expectations are theirs at E[TP].
  s.true_positives = expected_over_ties(c, [](double tp) { return tp; });
  s.precision = s.predicted ? s.true_positives / double(s.predicted) : 0.0;
  s.recall = s.gold ? s.true_positives / double(s.gold) : 0.0;
  s.f1 = s.precision + s.recall > 0 ? 2 * s.precision * s.recall / (s.precision + s.recall) : 0.0;
  return s;
}

double token_iou_top_k(const std::vector<double>& scores, const std::vector<int>& gold, int64_t k) {
  check_pair(scores.size(), gold.size(), "token_iou_top_k");
  const TopKCut c = top_k_cut(scores, gold, k);
  return expected_over_ties(c, [&](double tp) {
    const double uni = double(c.k + c.gold) - tp;
    return uni > 0 ? tp / uni : 0.0;
  });
}

std::vector<int> project_rationale(const std::string& text, const Encoding& enc, const std::vector<float>& rationale,
                                   const std::string& where) {
  if (rationale.empty()) fail("{}: empty rationale (one value per word of the text is needed)", where);
  std::vector<int64_t> words = whitespace_word_ids(text, enc, 0);
  std::vector<int> labels(enc.ids.size(), -1);
  for (size_t t = 0; t < enc.ids.size(); ++t) {
    if (words[t] < 0) continue;
    if (words[t] >= static_cast<int64_t>(rationale.size()))
      fail("{}: rationale has {} values but the text has more words", where, rationale.size());
    labels[t] = rationale[words[t]] >= 0.5f ? 1 : 0;
  }
  return labels;
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

namespace {
// sklearn's precision_recall_curve: one (recall, precision) point per distinct score, thresholds
// from the highest down; empty when gold has no 1.
std::vector<std::pair<double, double>> precision_recall_points(const std::vector<double>& scores,
                                                               const std::vector<int>& gold, const char* what) {
  check_pair(scores.size(), gold.size(), what);
  const size_t n = scores.size();
  double total_pos = 0;
  for (int g : gold) total_pos += g != 0;
  std::vector<std::pair<double, double>> points;
  if (total_pos == 0) return points;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  double tp = 0, fp = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && scores[order[j]] == scores[order[i]]) {
      (gold[order[j]] ? tp : fp) += 1;
      ++j;
    }
    points.emplace_back(tp / total_pos, tp / (tp + fp));
    i = j;
  }
  return points;
}
}  // namespace

double auprc(const std::vector<double>& scores, const std::vector<int>& gold) {
  const auto points = precision_recall_points(scores, gold, "auprc");
  if (points.empty()) return std::numeric_limits<double>::quiet_NaN();
  double prev_recall = 0, ap = 0;  // AP = Σ (R_t − R_{t−1}) · P_t
  for (const auto& [recall, precision] : points) {
    ap += (recall - prev_recall) * precision;
    prev_recall = recall;
  }
  return ap;
}

double auprc_trapezoid(const std::vector<double>& scores, const std::vector<int>& gold) {
  const auto points = precision_recall_points(scores, gold, "auprc_trapezoid");
  if (points.empty()) return std::numeric_limits<double>::quiet_NaN();
  double prev_recall = 0, prev_precision = 1, area = 0;  // from sklearn's end point (0, 1)
  for (const auto& [recall, precision] : points) {
    area += (recall - prev_recall) * (precision + prev_precision) / 2;
    prev_recall = recall;
    prev_precision = precision;
  }
  return area;
}

PlausibilitySummary summarize_plausibility(const std::vector<std::vector<double>>& scores,
                                           const std::vector<std::vector<int>>& gold, int64_t fixed_k) {
  if (scores.size() != gold.size())
    fail("summarize_plausibility: {} score vectors but {} gold masks", scores.size(), gold.size());
  PlausibilitySummary s;
  double tp = 0;
  int64_t predicted = 0, gold_total = 0;
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
    PrfScores p = token_prf_top_k(scores[i], gold[i], k);
    s.f1_top_k_mean += p.f1;
    s.precision_mean += p.precision;
    s.recall_mean += p.recall;
    s.iou_mean += token_iou_top_k(scores[i], gold[i], k);
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
  const double P = predicted ? tp / double(predicted) : 0.0, R = gold_total ? tp / double(gold_total) : 0.0;
  s.f1_top_k_pooled = P + R > 0 ? 2 * P * R / (P + R) : 0.0;
  return s;
}

}  // namespace salient
