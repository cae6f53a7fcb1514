#pragma once
// IDX (MNIST / Fashion-MNIST) reader, gzipped or plain.
#include <cstdint>
#include <string>
#include <vector>

namespace salient {

struct IdxImages {
  int64_t count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> pixels;  // count * rows * cols
};
IdxImages read_idx_images(const std::string& path);
std::vector<uint8_t> read_idx_labels(const std::string& path);

// Default location of Debian's dataset-fashion-mnist package.
std::string fashion_mnist_dir();

}  // namespace salient
