#pragma once
// Datasets for SST, as tensors of features: the image datasets of data/images.h, or any text spec
// of load_dataset (sst2:train, eraser:test, a file...) with a text model's tokenizer.
#include <torch/torch.h>

#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/images.h"
#include "sst/model.h"

namespace salient::sst {

struct SstData {
  std::string spec;
  std::string modality;  // image | text
  std::vector<std::string> label_names;
  torch::Tensor labels;  // [N] int64
  // image: [N, C·H·W] float32 in [0, 1]
  torch::Tensor images;
  std::vector<int64_t> image_shape;  // C, H, W
  // text
  std::vector<Encoding> encodings;
  std::vector<std::string> texts;
  std::vector<std::string> ids;
  std::vector<std::vector<bool>> is_feature;  // per encoding: a real token ([CLS]/[SEP] are not)
  int64_t pad_id = 0;

  int64_t size() const { return labels.size(0); }
  FeatureBatch batch(const std::vector<int64_t>& rows) const;
  FeatureBatch batch(int64_t begin, int64_t end) const;
};

// `limit` > 0 keeps the first `limit` examples (after the split). Text: `windows` reads every text
// whole (no truncation; one text, not pairs), for the model to read as windows when it is longer
// than the encoder's positions (make_text_model); else texts are cut to `max_length` tokens.
SstData load_image_data(const std::string& spec, const std::string& data_dir, int64_t limit = 0);
SstData load_text_data(const std::string& spec, const std::string& data_dir, const Classifier& clf,
                       int64_t max_length, int64_t limit = 0, bool windows = false);
// The rows of `d` in the order of `rows`.
SstData select_rows(const SstData& d, const std::vector<int64_t>& rows);
// An order of n rows: `count` of them drawn at random with `seed`, in the data's order, then the
// others in the data's order (--limit-random: data sorted by class, as ERASER's splits are, gives
// one class in its first rows).
std::vector<int64_t> sample_first_order(int64_t n, int64_t count, uint64_t seed);

// Either, by the spec (a text spec needs a text model).
SstData load_sst_data(const std::string& spec, const std::string& data_dir, const SstModel& model,
                      int64_t max_length = 0, int64_t limit = 0, bool windows = false);

}  // namespace salient::sst
