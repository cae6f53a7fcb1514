// lrp_partial: the LRP relevance of the last layer's attention map, positive part, mean over heads,
// [CLS] row with [CLS]→[CLS] zeroed (Chefer et al.'s generate_LRP_last_layer).
#include "explain/lrp/relevance.h"

namespace salient::explain {
namespace {

class LrpPartial : public LrpExplainer {
 public:
  std::string name() const override { return "lrp_partial"; }
  // Starts from the one-hot target on the logits; --score does not apply.
  bool uses_model_output() const override { return false; }

 protected:
  torch::Tensor scores(const Classifier&, const Batch&, const LrpResult& r, const std::vector<int64_t>&,
                       const ExplainOptions&) const override {
    torch::Tensor s = r.attn_cam.back().clamp_min(0).mean(1).select(1, 0).clone();
    s.select(1, 0).zero_();
    return s;
  }
};

}  // namespace

ExplainerInfo lrp_partial_info() {
  return {"lrp_partial", "lrp", "LRP relevance of the last layer's attention, [CLS] row (Chefer et al. 2021 code)", {},
          [] { return std::unique_ptr<Explainer>(new LrpPartial()); }, {Footprint::Pass::relevance}};
}

}  // namespace salient::explain
