#pragma once
// What the paper builds on top of the attributions: head importance over a dataset and pruning
// curves (with attention-based, Taylor and random orderings for comparison), the attribution tree
// (Algorithm 1 as the authors' script builds it) and adversarial trigger patterns.
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attattr/attribution.h"
#include "model/classifier.h"

namespace salient::attattr {

// Encoded examples with their gold labels (the model's truncation applies).
struct LabelledSet {
  std::vector<Encoding> encodings;
  std::vector<int64_t> labels;
};

// ---- head importance: [num_layers, H] ----
// Σ over examples of max over each head's attribution matrix; target = gold label (use_gold) or
// the prediction. Every layer is attributed.
//
// Each takes an optional range of the examples (a sharded run's part) and an optional `terms`
// out-parameter that receives the sum's terms in order (one per example, or per Taylor batch):
// 0 + terms[0] + terms[1] + ... in float64 is the returned sum exactly, so a sum over parts joined
// term by term equals the whole set's, bit for bit.
struct ExampleRange {
  size_t begin = 0, end = SIZE_MAX;  // [begin, end), end clamped to the set's size
};
torch::Tensor attattr_head_scores(const Transformer& model, const LabelledSet& data, const AttributionOptions& opts,
                                  bool use_gold = true, ExampleRange range = {},
                                  std::vector<torch::Tensor>* terms = nullptr);
// Σ over examples of max over each head's attention probabilities.
torch::Tensor attention_head_scores(const Transformer& model, const LabelledSet& data, ExampleRange range = {},
                                    std::vector<torch::Tensor>* terms = nullptr);
// Taylor head importance from t = ctx_h,i · ∂L/∂ctx_h,i per example, head h and (real) token i,
// with L the cross-entropy of the example's gold label (every example weighted equally, whatever
// the batch), each form L2-normalised within each layer:
//   attattr: Σ_examples Σ_tokens |t|, as the AttAttr authors' prune_head_with_taylor.py (which
//            takes the absolute value per token before summing; its division by the token count
//            is one constant per layer and cancels in the normalisation). Their script
//            back-propagates the sum of the logits instead of the loss, a defect not copied.
//   michel:  Σ_examples |Σ_tokens t| = Σ_examples |∂L/∂ξ_h| for a head mask ξ = 1 (Michel et al. 2019).
struct TaylorHeadScores {
  torch::Tensor attattr, michel;  // [num_layers, H] each
};
// Batches of `batch_size` start at range.begin; `batch_terms` receives each batch's unnormalised
// sums, and normalise_taylor turns their total into the scores.
TaylorHeadScores taylor_head_scores(const Transformer& model, const LabelledSet& data, int64_t batch_size = 32,
                                    ExampleRange range = {}, std::vector<TaylorHeadScores>* batch_terms = nullptr);
TaylorHeadScores normalise_taylor(const TaylorHeadScores& sums);
torch::Tensor random_head_scores(const Transformer& model, uint64_t seed);

// Accuracy with a 0/1 head mask [num_layers, H] on the attention probabilities (undefined = none).
double masked_accuracy(const Transformer& model, const LabelledSet& data, const torch::Tensor& head_mask,
                       int64_t batch_size = 64);

// Accuracies by head mask. A mask is evaluated once (the curves of every ordering share their end
// points), and with a file the values outlive an interrupted run: the first line records
// `settings` (model, weights, evaluation data), each new value is appended as a line, and a rerun
// with the same settings reads them back (a truncated last line is dropped). A file written with
// other settings is a one-line error naming it.
class MaskAccuracies {
 public:
  MaskAccuracies() = default;
  MaskAccuracies(std::string file, const nlohmann::json& settings);
  double operator()(const Transformer& model, const LabelledSet& data, const torch::Tensor& head_mask);
  size_t evaluated() const { return evaluated_; }  // masks run in this process
  void remove_file() const;                        // once the results it served are written

