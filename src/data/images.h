#pragma once
// Image datasets as tensors (what the ViT, SMaT's image study and SST read):
//   mnist:train|val|test          the 10,000 MNIST test images (the only MNIST images here: the
//                                 training images are missing from ../shared/data), split by a
//                                 fixed permutation (seed 0) into 7,200 train, 800 val, 2,000 test
//   fashion-mnist:train|val|test  Debian's dataset-fashion-mnist: 54,000 / 6,000 of the 60,000
//                                 training images (the same fixed permutation rule), and the 10,000 test
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace salient {

struct ImageData {
  std::string spec;
  std::vector<std::string> label_names;
  torch::Tensor images;              // [N, C·H·W] float32 in [0, 1]
  torch::Tensor labels;              // [N] int64
  std::vector<int64_t> image_shape;  // C, H, W
  int64_t size() const { return labels.size(0); }
};

bool is_image_spec(const std::string& spec);
// `limit` > 0 keeps the first `limit` examples (after the split). Errors name --data.
ImageData load_image_dataset(const std::string& spec, const std::string& data_dir, int64_t limit = 0);

}  // namespace salient
