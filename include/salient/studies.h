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

// The names a call's `options` take: "smat" (smat_train, smat_evaluate), "smat.study",
// "smat.plausibility", "smat.split", "sst.train", "sst.evaluate", "expnet.train", "expnet.evaluate".
// Another command is an Error. A list option takes a JSON array or a string of comma-separated items.
std::vector<std::string> option_names(const std::string& command);

// ---- The explainer benchmark (docs/explainers.md) ----
struct BenchmarkSpec {
  std::string model_dir, data_spec, data_dir, out_dir;  // data_dir "": the shared data
  std::vector<std::string> methods, metrics;             // metrics empty: the defaults for the data
  std::map<std::string, nlohmann::json> method_params;   // per method, its parameters by name
  // Parameters by name as text for every method that declares them (the CLI's `--steps 50`),
  // typed by each method's declaration; one that no method takes is an error. method_params wins.
  std::map<std::string, std::string> shared_params;
  // How the faithfulness metrics remove tokens: mask ([MASK] substitution, ERASER's) or delete.
  // Its own setting: an explainer's `removal` parameter (occlusion, LIME, KernelSHAP) is the
  // explainer's perturbation, not the metric's.
  std::string metric_removal = "mask";
  // ferret's conventions, where they differ from ERASER's reading (docs/explainers.md, "ferret"):
  // every top k from positive scores only and AUPRC over max(score, 0) (only_pos), and AOPC over
  // each distinct top-k set once.
  bool positive_only = false, aopc_distinct = false;
  // The explained output (prob | logit | "": each method's own); faithfulness measures it too
  // (the probability, ERASER's, when "").
  std::string score;
  int64_t limit = 100, batch_size = 8, bootstrap = 1000, heatmaps = 10;
  int64_t internal_batch = 64;                           // rows per internal forward pass
  int64_t max_batch_tokens = 4096;                       // token positions per pass (rows × padded length)
  uint64_t seed = 0;                                     // bootstrap, sampling methods, tie order
  bool windows = false;                                  // long inputs read whole (LongInputs)
  int64_t stride = 0;
  // Metric `simulability`'s settings by name, only with that metric: sizes, seeds (lists),
  // test_size, valid_size, max_length, student_init, optimizer (sgd | adamw), lr, max_epochs,
  // patience, early_stopping (accuracy | loss), temperature, beta (default: the family's).
  nlohmann::json simulability = nlohmann::json::object();
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
// Leave-one-task-out over `tasks` ("NAME=MODEL_DIR[,train=..,val=..,test=..]", at least two)
// against the registered baselines, reports in `out` (options "expnet.evaluate": those of
// expnet.train but seed, and seeds, baselines ("all", "none" or names), max_test, tune_examples,
// baseline_budget (seconds), ablation). Under mpirun every rank calls it. Returns the JSON report.
nlohmann::json expnet_cross_task(const std::vector<std::string>& tasks, const std::string& out,
                                 const nlohmann::json& options = nlohmann::json::object());
// The ExpNet explanation of each input of `input` (a file of text or JSON lines, "-" for stdin) in
// the explanation schema, word scores the max over a word's pieces; `html`: also a heatmap page.
std::vector<nlohmann::json> expnet_explain(const std::string& model_dir, const std::string& expnet_dir,
                                           const std::string& input, int64_t batch_size = 32,
                                           std::string* html = nullptr);

// ---- SMaT (docs/smat.md) ----
// Options "smat": the simulation setup (teacher, student_init, pool, sizes, ...), the student's
// training and the static explainers' settings.
// Meta-trains the teacher's explainer with `size` training texts and `seed`, saved to `out`.
nlohmann::json smat_train(const nlohmann::json& options, int64_t size, uint64_t seed, const std::string& out);
// One student run guided by `explainer` ("none", a registered method, or "smat" with `smat_file`).
nlohmann::json smat_evaluate(const nlohmann::json& options, const std::string& explainer, const std::string& smat_file,
                             int64_t size, uint64_t seed);
// The study (options "smat.study": those of "smat" and sizes, seeds, explainers): every (explainer,
// size, seed) run not yet in `out`, then the report; returns report.md (on rank 0; the other ranks
// of an mpirun, which share the runs, get ""). Resumable.
std::string smat_study(const std::string& out, const nlohmann::json& options);
// Rewrites a study's report from its run files (no training); returns report.md.
std::string smat_report(const std::string& study_dir);
// AUROC/AUPRC of each teacher explainer against the human rationales of `data`, with the oracle
// rows (options "smat.plausibility": smat (learned explainers), limit, max_length, unit, the static
// explainers' settings); writes OUT/plausibility.{md,csv,json} and returns the markdown.
std::string smat_plausibility(const std::string& teacher, const std::string& data, const std::string& out,
                              const nlohmann::json& options = nlohmann::json::object());
// The teacher's texts and a disjoint student pool (options "smat.split": data, pool_size, min_words,
// seed, data_dir) into OUT/teacher.jsonl, pool.jsonl, split.json; returns the split's report.
nlohmann::json smat_split(const std::string& out, const nlohmann::json& options = nlohmann::json::object());

// ---- Sufficient Subset Training (docs/sst.md) ----
// Trains an SST model (options "sst.train") into `out`: {out, best_epoch, train_seconds, history}.
nlohmann::json sst_train(const std::string& train, const std::string& dev, const std::string& out,
                         const nlohmann::json& options = nlohmann::json::object());
// The comparison with the post-hoc searches (options "sst.evaluate"): one row per method.
// `markdown`: also the table as `salient sst evaluate` prints it.
nlohmann::json sst_evaluate(const std::string& data, const std::string& out,
                            const nlohmann::json& options = nlohmann::json::object(), std::string* markdown = nullptr);

struct SstExplainOptions {
  std::string input = "-";       // text models: text or JSON lines ("-": stdin)
  std::string data, data_dir;    // image models: a split, e.g. mnist:test (data_dir "": the shared data)
  std::string png_dir;           // image models: an overlay PNG per image there, named in its "png"
  std::string scores = "subset";  // subset (0/1 per feature) | selection (the head's s)
  int64_t limit = 10;            // image models: the first N images
  int max_length = 0;            // text: truncate inputs to N tokens (0: the model's)
};
// The subset an SST model outputs with each prediction: for text models the explanation schema
// per input, for image models one object per image (pixel_scores, extras: tau, selection,
// subset_size). SST runs on the CPU.
std::vector<nlohmann::json> sst_explain(const std::string& model_dir, const SstExplainOptions& options = {});

}  // namespace salient
