#pragma once
// The SST comparison table (Bassan et al.'s Table 1 layout): per explanation method, the accuracy
// of the model it explains, the mean subset size (% of the features), the mean time per
// explanation, the share of time-outs, and the subset's faithfulness under each masking kind
// (baseline, probabilistic, robust; subset_faithfulness). "sst" reads the SST model's own subset
// (one forward pass); "sst_shuffled", the control, keeps as many features as that subset, drawn at
// random (seeded per example) and checked on the same SST model; sis, anchors and gradient search
// the standard model. Per-example results
// are appended to OUT/examples-<method>.jsonl as they finish, so an interrupted run resumes; the
// table goes to OUT/table.{md,csv,json} and the views to OUT/report.html (+ OUT/views/*.png).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sst/masking.h"
#include "sst/search.h"

namespace salient::sst {

struct SstEvalOptions {
  std::string sst_model, standard_model;  // directories (either may be empty when no method needs it)
  std::string data, data_dir, out_dir;
  std::vector<std::string> methods = {"sst", "sis", "anchors", "gradient"};
  int64_t limit = 100;           // examples explained (the first of the split)
  bool limit_random = false;     // the explained examples drawn at random with `seed` (in the split's order)
  int64_t accuracy_limit = 0;    // examples for accuracy (0 = the whole split)
  int64_t max_length = 0;        // text: tokens (0 = the model's)
  bool windows = false;          // text: every text read whole, as windows of the encoder's positions
  SearchOptions search;
  FillOptions fill;            // the robust and probabilistic checks (and Anchors' precision)
  int samples = 20;              // random fills of the probabilistic check
  uint64_t seed = 0;
  int64_t views = 12;            // examples drawn in report.html
  void validate() const;
};

struct SstEvalRow {
  std::string method, model;
  double accuracy = 0;
  int64_t explained = 0, timed_out = 0;
  double size = 0, size_std = 0;  // % of features, over the examples that finished
  double seconds = 0;             // mean per explanation (finished ones)
  double baseline = 0, probabilistic = 0, robust = 0;  // % faithful
  int64_t no_subset = 0;  // sis with the threshold criterion: inputs below it (no SIS), not in the means
  nlohmann::json to_json() const;
};

std::vector<SstEvalRow> evaluate_sst(const SstEvalOptions& options);
std::string sst_table_markdown(const std::vector<SstEvalRow>& rows);

}  // namespace salient::sst
