// Learned explainers: trained artifacts behind the same interface as the post-hoc methods, loaded
// from the directory their parameter names (and kept loaded while it stays the same).
#include "expnet/expnet.h"
#include "explain/methods.h"
#include "util/error.h"

namespace salient::explain {
namespace {

// ExpNet (Mihaila 2026, docs/expnet.md): one forward pass with attentions, attention features per
// token, a small MLP → probability that a person marks the token. It does not depend on the class
// explained; structural tokens and the pair segment score 0.
class ExpNetExplainer : public Explainer {
 public:
  std::string name() const override { return "expnet"; }
  bool uses_model_output() const override { return false; }

 protected:
  std::vector<Explanation> compute(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                   const std::vector<int64_t>& targets, const ExplainOptions& o) override {
    check_inputs(inputs, targets, clf.model.config().num_labels);
    const std::optional<std::string> dir = optional_param_string(o, "expnet");
    if (!dir || dir->empty()) fail("--expnet: method 'expnet' needs the directory of a trained ExpNet (salient expnet train)");
    if (*dir != loaded_dir_) {
      net_ = ExpNet::load(*dir);
      loaded_dir_ = *dir;
    }
    net_.check_compatible(clf, *dir);
    int64_t longest = 1;
    for (const Encoding* e : inputs) longest = std::max<int64_t>(longest, static_cast<int64_t>(e->ids.size()));
    std::vector<std::vector<double>> scores = net_.explain(clf, inputs, rows_per_pass(o.limits(), longest));
    std::vector<Explanation> out;
    for (size_t i = 0; i < inputs.size(); ++i) out.push_back({name(), targets[i], std::move(scores[i]), {{"expnet", *dir}}});
    return out;
  }

 private:
  ExpNet net_;
  std::string loaded_dir_;
};

}  // namespace

ExplainerInfo expnet_info() {
  return {"expnet", "learned",
          "ExpNet (Mihaila 2026): a trained MLP from attention features to token importance (salient expnet train)",
          {path_param("expnet", nullptr, "directory of a trained ExpNet (expnet.json + expnet.safetensors)")},
          [] { return std::unique_ptr<Explainer>(new ExpNetExplainer()); }, {Footprint::Pass::attentions}};
}

}  // namespace salient::explain
