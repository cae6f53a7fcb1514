// IDX reader (MNIST layout): big-endian 32-bit magic and sizes, then uint8 data.
#include "data/idx.h"

#include "util/error.h"
#include "util/io.h"

namespace salient {

namespace {

uint32_t read_be32(const std::string& data, size_t offset) {
  auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(data[offset + i])); };
  return (byte(0) << 24) | (byte(1) << 16) | (byte(2) << 8) | byte(3);
}

// Checks the magic and that the payload after the header is exactly `payload` bytes.
void check_idx(const std::string& path, const std::string& data, uint32_t magic, size_t header,
               const char* kind) {
  if (data.size() < header)
    fail("{}: truncated IDX header ({} bytes, need {})", path, data.size(), header);
  uint32_t got = read_be32(data, 0);
  if (got != magic)
    fail("{}: IDX magic 0x{:08x} is not 0x{:08x} ({})", path, got, magic, kind);
}

void check_size(const std::string& path, size_t have, uint64_t expected) {
  if (have < expected) fail("{}: truncated IDX file ({} bytes, header promises {})", path, have, expected);
  if (have > expected) fail("{}: {} unexpected trailing bytes after the IDX data", path, have - expected);
}

}  // namespace

IdxImages read_idx_images(const std::string& path) {
  // read_gzip_file reads plain files too (gzread passes them through).
  std::string data = read_gzip_file(path);
  check_idx(path, data, 0x00000803, 16, "uint8 images, 3 dimensions");
  IdxImages images;
  images.count = read_be32(data, 4);
  images.rows = read_be32(data, 8);
  images.cols = read_be32(data, 12);
  // Three 32-bit sizes: their product can pass 2^64, so it is formed in 128 bits.
  const unsigned __int128 pixels =
      static_cast<unsigned __int128>(images.count) * static_cast<uint64_t>(images.rows) * static_cast<uint64_t>(images.cols);
  if (pixels > data.size()) fail("{}: truncated IDX file ({} bytes, header promises {} x {} x {} pixels)", path,
                                 data.size(), images.count, images.rows, images.cols);
  check_size(path, data.size(), 16 + static_cast<uint64_t>(pixels));
  images.pixels.assign(data.begin() + 16, data.end());
  return images;
}

std::vector<uint8_t> read_idx_labels(const std::string& path) {
  std::string data = read_gzip_file(path);
  check_idx(path, data, 0x00000801, 8, "uint8 labels, 1 dimension");
  uint64_t count = read_be32(data, 4);
  check_size(path, data.size(), 8 + count);
  return std::vector<uint8_t>(data.begin() + 8, data.end());
}

std::string fashion_mnist_dir() { return "/usr/share/datasets/fashion-mnist"; }

}  // namespace salient
