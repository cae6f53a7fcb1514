#include "data/images.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "data/idx.h"
#include "util/error.h"
#include "util/io.h"

namespace salient {

bool is_image_spec(const std::string& spec) {
  return spec.rfind("mnist:", 0) == 0 || spec.rfind("fashion-mnist:", 0) == 0;
}

namespace {

// A fixed permutation of n indices (seed 0), so every run splits the same way.
std::vector<int64_t> fixed_permutation(int64_t n) {
  std::vector<int64_t> p(n);
  std::iota(p.begin(), p.end(), 0);
  std::mt19937_64 rng(0);
  std::shuffle(p.begin(), p.end(), rng);
  return p;
}

}  // namespace

ImageData load_image_dataset(const std::string& spec, const std::string& data_dir, int64_t limit) {
  const auto colon = spec.find(':');
  const std::string name = spec.substr(0, colon), split = colon == std::string::npos ? "" : spec.substr(colon + 1);
  std::string dir, images_file, labels_file;
  int64_t begin = 0, end = 0;
  ImageData d;
  d.spec = spec;
  if (name == "mnist") {
    dir = join_path(data_dir, "mnist");
    images_file = "t10k-images-idx3-ubyte.gz", labels_file = "t10k-labels-idx1-ubyte.gz";
    if (split == "train") begin = 0, end = 7200;
    else if (split == "val") begin = 7200, end = 8000;
    else if (split == "test") begin = 8000, end = 10000;
    else fail("--data: '{}': MNIST splits are train, val and test (of the 10,000 test images)", spec);
    for (int i = 0; i < 10; ++i) d.label_names.push_back(std::to_string(i));
  } else if (name == "fashion-mnist") {
    dir = fashion_mnist_dir();
    if (split == "train" || split == "val") {
      images_file = "train-images-idx3-ubyte.gz", labels_file = "train-labels-idx1-ubyte.gz";
      begin = split == "train" ? 0 : 54000, end = split == "train" ? 54000 : 60000;
    } else if (split == "test") {
      images_file = "t10k-images-idx3-ubyte.gz", labels_file = "t10k-labels-idx1-ubyte.gz";
      begin = 0, end = 10000;
    } else {
      fail("--data: '{}': Fashion-MNIST splits are train, val and test", spec);
    }
    d.label_names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};
  } else {
    fail("--data: '{}' is not an image dataset (mnist:SPLIT or fashion-mnist:SPLIT)", spec);
  }
  const std::string ipath = join_path(dir, images_file), lpath = join_path(dir, labels_file);
  if (!file_exists(ipath)) fail("--data: '{}' not found{}", ipath, name == "fashion-mnist" ? " (apt-get install dataset-fashion-mnist)" : "");
  IdxImages img = read_idx_images(ipath);
  std::vector<uint8_t> labels = read_idx_labels(lpath);
  if (static_cast<int64_t>(labels.size()) != img.count) fail("{}: {} labels for {} images", lpath, labels.size(), img.count);
  if (img.count < end) fail("{}: {} images, the split needs {}", ipath, img.count, end);
  // The test split of fashion-mnist is taken as is; the others through the fixed permutation.
  std::vector<int64_t> order = (name == "fashion-mnist" && split == "test") ? std::vector<int64_t>() : fixed_permutation(img.count);
  std::vector<int64_t> rows;
  for (int64_t i = begin; i < end; ++i) rows.push_back(order.empty() ? i : order[i]);
  if (limit > 0 && limit < static_cast<int64_t>(rows.size())) rows.resize(limit);
  const int64_t px = img.rows * img.cols, n = static_cast<int64_t>(rows.size());
  d.images = torch::empty({n, px}, torch::kFloat32);
  d.labels = torch::empty({n}, torch::kInt64);
  float* dst = d.images.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* src = img.pixels.data() + rows[i] * px;
    for (int64_t j = 0; j < px; ++j) dst[i * px + j] = src[j] / 255.0f;
    d.labels[i] = static_cast<int64_t>(labels[rows[i]]);
  }
  d.image_shape = {1, img.rows, img.cols};
  return d;
}

}  // namespace salient
