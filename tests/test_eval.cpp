// Explanation metrics against hand-computed examples: plausibility (token P/R/F1, IOU, AUROC,
// AUPRC, summary) and faithfulness (comprehensiveness, sufficiency, AOPC, deletion/insertion) on a
// fake model whose output is a known function of the kept tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "eval/faithfulness.h"
#include "eval/plausibility.h"
#include "test_util.h"
#include "util/error.h"
#include "util/table.h"

using namespace salient;

namespace {

using salient::test::error_of;

}  // namespace

TEST(Plausibility, TopKPrecisionRecallF1) {
  // scores pick tokens 0 and 2 for k = 2; gold is {0, 1}: TP 1, P 1/2, R 1/2, F1 1/2.
  PrfScores s = token_prf_top_k({0.9, 0.1, 0.8, 0.3}, {1, 1, 0, 0}, 2);
  EXPECT_DOUBLE_EQ(s.precision, 0.5);
  EXPECT_DOUBLE_EQ(s.recall, 0.5);
  EXPECT_DOUBLE_EQ(s.f1, 0.5);
  // k = 3 adds token 3: P 1/3, R 1/2, F1 = 2·(1/6)/(5/6) = 0.4.
  s = token_prf_top_k({0.9, 0.1, 0.8, 0.3}, {1, 1, 0, 0}, 3);
  EXPECT_NEAR(s.precision, 1.0 / 3, 1e-15);
  EXPECT_NEAR(s.f1, 0.4, 1e-15);
  // k larger than the input is clipped: everything predicted.
  s = token_prf_top_k({0.9, 0.1}, {1, 0}, 5);
  EXPECT_DOUBLE_EQ(s.precision, 0.5);
  EXPECT_DOUBLE_EQ(s.recall, 1.0);
  // Ties at the cut-off are averaged over every choice, not broken by position: one pick among
  // three tied tokens, one of them gold, is right with probability 1/3 wherever the gold token is.
  for (const std::vector<int>& gold : {std::vector<int>{0, 1, 0}, std::vector<int>{1, 0, 0}}) {
    s = token_prf_top_k({0.5, 0.5, 0.5}, gold, 1);
    EXPECT_NEAR(s.true_positives, 1.0 / 3, 1e-15);
    EXPECT_NEAR(s.f1, 2.0 * (1.0 / 3) / 2, 1e-15);
  }
  // Nothing predicted / nothing gold: zeros, not NaN.
  s = token_prf_top_k({0.5, 0.4}, {0, 0}, 1);
  EXPECT_DOUBLE_EQ(s.f1, 0.0);
  EXPECT_DOUBLE_EQ(s.recall, 0.0);
}

// Many exact zeros (a clamped method): the top-k choice among them is averaged, so a gold token late
// in the input counts as much as an early one. Expectations by hand: k = 3, one strict winner
// (not gold), two places among five tied zeros holding two gold tokens → E[TP] = 2·2/5 = 0.8;
// IoU = E[TP/(3 + 2 − TP)] with TP ~ hypergeometric(5, 2, 2): P(0) = 3/10, P(1) = 6/10, P(2) = 1/10.
TEST(Plausibility, TiesAveragedOverChoices) {
  const std::vector<double> scores{0.9, 0, 0, 0, 0, 0};
  const std::vector<int> gold_late{0, 0, 0, 0, 1, 1}, gold_early{0, 1, 1, 0, 0, 0};
  for (const auto& gold : {gold_late, gold_early}) {
    PrfScores s = token_prf_top_k(scores, gold, 3);
    EXPECT_NEAR(s.true_positives, 0.8, 1e-12);
    EXPECT_NEAR(s.precision, 0.8 / 3, 1e-12);
    EXPECT_NEAR(s.recall, 0.4, 1e-12);
    EXPECT_NEAR(token_iou_top_k(scores, gold, 3), 0.6 * (1.0 / 4) + 0.1 * (2.0 / 3), 1e-12);
  }
  // No tie at the cut-off: the plain top-k.
  EXPECT_DOUBLE_EQ(token_iou_top_k({0.9, 0.8, 0.1}, {1, 0, 1}, 1), 0.5);
}

TEST(Plausibility, ThresholdAndIou) {
  PrfScores s = token_prf_threshold({0.9, 0.5, 0.2, 0.7}, {1, 0, 0, 0}, 0.5);  // predicts 0, 1, 3
  EXPECT_NEAR(s.precision, 1.0 / 3, 1e-15);
  EXPECT_DOUBLE_EQ(s.recall, 1.0);
  EXPECT_DOUBLE_EQ(s.f1, 0.5);
  EXPECT_DOUBLE_EQ(token_iou({1, 1, 0, 0}, {0, 1, 1, 0}), 1.0 / 3);
  EXPECT_DOUBLE_EQ(token_iou({0, 0}, {0, 0}), 0.0);
}

