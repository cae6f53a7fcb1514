// mgae: masked GAE of Mask-LRP (Song et al., Findings of EACL 2024; LinxinS97/Mask-LRP,
// Generator.MGAE): as transformer_attribution, but below each layer relevance flows only through
// the kept heads (the relevance at A·V is multiplied by the head mask before it is passed down,
// while R_A used for the map is the unmasked one and, as in their code, not halved: with every
// head kept mgae is therefore not transformer_attribution). [CLS]→[CLS] is 0, as in their code.
#include "util/error.h"
#include "util/io.h"

#include "explain/lrp/relevance.h"

namespace salient::explain {
namespace {

// --heads "L.H,L.H" (0-based) → (layer, head) pairs, checked against the model.
std::vector<std::pair<int64_t, int64_t>> parse_heads(const std::string& spec, int64_t layers, int64_t heads) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const std::string& item : split_list(spec)) {
    const size_t dot = item.find('.');
    int64_t l = -1, h = -1;
    try {
      if (dot == std::string::npos) throw std::invalid_argument(item);
      l = std::stoll(item.substr(0, dot));
      h = std::stoll(item.substr(dot + 1));
    } catch (const std::exception&) {
      fail("--heads: '{}' is not LAYER.HEAD (e.g. 0.3)", item);
    }
    if (l < 0 || l >= layers || h < 0 || h >= heads)
      fail("--heads: '{}' is outside the model's {} layers x {} heads", item, layers, heads);
    out.emplace_back(l, h);
  }
  if (out.empty()) fail("--heads: no heads given");
  return out;
}

class Mgae : public LrpExplainer {
 public:
  std::string name() const override { return "mgae"; }

 protected:
  HeadSelection head_selection(const Classifier& clf, const ExplainOptions& o) const override {
    HeadSelection select;
    select.active = true;
    const std::string heads = param_string(o, "heads");
    if (!heads.empty()) select.heads = parse_heads(heads, clf.model.num_layers(), clf.model.num_heads());
    select.positional_threshold = param_double(o, "positional_threshold");
    if (!(select.positional_threshold >= 0 && select.positional_threshold <= 1))
      fail("--positional-threshold: must be in [0, 1] (got {})", select.positional_threshold);
    return select;
  }
  torch::Tensor scores(const Classifier& clf, const Batch& batch, const LrpResult& r, const std::vector<int64_t>& targets,
                       const ExplainOptions& o) const override {
    torch::Tensor s = relevance_rollout(clf, batch, r, targets, output_of(o), o);
    s.select(1, 0).zero_();
    return s;
  }
};

}  // namespace

ExplainerInfo mgae_info() {
  return {"mgae", "lrp",
          "masked GAE (Mask-LRP, Song et al. 2024): transformer attribution, relevance passed down only through kept "
          "heads (positional, or --heads)",
          {start_layer_param(),
           string_param("heads", "", "heads that pass relevance down, LAYER.HEAD,... (empty: the input's positional heads)"),
           number_param("positional_threshold", 0.8, 0, 1,
                        "share of tokens whose top key is the next/previous token that makes a head positional")},
          [] { return std::unique_ptr<Explainer>(new Mgae()); }, {Footprint::Pass::relevance}};
}

}  // namespace salient::explain
