#pragma once
// ExpNet (Mihaila, 2026): a small MLP that maps each token's attention pattern in a classifier to
// the probability that a human would mark the token as rationale. Trained on human rationales,
// it then explains any input of any classifier with the same layer/head layout with one forward
// pass. See docs/expnet.md for every design choice.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "data/dataset.h"
#include "eval/plausibility.h"
#include "model/classifier.h"

namespace salient {

// ---- Features ----
// Per token t, layer l and head h we extract kStatCount raw statistics of the attention
// probabilities A[l][h] (cropped to the real tokens, so padding never enters):
enum AttentionStat : int64_t {
  kClsToToken = 0,   // A[0, t]: how much [CLS] attends to t
  kTokenToCls = 1,   // A[t, 0]: how much t attends to [CLS]
  kReceivedMean = 2, // mean over queries q of A[q, t]
  kReceivedMax = 3,  // max over queries q of A[q, t]
  kRowEntropy = 4,   // entropy of t's own attention row
  kStatCount = 5
};

struct FeatureOptions;
// "cls_to_token,token_to_cls,stats" (a non-empty subset, comma-separated) into the feature flags;
// errors name `where`.
void set_feature_list(FeatureOptions& features, const std::string& list, const std::string& where);

struct FeatureOptions {
  std::string layers = "last";  // "last" | "all" | comma-separated layer indices (0-based, negatives from the end)
  bool cls_to_token = true;
  bool token_to_cls = true;
  bool stats = false;  // adds received-mean, received-max and row entropy per head
  // "raw": probabilities as they are (the paper). "length": multiply probabilities by the number of
  // real tokens n (uniform attention → 1) and divide entropies by log n, so inputs of different
  // lengths (SST sentences vs. truncated ERASER documents) share one feature scale.
  std::string scale = "length";
  // How heads enter: "none" keeps each head as its own feature (the paper: heads of one
  // fine-tuned BERT correspond across tasks); "sorted" sorts each statistic over the heads per
  // token, "mean_max" keeps its mean and max over heads. Both are invariant to head order, which
  // independently trained classifiers do not share.
  std::string head_pool = "sorted";

  nlohmann::json to_json() const;
  static FeatureOptions from_json(const nlohmann::json& j, const std::string& where);
  void validate(const std::string& where) const;
  std::vector<int64_t> layer_indices(int64_t num_layers, const std::string& where) const;
  int64_t dim(int64_t num_layers, int64_t num_heads) const;  // features per token
};

// Raw statistics of one encoded input: [n_tokens, num_layers, num_heads, kStatCount] (float32),
// n_tokens = the encoding's length.
struct RawFeatures {
  torch::Tensor stats;
  int64_t predicted = -1;  // the classifier's predicted class for this input
};

// Forward passes in batches of `batch_size` (padding via attention_mask), then per input the
// statistics of its own [n, n] block. Batched and one-by-one results agree (tested).
std::vector<RawFeatures> extract_raw_features(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                              int64_t batch_size = 32);
// Selects and scales the columns of `raw` that the options ask for → [n_tokens, dim].
torch::Tensor select_features(const torch::Tensor& raw, const FeatureOptions& options, const std::string& where = "features");

// 1 for tokens that get a score (not special, in the first segment), else 0.
std::vector<int> scored_tokens(const Classifier& clf, const Encoding& enc);

// ---- Loss ----
// Focal loss (Lin et al., 2017), mean over elements: −α_t (1 − p_t)^γ log p_t with α_t = α for
// positives and 1 − α for negatives. At γ = 0, α = 0.5 it is 0.5 × BCE.
torch::Tensor focal_loss(const torch::Tensor& logits, const torch::Tensor& targets, double alpha, double gamma);

// ---- Model ----
struct ExpNetConfig {
  FeatureOptions features;
  std::vector<int64_t> hidden = {64, 32};
  std::string activation = "relu";  // relu | gelu | tanh
  double dropout = 0.1;
  // Layout of the classifiers it was trained on; loading refuses a classifier that differs.
  int64_t num_layers = 0, num_heads = 0;
  int64_t input_dim = 0;
  nlohmann::json training = nlohmann::json::object();  // how it was trained (informational)

  nlohmann::json to_json() const;
  static ExpNetConfig from_json(const nlohmann::json& j, const std::string& where);
};

class ExpNet {
 public:
  ExpNet() = default;
  ExpNet(ExpNetConfig config, uint64_t seed);  // PyTorch-default Linear init, seeded

  // Input [T, input_dim] (unnormalised features) → logits [T]. Dropout only in training mode.
  torch::Tensor logits(const torch::Tensor& features) const;
  // Token importance in [0, 1] for one input; specials / pair tokens get 0.
  std::vector<double> explain(const Classifier& clf, const Encoding& enc, const RawFeatures& raw) const;
  // Batched: features + scores for many inputs.
  std::vector<std::vector<double>> explain(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                           int64_t batch_size = 32) const;
  // Throws a one-line error when `clf` has another layer count or head count.
  void check_compatible(const Classifier& clf, const std::string& where) const;

