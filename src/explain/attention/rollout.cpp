// rollout: attention rollout with the residual identity (Abnar & Zuidema 2020).
#include "explain/attention/attention_explainer.h"

namespace salient::explain {
namespace {

class Rollout : public AttentionExplainer {
 public:
  Rollout() : AttentionExplainer("rollout", false, false) {}
  torch::Tensor compute(const AttentionPass& p, const ExplainOptions& o) const override {
    std::vector<torch::Tensor> maps;
    for (const auto& a : p.attn) maps.push_back(a.mean(1));
    torch::Tensor scores = rollout(maps, start_layer(o, maps.size()));
    scores.select(1, 0).zero_();  // [CLS]→[CLS], as generate_rollout's `rollout[:, 0, 0] = 0`
    return scores;
  }
};

}  // namespace

ExplainerInfo rollout_info() {
  return {"rollout", "attention", "attention rollout with the residual identity (Abnar & Zuidema 2020)",
          {start_layer_param()}, [] { return std::unique_ptr<Explainer>(new Rollout()); }, {Footprint::Pass::attentions}};
}

// Rollout (Abnar & Zuidema 2020, as Chefer et al.'s compute_rollout_attention): Â_l = mean_h A_l + I,
// rows renormalised; joint = Â_N ⋯ Â_start; scores = [CLS] row. Parameter start_layer (default 0).
torch::Tensor rollout(const std::vector<torch::Tensor>& maps, int64_t start) {
  const int64_t L = maps[0].size(-1);
  torch::Tensor eye = torch::eye(L, maps[0].options()).unsqueeze(0);
  torch::Tensor joint;
  for (size_t l = start; l < maps.size(); ++l) {
    torch::Tensor a = maps[l] + eye;
    a = a / a.sum(-1, true);
    joint = joint.defined() ? torch::bmm(a, joint) : a;
  }
  return joint.select(1, 0);
}

}  // namespace salient::explain
