// Plausibility: the explanation's token and word scores against the example's human rationale
// (ERASER; ferret's conventions with --positive-only and token_auprc_trapezoid). Every metric of the
// family is written once any is asked for: they share the gold masks and cost nothing next to the
// explanation.
#include <algorithm>
#include <cmath>

#include "eval/metric.h"
#include "eval/plausibility.h"

namespace salient {
namespace {

double nan_if_empty(const std::vector<int>& gold, double v) {
  for (int g : gold)
    if (g) return v;
  return std::nan("");
}

void compute_plausibility(const ScoredExample& x, const MetricSettings& s, nlohmann::json& m) {
  const Record& rec = x.record;
  const Encoding& enc = x.encoding;
  const std::vector<double>& scores = x.explanation.scores;
  const std::vector<int64_t> word_of = whitespace_word_ids(rec.text, enc, 0);
  std::vector<double> tok_scores;
  for (size_t t = 0; t < enc.ids.size(); ++t)
    if (word_of[t] >= 0) tok_scores.push_back(scores[t]);
  std::vector<int> gold = token_gold(rec, enc);
  std::vector<double> ws = word_scores(rec.text, enc, scores);
  std::vector<int> wgold;
  for (size_t w = 0; w < ws.size(); ++w) wgold.push_back(w < rec.rationale.size() && rec.rationale[w] >= 0.5f);
  int64_t k_tok = std::count(gold.begin(), gold.end(), 1), k_word = std::count(wgold.begin(), wgold.end(), 1);
  // --positive-only (ferret's only_pos): a top k takes positive scores only, and the
  // precision-recall curves read max(score, 0).
  const bool positive_only = s.faithfulness.positive_only;
  auto top = [&](const std::vector<double>& v, int64_t kk) {
    return positive_only ? std::min<int64_t>(kk, std::count_if(v.begin(), v.end(), [](double y) { return y > 0; }))
                         : kk;
  };
  auto ranked = [&](std::vector<double> v) {
    if (positive_only)
      for (double& y : v) y = std::max(y, 0.0);
    return v;
  };
  if (!tok_scores.empty()) {
    m["token_f1"] = metric_value(nan_if_empty(gold, token_prf_top_k(tok_scores, gold, top(tok_scores, k_tok)).f1));
    m["token_f1_top5"] = metric_value(nan_if_empty(gold, token_prf_top_k(tok_scores, gold, top(tok_scores, 5)).f1));
    m["token_iou"] = metric_value(nan_if_empty(gold, token_iou_top_k(tok_scores, gold, top(tok_scores, k_tok))));
    m["token_auroc"] = metric_value(auroc(tok_scores, gold));
    m["token_auprc"] = metric_value(auprc(ranked(tok_scores), gold));
    m["token_auprc_trapezoid"] = metric_value(auprc_trapezoid(ranked(tok_scores), gold));
  }
  if (!ws.empty()) {
    m["word_f1"] = metric_value(nan_if_empty(wgold, token_prf_top_k(ws, wgold, top(ws, k_word)).f1));
    m["word_auroc"] = metric_value(auroc(ws, wgold));
    m["word_auprc"] = metric_value(auprc(ranked(ws), wgold));
  }
}

}  // namespace

MetricFamily plausibility_metrics() {
  MetricFamily f;
  f.name = "plausibility";
  f.metrics = {
      {"token_f1", f.name, true, "token F1 of the top-k tokens, k = the rationale's token count"},
      {"token_f1_top5", f.name, true, "token F1 of the top 5 tokens (ERASER, ferret)"},
      {"token_iou", f.name, true, "IoU of the top-k tokens with the rationale"},
      {"token_auroc", f.name, true, "AUROC of the token scores against the rationale"},
      {"token_auprc", f.name, true, "average precision of the token scores against the rationale"},
      {"token_auprc_trapezoid", f.name, true,
       "trapezoid area under the token scores' precision-recall curve (ferret's AUPRC)"},
      {"word_f1", f.name, true, "word F1 of the top-k words (word scores: sum over pieces)"},
      {"word_auroc", f.name, true, "AUROC of the word scores"},
      {"word_auprc", f.name, true, "average precision of the word scores"},
  };
  f.options = {"--positive-only"};
  f.needs_rationales = true;
  f.required_on_resume = true;
  f.compute = compute_plausibility;
  return f;
}

}  // namespace salient
