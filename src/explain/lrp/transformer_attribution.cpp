// transformer_attribution (Chefer et al. 2021, generate_LRP): per layer (∂F/∂A ⊙ R_A)⁺ averaged
// over heads, rolled out with the identity from start_layer, [CLS] row, [CLS]→[CLS] set to the
// row's minimum.
#include "explain/lrp/relevance.h"

namespace salient::explain {
namespace {

class TransformerAttribution : public LrpExplainer {
 public:
  std::string name() const override { return "transformer_attribution"; }

 protected:
  torch::Tensor scores(const Classifier& clf, const Batch& batch, const LrpResult& r, const std::vector<int64_t>& targets,
                       const ExplainOptions& o) const override {
    torch::Tensor s = relevance_rollout(clf, batch, r, targets, output_of(o), o);
    // [CLS]→[CLS]: generate_LRP sets it to the row minimum (here over the real tokens: the
    // reference has no padding).
    for (int64_t b = 0; b < s.size(0); ++b) s[b][0] = s[b].slice(0, 0, batch.lengths[b]).min();
    return s;
  }
};

}  // namespace

ExplainerInfo transformer_attribution_info() {
  return {"transformer_attribution", "lrp", "Chefer et al. 2021: (∇A ⊙ R_A)⁺ head mean, rolled out", {start_layer_param()},
          [] { return std::unique_ptr<Explainer>(new TransformerAttribution()); }, {Footprint::Pass::relevance}};
}

}  // namespace salient::explain
