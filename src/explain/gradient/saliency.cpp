// saliency: the L2 norm of the explained output's gradient w.r.t. each word embedding, or the
// embedding layer's output with layer=embeddings (Simonyan et al. 2014, as Captum's Saliency on
// the embedding layer).
#include "explain/gradient/embedding_gradients.h"

namespace salient::explain {
namespace {

class Saliency : public EmbeddingGradientExplainer {
 public:
  std::string name() const override { return "saliency"; }

 protected:
  torch::Tensor token_scores(const torch::Tensor& grad, const torch::Tensor&) const override { return grad.norm(2, -1); }
};

}  // namespace

ExplainerInfo saliency_info() {
  return {"saliency", "gradient", "L2 norm of the gradient w.r.t. the word embedding (Simonyan et al. 2014)",
          {gradient_layer_param()},
          [] { return std::unique_ptr<Explainer>(new Saliency()); }, {Footprint::Pass::gradient}};
}

}  // namespace salient::explain
