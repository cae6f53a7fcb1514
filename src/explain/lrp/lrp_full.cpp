// lrp_full: the LRP relevance at the encoder input (the embedding output), summed over the hidden
// dimension, [CLS] zeroed (Chefer et al.'s generate_full_lrp).
#include "explain/lrp/relevance.h"

namespace salient::explain {
namespace {

class LrpFull : public LrpExplainer {
 public:
  std::string name() const override { return "lrp_full"; }
  // Starts from the one-hot target on the logits; --score does not apply.
  bool uses_model_output() const override { return false; }

 protected:
  torch::Tensor scores(const Classifier&, const Batch&, const LrpResult& r, const std::vector<int64_t>&,
                       const ExplainOptions&) const override {
    torch::Tensor s = r.input_relevance.sum(-1);
    s.select(1, 0).zero_();
    return s;
  }
};

}  // namespace

ExplainerInfo lrp_full_info() {
  return {"lrp_full", "lrp", "LRP relevance at the encoder input, summed over the hidden dimension (Chefer et al. code)",
          {}, [] { return std::unique_ptr<Explainer>(new LrpFull()); }, {Footprint::Pass::relevance}};
}

}  // namespace salient::explain
