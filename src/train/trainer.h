#pragma once
// Fine-tuning or from-scratch training of a sequence classifier: AdamW, linear warmup + decay,
// gradient clipping, length-bucketed batches, evaluation each epoch, best checkpoint in Hugging
// Face format, resumable at epoch boundaries.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "eval/classification.h"
#include "model/classifier.h"

namespace salient {

// What training minimises on one batch (mean over its examples), given the model, the padded batch
// and the gold labels. The default is the cross-entropy of the labels on the classifier's logits;
// a task with another head or loss (a regression head, SST's dual objective) supplies its own.
using TrainingObjective =
    std::function<torch::Tensor(const Classifier& clf, const Batch& batch, const torch::Tensor& labels)>;
TrainingObjective cross_entropy_objective();
// Regression (a one-output model, HF's problem_type "regression"): mean squared error of the output
// against the float targets.
TrainingObjective mean_squared_error_objective();

struct TrainOptions {
  std::string train_data, dev_data;  // dataset specs (see load_dataset) or file paths
  std::string data_dir;              // shared/data
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
  TrainingObjective objective;  // empty: cross_entropy_objective()
};

struct EpochRecord {
  int epoch = 0;
  double train_loss = 0, seconds = 0;
  ClassificationMetrics dev;
  RegressionMetrics dev_regression;  // regression training
};

struct TrainResult {
  std::vector<EpochRecord> history;
  int best_epoch = 0;
  ClassificationMetrics best;
  RegressionMetrics best_regression;
  double train_seconds = 0;
};

TrainResult train_classifier(const TrainOptions& options);

// The model training starts from: options.init_model with a fresh head for `label_names` (and its
// position table grown when extend_positions asks), or a new model of options' architecture over
// options.vocab.
Classifier initial_classifier(const TrainOptions& options, const std::vector<std::string>& label_names);

// ---- shared by every trainer (classifier, pre-training) ----
// AdamW over named tensors, BERT's grouping: no weight decay on biases and LayerNorm parameters.
std::unique_ptr<torch::optim::AdamW> make_adamw(const std::vector<std::pair<std::string, torch::Tensor>>& named,
                                                double lr, double weight_decay);
// Linear warmup over `warmup` steps to 1, then linear decay to 0 at `total` (HF's schedule).
double warmup_linear_decay(int64_t step, int64_t total, int64_t warmup);
void set_learning_rate(torch::optim::AdamW& optimizer, double lr);
// optimizer.safetensors in dir (AdamW's step and moments per parameter, by position: byte-stable),
// written atomically; read back onto `device` (moments live with the model). An optimizer.pt of
// an earlier salient still loads.
void save_optimizer(torch::optim::AdamW& optimizer, const std::string& dir);
void load_optimizer(torch::optim::AdamW& optimizer, const std::string& dir, torch::Device device);

// Data-parallel step (under mpirun, docs/distributed.md): every parameter's gradient times `share`
// (this rank's fraction of the global loss: its examples, or its masked pieces), summed across
// ranks in one allreduce of a flat float32 buffer kept for the run.
void average_gradients(const std::vector<torch::Tensor>& params, double share);
// Seeds LibTorch's generator (dropout) for one epoch or step of a run: rank r of a data-parallel
// run draws its own masks, and rank 0's stream is the single process's.
void seed_dropout(uint64_t seed, uint64_t epoch_or_step);

// Predicted label ids for a dataset (batched, length-sorted for speed).
std::vector<int64_t> predict_labels(const Classifier& classifier, const std::vector<Encoding>& encodings,
                                    int64_t batch_size = 64);
ClassificationMetrics evaluate_classifier(const Classifier& classifier, const Dataset& data, int64_t max_length,
                                          int64_t batch_size = 64);
// The single output of a regression model for each encoding (batched, length-sorted).
std::vector<double> predict_values(const Classifier& classifier, const std::vector<Encoding>& encodings,
                                   int64_t batch_size = 64);
RegressionMetrics evaluate_regressor(const Classifier& classifier, const Dataset& data, int64_t max_length,
                                     int64_t batch_size = 64);

}  // namespace salient
