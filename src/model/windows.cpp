#include "model/windows.h"

#include <algorithm>

#include "util/error.h"

namespace salient {

int64_t resolved_stride(int64_t max_tokens, int64_t stride) {
  return stride != 0 ? stride : std::max<int64_t>(1, (max_tokens - 2) / 2);
}

std::vector<int64_t> window_starts(int64_t pieces, int64_t max_tokens, int64_t stride, const std::string& where) {
  const int64_t capacity = max_tokens - 2;
  if (capacity < 1) fail("{}: the model's {} positions leave no room for a window", where, max_tokens);
  stride = resolved_stride(max_tokens, stride);
  if (stride < 1 || stride > capacity)
    fail("{}: must be in [1, {}] (a window of this model holds {} word pieces), got {}", where, capacity, capacity, stride);
  if (pieces <= capacity) return {0};
  std::vector<int64_t> starts;
  for (int64_t s = 0; s + capacity < pieces; s += stride) starts.push_back(s);
  starts.push_back(pieces - capacity);  // the last window ends at the last piece
  return starts;
}

std::vector<Window> split_windows(const Encoding& whole, int64_t max_tokens, int64_t stride, const std::string& where) {
  const int64_t pieces = static_cast<int64_t>(whole.ids.size()) - 2;
  if (pieces < 0) fail("{}: an encoding without [CLS] and [SEP]", where);
  for (int64_t t : whole.type_ids)
    if (t != 0) fail("{}: windows read one text, not a sentence pair", where);
  const std::vector<int64_t> starts = window_starts(pieces, max_tokens, stride, where);
  if (starts.size() == 1) return {{whole, 0}};
  const int64_t capacity = max_tokens - 2;
  std::vector<Window> out;
  for (int64_t s : starts) {
    Window w;
    w.start = s;
    Encoding& e = w.encoding;
    auto take = [&](size_t i) {  // index into whole
      e.ids.push_back(whole.ids[i]);
      e.tokens.push_back(whole.tokens[i]);
      e.type_ids.push_back(0);
      e.offsets.push_back(whole.offsets[i]);
      e.word_ids.push_back(whole.word_ids[i]);
    };
    take(0);
    for (int64_t i = 1 + s; i < 1 + s + capacity; ++i) take(static_cast<size_t>(i));
    take(whole.ids.size() - 1);
    out.push_back(std::move(w));
  }
  return out;
}

std::vector<double> stitch_window_scores(const std::vector<Window>& windows,
                                         const std::vector<std::vector<double>>& scores, size_t whole_length) {
  std::vector<double> sum(whole_length, 0.0), count(whole_length, 0.0);
  for (size_t k = 0; k < windows.size(); ++k) {
    const size_t n = windows[k].encoding.ids.size();
    if (scores[k].size() != n) fail("window {}: {} scores for {} tokens", k, scores[k].size(), n);
    for (size_t j = 0; j < n; ++j) {
      // [CLS] → 0, pieces → start + j, [SEP] → the whole input's last position.
      const size_t at = j == 0 ? 0 : j + 1 == n ? whole_length - 1 : static_cast<size_t>(windows[k].start) + j;
      sum[at] += scores[k][j];
      count[at] += 1;
    }
  }
  for (size_t i = 0; i < whole_length; ++i) sum[i] = count[i] > 0 ? sum[i] / count[i] : 0.0;
  return sum;
}

}  // namespace salient
