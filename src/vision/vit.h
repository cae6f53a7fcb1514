#pragma once
// A vision transformer (HF ViTForImageClassification layout, model/embeddings.h's PatchEmbeddings
// in front of the engine's pre-LN blocks) trained from scratch on the grey-scale image datasets
// here (Fashion-MNIST from Debian's dataset-fashion-mnist, the MNIST test images), evaluated, and
// explained per patch from its attention. The model directory is a standard HF one: config.json,
// model.safetensors, and preprocessor_config.json (ViTImageProcessor: pixels / 255, then
// (x − 0.5) / 0.5, no resizing).
#include <cstdint>
#include <string>
#include <vector>

#include "data/images.h"
#include "model/transformer.h"
#include "salient/vision.h"

namespace salient::vision {

// VitTrainOptions: the public salient/vision.h.

struct VitEpoch {
  int epoch = 0;
  double train_loss = 0, dev_accuracy = 0, seconds = 0;
};

struct VitTrainResult {
  std::vector<VitEpoch> history;
  int best_epoch = 0;
  double best_accuracy = 0, train_seconds = 0;
};

// Trains, keeps the model of the best dev accuracy in output_dir, and OUT/checkpoint for --resume
// (at epoch boundaries; batch order and dropout depend on (seed, epoch), so a resumed run takes the
// same steps as an uninterrupted one).
VitTrainResult train_vit(const VitTrainOptions& options);

// A ViT model directory (one-line error if it is not one).
Transformer load_vit(const std::string& dir);
// The image dataset `spec` (data/images.h), checked against the model's input size.
ImageData load_vit_data(const Transformer& model, const std::string& spec, const std::string& data_dir,
                        int64_t limit = 0);
// Images [N, C·H·W] in [0, 1] → pixel_values [N, C, H, W] as the model's preprocessor gives them.
torch::Tensor pixel_values(const Transformer& model, const torch::Tensor& images);
// Logits [N, labels] for rows of `data`, in batches.
torch::Tensor vit_logits(const Transformer& model, const torch::Tensor& images, int64_t batch_size = 256);
double vit_accuracy(const Transformer& model, const ImageData& data, int64_t batch_size = 256);

// Patch scores [N, P] from the attention: "attention_mean" (attention each patch receives, mean
// over heads, layers and query rows, as salient's text attention_mean) or "rollout" (Abnar &
// Zuidema's rollout from layer 0, the [CLS] row). [CLS] itself is left out.
torch::Tensor patch_attention_scores(const Transformer& model, const torch::Tensor& images, const std::string& method);

// Patch scores [N, P] from gradients w.r.t. the patch embeddings (what word embeddings are to the
// text methods) of the target class's softmax probability (the text methods' default output), or
// of its logit with `of_logit` (SMaT's gradient explainers); targets empty = each image's
// predicted class.
//   saliency      ‖∂F/∂e_p‖₂ per patch
//   grad_x_input  Σ_d e_p,d · ∂F/∂e_p,d
//   ig            integrated gradients from the black image (pixels 0), `steps` Gauss–Legendre
//                 points: since the patch projection is linear, this equals pixel-space IG summed
//                 over each patch's pixels, and the scores sum to F(x) − F(black) (tested)
torch::Tensor patch_gradient_scores(const Transformer& model, const torch::Tensor& images, const std::string& method,
                                    const std::vector<int64_t>& targets = {}, int64_t steps = 32, bool of_logit = false);

}  // namespace salient::vision
