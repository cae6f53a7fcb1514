// cam: the last layer's attention gradient, positive part (Mask-LRP's generate_gradcam; ExpNet's "CAM").
#include "explain/attention/attention_explainer.h"

namespace salient::explain {
namespace {

// CAM over the last attention map as ExpNet's "CAM" baseline is most plausibly defined: Mask-LRP's
// generate_gradcam (LinxinS97/Mask-LRP, the code whose nine attention/LRP explainers match
// ExpNet's list): the gradient of the output w.r.t. the last layer's attention, averaged over heads
// and (real) query rows, positive part, the [CLS] column set to 0. It weighs nothing by A itself;
// attention_gradcam is the variant that does.
class AttentionCam : public AttentionExplainer {
 public:
  AttentionCam() : AttentionExplainer("cam", true, false) {}
  torch::Tensor compute(const AttentionPass& p, const ExplainOptions&) const override {
    const torch::Tensor& g = p.attn_grad.back();  // [B, H, L, L]
    torch::Tensor q = real_tokens(p);             // [B, L]
    torch::Tensor rows = q.view({q.size(0), 1, -1, 1});
    torch::Tensor score = ((g * rows).sum(2) / rows.sum(2)).mean(1).clamp_min(0) * q;  // [B, L]
    score.select(1, 0).zero_();
    return score;
  }
};

}  // namespace

ExplainerInfo cam_info() {
  return {"cam", "attention",
          "last layer: attention gradient, mean over heads and queries, positive part (Mask-LRP's generate_gradcam)", {},
          [] { return std::unique_ptr<Explainer>(new AttentionCam()); }, {Footprint::Pass::attention_gradients}};
}

}  // namespace salient::explain
