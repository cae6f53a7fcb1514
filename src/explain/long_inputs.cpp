// Windows of long inputs for explainers and scorers. See src/explain/long_inputs.h.
#include "explain/long_inputs.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"

namespace salient {

std::vector<TokenSequence> window_sequences(const TokenSequence& whole, int64_t max_tokens, int64_t stride) {
  const int64_t pieces = static_cast<int64_t>(whole.ids.size()) - 2;
  if (pieces < 0) fail("windows: a sequence without [CLS] and [SEP]");
  const int64_t capacity = max_tokens - 2;
  std::vector<TokenSequence> out;
  for (int64_t s : window_starts(pieces, max_tokens, stride, "stride")) {
    TokenSequence w;
    w.ids.push_back(whole.ids.front());
    const int64_t n = std::min(capacity, pieces);
    w.ids.insert(w.ids.end(), whole.ids.begin() + 1 + s, whole.ids.begin() + 1 + s + n);
    w.ids.push_back(whole.ids.back());
    w.type_ids.assign(w.ids.size(), 0);
    out.push_back(std::move(w));
  }
  return out;
}

std::vector<std::vector<double>> windowed_logits(const Classifier& clf, const std::vector<TokenSequence>& seqs,
                                                 int64_t stride, const BatchLimits& limits) {
  const int64_t max_tokens = clf.model.config().max_tokens();
  std::vector<TokenSequence> windows;
  std::vector<size_t> first(1, 0);
  for (const TokenSequence& q : seqs) {
    for (TokenSequence& w : window_sequences(q, max_tokens, stride)) windows.push_back(std::move(w));
    first.push_back(windows.size());
  }
  const std::vector<std::vector<double>> per_window = sequence_logits(clf, windows, limits);
  std::vector<std::vector<double>> out;
  for (size_t i = 0; i < seqs.size(); ++i) {
    const double n = static_cast<double>(first[i + 1] - first[i]);
    std::vector<double> mean(per_window[first[i]].size(), 0.0);
    for (size_t k = first[i]; k < first[i + 1]; ++k)
      for (size_t c = 0; c < mean.size(); ++c) mean[c] += per_window[k][c] / n;
    out.push_back(std::move(mean));
  }
  return out;
}

std::vector<double> softmax_of(const std::vector<double>& logits) {
  const double top = *std::max_element(logits.begin(), logits.end());
  double z = 0;
  for (double v : logits) z += std::exp(v - top);
  std::vector<double> p;
  for (double v : logits) p.push_back(std::exp(v - top) / z);
  return p;
}

std::vector<double> score_sequences_windowed(const Classifier& clf, const std::vector<TokenSequence>& seqs,
                                             const std::vector<int64_t>& targets, ModelOutput output, int64_t stride,
                                             const BatchLimits& limits) {
  if (seqs.size() != targets.size()) fail("score_sequences: {} sequences but {} targets", seqs.size(), targets.size());
  const std::vector<std::vector<double>> logits = windowed_logits(clf, seqs, stride, limits);
  std::vector<double> out;
  for (size_t i = 0; i < seqs.size(); ++i) {
    const std::vector<double>& l = logits[i];
    const auto t = static_cast<size_t>(targets[i]);
    if (t >= l.size()) fail("score_sequences: class {} out of range (the model has {})", targets[i], l.size());
    out.push_back(output == ModelOutput::Logit ? l[t] : softmax_of(l)[t]);
  }
  return out;
}

Explanation explain_windows(Explainer& explainer, const Classifier& clf, const std::vector<Window>& windows,
                            size_t whole_length, int64_t target, const ExplainOptions& options, int64_t batch_size) {
  if (batch_size <= 0) fail("batch_size: must be positive (got {})", batch_size);
  std::vector<std::vector<double>> scores;
  nlohmann::json per_window = nlohmann::json::array();
  Explanation stitched;
  for (size_t s = 0; s < windows.size(); s += static_cast<size_t>(batch_size)) {
    std::vector<const Encoding*> chunk;
    for (size_t k = s; k < std::min(windows.size(), s + static_cast<size_t>(batch_size)); ++k)
      chunk.push_back(&windows[k].encoding);
    std::vector<Explanation> ex = explainer.explain(clf, chunk, std::vector<int64_t>(chunk.size(), target), options);
    for (size_t k = 0; k < ex.size(); ++k) {
      if (s + k == 0) stitched = ex[k];
      per_window.push_back({{"start", windows[s + k].start}, {"tokens", chunk[k]->ids.size()}, {"extras", ex[k].extras}});
      scores.push_back(std::move(ex[k].scores));
    }
  }
  stitched.scores = stitch_window_scores(windows, scores, whole_length);
  stitched.extras = {{"windows", per_window}};
  return stitched;
}

}  // namespace salient
