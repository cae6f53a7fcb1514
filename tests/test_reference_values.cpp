// Every explainer against frozen values from its authors' code (tests/data/explainer_reference.json,
// made by bench/reference_explainers.py from Chefer et al.'s, Transformer-MM-Explainability's,
// AttCAT's and Mask-LRP's code, Captum 0.8 and lime, run on the fixture model in float64): the
// attention and LRP family on all 24 fixture cases, IG on inputs with [UNK], and the LIME and
// KernelSHAP surrogate fits on fixed designs.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "explain/explainer.h"
#include "explain/methods.h"
#include "test_util.h"

using namespace salient;
using salient::test::rel_err;
using salient::test::shared_path;

namespace {

const nlohmann::json& reference() {
  static const nlohmann::json j = [] {
    std::ifstream in(std::string(SALIENT_TEST_DATA) + "/explainer_reference.json");
    return nlohmann::json::parse(in);
  }();
  return j;
}

std::string model_dir() { return shared_path("fixtures/reference-bert/model"); }

// The fixture model in float64, as the references ran it.
const Classifier& model_f64() {
  static Classifier clf = [] {
    Classifier c = load_classifier(model_dir());
    c.model.to(torch::kFloat64);
    return c;
  }();
  return clf;
}


struct Cases {
  std::vector<Encoding> encs;
  std::vector<int64_t> targets;
  std::vector<const Encoding*> ptrs() const {
    std::vector<const Encoding*> p;
    for (const auto& e : encs) p.push_back(&e);
    return p;
  }
};

Cases cases_of(const nlohmann::json& list, const char* target_key) {
  Cases c;
  for (const auto& j : list) {
    c.encs.push_back(model_f64().encode_ids(j.at("input_ids").get<std::vector<int64_t>>(),
                                            j.at("token_type_ids").get<std::vector<int64_t>>(), "reference case"));
    c.targets.push_back(j.at(target_key).get<int64_t>());
  }
  return c;
}

}  // namespace

TEST(ReferenceValues, AttentionAndLrpMethodsMatchTheAuthorsCode) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = model_f64();
  const auto& cases = reference().at("cases");
  ASSERT_EQ(cases.size(), 24u);
  Cases in = cases_of(cases, "target");
  EXPECT_EQ(predicted_classes(clf, in.ptrs()), in.targets);
  // mgae with the reference's head mask, and with every head (Mask-LRP's MGAE without a mask).
  std::string kept, all;
  for (const auto& lh : reference().at("mgae_heads"))
    kept += (kept.empty() ? "" : ",") + std::to_string(lh[0].get<int>()) + "." + std::to_string(lh[1].get<int>());
  for (int64_t l = 0; l < clf.model.num_layers(); ++l)
    for (int64_t h = 0; h < clf.model.num_heads(); ++h)
      all += (all.empty() ? "" : ",") + std::to_string(l) + "." + std::to_string(h);
  for (const auto& [key, description] : reference().at("methods").items()) {
    const std::string method = key == "mgae_all_heads" ? "mgae" : key;
    ExplainOptions o;
    if (key == "mgae") o.params["heads"] = kept;
    if (key == "mgae_all_heads") o.params["heads"] = all;
    // All 24 cases in one padded batch: the references had no padding.
    auto ex = make_explainer(method)->explain(clf, in.ptrs(), in.targets, o);
    for (size_t i = 0; i < cases.size(); ++i) {
      const auto& want = cases[i].at("methods").at(key);
      if (std::any_of(want.begin(), want.end(), [](const nlohmann::json& v) { return v.is_null(); })) {
        // attention_gradcam's min–max step divides 0 by 0 when the clamped map is all zero (the
        // reference returns NaN there); salient returns zeros.
        ASSERT_EQ(key, "attention_gradcam");
        for (double v : ex[i].scores) EXPECT_EQ(v, 0.0) << key << " case " << i;
        continue;
      }
      // The LRP rules divide by pre-activations that can be near 0 (safe_divide's 1e-9), which
      // turns rounding-level differences into up to ~6e-6 relative (case 15); the rest agree to 1e-8.
      const bool lrp = key.rfind("lrp", 0) == 0 || key == "transformer_attribution" || method == "mgae";
      EXPECT_LT(rel_err(ex[i].scores, want.get<std::vector<double>>()), lrp ? 1e-5 : 1e-8)
          << key << " (" << description.get<std::string>() << ") case " << i;
    }
  }
}

// [UNK] is an ordinary token: the pad baseline replaces it like any other, and its attribution is
// Captum's, not 0.
TEST(ReferenceValues, IntegratedGradientsWithUnkMatchesCaptum) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = model_f64();
  const auto& ig = reference().at("unk_ig");
  Cases in = cases_of(ig.at("cases"), "pred");
  for (const std::string rule : {"riemann_trapezoid", "gausslegendre"}) {
    ExplainOptions o;
    o.output = ModelOutput::Probability;
    o.params = {{"steps", ig.at("n_steps")}, {"rule", rule}, {"baseline", "pad"}};
    auto ex = make_explainer("ig")->explain(clf, in.ptrs(), in.targets, o);
    for (size_t i = 0; i < in.encs.size(); ++i) {
      const auto& want = ig.at("cases")[i].at(rule);
      const std::vector<double> ref = want.at("token_scores").get<std::vector<double>>();
      EXPECT_LT(rel_err(ex[i].scores, ref), 1e-7) << rule << " case " << i;
      // Captum casts its quadrature weights to float32, which moves its delta by up to ~1e-8.
      EXPECT_NEAR(ex[i].extras["delta"].get<double>(), want.at("delta").get<double>(), 5e-8) << rule << " case " << i;
      for (int64_t p : ig.at("cases")[i].at("unk_positions").get<std::vector<int64_t>>()) {
        ASSERT_EQ(in.encs[i].ids[p], clf.tokenizer.unk_id());
        EXPECT_NE(ex[i].scores[p], 0.0) << "[UNK] at " << p;
      }
    }
  }
}

TEST(ReferenceValues, LimeSurrogateMatchesLime) {
  for (const auto& c : reference().at("lime").at("cases")) {
    const auto z = c.at("z").get<std::vector<std::vector<int>>>();
    const auto y = c.at("y").get<std::vector<double>>();
    double intercept = 0;
    std::vector<double> coef = explain::lime_fit(z, y, 25.0, &intercept);
    EXPECT_LT(rel_err(coef, c.at("coef").get<std::vector<double>>()), 1e-8) << "d = " << c.at("d");
    EXPECT_NEAR(intercept, c.at("intercept").get<double>(), 1e-8) << "d = " << c.at("d");
  }
}

TEST(ReferenceValues, KernelShapExactIsShapley) {
  for (const auto& c : reference().at("shapley").at("cases")) {
    const int d = c.at("d").get<int>();
    const auto v_by_mask = c.at("values_by_mask").get<std::vector<double>>();
    // kernel_shap's layout: the empty and the full coalition first, then every proper one.
    std::vector<std::vector<int>> z{std::vector<int>(d, 0), std::vector<int>(d, 1)};
    std::vector<double> v{v_by_mask[0], v_by_mask[(1 << d) - 1]};
    for (int m = 1; m + 1 < (1 << d); ++m) {
      std::vector<int> zs(d);
      for (int j = 0; j < d; ++j) zs[j] = (m >> j) & 1;
      z.push_back(zs);
      v.push_back(v_by_mask[m]);
    }
    EXPECT_LT(rel_err(explain::kernel_shap_fit(z, v, true), c.at("phi").get<std::vector<double>>()), 1e-9)
        << "d = " << d;
  }
}
