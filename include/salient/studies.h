#pragma once
// The papers' training and evaluation runs and the explainer benchmark as one call each, the
// entry points the Python package and other programs use (the CLI's `salient benchmark`, `expnet
// train | evaluate`, `smat train | evaluate`, `sst train | evaluate`). Options go by name, the
// CLI flag's name with underscores (option_names() lists them); an unknown name or a value of the
// wrong JSON type is an OptionError naming it, a value out of range the library's one-line Error.
// Results come back as the JSON objects the CLI prints.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "salient/error.h"

namespace salient {

// An option the call does not take, or one given a value of the wrong type (Python: TypeError).
class OptionError : public Error {
 public:
  explicit OptionError(const std::string& msg) : Error(msg) {}
};

// The names a call's `options` take: "smat" (smat_train, smat_evaluate), "sst.train", "sst.evaluate",
// "expnet.train". Another command is an Error.
std::vector<std::string> option_names(const std::string& command);

// ---- The explainer benchmark (docs/explainers.md) ----
struct BenchmarkSpec {
  std::string model_dir, data_spec, data_dir, out_dir;  // data_dir "": the shared data
  std::vector<std::string> methods, metrics;
  std::map<std::string, nlohmann::json> method_params;   // per method, its parameters by name
  int64_t limit = 100, batch_size = 8, bootstrap = 1000;
  uint64_t seed = 0;                                     // bootstrap
  bool windows = false;                                  // long inputs read whole (LongInputs)
  int64_t stride = 0;
};
// Writes OUT/results.jsonl (resumable), summary.{md,csv,json} and heatmaps.html; returns the
// summary table in markdown.
std::string run_benchmark(const BenchmarkSpec& spec);

// ---- ExpNet (docs/expnet.md) ----
// One ExpNet trained on rationale tasks "NAME=MODEL_DIR[,train=SPEC,val=SPEC]" and saved to `out`;
// options "expnet.train": features, layers, scale, head_pool, hidden, activation, dropout, loss,
// alpha, gamma, filter_correct, lr, batch_size, epochs, patience, seed, max_train, data_dir.
// Returns what `salient expnet train` prints.
nlohmann::json expnet_train(const std::vector<std::string>& tasks, const std::string& out,
                            const nlohmann::json& options = nlohmann::json::object());
// A trained ExpNet's plausibility on the first `max_test` (0: all) examples with rationales of
// `data`, read with the classifier `model_dir` (`salient expnet evaluate --expnet`).
nlohmann::json expnet_evaluate(const std::string& expnet_dir, const std::string& model_dir, const std::string& data,
                               const std::string& data_dir = "", int64_t max_test = 0, double threshold = 0.5);

// ---- SMaT (docs/smat.md) ----
// Options "smat": the simulation setup (teacher, student_init, pool, sizes, ...), the student's
// training and the static explainers' settings.
// Meta-trains the teacher's explainer with `size` training texts and `seed`, saved to `out`.
nlohmann::json smat_train(const nlohmann::json& options, int64_t size, uint64_t seed, const std::string& out);
// One student run guided by `explainer` ("none", a registered method, or "smat" with `smat_file`).
nlohmann::json smat_evaluate(const nlohmann::json& options, const std::string& explainer, const std::string& smat_file,
                             int64_t size, uint64_t seed);

// ---- Sufficient Subset Training (docs/sst.md) ----
// Trains an SST model (options "sst.train") into `out`: {out, best_epoch, train_seconds, history}.
nlohmann::json sst_train(const std::string& train, const std::string& dev, const std::string& out,
                         const nlohmann::json& options = nlohmann::json::object());
// The comparison with the post-hoc searches (options "sst.evaluate"): one row per method.
nlohmann::json sst_evaluate(const std::string& data, const std::string& out,
                            const nlohmann::json& options = nlohmann::json::object());

}  // namespace salient
