// salient attattr attribute | heads | prune | tree | triggers: Self-Attention Attribution, over
// salient/attattr.h.
#include "commands.h"
#include "salient/attattr.h"

namespace salient::cli {

namespace {

// The model and the integration, with the command's default m (20, or 64 for tree and triggers).
void add_common(CLI::App* cmd, AttAttrRun& a) {
  cmd->add_option("--model", a.model, "model directory")->required();
  cmd->add_option("--steps,--m", a.m, "integration points m (default " + std::to_string(a.m) + ")");
  cmd->add_option("--rule", a.rule,
                  "riemann_left (default, as the authors' code; alias left) | riemann_right | riemann_middle | "
                  "riemann_trapezoid | gausslegendre (aliases right, midpoint, trapezoid, gauss)");
  cmd->add_option("--max-batch-mb", a.max_batch_mb, "memory bound for one chunk of integration points (MiB)");
  add_data_dir(cmd, a.data_dir);
  cmd->add_flag("--float64", a.float64, "compute in double precision");
}

}  // namespace

void add_attattr_commands(CLI::App& app, std::vector<Command>& commands) {
  auto* group = app.add_subcommand("attattr", "Self-Attention Attribution (Hao et al. 2021): attribute, heads, prune, tree, triggers");
  group->require_subcommand(1);

  static AttAttrAttributeRun at;
  auto* attr = group->add_subcommand("attribute", "attribution of every attention connection → JSON lines");
  add_common(attr, at);
  attr->add_option("--layers", at.layers, "comma-separated layers (default: all)");
  attr->add_option("--target", at.target, "pred (default) | gold (needs 'label' in the input) | class number or name");
  attr->add_option("--input,-i", at.input, "input JSON/text lines (default stdin)");
  attr->add_option("--out,-o,--output", at.output, "output file (default stdout)");
  attr->add_option("--html", at.html, "write an HTML view (head heatmaps + token matrix) of one example");
  attr->add_option("--html-index", at.html_index, "which input line the HTML view shows (default 0)");
  attr->add_flag("--straightforward", at.straightforward, "reference path: m full forward+backward passes per layer");

  static AttAttrHeadsRun hd;
  auto* heads = group->add_subcommand("heads", "head importance over a dataset: attattr, attention, Taylor (AttAttr's per-token form and Michel et al.'s), random");
  add_common(heads, hd);
  heads->add_option("--data", hd.data, "dataset (default sst2:dev)");
  heads->add_option("--limit", hd.limit, "first N examples (default 200)");
  heads->add_option("--target", hd.target, "gold (default) | pred");
  heads->add_option("--taylor-batch", hd.taylor_batch, "batch size of the Taylor scores (default 32)");
  heads->add_option("--seed", hd.seed, "seed of the random ordering");
  heads->add_option("--out,-o", hd.out, "output JSON (default stdout)");

  static AttAttrPruneRun pr;
  auto* prune = group->add_subcommand("prune", "pruning curves for each head ordering (accuracy on the eval set)");
  add_common(prune, pr.heads);
  prune->add_option("--heads", pr.heads_file, "scores from `attattr heads` (default: compute them)");
  prune->add_option("--data", pr.heads.data, "dataset for the head scores when computed (default sst2:dev)");
  prune->add_option("--limit", pr.heads.limit, "examples for the head scores (default 200)");
  prune->add_option("--seed", pr.heads.seed, "seed of the random ordering");
  prune->add_option("--eval-data", pr.eval_data, "accuracy on this whole dataset (default sst2:dev)");
  prune->add_option("--prune-steps", pr.steps, "points of the pruning curve (default 10: 0%, 10%, … 100%)");
  prune->add_option("--layer", pr.layer, "also prune the top-k heads of this layer, k = 0..H");
  prune->add_option("--out,-o", pr.heads.out, "output JSON (default stdout); to a file, an interrupted run resumes from OUT.partial.jsonl");
  prune->add_option("--svg", pr.svg, "plot of the curves");
  prune->add_option("--markdown", pr.markdown, "table of the curves");

  static AttAttrTreeRun tr;
  auto* tree = group->add_subcommand("tree", "attribution tree (Algorithm 1) of one example → JSON + SVG");
  add_common(tree, tr);
  tree->add_option("--text", tr.text, "the input text");
  tree->add_option("--pair", tr.pair, "second segment");
  tree->add_option("--data", tr.data, "or a dataset ...");
  tree->add_option("--index", tr.index, "... and the record index");
  tree->add_option("--target", tr.target, "pred (default) | gold");
  tree->add_option("--tau", tr.tau, "threshold on per-layer normalised attributions (default 0.4)");
  tree->add_option("--top-tau", tr.top_tau, "threshold of the top layer (root's children); default = --tau");
  tree->add_option("--top-layer", tr.top_layer, "layer of the root's children (default: second to last, as the original)");
  tree->add_option("--out,-o", tr.out, "output JSON (default stdout)");
  tree->add_option("--svg", tr.svg, "drawing (tokens across, layers up)");

  static AttAttrTriggersRun tg;
  auto* trig = group->add_subcommand("triggers", "adversarial trigger patterns: mine on training data, insert into dev");
  add_common(trig, tg);
  trig->add_option("--train", tg.train, "mining data (default sst2:train)")->each([](const std::string&) { tg.mining_set_given = true; });
  trig->add_option("--n", tg.n, "first N training examples (default 500)")->each([](const std::string&) { tg.mining_set_given = true; });
  trig->add_option("--dev", tg.dev, "evaluation data (default sst2:dev)");
  trig->add_option("--top", tg.top, "evaluate the top-N patterns (default 10)");
  trig->add_option("--min-score", tg.min_score, "drop patterns whose two scores sum below this (default 0.02)")
      ->each([](const std::string&) { tg.mining_set_given = true; });
  trig->add_option("--patterns", tg.patterns,
                   "evaluate the patterns of another run's output JSON (mined on another model) instead of mining");
  trig->add_flag("--use-both", tg.use_both, "always insert both top pairs (default: only top-1 when score2/score1 < 0.2)");
  trig->add_option("--out,-o", tg.out, "output JSON (default stdout)");
  trig->add_option("--markdown", tg.markdown, "table of the results");

  commands.push_back({attr, [] { run_attattr_attribute(at); }});
  commands.push_back({heads, [] { run_attattr_heads(hd); }});
  commands.push_back({prune, [] { run_attattr_prune(pr); }});
  commands.push_back({tree, [] { run_attattr_tree(tr); }});
  commands.push_back({trig, [] { run_attattr_triggers(tg); }});
}

}  // namespace salient::cli
