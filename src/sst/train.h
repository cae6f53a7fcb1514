#pragma once
// SST's objective and training loop.
//   L = CE(f(x), y) + λ · CE(f(x̃), argmax f(x)) + ξ · mean(s over the real features)
// x̃ keeps the subset {s ≥ τ} (and every non-feature) and fills the complement by the masking kind.
// With the hard threshold (the paper's, and the reference code's `s.ge(tau)`), the faithfulness
// term trains the classifier but sends the explanation head no gradient: the head learns from the
// cardinality term alone. `straight_through` uses keep = hard + s − stop_gradient(s), so the
// faithfulness term also reaches the head (the forward pass is unchanged).
#include <torch/torch.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sst/data.h"
#include "sst/masking.h"
#include "sst/model.h"

namespace salient::sst {

struct SstObjective {
  MaskKind kind = MaskKind::Baseline;  // None: standard training (cross-entropy alone)
  double lambda = 1.0;  // faithfulness weight (the reference code has none, i.e. 1)
  double xi = 1.0;      // cardinality weight (the reference code's gamma)
  double tau = 0.5;
  bool straight_through = false;
  FillOptions fill;  // the robust adversary's budget and the probabilistic fill during training
  void validate() const;  // one-line errors naming --lambda, --xi, --tau, --epsilon...
  nlohmann::json to_json() const;
};

struct SstLoss {
  torch::Tensor total, task, faithfulness, cardinality;  // scalars; faithfulness/cardinality 0 for None
  torch::Tensor logits, selection, masked_logits;        // for metrics (masked_logits undefined for None)
};

// A part's share of its batch when the batch goes through the model in parts (--max-windows):
// its rows and its real features over the batch's, so that the parts' totals add up to the
// batch's loss (the cross-entropies are means over rows, the cardinality a mean over features).
struct LossShare {
  double rows = 1, features = 1;
};

// One batch: `model` is switched to evaluation mode while the robust fill attacks it (as the
// reference code's PGD does), then to `training` (dropout on or off). `total` is scaled by `share`
// (task, faithfulness and cardinality stay the part's own).
SstLoss sst_loss(SstModel& model, const FeatureBatch& x, const torch::Tensor& labels, const SstObjective& objective,
                 at::Generator& gen, const torch::Tensor& vocabulary = {}, bool training = true,
                 const LossShare& share = {});

// The rows of a batch in parts of at most `max_windows` windows (text read as windows of the
// model's positions), in order; a text of more windows is a part alone. One part when max_windows is 0.
std::vector<std::vector<int64_t>> batch_parts(const SstData& data, const std::vector<int64_t>& rows,
                                              int64_t positions, int64_t max_windows);

struct SstTrainOptions {
  std::string train_data, dev_data, data_dir, output_dir;
  // Image models.
  std::string arch = "mlp";  // mlp | resnet | transformer (text)
  std::vector<int64_t> hidden;
  // Start from a trained model: a classifier directory (text) or an SST model directory of the
  // same architecture (images, e.g. the standard model); else from scratch (text: with `vocab`).
  std::string init_model, vocab;
  int64_t hidden_size = 128, num_layers = 2, num_heads = 4, intermediate_size = 512, max_length = 128;
  bool windows = false;  // text: every text read whole, as windows of the encoder's positions (no max_length)
  // With windows: at most this many windows go through the model at once; a batch's gradient is
  // summed over its parts (the same step in less memory). 0: the whole batch at once.
  int64_t max_windows = 0;
  double dropout = 0.1;
  SstObjective objective;
  int epochs = 10;
  int patience = 5;  // stop after this many epochs without a lower validation loss (reference code: 5)
  int64_t batch_size = 64;
  double lr = 1e-3, weight_decay = 0.0;
  int64_t limit = 0;  // first N training examples (0 = all)
  bool limit_random = false;  // the limit's N drawn at random with `seed` (kept in the data's order)
  uint64_t seed = 13;
  bool resume = false;
  double max_minutes = 0;
  void validate() const;
};

struct SstEpoch {
  int epoch = 0;
  double train_loss = 0, seconds = 0;
  double val_loss = 0, val_accuracy = 0, val_faithfulness = 0, val_size = 0;
  nlohmann::json to_json() const;
};

struct SstTrainResult {
  std::vector<SstEpoch> history;
  int best_epoch = 0;
  double train_seconds = 0;
};

// Trains and writes the best epoch (lowest validation loss, as the reference code) to
// output_dir (save_sst_model); the last epoch's state lives in output_dir/last for --resume.
SstTrainResult train_sst(const SstTrainOptions& options);

// Validation numbers of one pass over `data` with the objective's masking (fresh fills, seeded),
// each batch in parts of at most `max_windows` windows (batch_parts).
SstEpoch evaluate_objective(SstModel& model, const SstData& data, const SstObjective& objective, uint64_t seed,
                            int64_t batch_size, const torch::Tensor& vocabulary = {}, int64_t max_windows = 0);

}  // namespace salient::sst
