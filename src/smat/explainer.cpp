// SMaT's learned attention explainer (Fernandes et al., NeurIPS 2022; docs/smat.md): per-head
// coefficients meta-trained by `salient smat train` so that a student simulates the teacher better.
// Token scores are the explanation itself, a distribution over the input's tokens: softmax of
// Σ_h λ_h s_h, s_h the head's attention logits averaged over the real query rows.
#include "explain/methods.h"
#include "smat/head_explainer.h"
#include "util/error.h"

namespace salient::explain {
namespace {

class SmatExplainer : public Explainer {
 public:
  std::string name() const override { return "smat"; }
  bool uses_model_output() const override { return false; }

 protected:
  std::vector<Explanation> compute(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                   const std::vector<int64_t>& targets, const ExplainOptions& o) override {
    check_inputs(inputs, targets, clf.model.config().num_labels);
    const std::optional<std::string> given = optional_param_string(o, "smat");
    if (!given || given->empty()) fail("--smat: method 'smat' needs a trained SMaT explainer (salient smat train)");
    const std::string& path = *given;
    if (path != loaded_path_) {
      explainer_ = smat::load_head_explainer(path);
      loaded_path_ = path;
    }
    std::vector<Explanation> out;
    torch::NoGradGuard no_grad;
    for (const auto& [b, e] : passes_in_order(inputs, o.limits())) {
      std::vector<const Encoding*> part(inputs.begin() + b, inputs.begin() + e);
      Batch batch = make_batch(part, clf.tokenizer.pad_id(), clf.model.device());
      torch::Tensor dist = smat::explain_with(explainer_, clf.model, batch);
      for (size_t i = b; i < e; ++i)
        out.push_back({name(), targets[i], row_scores(dist, static_cast<int64_t>(i - b), static_cast<int64_t>(inputs[i]->ids.size())),
                       {{"smat", path}, {"normalizer", smat::normalizer_name(explainer_.normalizer)}}});
    }
    return out;
  }

 private:
  smat::LearnedHeadExplainer explainer_;
  std::string loaded_path_;
};

}  // namespace

ExplainerInfo smat_info() {
  return {"smat", "learned",
          "SMaT (Fernandes et al. 2022): attention heads mixed by coefficients meta-trained for simulability (salient smat train)",
          {path_param("smat", nullptr, "smat_explainer.json from salient smat train, or the directory holding it")},
          [] { return std::unique_ptr<Explainer>(new SmatExplainer()); }, {Footprint::Pass::attentions}};
}

}  // namespace salient::explain
