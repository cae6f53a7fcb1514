#pragma once
// Self-Attention Attribution's runs over files and datasets (docs/attattr.md), as `salient attattr
// attribute | heads | prune | tree | triggers`: each writes its output ("-" or "": stdout) and the
// files it is asked for. Model::attattr and friends (salient/salient.h) are the calls for one input
// in memory. Under mpirun, attribute and heads share their inputs out (docs/distributed.md).
#include <cstdint>
#include <string>

namespace salient {

// What every AttAttr run takes: the model and the integration.
struct AttAttrRun {
  std::string model;
  std::string data_dir;      // "": the shared data
  int m = 20;                // integration points
  // riemann_left (default, as the authors' code; alias left) | riemann_right | riemann_middle |
  // riemann_trapezoid | gausslegendre (aliases right, midpoint, trapezoid, gauss)
  std::string rule = "left";
  double max_batch_mb = 2048;  // memory bound for one chunk of integration points (MiB)
  bool float64 = false;        // compute in double precision
};

// The attribution of every attention connection, one JSON line per input line of `input` (text or
// JSON lines; "-": stdin).
struct AttAttrAttributeRun : AttAttrRun {
  std::string layers;         // comma-separated layers ("" or "all": every layer)
  std::string target = "pred";  // pred | gold (the input's 'label') | a class number or name
  std::string input = "-", output = "-";
  std::string html;           // an HTML view (head heatmaps + token matrix) of input line html_index
  int64_t html_index = 0;
  bool straightforward = false;  // the reference path: m full forward+backward passes per layer
};
void run_attattr_attribute(const AttAttrAttributeRun& run);

// Head importance over a dataset: attattr, attention, Taylor (AttAttr's per-token form and Michel
// et al.'s), random; written to `out` as JSON.
struct AttAttrHeadsRun : AttAttrRun {
  std::string data = "sst2:dev", target = "gold", out = "-";  // target: gold | pred
  int64_t limit = 200, taylor_batch = 32;
  uint64_t seed = 0;  // the random ordering
};
void run_attattr_heads(const AttAttrHeadsRun& run);

// Pruning curves of each head ordering: accuracy on the whole `eval_data` with 0, 1/steps, ... of
// the heads removed, lowest score first. The scores come from `heads_file` (run_attattr_heads'
// output) or are computed as `heads` says. To a file, an interrupted run resumes from
// OUT.partial.jsonl.
struct AttAttrPruneRun {
  AttAttrHeadsRun heads;  // the model, the integration, the head scores' data and `out`
  std::string heads_file, eval_data = "sst2:dev", svg, markdown;
  int steps = 10;
  int64_t layer = -1;  // >= 0: also the top-k heads of that layer, k = 0..H
};
void run_attattr_prune(const AttAttrPruneRun& run);

// The attribution tree (Algorithm 1) of one example: `text` (and `pair`) or record `index` of
// `data`; JSON to `out`, an SVG drawing to `svg`.
struct AttAttrTreeRun : AttAttrRun {
  AttAttrTreeRun() { m = 64; }
  std::string text, pair, data, target = "pred", out = "-", svg;  // target: pred | gold
  int64_t index = 0, top_layer = -1;  // top_layer -1: the second to last, as the original
  double tau = 0.4, top_tau = -1;     // top_tau < 0: tau
};
void run_attattr_tree(const AttAttrTreeRun& run);

// Adversarial trigger patterns mined on the first `n` examples of `train` (or read from another
// run's output, `patterns`), the top `top` inserted into the dev examples of the class they attack.
struct AttAttrTriggersRun : AttAttrRun {
  AttAttrTriggersRun() { m = 64; }
  std::string train = "sst2:train", dev = "sst2:dev", out = "-", markdown, patterns;
  int64_t n = 500, top = 10;
  double min_score = 0.02;  // patterns whose two scores sum below this are dropped
  bool use_both = false;    // always insert both top pairs (default: only top-1 when score2/score1 < 0.2)
  bool mining_set_given = false;  // train, n or min_score set (refused with `patterns`)
};
void run_attattr_triggers(const AttAttrTriggersRun& run);

}  // namespace salient
