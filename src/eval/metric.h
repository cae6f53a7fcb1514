#pragma once
// The benchmark's metrics as code (issue #87): one family per file under src/eval/metrics/, each a
// MetricFamily that declares its metrics (name, direction, summary: the public MetricInfo), the
// benchmark options that change their values, and the function that computes them for one explained
// example. run_benchmark (eval/benchmark.cpp) composes the families the asked metrics belong to; a
// dataset-level family (simulability, which trains students) runs as a study of its own instead.
// Adding a metric: docs/adding-a-method.md, "A metric".
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/dataset.h"
#include "eval/faithfulness.h"
#include "explain/explainer.h"
#include "salient/metrics.h"

namespace salient {

struct BenchmarkOptions;  // eval/benchmark.h

// What one explanation cost (measured around the explain call, per example of its batch).
struct ExplainCost {
  double time_ms = 0, peak_mem_mb = 0, estimated_mem_mb = 0;
};

// One explained example as the metrics read it.
struct ScoredExample {
  const Classifier& clf;
  const Record& record;
  const Encoding& encoding;
  const Explanation& explanation;
  bool data_has_rationales;  // the dataset's: ERASER's k is the rationale's size where there is one
  ExplainCost cost;
  // The model's measured output of the explained class on perturbed inputs (faithfulness).
  const SequenceScorer& scorer;
};

// The run's settings every family reads (validated before any example is scored).
struct MetricSettings {
  FaithfulnessOptions faithfulness;     // removal, positive_only, aopc_distinct, mask id, tie order
  std::vector<std::string> metrics;     // every metric asked for, all families
  bool wants(const std::string& metric) const;
};

struct MetricFamily {
  std::string name;                 // MetricInfo::family of its metrics
  std::vector<MetricInfo> metrics;  // in the order salient.metrics() lists them
  // The benchmark options (CLI flags) that change these metrics' values.
  std::vector<std::string> options;
  bool needs_rationales = false;  // asking for one on data without human rationales is an error
  // A results.jsonl line lacking one of this family's asked metrics is recomputed on resume.
  bool required_on_resume = false;
  // Per example: adds this family's values to `out` (a results.jsonl line's "metrics").
  std::function<void(const ScoredExample&, const MetricSettings&, nlohmann::json& out)> compute;
  // Dataset-level instead (no `compute`): runs after the per-example families over the same
  // methods and returns a markdown section of the summary ("" on MPI ranks other than 0).
  std::function<std::string(const BenchmarkOptions&)> run_study;
};

// The registered families, in registry order (src/eval/metrics/registry.inc).
const std::vector<MetricFamily>& metric_families();
const MetricFamily& metric_family_of(const std::string& metric);  // one-line error listing the metrics

// The families, one function each (src/eval/metrics/*.cpp).
MetricFamily plausibility_metrics();
MetricFamily faithfulness_metrics();
MetricFamily cost_metrics();
MetricFamily simulability_metric();

// Shared by the families: a value for results.jsonl (NaN → null), and the gold mask over the tokens
// of segment 0 that belong to a word (the word rationale projected to every piece; all 0 for a
// record without a rationale).
nlohmann::json metric_value(double v);
std::vector<int> token_gold(const Record& r, const Encoding& enc);

}  // namespace salient