TEST(Plausibility, Auroc) {
  // Positives 0.9, 0.7; negatives 0.8, 0.6: 3 of 4 pairs ordered → 0.75.
  EXPECT_DOUBLE_EQ(auroc({0.9, 0.8, 0.7, 0.6}, {1, 0, 1, 0}), 0.75);
  // A tie between a positive and a negative counts 1/2: (0.5 + 1) / 2.
  EXPECT_DOUBLE_EQ(auroc({1, 1, 0}, {1, 0, 0}), 0.75);
  EXPECT_DOUBLE_EQ(auroc({3, 2, 1}, {1, 1, 0}), 1.0);
  EXPECT_DOUBLE_EQ(auroc({1, 2, 3}, {1, 1, 0}), 0.0);
  EXPECT_TRUE(std::isnan(auroc({1, 2}, {1, 1})));
  EXPECT_TRUE(std::isnan(auroc({1, 2}, {0, 0})));
}

TEST(Plausibility, Auprc) {
  // Ranks: + (P 1, R 1/2), −, + (P 2/3, R 1): AP = 1/2·1 + 1/2·2/3.
  EXPECT_NEAR(auprc({0.9, 0.8, 0.7, 0.6}, {1, 0, 1, 0}), 0.5 + 1.0 / 3, 1e-15);
  // Tied scores form one threshold (sklearn): {1,1}: P 1/2, R 1/2; then {0}: P 2/3, R 1.
  EXPECT_NEAR(auprc({1, 1, 0}, {1, 0, 1}), 0.25 + 1.0 / 3, 1e-15);
  EXPECT_DOUBLE_EQ(auprc({0.1, 0.9}, {0, 1}), 1.0);
  EXPECT_TRUE(std::isnan(auprc({1, 2}, {0, 0})));
}

TEST(Plausibility, AuprcTrapezoid) {
  // Points from (R 0, P 1): (1/2, 1), (1/2, 1/2), (1, 2/3), (1, 1/2): 1/2·1 + 1/2·(1/2 + 2/3)/2 = 19/24
  // (sklearn's auc over precision_recall_curve gives 0.7916...).
  EXPECT_NEAR(auprc_trapezoid({0.9, 0.8, 0.7, 0.6}, {1, 0, 1, 0}), 19.0 / 24, 1e-15);
  // Ties are one threshold: (1/2, 1/2), then (1, 2/3): 1/2·(1 + 1/2)/2 + 1/2·(1/2 + 2/3)/2.
  EXPECT_NEAR(auprc_trapezoid({1, 1, 0}, {1, 0, 1}), 0.375 + 7.0 / 24, 1e-15);
  EXPECT_DOUBLE_EQ(auprc_trapezoid({0.1, 0.9}, {0, 1}), 1.0);
  EXPECT_TRUE(std::isnan(auprc_trapezoid({1, 2}, {0, 0})));
}

TEST(Plausibility, Summary) {
  // Example 1: top-1 hits (F1 1); example 2: top-2 = {0, 1}, gold {1, 2}: F1 1/2; example 3 empty.
  PlausibilitySummary s = summarize_plausibility({{0.9, 0.1}, {0.9, 0.8, 0.1}, {0.3, 0.2}},
                                                 {{1, 0}, {0, 1, 1}, {0, 0}}, 1);
  EXPECT_EQ(s.examples, 2);
  EXPECT_EQ(s.skipped_empty, 1);
  EXPECT_DOUBLE_EQ(s.f1_top_k_mean, 0.75);
  // Pooled: TP 2, predicted 3, gold 3 → F1 2/3.
  EXPECT_NEAR(s.f1_top_k_pooled, 2.0 / 3, 1e-15);
  // Fixed k = 1: example 2 predicts {0}: F1 0 → mean 1/2.
  EXPECT_DOUBLE_EQ(s.f1_fixed_k_mean, 0.5);
  // AUROC: 1 and (pos 0.8, 0.1 vs neg 0.9) = 0 → mean 0.5.
  EXPECT_DOUBLE_EQ(s.auroc_mean, 0.5);
  EXPECT_EQ(s.auroc_examples, 2);
}

TEST(Plausibility, Errors) {
  EXPECT_NE(error_of([] { token_prf_top_k({1, 2}, {1}, 1); }).find("2 scores but 1"), std::string::npos);
  EXPECT_NE(error_of([] { auroc({}, {}); }).find("empty"), std::string::npos);
  EXPECT_NE(error_of([] { summarize_plausibility({{1.0}}, {{0}}); }).find("non-empty rationale"), std::string::npos);
}

