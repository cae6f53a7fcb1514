#pragma once
// Self-Attention Attribution's results as JSON: what `salient attattr attribute | heads | tree`
// write, the public API returns and the Python package and the viewer show (docs/attattr.md).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attattr/analysis.h"
#include "attattr/attribution.h"
#include "model/classifier.h"

namespace salient::attattr {

// One input's attribution: tokens, target, probabilities, per layer the [heads, L, L] matrices,
// completeness, head importance, token and word flows.
nlohmann::json attribution_json(const Classifier& clf, const Encoding& enc, const AttributionResult& result,
                                const AttributionOptions& options, const std::vector<int64_t>& layer_ids);

// The attribution tree of one input (Hao et al. §3.2): nodes, edges, the top layer; tau and
// top_tau as build_tree's, top_layer < 0: chosen by the rule there.
nlohmann::json tree_json(const Classifier& clf, const Encoding& enc, const AttributionResult& result,
                         const AttributionOptions& options, double tau, double top_tau, int64_t top_layer);

// The first `limit` records (0: all) of a labelled dataset, encoded; errors name `flag`.
LabelledSet load_labelled_set(const Classifier& clf, const std::string& spec, const std::string& data_dir, int64_t limit,
                              const std::string& flag);

// Head importance orderings over a labelled set: attattr (gold or predicted class), attention,
// Taylor (the AttAttr paper's and Michel et al.'s) and random, each [layers, heads].
nlohmann::json head_scores_json(const Classifier& clf, const LabelledSet& set, const AttributionOptions& options,
                                bool gold_target, int64_t taylor_batch, uint64_t seed);
// The same JSON from sums computed elsewhere (a sharded run joins its parts' terms): attattr and
// attention as summed, Taylor's unnormalised sums (normalised here), random from `seed`.
struct HeadScoreSums {
  torch::Tensor attattr, attention;
  TaylorHeadScores taylor;
};
nlohmann::json head_scores_json(const Transformer& model, size_t examples, const AttributionOptions& options,
                                bool gold_target, uint64_t seed, const HeadScoreSums& sums);

// Pruning curves (Hao et al. §4.1, Fig. 3) of every ordering in `head_scores` (head_scores_json's
// JSON, or a file of it): heads removed lowest score first at `steps` + 1 fractions, accuracy on
// `eval`; with layer >= 0 also the top-k heads of that layer removed, k = 0..H. Returns
// `salient attattr prune`'s JSON: curves, layer_top_k, a markdown table and the inputs.
// `source` names where head_scores came from, for errors.
nlohmann::json pruning_json(const Classifier& clf, const nlohmann::json& head_scores, const std::string& source,
                            const LabelledSet& eval, const std::string& eval_spec, int steps, int64_t layer,
                            MaskAccuracies* accuracies = nullptr);

// The patterns of a saved `salient attattr triggers` result (its JSON: "train", "mined_examples",
// "patterns"), rebuilt for `clf` from the same mining examples, so another model can be attacked
// with them (do patterns transfer between fine-tuning seeds?). Each pattern's positions must hold
// the saved tokens under clf's tokenizer, and with `use_both` as given the inserted tokens must be
// the saved ones; otherwise an error naming `source` and the pattern's rank.
std::vector<TriggerPattern> trigger_patterns_from_json(const Classifier& clf, const nlohmann::json& saved,
                                                       const std::string& source, const std::string& data_dir,
                                                       bool use_both);

}  // namespace salient::attattr
