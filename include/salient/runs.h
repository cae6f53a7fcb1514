#pragma once
// The CLI's model commands as calls (`salient tokenize | predict | train | info | explain`): each
// reads its inputs (a file of text or JSON lines, "-" for stdin) and writes its output ("-" or "":
// stdout) as the command does, so a program runs them in process. salient::Model
// (salient/salient.h) is the call for inputs in memory; run_benchmark (salient/studies.h) is
// `salient benchmark`.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "salient/salient.h"

namespace salient {

// Word pieces, ids, type ids, offsets and word ids of each input, by the tokenizer of `model` or
// the one at `tokenizer` (exactly one of them).
struct TokenizeRun {
  std::string model, tokenizer, input = "-", output = "-";
  std::string truncation = "longest_first";  // longest_first | only_first | only_second
  int max_length = 0;                        // 0: no limit
};
void run_tokenize(const TokenizeRun& run);

// Label, label_id, logits and probabilities of each input, as JSON lines or (`text`) one readable
// line per input.
struct PredictRun {
  std::string model, input = "-", output = "-";
  bool text = false;
  int64_t batch_size = 32;
  int max_length = 0;      // 0: the model's limit
  LongInputs long_inputs;  // inputs read whole as windows
};
void run_predict(const PredictRun& run);

// Accuracy, macro-F1 and MCC (regression: Pearson and MSE) of `model` on a labelled dataset, e.g. a
// held-out test split, with model and data named: `salient evaluate`'s JSON.
struct EvaluateRun {
  std::string model, data, data_dir;  // data_dir "": the shared data
  int64_t batch_size = 64, max_length = 0;
  LongInputs long_inputs;
};
nlohmann::json evaluate(const EvaluateRun& run);

// Training a classifier from scratch or fine-tuning a checkpoint (docs/training.md).
struct TrainRun {
  std::string train_data, dev_data;  // dataset specs (see load_dataset) or file paths
  std::string data_dir;              // "": the shared data
  std::string output_dir;
  std::string init_model;            // fine-tune this model dir; empty = from scratch
  bool extend_positions = false;     // with init_model: grow its position table to max_length
  std::string vocab;                 // from scratch: a vocab.txt, tokenizer.json or tokenizer dir
  // Architecture when training from scratch.
  std::string model_type = "bert";
  int64_t hidden_size = 128, num_layers = 2, num_heads = 4, intermediate_size = 512;
  std::string activation = "gelu";
  // What the head reads (ModelConfig::pooling): first_token, scalar_mix or scalar_mix_cls; empty:
  // the --init model's own, first_token from scratch.
  std::string pooling;
  // From scratch: unset means 0.1. With init_model: unset keeps the checkpoint's config, a value
  // replaces it (as HF from_pretrained(..., hidden_dropout_prob=...)), e.g. 0.1 for fine-tuning an
  // encoder pre-trained without dropout.
  std::optional<double> dropout, attention_dropout;
  int64_t max_length = 128;  // tokens per example incl. specials (also the position table size)
  // Optimisation.
  int epochs = 3;
  int64_t batch_size = 32;
  double lr = 1e-3, weight_decay = 0.01, warmup_ratio = 0.06, clip_norm = 1.0;
  double max_minutes = 0;  // stop after this much training time (0 = no limit)
  int64_t max_train_examples = 0;  // use only the first N (after a seeded shuffle); 0 = all
  // Names for the integer labels of a data file that has ids only (e.g. {"negative", "positive"});
  // empty: the data's own names.
  std::vector<std::string> label_names;
  // accuracy | macro_f1 | mcc; regression: pearson | neg_mse. Empty: accuracy, or pearson for regression.
  std::string select_metric;
  // Regression on the data's `target` numbers: one output, MSE, dev Pearson and MSE.
  bool regression = false;
  uint64_t seed = 13;
  bool resume = false;
  int stop_after_epoch = 0;  // end this invocation after that epoch (a later --resume continues)
};
// Trains (every rank of an mpirun calls it: the batches are shared out) and returns {best_epoch,
// train_seconds, model, accuracy, macro_f1, mcc} (regression: pearson, mse) of the best epoch.
nlohmann::json train(const TrainRun& run);

// The runtime (LibTorch, threads, device, BLAS, MPI) and, given a model directory, its
// architecture, parameters and labels (a base encoder too), as `salient info --json` prints it;
// with a task head also the memory one explain request needs per method (Model::memory_estimate)
// on an input of `tokens` word pieces (0: the model's longest) under `max_batch_tokens`.
nlohmann::json runtime_info(const std::string& model_dir = "", int64_t tokens = 0, int64_t max_batch_tokens = 4096);

// What the explain and benchmark commands take for their methods beside each method's own
// defaults: parameters by name as text (`--steps 50`), typed by the declaration of each method that
// takes them (one that no chosen method takes is an error), the explained output, the seed and the
// rows and token positions (rows × padded length) per internal forward pass.
struct MethodSettings {
  std::map<std::string, std::string> params;
  std::string score;  // prob | logit | "" (the method's own)
  int64_t internal_batch = 64;
  int64_t max_batch_tokens = 4096;
  uint64_t seed = 0;  // the sampling methods and the order of tied scores
};

// One explanation per input in the explanation schema (docs/explanation.schema.json), or (`text`)
// a readable line per input with the tokens coloured (`color`: for a 256-colour terminal) or
// bracketed by score. Under mpirun the inputs are shared out (a file in, a file out).
struct ExplainRun {
  std::string model, method, input = "-", out = "-";
  std::string target = "pred";  // pred | gold (the input's "label") | a class index or a label name
  std::string word_agg = "sum";  // word scores: sum or max over the word's pieces
  bool text = false, color = false;
  int64_t batch_size = 16;
  int max_length = 0;      // 0: the model's limit
  LongInputs long_inputs;  // inputs read whole as windows, scores averaged where they overlap
  MethodSettings settings;
};
void run_explain(const ExplainRun& run);
// Every registered method with its family, summary, default output and parameters
// (`salient explain --list`).
std::string method_list();

}  // namespace salient
