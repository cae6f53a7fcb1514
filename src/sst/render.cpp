#include "sst/render.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "util/error.h"
#include "util/io.h"
#include "util/png.h"

namespace salient::sst {

std::string subset_overlay_png(const std::vector<float>& pixels, int64_t height, int64_t width,
                               const std::vector<uint8_t>& subset, int scale) {
  if (height < 1 || width < 1 || static_cast<int64_t>(pixels.size()) != height * width ||
      subset.size() != pixels.size() || scale < 1)
    fail("subset_overlay_png: {} pixels and {} subset flags for a {}x{} image", pixels.size(), subset.size(), height, width);
  const int64_t h = height * scale, w = width * scale;
  std::vector<uint8_t> rgb(static_cast<size_t>(h * w * 3));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      const int64_t i = (y / scale) * width + x / scale;
      const double v = std::clamp(static_cast<double>(pixels[i]), 0.0, 1.0);
      uint8_t* p = &rgb[static_cast<size_t>((y * w + x) * 3)];
      if (subset[i]) {  // red tint over the grey level
        p[0] = static_cast<uint8_t>(std::lround(255 * (0.45 + 0.55 * v)));
        p[1] = p[2] = static_cast<uint8_t>(std::lround(255 * 0.25 * v));
      } else {
        p[0] = p[1] = p[2] = static_cast<uint8_t>(std::lround(255 * v / 3));
      }
    }
  return encode_rgb_png(rgb, h, w);
}

std::string subset_tokens_html(const std::vector<std::string>& tokens, const std::vector<uint8_t>& subset,
                               const std::vector<double>& selection, const std::vector<bool>& is_feature) {
  if (subset.size() != tokens.size() || is_feature.size() != tokens.size() ||
      (!selection.empty() && selection.size() != tokens.size()))
    fail("subset_tokens_html: {} tokens, {} subset flags, {} scores", tokens.size(), subset.size(), selection.size());
  std::string html;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string title = selection.empty() ? "" : fmt::format(" title=\"s = {:.3f}\"", selection[i]);
    const char* style = !is_feature[i] ? "color:#999" : subset[i] ? "background:#f4a3a3;font-weight:bold" : "";
    html += fmt::format("<span style=\"{}\"{}>{}</span> ", style, title, html_escape(tokens[i]));
  }
  return html;
}

}  // namespace salient::sst
