#pragma once
// Leave-one-task-out evaluation of ExpNet against the post-hoc explainers, its ablation and its
// cost, written as markdown, CSV and JSON (docs/expnet.md explains the protocol).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "expnet/expnet.h"

namespace salient {

struct CrossTaskOptions {
  std::vector<TaskSpec> tasks;  // at least two
  std::string data_dir;
  std::vector<uint64_t> seeds = {0, 1, 2};
  ExpNetTrainOptions train;  // the main configuration; ablation variants change one thing each
  // Post-hoc baselines from the explainer registry ("all" = every registered one).
  std::vector<std::string> baselines;
  int64_t max_train = 0;        // per source task (0 = all)
  int64_t max_test = 0;         // held-out examples, the same for every method (0 = all)
  int64_t tune_examples = 100;  // per source task, for the baselines' threshold
  double baseline_budget_s = 300;  // per baseline and held-out task; slower ones are dropped and reported
  bool ablation = false;
  std::string out_dir;  // report.md, report.csv, report.json (+ the main ExpNet of each fold)
};

// Runs everything and writes the reports; returns the JSON report.
nlohmann::json run_cross_task(const CrossTaskOptions& options);

}  // namespace salient
