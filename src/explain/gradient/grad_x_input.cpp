// grad_x_input: gradient · word embedding (or · the embedding layer's output with
// layer=embeddings), summed over the hidden dimension (Shrikumar et al. 2016, as Captum's
// InputXGradient on the embedding layer).
#include "explain/gradient/embedding_gradients.h"

namespace salient::explain {
namespace {

class GradientTimesInput : public EmbeddingGradientExplainer {
 public:
  std::string name() const override { return "grad_x_input"; }

 protected:
  torch::Tensor token_scores(const torch::Tensor& grad, const torch::Tensor& embeds) const override {
    return (grad * embeds).sum(-1);
  }
};

}  // namespace

ExplainerInfo grad_x_input_info() {
  return {"grad_x_input", "gradient", "gradient · word embedding, summed over the hidden dimension",
          {gradient_layer_param()},
          [] { return std::unique_ptr<Explainer>(new GradientTimesInput()); }, {Footprint::Pass::gradient}};
}

}  // namespace salient::explain
