#pragma once
// Task heads: what a model computes from the encoder's last hidden states, one piece per head so
// a new task (a per-token head, a regression head) adds a head instead of editing the encoder.
// Today's heads are the four families' sequence classifiers, reading the first token ([CLS]/<s>).
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>

#include "model/config.h"

namespace salient {

class TaskHead {
 public:
  virtual ~TaskHead() = default;
  // last_hidden [B, L, Hd] (L may be 1: the first token only) → [B, num_labels]. `training`
  // turns the head's dropout on.
  virtual torch::Tensor forward(const torch::Tensor& last_hidden, bool training) const = 0;
};

// The sequence-classification head of config.model_type, bound to the tensors `weight` returns
// for the head's canonical names (the Transformer's own, so they train and move with it):
//   bert        tanh pooler on [CLS], then the classifier
//   roberta     dense + tanh + out_proj on <s>
//   electra     dense + GELU + out_proj on [CLS]
//   distilbert  pre_classifier + ReLU + classifier on [CLS]
//   vit         the encoder's final LayerNorm, then the classifier, on [CLS]
std::unique_ptr<TaskHead> make_sequence_classification_head(
    const ModelConfig& config, const std::function<const torch::Tensor&(const std::string&)>& weight);

}  // namespace salient
