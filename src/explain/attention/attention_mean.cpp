// attention_mean and attention_mean_last: the attention each token receives, mean over heads and
// real query rows, over all layers or the last one. Not SMaT's static attention explainers, which
// average pre-softmax logits and then take a softmax (smat/simulation.h).
#include "explain/attention/attention_explainer.h"

namespace salient::explain {
namespace {

// Attention received by each token: mean over heads, over the real query rows, and over all
// layers (or the last one).
class MeanAttention : public AttentionExplainer {
 public:
  explicit MeanAttention(bool last_only)
      : AttentionExplainer(last_only ? "attention_mean_last" : "attention_mean", false, false), last_only_(last_only) {}
  torch::Tensor compute(const AttentionPass& p, const ExplainOptions&) const override {
    torch::Tensor total = torch::zeros_like(real_tokens(p));
    const size_t first = last_only_ ? p.attn.size() - 1 : 0;
    for (size_t l = first; l < p.attn.size(); ++l) total += mean_over_real_rows(p, p.attn[l].mean(1));
    return total / double(p.attn.size() - first);
  }

 private:
  bool last_only_;
};

}  // namespace

ExplainerInfo attention_mean_info() {
  return {"attention_mean", "attention", "attention probability each token receives, mean over all layers, heads and queries", {},
          [] { return std::unique_ptr<Explainer>(new MeanAttention(false)); }, {Footprint::Pass::attentions}};
}
ExplainerInfo attention_mean_last_info() {
  return {"attention_mean_last", "attention", "as attention_mean over the last layer only", {},
          [] { return std::unique_ptr<Explainer>(new MeanAttention(true)); }, {Footprint::Pass::attentions}};
}

}  // namespace salient::explain
