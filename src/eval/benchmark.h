#pragma once
// Explainer benchmark (ferret-style): every method × every metric over a dataset. Per example the
// explanation and its metrics go to OUT/results.jsonl as they are computed (a rerun skips the
// (example, method) pairs already there, so an interrupted run resumes); then the means, standard
// deviations and seeded bootstrap 95% CIs go to OUT/summary.{md,csv,json}, and the first examples'
// scores to OUT/heatmaps.html. The CLI (`salient benchmark`), the bindings and the viewer call this.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "eval/faithfulness.h"
#include "salient/metrics.h"
#include "explain/explainer.h"
#include "smat/simulation.h"

namespace salient {

// The metrics (MetricInfo, metric_registry): the public salient/metrics.h.

// The `simulability` metric (SMaT, Fernandes et al. 2022): per method, students of the model's
// architecture learn the model's labels on `sizes` texts of the data guided by the method's
// explanations, against students without; the data is split into test / valid / train pools
// (smat/study.h). Results: OUT/simulability/ (a resumable study) and its report.
struct SimulabilityOptions {
  std::vector<int64_t> sizes = {500};
  std::vector<uint64_t> seeds = {0, 9, 11, 30, 69};
  int64_t test_size = 2000, valid_size = 500, max_length = 64;
  std::string student_init;         // encoder the students start from; empty: from scratch
  smat::StudentOptions student;     // optimiser, β (default per family), early stopping
  double temperature = 0.1;         // softmax over score / max|score| (smat::StaticExplainerOptions)
};

struct BenchmarkOptions {
  std::string model_dir, data_spec, data_dir, out_dir;  // data_dir "": shared_data_dir()
  std::vector<std::string> methods, metrics;
  std::map<std::string, ExplainOptions> method_options;  // per method; absent = the method's defaults
  FaithfulnessOptions faithfulness;                      // removal and tie order (mask_id from the model)
  ModelOutput metric_output = ModelOutput::Probability;  // what faithfulness measures
  int64_t internal_batch = 64;                           // rows per forward pass of the metrics
  int64_t max_batch_tokens = BatchLimits().tokens;       // and token positions (rows × padded length)
  BatchLimits limits() const { return {internal_batch, max_batch_tokens}; }
  uint64_t seed = 0;                                     // bootstrap
  int64_t limit = 100, batch_size = 8, bootstrap = 1000, heatmaps = 10;  // per-example metrics only
  // Inputs longer than the model's positions read whole (explain/long_inputs.h): explained window
  // by window (batch_size windows at a time) and stitched, the explained class and every
  // faithfulness score taken from the windows' mean logits; plausibility over the whole input.
  // stride 0: half a window. Off: inputs are cut at the model's positions.
  bool windows = false;
  int64_t stride = 0;
  SimulabilityOptions simulability;
};

// Runs (or resumes) the benchmark and writes its files; returns the markdown summary table.
std::string run_benchmark(const BenchmarkOptions& options);

}  // namespace salient
