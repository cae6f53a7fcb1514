// gae: generic attention explainability (Chefer et al. 2021b).
#include "explain/attention/attention_explainer.h"

namespace salient::explain {
namespace {

// GAE (Chefer et al. 2021b, Transformer-MM-Explainability): R = I; per layer
// R ← R + mean_h((∇A ⊙ A)⁺) · R; scores = [CLS] row of R with [CLS]→[CLS] zeroed.
class Gae : public AttentionExplainer {
 public:
  Gae() : AttentionExplainer("gae", true, false) {}
  torch::Tensor compute(const AttentionPass& p, const ExplainOptions&) const override {
    const int64_t B = p.attn[0].size(0), L = p.attn[0].size(-1);
    torch::Tensor r = torch::eye(L, p.attn[0].options()).unsqueeze(0).repeat({B, 1, 1});
    for (size_t l = 0; l < p.attn.size(); ++l) {
      torch::Tensor cam = (p.attn_grad[l] * p.attn[l]).clamp_min(0).mean(1);
      r = r + torch::bmm(cam, r);
    }
    // [CLS]→[CLS] zeroed, as the authors' text code (VisualBERT generate_ours, LXMERT R_t_t[0, 0]).
    return cls_row_without_self(r);
  }
};

}  // namespace

ExplainerInfo gae_info() {
  return {"gae", "attention", "generic attention explainability (Chefer et al. 2021b)", {},
          [] { return std::unique_ptr<Explainer>(new Gae()); }, {Footprint::Pass::attention_gradients}};
}

}  // namespace salient::explain
