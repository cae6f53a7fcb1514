// attention_gradcam: GradCAM on the last layer's attention (Chefer et al. 2021's generate_attn_gradcam).
#include <limits>

#include "explain/attention/attention_explainer.h"

namespace salient::explain {
namespace {

// Attention GradCAM (Chefer et al.'s generate_attn_gradcam): last layer; per head, the gradient
// of the output w.r.t. A averaged over the (real) query × key entries weights that head's A;
// mean over heads, positive part, min–max normalised over the (real) map, [CLS] row with
// [CLS]→[CLS] zeroed.
class AttentionGradCam : public AttentionExplainer {
 public:
  AttentionGradCam() : AttentionExplainer("attention_gradcam", true, false) {}
  torch::Tensor compute(const AttentionPass& p, const ExplainOptions&) const override {
    const torch::Tensor& a = p.attn.back();
    const torch::Tensor& g = p.attn_grad.back();
    torch::Tensor q = real_tokens(p);
    torch::Tensor pair = q.unsqueeze(2) * q.unsqueeze(1);  // [B, L, L]
    // Means and extremes over the real L×L block only, so padding changes nothing.
    torch::Tensor w = (g * pair.unsqueeze(1)).sum({2, 3}, true) / pair.sum({1, 2}).view({-1, 1, 1, 1});
    torch::Tensor cam = (a * w).mean(1).clamp_min(0);  // [B, L, L]
    const double inf = std::numeric_limits<double>::infinity();
    torch::Tensor lo = cam.masked_fill(pair == 0, inf).amin({1, 2}, true);
    torch::Tensor hi = cam.masked_fill(pair == 0, -inf).amax({1, 2}, true);
    // A constant map (the reference would divide by 0) gives zeros.
    torch::Tensor range = hi - lo;
    cam = torch::where(range > 0, (cam - lo) / range.clamp_min(std::numeric_limits<double>::min()),
                       torch::zeros_like(cam));
    return cls_row_without_self(cam);
  }
};

}  // namespace

ExplainerInfo attention_gradcam_info() {
  return {"attention_gradcam", "attention", "GradCAM on the last layer's attention (Chefer et al. 2021 code)", {},
          [] { return std::unique_ptr<Explainer>(new AttentionGradCam()); }, {Footprint::Pass::attention_gradients}};
}

}  // namespace salient::explain
