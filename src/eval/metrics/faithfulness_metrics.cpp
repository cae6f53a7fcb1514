// Faithfulness: the model's measured output of the explained class when the top-scored tokens are
// removed or kept alone (ERASER's comprehensiveness and sufficiency at k = the rationale's size, or
// 20% without rationales; their AOPC over 10%…100%; deletion / insertion curves), every perturbed
// input of an example scored in one call (eval/faithfulness.h). Only the perturbed inputs the asked
// metrics need are scored: on long inputs read as windows the curves' 20 points dominate the cost.
#include <algorithm>

#include "eval/metric.h"

namespace salient {
namespace {

bool wants_aopc(const MetricSettings& s) {
  return std::any_of(s.metrics.begin(), s.metrics.end(), [](const std::string& m) { return m.rfind("aopc_", 0) == 0; });
}

bool wants_curves(const MetricSettings& s) { return s.wants("deletion_auc") || s.wants("insertion_auc"); }

void compute_faithfulness(const ScoredExample& x, const MetricSettings& s, nlohmann::json& m) {
  const bool aopc = wants_aopc(s), curves = wants_curves(s);
  FaithfulnessOptions options = s.faithfulness;
  if (!aopc) options.aopc_fractions.clear();
  if (!curves) options.curve_steps = 0;
  int64_t k = 0;  // ERASER's k: the gold rationale's token count when the data has rationales
  if (x.data_has_rationales) {
    const std::vector<int> gold = token_gold(x.record, x.encoding);
    k = std::count(gold.begin(), gold.end(), 1);
  }
  const std::vector<bool> removable = removable_positions(x.clf, x.encoding);
  if (std::count(removable.begin(), removable.end(), true) == 0) return;  // nothing to remove: no faithfulness
  const FaithfulnessResult r =
      evaluate_faithfulness(x.scorer, to_sequence(x.encoding), x.explanation.scores, removable, k, options);
  m["comprehensiveness"] = metric_value(r.comprehensiveness);
  m["sufficiency"] = metric_value(r.sufficiency);
  if (aopc) {
    m["aopc_comprehensiveness"] = metric_value(r.aopc_comprehensiveness);
    m["aopc_sufficiency"] = metric_value(r.aopc_sufficiency);
  }
  if (curves) {
    m["deletion_auc"] = r.deletion_auc;
    m["insertion_auc"] = r.insertion_auc;
  }
}

}  // namespace

MetricFamily faithfulness_metrics() {
  MetricFamily f;
  f.name = "faithfulness";
  f.metrics = {
      {"comprehensiveness", f.name, true, "F(x) − F(x without the top k) (ERASER)"},
      {"sufficiency", f.name, false, "F(x) − F(only the top k) (ERASER)"},
      {"aopc_comprehensiveness", f.name, true, "comprehensiveness averaged over 10%…100% of the tokens"},
      {"aopc_sufficiency", f.name, false, "sufficiency averaged over 10%…100% of the tokens"},
      {"deletion_auc", f.name, false, "area under F while removing the top tokens"},
      {"insertion_auc", f.name, true, "area under F while keeping only the top tokens"},
  };
  f.options = {"--metric-removal", "--score", "--positive-only", "--aopc-distinct", "--seed (tie order)",
               "--internal-batch", "--max-batch-tokens", "--windows", "--stride"};
  f.required_on_resume = true;
  f.compute = compute_faithfulness;
  return f;
}

}  // namespace salient
