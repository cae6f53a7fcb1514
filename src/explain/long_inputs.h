#pragma once
// Inputs longer than the model's positions, explained and scored whole through the windows of
// model/windows.h: a sequence's logits are the mean of its windows' logits (what `predict
// --windows` reports), and a method's token scores are its scores on each window stitched onto the
// whole input (averaged where windows overlap). The public API's LongInputs and the benchmark's
// --windows both run on these.
#include <cstdint>
#include <vector>

#include "explain/explainer.h"
#include "model/windows.h"

namespace salient {

// [CLS] + a slice of the pieces + [SEP] of each window of `whole` (one segment, untruncated), at
// the starts of window_starts().
std::vector<TokenSequence> window_sequences(const TokenSequence& whole, int64_t max_tokens, int64_t stride);

// Each sequence's logits, the mean over its windows; all windows go through the model together in
// padded batches within `limits`.
std::vector<std::vector<double>> windowed_logits(const Classifier& clf, const std::vector<TokenSequence>& seqs,
                                                 int64_t stride, const BatchLimits& limits);

// The softmax of one input's (mean) logits, in double precision.
std::vector<double> softmax_of(const std::vector<double>& logits);

// score_sequences over windows: the target class's mean logit, or its softmax probability under the
// mean logits.
std::vector<double> score_sequences_windowed(const Classifier& clf, const std::vector<TokenSequence>& seqs,
                                             const std::vector<int64_t>& targets, ModelOutput output, int64_t stride,
                                             const BatchLimits& limits);

// `explainer` on every window for the one class `target` (batch_size windows at a time), its scores
// stitched onto the whole input of `whole_length` tokens; extras.windows lists each window's start,
// token count and own extras.
Explanation explain_windows(Explainer& explainer, const Classifier& clf, const std::vector<Window>& windows,
                            size_t whole_length, int64_t target, const ExplainOptions& options, int64_t batch_size);

}  // namespace salient
