// raw_attention: the last layer's attention from [CLS], mean over heads.
#include "explain/attention/attention_explainer.h"

namespace salient::explain {
namespace {

// Last layer, [CLS] query row, mean over heads, [CLS]→[CLS] zeroed (Chefer et al.'s
// generate_attn_last_layer).
class RawAttention : public AttentionExplainer {
 public:
  RawAttention() : AttentionExplainer("raw_attention", false, false) {}
  torch::Tensor compute(const AttentionPass& p, const ExplainOptions&) const override {
    return cls_row_without_self(p.attn.back().mean(1));
  }
};

}  // namespace

ExplainerInfo raw_attention_info() {
  return {"raw_attention", "attention", "last layer, [CLS] row, mean over heads", {},
          [] { return std::unique_ptr<Explainer>(new RawAttention()); }, {Footprint::Pass::attentions}};
}

}  // namespace salient::explain
