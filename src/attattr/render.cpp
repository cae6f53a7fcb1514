#include "attattr/render.h"
#include "util/io.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace salient::attattr {

namespace {


const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

}  // namespace

std::string attribution_html(const nlohmann::json& record, const std::string& title) {
  nlohmann::json data = {{"tokens", record.value("tokens", nlohmann::json::array())},
                         {"layer_ids", record.value("layer_ids", nlohmann::json::array())},
                         {"layers", record.value("layers", nlohmann::json::array())},
                         {"target", record.value("target", nlohmann::json())},
                         {"completeness", record.value("completeness", nlohmann::json::array())}};
  // "</" cannot appear inside <script>: JSON escapes it as "<\/".
  std::string js = data.dump();
  for (size_t p = 0; (p = js.find("</", p)) != std::string::npos; p += 3) js.replace(p, 2, "<\\/");
  std::string html = R"(<!doctype html>
<html><head><meta charset="utf-8"><title>)" + html_escape(title) + R"(</title>
<style>
body { font: 13px sans-serif; margin: 16px; }
.layer { margin-bottom: 10px; } .layer span { display: inline-block; width: 70px; vertical-align: top; }
canvas.head { border: 1px solid #ccc; margin: 1px; cursor: pointer; image-rendering: pixelated; }
canvas.head.sel { border-color: #d00; }
#matrix { margin-top: 12px; }
</style></head><body>
<h2>)" + html_escape(title) + R"(</h2>
<p>Self-Attention Attribution: red = positive, blue = negative, each map scaled by the largest |value| of its layer.
Click a head to show its token-to-token matrix; the first view is the sum over the heads of the first layer.</p>
<div id="heads"></div>
<h3 id="mtitle"></h3>
<canvas id="matrix"></canvas>
<script>
const D = )" + js + R"(;
const T = D.tokens, n = T.length;
function color(v, s) { const x = Math.max(-1, Math.min(1, s > 0 ? v / s : 0));
  const r = x > 0 ? 255 : Math.round(255 * (1 + x)), b = x < 0 ? 255 : Math.round(255 * (1 - x)), g = Math.round(255 * (1 - Math.abs(x)));
  return `rgb(${r},${g},${b})`; }
function maxAbs(ms) { let s = 0; for (const m of ms) for (const r of m) for (const v of r) s = Math.max(s, Math.abs(v)); return s; }
function sumHeads(hs) { return hs[0].map((r, i) => r.map((_, j) => hs.reduce((a, h) => a + h[i][j], 0))); }
function drawSmall(c, m, s) { const k = Math.max(1, Math.floor(96 / n)); c.width = c.height = n * k; const x = c.getContext('2d');
  for (let i = 0; i < n; ++i) for (let j = 0; j < n; ++j) { x.fillStyle = color(m[i][j], s); x.fillRect(j * k, i * k, k, k); } }
function drawMatrix(m, label) {
  document.getElementById('mtitle').textContent = label;
  const c = document.getElementById('matrix'), cell = 22, pad = 110; c.width = c.height = pad + n * cell;
  const x = c.getContext('2d'); x.font = '11px sans-serif'; const s = maxAbs([m]);
  for (let i = 0; i < n; ++i) { x.fillStyle = '#000'; x.textAlign = 'right'; x.fillText(T[i], pad - 4, pad + i * cell + 15);
    x.save(); x.translate(pad + i * cell + 15, pad - 4); x.rotate(-Math.PI / 2); x.textAlign = 'left'; x.fillText(T[i], 0, 0); x.restore();
    for (let j = 0; j < n; ++j) { x.fillStyle = color(m[i][j], s); x.fillRect(pad + j * cell, pad + i * cell, cell - 1, cell - 1); } }
  x.fillStyle = '#000'; x.textAlign = 'left'; x.fillText('rows: query i, columns: key j, max |a| = ' + s.toPrecision(3), 4, 12);
}
const root = document.getElementById('heads');
D.layers.forEach((hs, li) => {
  const div = document.createElement('div'); div.className = 'layer';
  const lab = document.createElement('span'); const comp = D.completeness[li] || {};
  lab.textContent = 'layer ' + D.layer_ids[li]; div.appendChild(lab);
  const s = maxAbs(hs);
  const sum = document.createElement('canvas'); sum.className = 'head'; sum.title = 'sum over heads';
  drawSmall(sum, sumHeads(hs), maxAbs([sumHeads(hs)])); sum.onclick = () => drawMatrix(sumHeads(hs), 'layer ' + D.layer_ids[li] + ', sum over heads');
  div.appendChild(sum);
  hs.forEach((m, h) => { const c = document.createElement('canvas'); c.className = 'head'; c.title = 'head ' + h;
    drawSmall(c, m, s); c.onclick = () => drawMatrix(m, 'layer ' + D.layer_ids[li] + ', head ' + h); div.appendChild(c); });
  root.appendChild(div);
});
if (D.layers.length) drawMatrix(sumHeads(D.layers[0]), 'layer ' + D.layer_ids[0] + ', sum over heads');
</script></body></html>
)";
  return html;
}

std::string tree_svg(const nlohmann::json& tree) {
  const auto& tokens = tree.at("tokens");
  const size_t n = tokens.size();
  const double dx = 70, dy = 70, margin = 50;
  std::vector<double> height(n, 0);
  std::vector<bool> used(n, false);
  for (const auto& node : tree.at("nodes")) {
    size_t i = node.at("index").get<size_t>();
    height[i] = node.at("height").get<double>();
    used[i] = true;
  }
  double hmin = 0, hmax = 1;
  for (size_t i = 0; i < n; ++i)
    if (used[i]) hmin = std::min(hmin, height[i]), hmax = std::max(hmax, height[i]);
  const int64_t layers = tree.value("num_layers", 12);
  const double levels = std::max(1.0, (hmax - hmin) * layers);
  const double W = 2 * margin + dx * std::max<size_t>(n - 1, 1), H = 2 * margin + dy * levels;
  auto X = [&](size_t i) { return margin + dx * i; };
  auto Y = [&](size_t i) { return H - margin - (height[i] - hmin) * layers * dy; };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"18\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\">"
      "<path d=\"M0,0 L10,5 L0,10 z\" fill=\"#1f4e9c\"/></marker></defs>\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      W, H);
  for (const auto& e : tree.at("edges")) {
    size_t a = e.at("from").get<size_t>(), b = e.at("to").get<size_t>();
    double w = e.at("weight").get<double>();
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#1f4e9c\" stroke-opacity=\"{:.2f}\" "
        "stroke-width=\"2\" marker-end=\"url(#arrow)\"><title>{} → {} (layer {}, {:.2f})</title></line>\n",
        X(a), Y(a), X(b), Y(b), 0.35 + 0.65 * std::min(1.0, w), html_escape(tokens[a].get<std::string>()),
        html_escape(tokens[b].get<std::string>()), e.at("layer").get<int64_t>(), w);
  }
  for (size_t i = 0; i < n; ++i) {
    if (!used[i]) continue;
    const bool root = tree.value("root", -1) == (int64_t)i;
    s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"9\" fill=\"{}\"/>\n", X(i), Y(i), root ? "#d62728" : "#4a7bd0");
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", X(i), Y(i) - 14,
                     html_escape(tokens[i].get<std::string>()));
  }
  // Token axis: every token, used or not, in order.
  for (size_t i = 0; i < n; ++i)
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#999\">{}</text>\n", X(i), H - 12,
                     html_escape(tokens[i].get<std::string>()));
  s += "</svg>\n";
  return s;
}

