#pragma once
// Sufficient Subset Training (Bassan et al., ICLR 2025): dual-head models that output, with every
// prediction, a score s_i ∈ [0, 1] per input feature (pixel or token); the explanation is the
// subset {i : s_i ≥ τ}. One interface over two modalities:
//   image  values [B, C·H·W] float in [0, 1]; every pixel is a feature
//   text   values [B, L] token ids; the real tokens are features ([CLS], [SEP] and padding never are)
// so that masking, training, the post-hoc searches and the evaluation are written once.
#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/classifier.h"

namespace salient::sst {

struct FeatureBatch {
  torch::Tensor values;          // image: [B, F] float32; text: [B, L] int64 ids
  torch::Tensor features;        // [B, F] bool: positions an explanation may keep or replace
  torch::Tensor attention_mask;  // text only: [B, L]
  torch::Tensor token_type_ids;  // text only: [B, L]
  int64_t size() const { return values.size(0); }
  int64_t width() const { return values.size(1); }
  FeatureBatch rows(const torch::Tensor& index) const;  // index: int64 row numbers
  FeatureBatch repeat(int64_t times) const;             // a one-row batch repeated `times` times
};

struct SstOutput {
  torch::Tensor logits;     // [B, K]
  torch::Tensor selection;  // [B, F] s ∈ [0, 1]; 0 at non-features
};

class SstModel {
 public:
  virtual ~SstModel() = default;
  virtual std::string modality() const = 0;  // "image" | "text"
  virtual std::string arch() const = 0;      // "mlp" | "resnet" | "transformer"
  virtual SstOutput forward(const FeatureBatch& x) const = 0;
  // Logits of the inputs whose features are mixed with `fill` (same shape and kind as x.values):
  // keep·x + (1 − keep)·fill per feature, keep float [B, F] (it may carry a gradient: the
  // straight-through estimator). Images mix the values; text mixes the word embeddings of the
  // two token ids, so keep ∈ {0, 1} is exactly the replaced sequence.
  virtual torch::Tensor mixed_logits(const FeatureBatch& x, const torch::Tensor& fill, const torch::Tensor& keep) const = 0;
  // Plain logits of x (no mixing).
  virtual torch::Tensor logits(const FeatureBatch& x) const;
  virtual std::vector<torch::Tensor> parameters() const = 0;
  virtual void set_training(bool on) = 0;  // dropout on/off
  // Every tensor that defines the model (weights), by name, for saving and for tests.
  virtual std::map<std::string, torch::Tensor> state() const = 0;
  virtual void load_state(const std::map<std::string, torch::Tensor>& state, const std::string& where) = 0;
  virtual int64_t num_classes() const = 0;
  // Image geometry (channels, height, width); text models return {0, 0, 0}.
  virtual std::vector<int64_t> image_shape() const { return {0, 0, 0}; }
  const std::vector<std::string>& label_names() const { return labels_; }
  void set_label_names(std::vector<std::string> labels) { labels_ = std::move(labels); }

 private:
  std::vector<std::string> labels_;
};

// Image models. "mlp" is the paper's MNIST network: F → 128 → 64 (ReLU), a classifier (64 → K)
// and an explanation head (64 → F, sigmoid) on the 64-d layer (`hidden` overrides 128,64).
// "resnet" is a small residual CNN (the CIFAR-10/ResNet-18 study's analogue at 28×28): a 3×3 stem,
// three stages of one residual block each (the second and third entered by a stride-2 conv),
// `widths` channels per stage (default 16,32,32); the classifier reads the global average pool, the
// explanation head (linear, sigmoid) the flattened last feature map, so it sees every location.
struct ImageModelSpec {
  std::string arch = "mlp";
  int64_t channels = 1, height = 28, width = 28, classes = 10;
  std::vector<int64_t> hidden;  // mlp: empty = 128,64; resnet: the stage widths, empty = 16,32,32
  nlohmann::json to_json() const;
  static ImageModelSpec from_json(const nlohmann::json& j, const std::string& where);
};
std::unique_ptr<SstModel> make_image_model(const ImageModelSpec& spec, uint64_t seed);

// Text: a salient classifier (any BERT family) plus a per-token explanation head, a linear map of
// each last hidden state to one logit, sigmoid (cleaner than the reference code's map from [CLS]
// to max_length positions: it has no fixed length and scores the token it reads).
std::unique_ptr<SstModel> make_text_model(Classifier classifier, uint64_t seed);
// The classifier under a text SST model (for the tokenizer and `salient predict`-style use).
const Classifier& text_classifier(const SstModel& model);
// A text SST model's logits with `embeds` [B, L, E] as the word embeddings of x's tokens (read as
// windows when x is longer than the encoder's positions): HotFlip's gradient.
torch::Tensor text_embedding_logits(const SstModel& model, const FeatureBatch& x, const torch::Tensor& embeds);

// An SST model directory: sst.json (modality, architecture, training settings, labels) and
//   image: model.safetensors (the image network)
//   text:  a Hugging Face classifier directory (config.json, model.safetensors, tokenizer) plus
//          sst_head.safetensors, so `salient predict` and `salient explain` read it unchanged.
void save_sst_model(const SstModel& model, const std::string& dir, const nlohmann::json& settings);
struct LoadedSstModel {
  std::unique_ptr<SstModel> model;
  nlohmann::json settings;  // sst.json
  double tau = 0.5;
};
LoadedSstModel load_sst_model(const std::string& dir);
bool is_sst_model_dir(const std::string& dir);

// Text explanation head alone (for the learned explainer): s for every token of a batch.
torch::Tensor text_selection(const Classifier& clf, const torch::Tensor& head_weight, const torch::Tensor& head_bias,
                             const Batch& batch);

// The subset {i : s_i ≥ τ} among the features, as a bool [B, F].
torch::Tensor subset_of(const torch::Tensor& selection, const torch::Tensor& features, double tau);
// The positions of a one-row bool subset [F], ascending.
std::vector<int64_t> subset_positions(const torch::Tensor& subset);

}  // namespace salient::sst