 private:
  std::string file_;
  std::map<std::string, double> known_;
  size_t evaluated_ = 0;
};

struct PruneStep {
  double fraction = 0;  // of all heads removed
  int64_t removed = 0;
  double accuracy = 0;
};
// Removes the ⌊r·#heads⌋ lowest-scored heads globally for r = 0, 1/steps, …, 1.
std::vector<PruneStep> pruning_curve(const Transformer& model, const LabelledSet& data, const torch::Tensor& scores,
                                     int steps = 10, MaskAccuracies* accuracies = nullptr);
// Removes the top-k heads (by score) of one layer for k = 0..H; entry k is the accuracy.
std::vector<double> prune_layer_top_k(const Transformer& model, const LabelledSet& data, const torch::Tensor& scores,
                                      int64_t layer, MaskAccuracies* accuracies = nullptr);

// ---- attribution tree ----
struct TreeEdge {
  int64_t from = 0, to = 0;  // token indices: query → key
  int64_t layer = 0;         // layer whose normalised attribution created the edge
  double weight = 0;         // that normalised attribution
};
struct AttributionTree {
  int64_t root = 0;
  int64_t top_layer = 0;
  std::vector<double> height;  // per token, in units of layers / num_layers as the original draws it
  std::vector<int> state;      // -1 not in tree, 0 in tree (expandable), 1 fixed
  std::vector<TreeEdge> edges;
};
// per_layer: [num_layers, L, L] attributions summed over heads. tau: threshold on the per-layer
// normalised scores; top_tau: threshold for the root's children (layer top_layer); top_layer < 0
// means num_layers − 2 as in the authors' script (which never uses the last layer).
AttributionTree build_tree(const torch::Tensor& per_layer, double tau = 0.4, double top_tau = 0.4,
                           int64_t top_layer = -1);

// ---- adversarial triggers ----
struct TriggerPattern {
  int64_t example = 0;  // index in the mining set
  int64_t layer = 0, head = 0;
  double score1 = 0, score2 = 0;
  std::vector<int64_t> pos1, pos2;  // (query, key) of the top-2 entries
  std::vector<std::string> tokens;  // of the mining example (with specials)
  std::vector<bool> structural;     // per token: the framing's [CLS]/[SEP] (<s>, </s>), never inserted
  int64_t seg_pos = 0;              // index of the first [SEP] (</s>)
  int64_t b_start = 0;              // first token of the second text (after RoBERTa's / XLM-R's </s></s>)
  int64_t target_label = 0, gold_label = 0;
  double score_sum() const { return score1 + score2; }
  // Token positions to insert (top-1 pair only when score2/score1 < 0.2 unless use_both), specials dropped.
  std::vector<int64_t> positions(bool use_both = false) const;
  std::string label(bool use_both = false) const;
  // tokens, structural, seg_pos and b_start from the mining example's encoding, by the tokenizer's
  // own special tokens and framing (BERT's [SEP], RoBERTa's and XLM-R's </s></s>).
  void set_example(const Encoding& e, const Tokenizer& tokenizer);
};
// One pattern per example (predicted-class target, every layer, opts.m points), sorted by score sum
// descending; patterns with score sum < min_score are dropped.
std::vector<TriggerPattern> mine_trigger_patterns(const Classifier& clf, const LabelledSet& data,
                                                  const AttributionOptions& opts, double min_score = 0.02);
// Inserts the pattern's tokens at the same relative position of the same segment of each text
// (as the authors' script does, on word pieces) and encodes the result.
Encoding insert_pattern(const Classifier& clf, const TriggerPattern& pattern, const std::string& text,
                        const std::optional<std::string>& pair, bool use_both = false);
// Accuracy per gold class: correct / count (NaN-free: count 0 gives 0).
std::vector<double> accuracy_per_class(const Transformer& model, const LabelledSet& data, int64_t num_labels);

}  // namespace salient::attattr