std::string curves_svg(const std::vector<Curve>& curves, const std::string& title, const std::string& x_label,
                       const std::string& y_label) {
  const double W = 560, H = 380, left = 60, right = 150, top = 40, bottom = 50;
  const double pw = W - left - right, ph = H - top - bottom;
  double xmax = 0;
  for (const auto& c : curves)
    for (const auto& p : c.points) xmax = std::max(xmax, p.first);
  if (xmax <= 0) xmax = 1;
  auto X = [&](double x) { return left + pw * x / xmax; };
  auto Y = [&](double y) { return top + ph * (1 - y); };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{:.0f}\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">{}</text>\n",
      W, H, left + pw / 2, html_escape(title));
  for (int t = 0; t <= 10; ++t) {
    const double y = t / 10.0;
    s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#eee\"/>\n", left, Y(y), left + pw, Y(y));
    if (t % 2 == 0) s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:.1f}</text>\n", left - 6, Y(y) + 4, y);
  }
  for (int t = 0; t <= 5; ++t) {
    const double x = xmax * t / 5.0;
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:.2g}</text>\n", X(x), top + ph + 18, x);
  }
  s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#333\"/>\n", left, top, pw, ph);
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", left + pw / 2, H - 10, html_escape(x_label));
  s += fmt::format("<text transform=\"translate(16,{:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n", top + ph / 2,
                   html_escape(y_label));
  for (size_t c = 0; c < curves.size(); ++c) {
    const char* color = kPalette[c % 8];
    std::string pts;
    for (const auto& p : curves[c].points) pts += fmt::format("{:.1f},{:.1f} ", X(p.first), Y(p.second));
    s += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", pts, color);
    for (const auto& p : curves[c].points)
      s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", X(p.first), Y(p.second), color);
    const double ly = top + 10 + 18 * c;
    s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                     left + pw + 10, ly, left + pw + 30, ly, color);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", left + pw + 36, ly + 4, html_escape(curves[c].name));
  }
  s += "</svg>\n";
  return s;
}

}  // namespace salient::attattr
