// random: uniform random scores per token, seeded per example; the floor every metric is read against.
#include "explain/methods.h"

namespace salient::explain {
namespace {

class RandomExplainer : public Explainer {
 public:
  std::string name() const override { return "random"; }
  bool uses_model_output() const override { return false; }
  std::vector<Explanation> compute(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                   const std::vector<int64_t>& targets, const ExplainOptions& o) override {
    check_inputs(inputs, targets, clf.model.config().num_labels);
    std::vector<Explanation> out;
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto rng = example_rng(o.seed, *inputs[i]);
      std::uniform_real_distribution<double> u(0.0, 1.0);
      Explanation e{name(), targets[i], {}, nlohmann::json::object()};
      for (size_t t = 0; t < inputs[i]->ids.size(); ++t) e.scores.push_back(u(rng));
      out.push_back(std::move(e));
    }
    return out;
  }
};

}  // namespace

ExplainerInfo random_info() {
  return {"random", "baseline", "uniform random scores (a floor for every metric)", {},
          [] { return std::unique_ptr<Explainer>(new RandomExplainer()); }, {Footprint::Pass::forward}};
}

}  // namespace salient::explain
