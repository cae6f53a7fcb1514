// SST's selection head as a learned explainer (Bassan et al., ICLR 2025; docs/sst.md): a text
// model trained by `salient sst train` outputs, in the same forward pass as its prediction, a score
// s ∈ [0, 1] per token; the explanation is the subset {s ≥ τ}. Token scores are the subset as 0/1
// (or s itself with --sst-scores selection); the extras carry s, τ and the subset size.
#include "explain/methods.h"
#include "model/checkpoint.h"
#include "sst/model.h"
#include "util/error.h"
#include "util/io.h"

namespace salient::explain {
namespace {

class SstSelectionExplainer : public Explainer {
 public:
  std::string name() const override { return "sst"; }
  bool uses_model_output() const override { return false; }

 protected:
  std::vector<Explanation> compute(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                   const std::vector<int64_t>& targets, const ExplainOptions& o) override {
    check_inputs(inputs, targets, clf.model.config().num_labels);
    const std::string dir = optional_param_string(o, "sst").value_or(clf.dir);
    if (dir.empty() || !sst::is_sst_model_dir(dir))
      fail("--sst: method 'sst' needs an SST text model directory (salient sst train); '{}' has no sst.json", dir);
    if (dir != loaded_dir_) {
      const nlohmann::json settings = parse_json_file(join_path(dir, "sst.json"));
      if (settings.value("modality", "") != "text") fail("--sst: '{}' is an image SST model; explain it with salient sst explain", dir);
      const std::string path = join_path(dir, "sst_head.safetensors");
      auto head = load_tensors(path);
      if (!head.count("sst_head.weight") || !head.count("sst_head.bias")) fail("{}: missing sst_head.weight or sst_head.bias", path);
      weight_ = head["sst_head.weight"];
      bias_ = head["sst_head.bias"];
      tau_ = settings.value("tau", 0.5);
      loaded_dir_ = dir;
    }
    if (weight_.size(1) != clf.model.config().hidden_size)
      fail("--sst: the head of '{}' reads hidden size {}, the model has {}", dir, weight_.size(1), clf.model.config().hidden_size);
    const bool subset_scores = param_string(o, "sst_scores") == "subset";
    std::vector<Explanation> out;
    torch::NoGradGuard ng;
    for (const auto& [b, e] : passes_in_order(inputs, o.limits())) {
      std::vector<const Encoding*> part(inputs.begin() + b, inputs.begin() + e);
      Batch batch = make_batch(part, clf.tokenizer.pad_id(), clf.model.device());
      torch::Tensor s = sst::text_selection(clf, weight_.to(clf.model.device()), bias_.to(clf.model.device()), batch);
      for (size_t i = b; i < e; ++i) {
        const Encoding& enc = *inputs[i];
        std::vector<double> sel = row_scores(s, static_cast<int64_t>(i - b), static_cast<int64_t>(enc.ids.size()));
        std::vector<double> scores(sel.size(), 0.0);
        int64_t kept = 0, features = 0;
        for (size_t j = 0; j < sel.size(); ++j) {
          if (clf.tokenizer.is_structural(enc.ids[j])) {
            sel[j] = 0;  // never part of a subset
            continue;
          }
          ++features;
          const bool in = sel[j] >= tau_;
          kept += in;
          scores[j] = subset_scores ? (in ? 1.0 : 0.0) : sel[j];
        }
        out.push_back({name(), targets[i], std::move(scores),
                       {{"sst", dir}, {"tau", tau_}, {"selection", sel}, {"subset_size", kept}, {"features", features}}});
      }
    }
    return out;
  }

 private:
  torch::Tensor weight_, bias_;
  double tau_ = 0.5;
  std::string loaded_dir_;
};

}  // namespace

ExplainerInfo sst_info() {
  return {"sst", "learned",
          "SST (Bassan et al. 2025): the subset {s ≥ τ} a model trained by salient sst train outputs with its prediction",
          {path_param("sst", nullptr, "directory of a text SST model (default: the explained model's, --model)"),
           choice_param("sst_scores", "subset", {"subset", "selection"}, "token scores: the subset as 0/1, or s itself")},
          [] { return std::unique_ptr<Explainer>(new SstSelectionExplainer()); }, {Footprint::Pass::attentions}};
}

}  // namespace salient::explain
