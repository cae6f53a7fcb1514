#pragma once
// A model directory as users see it: the transformer, its tokenizer, and batching of encodings
// into padded tensors.
#include <string>
#include <vector>

#include "model/checkpoint.h"
#include "text/tokenizer.h"

namespace salient {

struct Batch {
  torch::Tensor input_ids, token_type_ids, attention_mask;  // [B, L]
  torch::Tensor pixel_values;  // a vision transformer's batch: [B, C, H, W] (input_ids undefined)
  std::vector<int64_t> lengths;
};

// The forward request of a batch (text or images) and its logits [B, labels].
ForwardRequest forward_request(const Batch& batch);
torch::Tensor batch_logits(const Transformer& model, const Batch& batch);

// Pads to the longest encoding; padding uses `pad_id`, type 0, mask 0.
Batch make_batch(const std::vector<const Encoding*>& encodings, int64_t pad_id, torch::Device device = torch::kCPU);
Batch make_batch(const std::vector<Encoding>& encodings, int64_t pad_id, torch::Device device = torch::kCPU);

struct Classifier {
  Transformer model;
  Tokenizer tokenizer;
  std::string dir;

  // Tokenizes with truncation to what the model accepts; enc.truncated says if anything was cut.
  Encoding encode(const std::string& text, const std::optional<std::string>& pair = std::nullopt,
                  int max_length = 0) const;
  // From ids given directly: validates range and length (errors name `where`).
  Encoding encode_ids(const std::vector<int64_t>& ids, const std::vector<int64_t>& type_ids,
                      const std::string& where) const;
  const std::string& label_name(int64_t id) const { return model.config().id2label.at(id); }
};

// `report` (optional): weights that were missing and initialised, or present and unused.
Classifier load_classifier(const std::string& dir, const LoadOptions& options = {}, LoadReport* report = nullptr);
void save_classifier(const Classifier& classifier, const std::string& dir);

}  // namespace salient
