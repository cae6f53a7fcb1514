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
#include "salient/runs.h"

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

// The public TrainRun (salient/runs.h) and the training objective (a callable: not in the public API).
struct TrainOptions : TrainRun {
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
