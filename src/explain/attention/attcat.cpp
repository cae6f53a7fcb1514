// attcat: attentive class activation tokens (Qiang et al., NeurIPS 2022).
#include "explain/attention/attention_explainer.h"

namespace salient::explain {
namespace {

// AttCAT (Qiang et al., NeurIPS 2022) as their code computes it (generate_TransCAM in
// qiangyao1988/AttCAT; LinxinS97/Mask-LRP's AttCAT is the same): for each block b, its *input*
// hidden state h_b (the embedding output for block 0) and ∂F/∂h_b give CAT_b = Σ_d (∂F/∂h_b ⊙ h_b);
// it is weighted by the attention each token receives in block b, averaged over heads and (real)
// query rows; AttCAT = Σ_b, signed.
class AttCat : public AttentionExplainer {
 public:
  AttCat() : AttentionExplainer("attcat", true, true) {}
  torch::Tensor compute(const AttentionPass& p, const ExplainOptions&) const override {
    torch::Tensor total;
    for (size_t l = 0; l < p.attn.size(); ++l) {
      torch::Tensor cat = (p.hidden_grad[l] * p.hidden[l]).sum(-1);    // [B, L]
      torch::Tensor received = mean_over_real_rows(p, p.attn[l].mean(1));  // [B, L]
      torch::Tensor s = received * cat;
      total = total.defined() ? total + s : s;
    }
    return total;
  }
};

}  // namespace

ExplainerInfo attcat_info() {
  return {"attcat", "attention", "attentive class activation tokens (Qiang et al. 2022)", {},
          [] { return std::unique_ptr<Explainer>(new AttCat()); }, {Footprint::Pass::attention_gradients}};
}

}  // namespace salient::explain
