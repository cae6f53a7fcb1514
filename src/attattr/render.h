#pragma once
// Self-contained views of attattr results (no LibTorch): an HTML page with per-layer head heatmaps
// and a token-to-token matrix for one example, and SVG drawings of the attribution tree and of
// pruning curves.
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace salient::attattr {

// `record` is one line of `salient attattr attribute` output (tokens, layer_ids, layers
// [layer][head][query][key], target, ...). The page draws with <canvas> from the embedded JSON.
std::string attribution_html(const nlohmann::json& record, const std::string& title);

// `tree` is the JSON written by `salient attattr tree` (tokens, root, nodes with height, edges).
std::string tree_svg(const nlohmann::json& tree);

struct Curve {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), y in [0, 1]
};
std::string curves_svg(const std::vector<Curve>& curves, const std::string& title, const std::string& x_label,
                       const std::string& y_label);

}  // namespace salient::attattr