  void set_normalisation(const torch::Tensor& mean, const torch::Tensor& std);
  std::vector<torch::Tensor> parameters() const;
  void train(bool on) { training_ = on; }
  ExpNet clone() const;

  const ExpNetConfig& config() const { return config_; }
  ExpNetConfig& config() { return config_; }

  // Writes dir/expnet.safetensors and dir/expnet.json.
  void save(const std::string& dir) const;
  static ExpNet load(const std::string& dir);

 private:
  ExpNetConfig config_;
  std::vector<torch::Tensor> weights_, biases_;
  torch::Tensor mean_, std_;  // feature standardisation, fitted on the training tokens
  bool training_ = false;
};

// ---- Tasks and training ----
// A rationale task with its own classifier. Built-in names (sst2, hatexplain, eraser) know their
// splits; cola is refused (no human rationales in shared/data).
struct TaskSpec {
  std::string name, model_dir;
  std::string train, val, test;  // dataset specs; val may be empty → val_fraction of train
  double val_fraction = 0.15;
};
// "NAME=MODEL" for a built-in task, or "NAME=MODEL,train=SPEC,val=SPEC,test=SPEC".
TaskSpec parse_task_spec(const std::string& arg);

// One input ready for ExpNet: encoding, raw features, labels.
struct TaskExample {
  std::string id;
  Encoding enc;
  RawFeatures raw;
  std::vector<int> labels;  // per token: 1/0, -1 = not scored
  int64_t gold_label = -1;
  int64_t positives = 0;    // rationale tokens left after truncation
};

struct TaskSplit {
  std::string spec;
  std::vector<TaskExample> examples;
  int64_t records = 0, no_rationale = 0, truncated = 0, rationale_lost = 0;  // bookkeeping for the report
  int64_t rationale_words_total = 0;
};

// Loads `spec`, encodes with the classifier (truncating to its max length), projects rationales,
// drops examples with no rationale token left, extracts raw features. `limit` > 0: keep at most
// that many usable examples (first ones in file order).
TaskSplit load_task_split(const Classifier& clf, const std::string& spec, const std::string& data_dir, int64_t limit = 0);

struct ExpNetTrainOptions {
  ExpNetConfig model;
  std::string loss = "focal";  // focal | bce
  // α weights the rationale (minority, ~25–40 % of tokens) class; γ focuses on hard tokens.
  double alpha = 0.75, gamma = 2.0;
  bool filter_correct = true;  // train only on inputs the classifier predicts correctly
  double lr = 1e-3, weight_decay = 0.0;
  int64_t batch_size = 512;  // tokens per step
  int max_epochs = 40, patience = 4;
  uint64_t seed = 0;
  bool progress = true;
};

struct ExpNetTrainResult {
  ExpNet model;
  int best_epoch = 0, epochs_run = 0;
  double best_val_loss = 0, seconds = 0;
  int64_t train_tokens = 0, train_positive = 0, val_tokens = 0, train_examples = 0, filtered_out = 0;
};

// Trains on the concatenated tokens of `train` and early-stops on the loss over `val`.
ExpNetTrainResult train_expnet(const std::vector<const TaskSplit*>& train, const std::vector<const TaskSplit*>& val,
                               const ExpNetTrainOptions& options);

// `expnet train`: one ExpNet on rationale tasks "NAME=MODEL_DIR[,train=SPEC[,val=SPEC]]" (every
// classifier of one layout; options.model's layout is taken from them), at most `max_train` examples
// per task (0: all). Early stopping on each task's val split, or without one on every 7th training
// example. The model's training info names the tasks.
ExpNetTrainResult train_expnet_on_tasks(const std::vector<std::string>& tasks, const std::string& data_dir,
                                        int64_t max_train, ExpNetTrainOptions options);
// What `expnet train` prints after saving to `out`.
nlohmann::json train_result_json(const ExpNetTrainResult& result, const std::string& out);

// ---- Evaluation ----
struct PlausibilityRow {
  double f1_threshold = 0, precision_threshold = 0, recall_threshold = 0;
  double f1_top_k = 0, precision_top_k = 0, recall_top_k = 0;
  double auroc = 0, auprc = 0;
  int64_t examples = 0, auroc_examples = 0;
};
// Per-example metrics on scored tokens, averaged over examples. `scores[i]` has one value per
// token of examples[i].enc; binarisation at `threshold` and top-k with k = rationale length.
PlausibilityRow plausibility(const std::vector<TaskExample>& examples, const std::vector<std::vector<double>>& scores,
                             double threshold);
// `expnet evaluate --expnet`: a trained ExpNet's plausibility on the first `max_test` (0: all)
// examples with rationales of one dataset, read with the classifier `model_dir`.
nlohmann::json evaluate_expnet(const std::string& expnet_dir, const std::string& model_dir, const std::string& data,
                               const std::string& data_dir, int64_t max_test, double threshold);


}  // namespace salient
