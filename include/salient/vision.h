#pragma once
// The vision transformer (docs/vit.md): a ViT in Hugging Face's ViTForImageClassification layout
// trained from scratch on the grey-scale image datasets (Fashion-MNIST, MNIST), evaluated, and
// explained per patch, as `salient vit train | evaluate | explain`.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace salient {

namespace vision {

struct VitTrainOptions {
  std::string train_data = "fashion-mnist:train", dev_data = "fashion-mnist:val";
  std::string data_dir;  // shared/data (for mnist:*)
  std::string output_dir;
  int64_t patch_size = 7, hidden_size = 64, num_layers = 4, num_heads = 4, intermediate_size = 128;
  double dropout = 0.0, attention_dropout = 0.0;
  int epochs = 5;
  int64_t batch_size = 64;
  double lr = 1e-3, weight_decay = 0.05, warmup_ratio = 0.06, clip_norm = 1.0;
  double max_minutes = 0;          // stop after this much training time (0 = no limit)
  int64_t max_train_examples = 0;  // the first N after a seeded shuffle; 0 = all
  uint64_t seed = 13;
  bool resume = false;
  int stop_after_epoch = 0;  // end this invocation after that epoch (a later --resume continues)
};

}  // namespace vision

// Trains a ViT into options.output_dir (the best dev accuracy's model; OUT/checkpoint for resume):
// {best_epoch, best_dev_accuracy, train_seconds, out}. data_dir "": the shared data.
nlohmann::json vit_train(vision::VitTrainOptions options);

// Accuracy on the first `limit` (0: all) images of `data`: {model, data, examples, accuracy}.
nlohmann::json vit_evaluate(const std::string& model_dir, const std::string& data, const std::string& data_dir = "",
                            int64_t limit = 0);

struct VitExplainOptions {
  // attention_mean, rollout (attention); saliency, grad_x_input, ig (gradients w.r.t. the patch
  // embeddings of the predicted class's probability; ig from the black image); smat (a learned
  // head mix from `salient smat train | study`, in smat_file).
  std::string method = "attention_mean";
  std::string smat_file;
  std::string data_dir;  // "": the shared data
  // When set, one PNG per image (its patch scores over the image, `scale` pixels per pixel) is
  // written there as NNNN.png and named in the image's "png" field.
  std::string png_dir;
  int64_t limit = 8, steps = 32;  // the first `limit` images; ig's Gauss-Legendre points
  int scale = 8;
};
// One object per image: index, label, prediction, probability, method, patch_size, patch_scores (a
// grid of patches), steps (ig), png (with png_dir).
std::vector<nlohmann::json> vit_explain(const std::string& model_dir, const std::string& data,
                                        const VitExplainOptions& options = {});

}  // namespace salient
