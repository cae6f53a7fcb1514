#pragma once
// Inputs longer than the model's positions, read whole: overlapping windows of the model's length
// (each [CLS] + a slice of the text's pieces + [SEP]), their logits averaged into the input's, and
// token scores stitched back onto the whole input (averaged where windows overlap). Captum, ferret
// and transformers-interpret cut such inputs (or fail on them).
#include <cstdint>
#include <vector>

#include "text/tokenizer.h"

namespace salient {

struct Window {
  Encoding encoding;   // [CLS] + pieces [start, start + n) of the whole input + [SEP]
  int64_t start = 0;   // index of the window's first piece among the input's pieces
};

// Where each window starts among `pieces` word pieces, for a model of `max_tokens` positions: 0,
// stride, 2·stride, ... and a last window ending at the last piece; {0} alone when they fit.
// stride 0: half a window; else 1 ≤ stride ≤ max_tokens - 2 (errors name `where`).
std::vector<int64_t> window_starts(int64_t pieces, int64_t max_tokens, int64_t stride, const std::string& where);

// The stride a window_starts call reads: `stride`, or half a window when 0 (unchecked).
int64_t resolved_stride(int64_t max_tokens, int64_t stride);

// The windows of `whole` (one segment, [CLS] ... [SEP], untruncated) for a model of `max_tokens`
// positions: starts 0, stride, 2·stride, ... and a last window ending at the last piece. One window,
// `whole` itself, when it fits. stride 0: half a window; else 1 ≤ stride ≤ max_tokens - 2 (errors
// name `where`).
std::vector<Window> split_windows(const Encoding& whole, int64_t max_tokens, int64_t stride, const std::string& where);

// Per-token scores of each window onto the whole input: each piece's mean over the windows that
// hold it; [CLS] and [SEP] the mean of the windows' [CLS] and [SEP].
std::vector<double> stitch_window_scores(const std::vector<Window>& windows,
                                         const std::vector<std::vector<double>>& scores, size_t whole_length);

}  // namespace salient
