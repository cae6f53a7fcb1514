#pragma once
// A ViT explanation as a picture: the grey-scale image with each patch tinted red by its score. No
// LibTorch: plain vectors in, PNG bytes out.
#include <cstdint>
#include <string>
#include <vector>

namespace salient::vision {

// pixels: height·width values in [0, 1]; patch_scores: (height/patch)·(width/patch) scores in
// row-major patch order. Non-negative scores (attention) are shown min–max scaled over the patches,
// signed ones relative to the largest |score| (negative ones in blue); the image is scaled `scale`×.
// The RGB bytes (height·scale × width·scale × 3) that patch_heat_png encodes.
std::vector<uint8_t> patch_heat_rgb(const std::vector<float>& pixels, int64_t height, int64_t width,
                                    const std::vector<double>& patch_scores, int64_t patch, int scale = 8);
std::string patch_heat_png(const std::vector<float>& pixels, int64_t height, int64_t width,
                           const std::vector<double>& patch_scores, int64_t patch, int scale = 8);

}  // namespace salient::vision
