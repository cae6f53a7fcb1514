#pragma once
// Task heads: what a model computes from the encoder's last hidden states, one piece per head so
// a new task (a per-token head, a regression head) adds a head instead of editing the encoder.
// Today's heads are the five families' sequence classifiers, reading the first token ([CLS]/<s>)
// of the last layer or a scalar mix of every layer (scalar_mix below).
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/config.h"

namespace salient {

class TaskHead {
 public:
  virtual ~TaskHead() = default;
  // last_hidden [B, L, Hd] (L may be 1: the first token only) → [B, num_labels]. `training`
  // turns the head's dropout on.
  virtual torch::Tensor forward(const torch::Tensor& last_hidden, bool training) const = 0;
};

// The scalar mix's weights (config.pooling scalar_mix / scalar_mix_cls): num_layers + 1 coefficients
// (softmax-normalised) and one scale γ (not named "gamma": loaders, salient's and Hugging Face's,
// rename old LayerNorm "gamma" tensors to "weight").
inline constexpr const char* kScalarMixCoefficients = "scalar_mix.coefficients";
inline constexpr const char* kScalarMixScale = "scalar_mix.scale";

// γ · Σ_l softmax(coefficients)_l · pool(states[l]) as [B, 1, Hd], the head's input for a model that
// pools every layer. pool = mean over the tokens where attention_mask is 1 (undefined: all), or the
// first token when `first_token`. States may differ in their batch size if it is 1 (broadcast).
torch::Tensor scalar_mix(const std::vector<torch::Tensor>& states, const torch::Tensor& coefficients,
                         const torch::Tensor& gamma, const torch::Tensor& attention_mask, bool first_token);

// The sequence-classification head of config's family (its row's head fields, model/family.cpp),
// bound to the tensors `weight` returns for the head's canonical names (the Transformer's own, so
// they train and move with it): BERT's tanh pooler and classifier; RoBERTa's (ELECTRA's: GELU)
// dense + out_proj; DistilBERT's pre_classifier + ReLU; DeBERTa's ContextPooler; ViT's final
// LayerNorm and classifier. With config.pools_every_layer(), BERT's and ViT's heads are the
// classifier alone (config.h).
std::unique_ptr<TaskHead> make_sequence_classification_head(
    const ModelConfig& config, const std::function<const torch::Tensor&(const std::string&)>& weight);

}  // namespace salient