namespace {

// A "model" whose output is the sum of per-id weights of the tokens present: ids 10..13 weigh
// 0.4, 0.3, 0.2, 0.1; everything else ([CLS] 101, [SEP] 102, [MASK] 103) weighs 0.
std::vector<double> additive_model(const std::vector<TokenSequence>& batch) {
  std::vector<double> out;
  for (const auto& s : batch) {
    double p = 0;
    for (int64_t id : s.ids)
      if (id >= 10 && id <= 13) p += 0.4 - 0.1 * double(id - 10);
    out.push_back(p);
  }
  return out;
}

const TokenSequence kInput{{101, 10, 11, 12, 13, 102}, {0, 0, 0, 0, 0, 0}};
const std::vector<bool> kRemovable{false, true, true, true, true, false};
// Ranking of the removable positions: 2 (w .3), 3 (w .2), 4 (w .1), 1 (w .4); specials score
// highest but are never removed.
const std::vector<double> kScores{9, 0.1, 0.4, 0.3, 0.2, 9};

}  // namespace

TEST(Faithfulness, ComprehensivenessSufficiency) {
  FaithfulnessResult r = evaluate_faithfulness(additive_model, kInput, kScores, kRemovable, 1);
  EXPECT_NEAR(r.full, 1.0, 1e-12);
  EXPECT_NEAR(r.comprehensiveness, 0.3, 1e-12);  // without position 2: 0.7
  EXPECT_NEAR(r.sufficiency, 0.7, 1e-12);        // only position 2: 0.3
  r = evaluate_faithfulness(additive_model, kInput, kScores, kRemovable, 2);
  EXPECT_NEAR(r.comprehensiveness, 0.5, 1e-12);
  EXPECT_NEAR(r.sufficiency, 0.5, 1e-12);
  // k <= 0: ceil(20% of 4) = 1.
  r = evaluate_faithfulness(additive_model, kInput, kScores, kRemovable, 0);
  EXPECT_EQ(r.k, 1);
}

TEST(Faithfulness, Aopc) {
  // n = 4: fractions 0.1, 0.2 give k = 0 (skipped); 0.3..1.0 give k = 1,1,2,2,2,3,3,4.
  // Output without the top k: 0.7, 0.5, 0.4, 0 → drops .3 .3 .5 .5 .5 .6 .6 1 → mean 4.3/8.
  // Output with only the top k: 0.3, 0.5, 0.6, 1 → drops .7 .7 .5 .5 .5 .4 .4 0 → mean 3.7/8.
  for (Removal removal : {Removal::Mask, Removal::Delete}) {
    FaithfulnessOptions o;
    o.removal = removal;
    FaithfulnessResult r = evaluate_faithfulness(additive_model, kInput, kScores, kRemovable, 1, o);
    EXPECT_NEAR(r.aopc_comprehensiveness, 4.3 / 8, 1e-12);
    EXPECT_NEAR(r.aopc_sufficiency, 3.7 / 8, 1e-12);
  }
}

// ferret's conventions as options: each distinct top-k set once, the top k from positive scores.
TEST(Faithfulness, FerretConventions) {
  FaithfulnessOptions o;
  o.aopc_distinct = true;  // k = 1, 2, 3, 4 once each
  FaithfulnessResult r = evaluate_faithfulness(additive_model, kInput, kScores, kRemovable, 1, o);
  EXPECT_NEAR(r.aopc_comprehensiveness, (0.3 + 0.5 + 0.6 + 1) / 4, 1e-12);
  EXPECT_NEAR(r.aopc_sufficiency, (0.7 + 0.5 + 0.4 + 0) / 4, 1e-12);
  // Positions 2 and 3 score above 0, so every k stops at 2: AOPC's k = 1, 1, 2 (×6).
  const std::vector<double> signed_scores{9, -0.1, 0.4, 0.3, -0.2, 9};
  o = {};
  o.positive_only = true;
  r = evaluate_faithfulness(additive_model, kInput, signed_scores, kRemovable, 3, o);
  EXPECT_EQ(r.k, 2);
  EXPECT_NEAR(r.comprehensiveness, 0.5, 1e-12);
  EXPECT_NEAR(r.aopc_comprehensiveness, (0.3 + 0.3 + 6 * 0.5) / 8, 1e-12);
  o.aopc_distinct = true;
  r = evaluate_faithfulness(additive_model, kInput, signed_scores, kRemovable, 3, o);
  EXPECT_NEAR(r.aopc_comprehensiveness, (0.3 + 0.5) / 2, 1e-12);
  EXPECT_NEAR(r.aopc_sufficiency, (0.7 + 0.5) / 2, 1e-12);
  // No positive score: nothing to remove, so neither comprehensiveness nor AOPC (ferret writes 0 and 1).
  r = evaluate_faithfulness(additive_model, kInput, {9, -1, -1, -1, -1, 9}, kRemovable, 1, o);
  EXPECT_EQ(r.k, 0);
  EXPECT_TRUE(std::isnan(r.comprehensiveness));
  EXPECT_TRUE(std::isnan(r.sufficiency));
  EXPECT_TRUE(std::isnan(r.aopc_comprehensiveness));
  EXPECT_TRUE(std::isnan(r.aopc_sufficiency));
}

