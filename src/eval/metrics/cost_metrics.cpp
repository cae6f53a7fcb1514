// Cost: what the explain call took, measured by the benchmark around it (time and peak memory per
// example of its batch) and estimated before it ran (Model::memory_estimate's upper bound for the
// batch's longest input). Always written: every line says what its explanation cost.
#include "eval/metric.h"

namespace salient {

MetricFamily cost_metrics() {
  MetricFamily f;
  f.name = "cost";
  f.metrics = {
      {"time_ms", f.name, false, "wall time of the explain call per example"},
      {"peak_mem_mb", f.name, false, "memory the explain call allocated at its peak (MiB)"},
      {"estimated_mem_mb", f.name, false,
       "memory the explain call was estimated to need before it ran (MiB; Model::memory_estimate, an upper bound)"},
  };
  f.options = {"--batch-size", "--max-batch-tokens"};
  f.compute = [](const ScoredExample& x, const MetricSettings&, nlohmann::json& m) {
    m["time_ms"] = x.cost.time_ms;
    m["peak_mem_mb"] = metric_value(x.cost.peak_mem_mb);
    m["estimated_mem_mb"] = metric_value(x.cost.estimated_mem_mb);
  };
  return f;
}

}  // namespace salient
