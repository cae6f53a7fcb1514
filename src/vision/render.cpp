#include "vision/render.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"
#include "util/png.h"

namespace salient::vision {

std::vector<uint8_t> patch_heat_rgb(const std::vector<float>& pixels, int64_t height, int64_t width,
                                    const std::vector<double>& patch_scores, int64_t patch, int scale) {
  if (height < 1 || width < 1 || patch < 1 || height % patch != 0 || width % patch != 0 || scale < 1 ||
      static_cast<int64_t>(pixels.size()) != height * width ||
      static_cast<int64_t>(patch_scores.size()) != (height / patch) * (width / patch))
    fail("patch heat map: {} pixels and {} patch scores for a {}x{} image in {}-pixel patches", pixels.size(),
         patch_scores.size(), height, width, patch);
  // Non-negative scores (attention) min–max over the patches, so that near-uniform maps still show
  // their ranking; signed scores relative to the largest |score|, negative ones blue.
  const double least = *std::min_element(patch_scores.begin(), patch_scores.end());
  const double lo = least >= 0 ? least : 0.0;
  double top = 0;
  for (double s : patch_scores) top = std::max(top, std::abs(s - lo));
  const int64_t h = height * scale, w = width * scale, per_row = width / patch;
  std::vector<uint8_t> rgb(static_cast<size_t>(h * w * 3));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      const int64_t py = y / scale, px = x / scale;
      const double grey = std::clamp(static_cast<double>(pixels[py * width + px]), 0.0, 1.0);
      const double s = top > 0 ? (patch_scores[(py / patch) * per_row + px / patch] - lo) / top : 0.0;
      const double a = 0.7 * std::abs(s);  // tint strength
      const double tint[3] = {s >= 0 ? 1.0 : 0.0, 0.0, s >= 0 ? 0.0 : 1.0};
      uint8_t* p = &rgb[static_cast<size_t>((y * w + x) * 3)];
      for (int c = 0; c < 3; ++c) p[c] = static_cast<uint8_t>(std::lround(255 * ((1 - a) * grey + a * tint[c])));
    }
  return rgb;
}

std::string patch_heat_png(const std::vector<float>& pixels, int64_t height, int64_t width,
                           const std::vector<double>& patch_scores, int64_t patch, int scale) {
  return encode_rgb_png(patch_heat_rgb(pixels, height, width, patch_scores, patch, scale), height * scale, width * scale);
}

}  // namespace salient::vision
