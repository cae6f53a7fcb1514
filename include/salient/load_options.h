#pragma once
// How a model directory is loaded (salient::Model::load, fine-tuning's --init).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <c10/core/Device.h>

namespace salient {

struct LoadOptions {
  // A checkpoint without a classification head (a base model) gets a fresh, seeded head instead of
  // an error. Used when fine-tuning.
  bool allow_new_head = false;
  uint64_t seed = 0;
  // Overrides config.json's labels (fine-tuning a base model on a task with other labels).
  std::vector<std::string> labels;
  // Overrides config.json's head input (ModelConfig::pooling); head weights the new pooling needs
  // and the file lacks are initialised when allow_new_head is set.
  std::optional<std::string> pooling;
  // Override config.json's hidden_dropout_prob / attention_probs_dropout_prob (fine-tuning with
  // another dropout than the checkpoint was trained with).
  std::optional<double> hidden_dropout, attention_dropout;
  // Where the weights go; unset: the default device (--device, $SALIENT_DEVICE, else the CPU).
  std::optional<c10::Device> device;
};

}  // namespace salient
