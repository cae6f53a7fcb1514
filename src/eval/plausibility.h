#pragma once
// Plausibility of token/word importance scores against binary human rationales (ERASER, ferret
// conventions): the per-example scores are public (salient/metrics.h); here, projecting rationales
// onto tokens and summarising over a dataset.
#include <cstdint>
#include <string>
#include <vector>

#include "salient/metrics.h"
#include "text/tokenizer.h"

namespace salient {

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
