#pragma once
// Faithfulness of token importance scores: how the model's output for the explained class moves
// when the most important tokens are removed (comprehensiveness) or kept alone (sufficiency).
// Model-agnostic: the model is a callback scoring batches of token sequences, so the metrics are
// torch-free and testable with a hand-written "model"; explain/model_output.h binds a Classifier.
//
// Conventions (ERASER, DeYoung et al. 2020; ferret, Attanasio et al. 2023):
// - Only removable positions take part ([CLS]/[SEP] and other special tokens are never removed).
// - "Top k" = the k removable positions with the highest scores. Equal scores are ordered by a
//   seeded pseudo-random key per position (FaithfulnessOptions::tie_seed), the same order for every
//   k, so removals stay nested and ties favour no part of the input (ordering ties by position
//   would remove early tokens first whenever a method gives many exact zeros).
// - Removal is [MASK] substitution (default) or deletion of the token.
// - AOPC over the fractions f = 0.1 … 1.0 (ferret's grid): k = floor(f · n) with n the number of
//   removable positions; fractions giving k = 0 are skipped, and a k that several fractions give
//   counts once per fraction. ferret's conventions are options: each distinct top-k set once
//   (aopc_distinct) and the top k from positive scores only (positive_only; docs/explainers.md).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace salient {

struct TokenSequence {
  std::vector<int64_t> ids, type_ids;
};

// Output of the model for the explained class (e.g. its softmax probability), one per sequence.
using SequenceScorer = std::function<std::vector<double>(const std::vector<TokenSequence>&)>;

enum class Removal { Mask, Delete };
Removal parse_removal(const std::string& name);  // "mask" | "delete"

struct FaithfulnessOptions {
  Removal removal = Removal::Mask;
  int64_t mask_id = 103;
  std::vector<double> aopc_fractions = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};  // empty: no AOPCs
  int64_t curve_steps = 20;  // deletion/insertion curves at fractions 0, 1/steps, …, 1; 0: no curves
  uint64_t tie_seed = 0;     // order of tied scores (see above)
  // ferret's only_pos: every top k (comprehensiveness, sufficiency, AOPC, curves) is drawn from the
  // removable positions with a score > 0 only, i.e. k is capped at their count.
  bool positive_only = false;
  // ferret's AOPC: a fraction whose top-k set is the previous counted fraction's is skipped, so
  // each distinct set counts once (on fewer than ten removable tokens several fractions give one k).
  bool aopc_distinct = false;
};

struct FaithfulnessResult {
  double full = 0;               // output on the unmodified input
  double comprehensiveness = 0;  // full − output without the top-k (ERASER); NaN when k is 0 (positive_only)
  double sufficiency = 0;        // full − output with only the top-k (ERASER); NaN when k is 0
  int64_t k = 0;                 // the k used for comprehensiveness / sufficiency
  // Mean over the AOPC fractions that hold a token (k = ⌊f·n⌋ > 0); NaN when none does (positive_only
  // and no positive score, where ferret reports 0 and 1; or fractions all below 1/n).
  double aopc_comprehensiveness = 0, aopc_sufficiency = 0;
  // Deletion: output after removing the top ⌊f·n⌋ tokens; insertion: output with only those kept.
  std::vector<double> curve_fractions, deletion_curve, insertion_curve;
  double deletion_auc = 0, insertion_auc = 0;  // trapezoid over f ∈ [0, 1]; lower / higher is better
};

// The k removable positions with the highest scores (ties in the seeded order above), as a 0/1 mask.
std::vector<int> top_k_removable(const std::vector<double>& scores, const std::vector<bool>& removable, int64_t k,
                                 uint64_t tie_seed = 0);

// x with the positions where remove[i] != 0 masked or deleted.
TokenSequence remove_positions(const TokenSequence& x, const std::vector<int>& remove, Removal removal,
                               int64_t mask_id);

// All metrics for one example, with every perturbed input scored in one scorer call. `k` for
// comprehensiveness/sufficiency: e.g. the gold rationale length; k <= 0 means ceil(20% of n).
FaithfulnessResult evaluate_faithfulness(const SequenceScorer& scorer, const TokenSequence& x,
                                         const std::vector<double>& scores, const std::vector<bool>& removable,
                                         int64_t k, const FaithfulnessOptions& options = {});

}  // namespace salient
