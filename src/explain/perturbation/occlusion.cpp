// occlusion: leave-one-out, the output drop when a token is masked or deleted (Zeiler & Fergus
// 2014 for text: one token at a time).
#include "explain/methods.h"

namespace salient::explain {
namespace {

// Leave-one-out: score_i = F(x) − F(x with token i replaced by [MASK] (default) or deleted).
// Special tokens are never removed and score 0. All perturbations go through batched scoring.
class Occlusion : public Explainer {
 public:
  std::string name() const override { return "occlusion"; }
  std::vector<Explanation> compute(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                   const std::vector<int64_t>& targets, const ExplainOptions& o) override {
    check_inputs(inputs, targets, clf.model.config().num_labels);
    const Removal removal = parse_removal(param_string(o, "removal"));
    std::vector<TokenSequence> seqs;
    std::vector<int64_t> seq_targets;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TokenSequence x = to_sequence(*inputs[i]);
      const std::vector<bool> removable = removable_positions(clf, *inputs[i]);
      seqs.push_back(x);
      seq_targets.push_back(targets[i]);
      for (size_t t = 0; t < x.ids.size(); ++t) {
        if (!removable[t]) continue;
        std::vector<int> rm(x.ids.size(), 0);
        rm[t] = 1;
        seqs.push_back(remove_positions(x, rm, removal, clf.tokenizer.mask_id()));
        seq_targets.push_back(targets[i]);
      }
    }
    const std::vector<double> f = score_sequences(clf, seqs, seq_targets, output_of(o), o.limits());
    std::vector<Explanation> out;
    size_t at = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::vector<bool> removable = removable_positions(clf, *inputs[i]);
      const double full = f[at++];
      Explanation e{name(), targets[i], std::vector<double>(removable.size(), 0.0), nlohmann::json::object()};
      for (size_t t = 0; t < removable.size(); ++t)
        if (removable[t]) e.scores[t] = full - f[at++];
      out.push_back(std::move(e));
    }
    return out;
  }
};

}  // namespace

ExplainerInfo occlusion_info() {
  return {"occlusion", "perturbation", "leave-one-out: output drop when a token is masked or deleted", {removal_param()},
          [] { return std::unique_ptr<Explainer>(new Occlusion()); }, {Footprint::Pass::forward, /*fills_budget=*/true, 0, "tokens"}};
}

}  // namespace salient::explain
