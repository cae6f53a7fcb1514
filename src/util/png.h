#pragma once
// PNG encoding of an 8-bit RGB image (libpng), for the image views (SST's subset overlays, ViT patch
// heat maps). No LibTorch.
#include <cstdint>
#include <string>
#include <vector>

namespace salient {

// rgb: height·width·3 bytes, row-major. Returns the PNG file's bytes.
std::string encode_rgb_png(const std::vector<uint8_t>& rgb, int64_t height, int64_t width);

}  // namespace salient