TEST(Faithfulness, DeletionInsertionCurves) {
  FaithfulnessOptions o;
  o.curve_steps = 4;  // k = 0, 1, 2, 3, 4
  FaithfulnessResult r = evaluate_faithfulness(additive_model, kInput, kScores, kRemovable, 1, o);
  ASSERT_EQ(r.deletion_curve.size(), 5u);
  const std::vector<double> del{1, 0.7, 0.5, 0.4, 0}, ins{0, 0.3, 0.5, 0.6, 1};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(r.deletion_curve[i], del[i], 1e-12);
    EXPECT_NEAR(r.insertion_curve[i], ins[i], 1e-12);
  }
  EXPECT_NEAR(r.deletion_auc, 0.25 * (0.85 + 0.6 + 0.45 + 0.2), 1e-12);
  EXPECT_NEAR(r.insertion_auc, 0.25 * (0.15 + 0.4 + 0.55 + 0.8), 1e-12);
}

// Tied scores are removed in a seeded pseudo-random order, the same for every k (nested removals),
// not by position: over 200 seeds each of 8 tied positions comes first about 1/8 of the time.
TEST(Faithfulness, TiesInSeededOrder) {
  const std::vector<double> scores(10, 0.0);
  std::vector<bool> removable(10, true);
  removable[0] = removable[9] = false;
  std::vector<int> first(10, 0);
  for (uint64_t seed = 0; seed < 200; ++seed) {
    std::vector<int> prev(10, 0);
    for (int64_t k = 1; k <= 8; ++k) {
      std::vector<int> top = top_k_removable(scores, removable, k, seed);
      EXPECT_EQ(std::count(top.begin(), top.end(), 1), k);
      for (size_t i = 0; i < 10; ++i) EXPECT_GE(top[i], prev[i]) << "not nested at k " << k;
      if (k == 1) first[std::find(top.begin(), top.end(), 1) - top.begin()]++;
      prev = top;
    }
    EXPECT_EQ(top_k_removable(scores, removable, 3, seed), top_k_removable(scores, removable, 3, seed));
  }
  EXPECT_EQ(first[0] + first[9], 0);
  for (size_t i = 1; i < 9; ++i) EXPECT_GE(first[i], 10) << "position " << i;  // 25 expected
  // Strict scores keep their order whatever the seed.
  EXPECT_EQ(top_k_removable(kScores, kRemovable, 2, 7), (std::vector<int>{0, 0, 1, 1, 0, 0}));
}

TEST(Faithfulness, RemovalKeepsSpecials) {
  std::vector<int> top = top_k_removable(kScores, kRemovable, 10);
  EXPECT_EQ(top, (std::vector<int>{0, 1, 1, 1, 1, 0}));
  TokenSequence masked = remove_positions(kInput, top, Removal::Mask, 103);
  EXPECT_EQ(masked.ids, (std::vector<int64_t>{101, 103, 103, 103, 103, 102}));
  TokenSequence deleted = remove_positions(kInput, top, Removal::Delete, 103);
  EXPECT_EQ(deleted.ids, (std::vector<int64_t>{101, 102}));
  EXPECT_EQ(deleted.type_ids.size(), 2u);
  EXPECT_NE(error_of([] { parse_removal("drop"); }).find("--removal"), std::string::npos);
}

TEST(Table, MarkdownAndCsvFromTheSameRows) {
  salient::Table t({"method", "score"});
  t.add_row({"ig", "0.5"});
  t.add_row({"a|b", "x,\"y\""});
  EXPECT_EQ(t.markdown(), "| method | score |\n|---|---|\n| ig | 0.5 |\n| a\\|b | x,\"y\" |\n");
  EXPECT_EQ(t.csv(), "method,score\nig,0.5\na|b,\"x,\"\"y\"\"\"\n");
  EXPECT_THROW(t.add_row({"only one"}), salient::Error);
}
