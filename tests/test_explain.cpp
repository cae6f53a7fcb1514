// Explainers: parity with Captum on the reference BERT fixture (IG with three rules and its
// convergence delta, gradient L2, gradient × input), IG completeness, batch and padding
// invariance, seeded reproducibility of the sampling methods, exact KernelSHAP against brute-force
// Shapley values, the model-randomisation sanity check, faithfulness bound to a real model, and
// one-line errors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "eval/benchmark.h"
#include "eval/metric.h"
#include "eval/plausibility.h"
#include "explain/explainer.h"
#include "explain/long_inputs.h"
#include "explain/memory.h"
#include "explain/methods.h"
#include "smat/head_explainer.h"
#include "expnet/expnet.h"
#include "model/checkpoint.h"
#include "explain/gradient/ig_kernels.h"
#include "test_util.h"
#include "util/error.h"
#include "util/io.h"

using namespace salient;
using salient::test::rel_err;
using salient::test::shared_path;

namespace {

struct CaptumCase {
  std::vector<int64_t> ids, types;
  int64_t target = 0;
  nlohmann::json captum;
};

std::vector<CaptumCase> load_cases() {
  std::vector<CaptumCase> cases;
  std::ifstream in(shared_path("fixtures/reference-bert/cases.jsonl"));
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    CaptumCase c;
    c.ids = j["input_ids"].get<std::vector<int64_t>>();
    c.types = j["token_type_ids"].get<std::vector<int64_t>>();
    c.captum = j["captum"];
    c.target = c.captum["target"].get<int64_t>();
    cases.push_back(std::move(c));
  }
  return cases;
}

std::string model_dir() { return shared_path("fixtures/reference-bert/model"); }

const Classifier& reference_model() {
  static Classifier clf = load_classifier(model_dir());
  return clf;
}


using salient::test::error_of;

struct Inputs {
  std::vector<Encoding> encs;
  std::vector<const Encoding*> ptrs() const {
    std::vector<const Encoding*> p;
    for (const auto& e : encs) p.push_back(&e);
    return p;
  }
};

Inputs case_inputs(const Classifier& clf, const std::vector<CaptumCase>& cases) {
  Inputs in;
  for (const auto& c : cases) in.encs.push_back(clf.encode_ids(c.ids, c.types, "case"));
  return in;
}

// The first n fixture cases as inputs of `clf`.
Inputs first_cases(const Classifier& clf, size_t n) {
  auto cases = load_cases();
  cases.resize(n);
  return case_inputs(clf, cases);
}

}  // namespace

TEST(Explain, CaptumParity) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = reference_model();
  auto cases = load_cases();
  ASSERT_EQ(cases.size(), 24u);
  Inputs in = case_inputs(clf, cases);
  std::vector<int64_t> targets;
  for (const auto& c : cases) targets.push_back(c.target);
  EXPECT_EQ(predicted_classes(clf, in.ptrs()), targets);

  ExplainOptions o;
  // All 24 cases in one padded batch: parity also covers padding.
  auto sal = make_explainer("saliency")->explain(clf, in.ptrs(), targets, o);
  auto gxi = make_explainer("grad_x_input")->explain(clf, in.ptrs(), targets, o);
  double worst_sal = 0, worst_gxi = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    worst_sal = std::max(worst_sal, rel_err(sal[i].scores, cases[i].captum["grad_l2"].get<std::vector<double>>()));
    worst_gxi = std::max(worst_gxi, rel_err(gxi[i].scores, cases[i].captum["grad_x_input"].get<std::vector<double>>()));
  }
  EXPECT_LT(worst_sal, 1e-5);
  EXPECT_LT(worst_gxi, 1e-5);
  for (const std::string rule : {"riemann_trapezoid", "gausslegendre", "riemann_left"}) {
    o.params = {{"steps", 50}, {"rule", rule}, {"baseline", "pad"}};
    o.internal_batch = 37;  // chunks that cut across examples
    auto ig = make_explainer("ig")->explain(clf, in.ptrs(), targets, o);
    double worst = 0, worst_delta = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      const auto& ref = cases[i].captum["ig"][rule];
      worst = std::max(worst, rel_err(ig[i].scores, ref["token_scores"].get<std::vector<double>>()));
      double scale = 0;
      for (double v : ref["token_scores"].get<std::vector<double>>()) scale += std::abs(v);
      worst_delta = std::max(worst_delta, std::abs(ig[i].extras["delta"].get<double>() - ref["delta"].get<double>()) / scale);
    }
    EXPECT_LT(worst, 1e-5) << rule;
    EXPECT_LT(worst_delta, 1e-5) << rule;
  }
}

TEST(Explain, IgCompleteness) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = reference_model();
  Inputs in = first_cases(clf, 6);
  std::vector<int64_t> targets = predicted_classes(clf, in.ptrs());
  ExplainOptions o;
  // Σ attributions → F(x) − F(x') as the quadrature converges: Gauss–Legendre with 50 points.
  for (const std::string baseline : {"pad", "zeros", "mask"}) {
    o.params = {{"steps", 50}, {"rule", "gausslegendre"}, {"baseline", baseline}};
    auto ig = make_explainer("ig")->explain(clf, in.ptrs(), targets, o);
    for (const auto& e : ig) {
      double sum = 0;
      for (double v : e.scores) sum += v;
      const double gap = sum - e.extras["delta"].get<double>();  // = F(x) − F(x')
      EXPECT_LT(std::abs(e.extras["delta"].get<double>()), 1e-3 * std::max(std::abs(gap), 1e-3)) << baseline;
    }
  }
}

// layer=embeddings: the gradient family at the embedding layer's output (HF's hidden_states[0];
// tests/hf checks it against Captum on bert.embeddings). IG's completeness there, from the zero
// and the [PAD] baselines; saliency's and gradient × input's scores from one gradient: the
// first is its norm, the second its product with the embedding output, so
// Σ grad_x_input = d/dt F(t·h₀) at t = 1, which a central difference of IG's own forward checks.
TEST(Explain, GradientFamilyAtTheEmbeddingOutput) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = reference_model();
  Inputs in = first_cases(clf, 4);
  std::vector<int64_t> targets = predicted_classes(clf, in.ptrs());
  ExplainOptions o;
  o.output = ModelOutput::Logit;
  for (const std::string baseline : {"zeros", "pad"}) {
    o.params = {{"steps", 64}, {"baseline", baseline}, {"layer", "embeddings"}};
    auto ig = make_explainer("ig")->explain(clf, in.ptrs(), targets, o);
    o.params["layer"] = "word_embeddings";
    auto ig_word = make_explainer("ig")->explain(clf, in.ptrs(), targets, o);
    double differs = 0;
    for (size_t i = 0; i < ig.size(); ++i) {
      double sum = 0;
      for (double v : ig[i].scores) sum += v;
      const double gap = sum - ig[i].extras["delta"].get<double>();
      EXPECT_LT(std::abs(ig[i].extras["delta"].get<double>()), 1e-3 * std::max(std::abs(gap), 1e-3)) << baseline;
      for (size_t t = 0; t < ig[i].scores.size(); ++t)
        differs = std::max(differs, std::abs(ig[i].scores[t] - ig_word[i].scores[t]));
    }
    EXPECT_GT(differs, 1e-3) << baseline;  // another site, not the word embeddings' scores
  }
  // Σ_t g_t·h_t = d/dt F(s·h₀) at s = 1, by a central difference of the model run from the
  // embedding output through its public building blocks; and |g_t·h_t| ≤ ‖g_t‖·‖h_t‖ (saliency).
  o.params = {{"layer", "embeddings"}};
  auto gxi = make_explainer("grad_x_input")->explain(clf, in.ptrs(), targets, o);
  auto sal = make_explainer("saliency")->explain(clf, in.ptrs(), targets, o);
  torch::NoGradGuard no_grad;
  const Transformer& m = clf.model;
  for (size_t i = 0; i < gxi.size(); ++i) {
    const Encoding& e = in.encs[i];
    const int64_t L = static_cast<int64_t>(e.ids.size());
    torch::Tensor ids = torch::tensor(e.ids, torch::kLong).view({1, L}), types = torch::tensor(e.type_ids, torch::kLong).view({1, L});
    torch::Tensor mask = torch::ones({1, L}, torch::kLong);
    const torch::Tensor h0 = m.embed(ids, types, mask);
    auto f = [&](double scale) {
      std::vector<torch::Tensor> states{h0 * scale};
      m.run_layers(0, states[0], m.extended_mask(mask, 1, L), {}, &states);
      return m.classify_states(states, mask)[0][targets[i]].item<double>();
    };
    const double eps = 1e-2, derivative = (f(1 + eps) - f(1 - eps)) / (2 * eps);
    double sum = 0;
    for (double v : gxi[i].scores) sum += v;
    EXPECT_NEAR(sum, derivative, 2e-2 * std::max(std::abs(derivative), 0.1)) << i;
    for (int64_t t = 0; t < L; ++t)
      EXPECT_LE(std::abs(gxi[i].scores[t]), sal[i].scores[t] * h0[0][t].norm().item<double>() * (1 + 1e-5) + 1e-9);
  }
}

// IG's three implementations (fused CPU path, closed-form first layer under autograd, textbook
// gradient at every point) on every model family and layout the fused path special-cases: several
// layers, one layer (the embedding feeds the [CLS]-only layer), ELECTRA's embedding projection,
// RoBERTa positions, tanh-GELU and ReLU; float64 for tight agreement; rules with and without the
// end points (the delta then needs its own forward pass); chunks cut across examples.
TEST(Explain, IgImplementationsAgreeOnEveryFamily) {
  SALIENT_REQUIRE_SHARED(model_dir());
  struct Case {
    std::string type, act;
    int layers;
  };
  for (const Case& c : {Case{"bert", "gelu", 3}, Case{"bert", "gelu_new", 1}, Case{"roberta", "gelu", 2},
                        Case{"electra", "relu", 2}, Case{"distilbert", "gelu", 2}}) {
    Classifier clf;
    clf.tokenizer = reference_model().tokenizer;
    nlohmann::json cfg = {{"model_type", c.type}, {"vocab_size", clf.tokenizer.vocab_size()},
                          {"max_position_embeddings", 40}, {"id2label", {{"0", "a"}, {"1", "b"}, {"2", "c"}}}};
    if (c.type == "distilbert") {
      cfg.update({{"dim", 16}, {"n_layers", c.layers}, {"n_heads", 2}, {"hidden_dim", 24}, {"activation", c.act}});
    } else {
      cfg.update({{"hidden_size", 16}, {"num_hidden_layers", c.layers}, {"num_attention_heads", 4},
                  {"intermediate_size", 24}, {"hidden_act", c.act}, {"type_vocab_size", c.type == "roberta" ? 1 : 2}});
      if (c.type == "electra") cfg["embedding_size"] = 8;
      if (c.type == "roberta") cfg["pad_token_id"] = 1;
    }
    // Weights larger than the 0.02 initialisation so that attention and the head are far from
    // uniform, and nonzero biases and LayerNorm shifts (they enter the first layer's closed form).
    clf.model = Transformer(ModelConfig::from_json(cfg, c.type + "/config.json"), 11);
    std::map<std::string, torch::Tensor> w;
    torch::manual_seed(12);
    for (const auto& [name, t] : clf.model.weights()) {
      const bool norm = name.find("LayerNorm") != std::string::npos;
      torch::Tensor v = norm ? t : t * 20;
      if (name.size() > 4 && name.compare(name.size() - 4, 4, "bias") == 0) v = v + 0.3 * torch::randn_like(t);
      w[name] = v.detach().to(torch::kCPU, torch::kFloat64);
    }
    clf.model.set_weights(w);
    Inputs in;
    for (const std::string text : {"a gripping, funny and humane film", "dull", "it is not as bad as you think"})
      in.encs.push_back(clf.encode(text));
    const std::vector<int64_t> targets{0, 2, 1};
    for (const std::string rule : {"riemann_trapezoid", "gausslegendre"}) {
      std::map<std::string, std::vector<Explanation>> by_impl;
      for (const std::string impl : {"fused", "fused_baseline", "autograd", "plain"}) {
        ExplainOptions o;
        o.internal_batch = 7;
        // fused_baseline: the fused path with its kernels' baseline (non-AVX2) build.
        o.params = {{"steps", 6}, {"rule", rule}, {"impl", impl == "fused_baseline" ? "fused" : impl}};
        explain::use_baseline_kernels(impl == "fused_baseline");
        by_impl[impl] = make_explainer("ig")->explain(clf, in.ptrs(), targets, o);
        explain::use_baseline_kernels(false);
      }
      for (size_t i = 0; i < in.encs.size(); ++i) {
        const auto& ref = by_impl["plain"][i];
        double scale = 0;
        for (double v : ref.scores) scale += std::abs(v);
        ASSERT_GT(scale, 1e-6) << c.type;
        for (const std::string impl : {"fused", "fused_baseline", "autograd"}) {
          const auto& e = by_impl[impl][i];
          EXPECT_LT(rel_err(e.scores, ref.scores), 1e-9) << c.type << " " << c.layers << " " << rule << " " << impl;
          EXPECT_NEAR(e.extras["delta"].get<double>(), ref.extras["delta"].get<double>(), 1e-9 * scale)
              << c.type << " " << rule << " " << impl;
        }
      }
    }
  }
}

// The fused IG path's GELU kernel against ATen's GELU and its backward, computed in float64:
// float within 1e-6 (A&S erf and Cephes exp; the AVX2 and the baseline build) over the range
// pre-activations take and far tails (where it returns exact zeros instead of denormals); double
// to rounding.
TEST(Explain, GeluKernelMatchesATen) {
  torch::manual_seed(3);
  torch::Tensor x = torch::cat({torch::linspace(-20, 20, 40001), torch::randn({10007}) * 3,
                                torch::tensor({0.0, -0.0, 1e-30, -1e-30, 60.0, -60.0, -13.0, 13.0})})
                        .to(torch::kCPU, torch::kDouble);
  for (auto [dt, baseline] : {std::pair{torch::kFloat32, false}, std::pair{torch::kFloat32, true},
                               std::pair{torch::kFloat64, false}}) {
    torch::Tensor xt = x.to(dt), y = torch::empty_like(xt), d = torch::empty_like(xt);
    const int64_t n = xt.numel();
    explain::use_baseline_kernels(baseline);
    if (dt == torch::kFloat32) {
      explain::gelu_with_derivative<float>(n, xt.data_ptr<float>(), y.data_ptr<float>(), d.data_ptr<float>());
    } else {
      explain::gelu_with_derivative<double>(n, xt.data_ptr<double>(), y.data_ptr<double>(), d.data_ptr<double>());
    }
    explain::use_baseline_kernels(false);
    // Against ATen at the input as rounded to dt.
    torch::Tensor xr = xt.to(torch::kCPU, torch::kDouble);
    const double tol = dt == torch::kFloat32 ? 1e-6 : 1e-13;
    EXPECT_LT((y.to(torch::kCPU, torch::kDouble) - torch::gelu(xr)).abs().max().item<double>(), tol) << dt << baseline;
    EXPECT_LT((d.to(torch::kCPU, torch::kDouble) - torch::gelu_backward(torch::ones_like(xr), xr)).abs().max().item<double>(), tol)
        << dt << baseline;
  }
}

// The fused path runs whole chunks on separate threads and sums them in a fixed order: two
// threads give the same attributions as one.
TEST(Explain, IgSameResultOnOneAndTwoThreads) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = reference_model();
  Inputs in = first_cases(clf, 6);
  std::vector<int64_t> targets = predicted_classes(clf, in.ptrs());
  ExplainOptions o;
  o.internal_batch = 16;  // several chunks
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  auto one = make_explainer("ig")->explain(clf, in.ptrs(), targets, o);
  at::set_num_threads(2);
  auto two = make_explainer("ig")->explain(clf, in.ptrs(), targets, o);
  at::set_num_threads(before);
  for (size_t i = 0; i < one.size(); ++i) EXPECT_LT(rel_err(one[i].scores, two[i].scores), 1e-6);
}

TEST(Explain, WordScores) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = reference_model();
  const std::string text = "unflinchingly bleak";
  Encoding enc = clf.encode(text);
  ASSERT_EQ(enc.tokens.size(), 8u);  // [CLS] un ##fl ##in ##ching ##ly bleak [SEP]
  std::vector<double> s{10, 1, 2, 3, 4, 5, 6, 10};
  EXPECT_EQ(word_scores(text, enc, s), (std::vector<double>{15, 6}));
  EXPECT_EQ(word_scores(text, enc, s, true), (std::vector<double>{5, 6}));
}

namespace {

// A learned explainer's artifact for the reference model: an ExpNet with seeded random weights
// (the registry tests need an artifact that loads, not a trained one).
std::string random_expnet_dir(const Classifier& clf) {
  static const std::string dir = [&] {
    ExpNetConfig c;
    c.num_layers = clf.model.num_layers();
    c.num_heads = clf.model.num_heads();
    const std::string d = (std::filesystem::temp_directory_path() / "salient_test_expnet").string();
    ExpNet(c, 3).save(d);
    return d;
  }();
  return dir;
}

// SST's selection head for the reference model, with seeded random weights large enough that some
// tokens pass τ and others not.
// A SMaT explainer with seeded random coefficients over every head of `clf` (a temporary file).
std::string random_smat_path(const Classifier& clf) {
  static std::string path;
  if (!path.empty()) return path;
  torch::manual_seed(11);
  const smat::LearnedHeadExplainer e = smat::all_heads_explainer(
      clf.model, smat::Normalizer::Sparsemax, torch::randn({clf.model.num_layers() * clf.model.num_heads()}));
  char tmpl[] = "/tmp/salient_smat_XXXXXX";
  path = join_path(mkdtemp(tmpl), "smat_explainer.json");
  smat::save_head_explainer(e, path);
  return path;
}

std::string random_sst_dir(const Classifier& clf) {
  static const std::string dir = [&] {
    const std::string d = (std::filesystem::temp_directory_path() / "salient_test_sst_head").string();
    make_dirs(d);
    torch::manual_seed(3);
    save_tensors(join_path(d, "sst_head.safetensors"),
                 {{"sst_head.weight", torch::randn({1, clf.model.config().hidden_size})}, {"sst_head.bias", torch::zeros({1})}});
    write_file_atomic(join_path(d, "sst.json"), R"({"modality": "text", "tau": 0.5})");
    return d;
  }();
  return dir;
}

ExplainOptions fast_options(const std::string& method) {
  ExplainOptions o;
  if (method == "expnet") o.params = {{"expnet", random_expnet_dir(reference_model())}};
  if (method == "sst") o.params = {{"sst", random_sst_dir(reference_model())}};
  if (method == "smat") o.params = {{"smat", random_smat_path(reference_model())}};
  o.seed = 7;
  o.internal_batch = 16;
  if (method == "ig") o.params = {{"steps", 8}};
  if (method == "lime") o.params = {{"samples", 64}};
  if (method == "kernel_shap") o.params = {{"samples", 64}, {"exact_max", 4}};
  return o;
}

}  // namespace

TEST(Explain, BatchAndPaddingInvariance) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = reference_model();
  auto cases = load_cases();
  cases.resize(5);  // different lengths: batching pads all but the longest
  Inputs in = case_inputs(clf, cases);
  std::vector<int64_t> targets = predicted_classes(clf, in.ptrs());
  for (const auto& name : explainer_names()) {
    auto ex = make_explainer(name);
    ExplainOptions o = fast_options(name);
    auto batched = ex->explain(clf, in.ptrs(), targets, o);
    ASSERT_EQ(batched.size(), cases.size());
    // A token budget far below the default splits every internal pass (inputs, IG's points, the
    // perturbations) into passes of one or two rows: the same scores.
    ExplainOptions tight = o;
    tight.max_batch_tokens = 24;
    auto split = ex->explain(clf, in.ptrs(), targets, tight);
    for (size_t i = 0; i < cases.size(); ++i)
      EXPECT_LT(rel_err(split[i].scores, batched[i].scores), 2e-5) << name << " case " << i << " in small passes";
    // An all-zero output would agree with itself trivially: some case must carry a real signal
    // (attention_gradcam is legitimately all zero where its clamped map is).
    double largest = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      auto single = ex->explain(clf, {&in.encs[i]}, {targets[i]}, o);
      ASSERT_EQ(single[0].scores.size(), in.encs[i].ids.size()) << name;
      for (double v : single[0].scores) largest = std::max(largest, std::abs(v));
      EXPECT_LT(rel_err(batched[i].scores, single[0].scores), 2e-5) << name << " case " << i;
      EXPECT_EQ(batched[i].method, name);
    }
    EXPECT_GT(largest, 1e-6) << name << " gives only zeros";
  }
}

TEST(BatchLimits, PassesKeepTheOrderAndFitTheBudget) {
  const std::vector<int64_t> lengths = {5, 9, 3, 40, 8, 8, 8, 2};
  const BatchLimits limits{3, 24};
  const auto passes = passes_in_order(lengths, limits);
  size_t next = 0;
  for (const auto& [s, e] : passes) {
    ASSERT_EQ(s, next);  // consecutive, in order, every input once
    ASSERT_GT(e, s);
    const int64_t longest = *std::max_element(lengths.begin() + s, lengths.begin() + e);
    EXPECT_LE(static_cast<int64_t>(e - s), limits.rows);
    // within the budget, or one input longer than it alone
    EXPECT_TRUE(static_cast<int64_t>(e - s) * longest <= limits.tokens || e - s == 1) << s;
    next = e;
  }
  EXPECT_EQ(next, lengths.size());
  EXPECT_EQ(passes, (std::vector<std::pair<size_t, size_t>>{{0, 2}, {2, 3}, {3, 4}, {4, 7}, {7, 8}}));
  EXPECT_EQ(rows_per_pass(limits, 8), 3);
  EXPECT_EQ(rows_per_pass(limits, 12), 2);
  EXPECT_EQ(rows_per_pass(limits, 100), 1);
  try {
    passes_in_order(lengths, BatchLimits{3, 0});
    ADD_FAILURE() << "a budget of 0 tokens was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("max batch tokens"), std::string::npos) << e.what();
  }
}

TEST(Explain, SamplingReproducibleUnderSeed) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = reference_model();
  Inputs in = first_cases(clf, 2);
  std::vector<int64_t> targets = predicted_classes(clf, in.ptrs());
  for (const std::string name : {"lime", "kernel_shap", "random"}) {
    ExplainOptions o = fast_options(name);
    auto a = make_explainer(name)->explain(clf, in.ptrs(), targets, o);
    auto b = make_explainer(name)->explain(clf, in.ptrs(), targets, o);
    o.seed = 8;
    auto c = make_explainer(name)->explain(clf, in.ptrs(), targets, o);
    EXPECT_EQ(a[0].scores, b[0].scores) << name;
    EXPECT_NE(a[0].scores, c[0].scores) << name;
  }
}

TEST(Explain, KernelShapExactEqualsBruteForceShapley) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = reference_model();
  Encoding enc = clf.encode("a charming and bleak journey");
  ASSERT_EQ(enc.ids.size(), 7u);  // 5 word tokens + [CLS]/[SEP]
  const int64_t target = predicted_classes(clf, {&enc})[0];
  ExplainOptions o;
  auto shap = make_explainer("kernel_shap")->explain(clf, {&enc}, {target}, o);
  EXPECT_TRUE(shap[0].extras["exact"].get<bool>());
  // v(S): output with the tokens outside S replaced by [MASK]; features are positions 1..5.
  const int d = 5;
  std::vector<TokenSequence> seqs;
  for (int m = 0; m < (1 << d); ++m) {
    TokenSequence s = to_sequence(enc);
    for (int j = 0; j < d; ++j)
      if (!((m >> j) & 1)) s.ids[1 + j] = clf.tokenizer.mask_id();
    seqs.push_back(s);
  }
  std::vector<double> v = score_sequences(clf, seqs, std::vector<int64_t>(seqs.size(), target), ModelOutput::Probability, BatchLimits{64});
  auto fact = [](int n) {
    double r = 1;
    for (int i = 2; i <= n; ++i) r *= i;
    return r;
  };
  for (int i = 0; i < d; ++i) {
    double phi = 0;
    for (int m = 0; m < (1 << d); ++m) {
      if ((m >> i) & 1) continue;
      const int size = __builtin_popcount(m);
      phi += fact(size) * fact(d - size - 1) / fact(d) * (v[m | (1 << i)] - v[m]);
    }
    // float32 model: the same values evaluated in other batches differ by ~1e-8.
    EXPECT_NEAR(shap[0].scores[1 + i], phi, 1e-6) << "feature " << i;
  }
  EXPECT_EQ(shap[0].scores[0], 0.0);
  EXPECT_EQ(shap[0].scores[6], 0.0);
}

TEST(Explain, ModelRandomisationSanityCheck) {
  // Adebayo et al. 2018: attributions of a faithful method must change when the weights are
  // re-randomised. Rank correlation (Spearman) between the two must fall well below 1.
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = reference_model();
  Classifier random_clf = clf;
  random_clf.model = Transformer(clf.model.config(), 1234);
  Inputs in = first_cases(clf, 6);
  std::vector<int64_t> targets = predicted_classes(clf, in.ptrs());
  auto ranks = [](const std::vector<double>& x) {
    std::vector<size_t> o(x.size());
    for (size_t i = 0; i < o.size(); ++i) o[i] = i;
    std::sort(o.begin(), o.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
    std::vector<double> r(x.size());
    for (size_t i = 0; i < o.size(); ++i) r[o[i]] = double(i);
    return r;
  };
  auto pearson = [](const std::vector<double>& a, const std::vector<double>& b) {
    double ma = 0, mb = 0;
    for (size_t i = 0; i < a.size(); ++i) ma += a[i], mb += b[i];
    ma /= a.size(), mb /= b.size();
    double sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < a.size(); ++i) sab += (a[i] - ma) * (b[i] - mb), saa += (a[i] - ma) * (a[i] - ma), sbb += (b[i] - mb) * (b[i] - mb);
    return sab / std::sqrt(saa * sbb + 1e-300);
  };
  for (const std::string name : {"saliency", "grad_x_input", "ig", "gae", "attcat", "occlusion"}) {
    ExplainOptions o = fast_options(name);
    auto a = make_explainer(name)->explain(clf, in.ptrs(), targets, o);
    auto b = make_explainer(name)->explain(random_clf, in.ptrs(), targets, o);
    double mean_rho = 0;
    for (size_t i = 0; i < a.size(); ++i) mean_rho += pearson(ranks(a[i].scores), ranks(b[i].scores));
    mean_rho /= double(a.size());
    EXPECT_LT(mean_rho, 0.8) << name;
  }
}

TEST(Explain, FaithfulnessOnTheModel) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = reference_model();
  auto cases = load_cases();
  Encoding enc = clf.encode_ids(cases[0].ids, cases[0].types, "case 0");
  const int64_t target = cases[0].target;
  SequenceScorer scorer = [&](const std::vector<TokenSequence>& seqs) {
    return score_sequences(clf, seqs, std::vector<int64_t>(seqs.size(), target), ModelOutput::Probability, BatchLimits{8});
  };
  std::vector<bool> removable = removable_positions(clf, enc);
  ExplainOptions o;
  auto ig = make_explainer("ig")->explain(clf, {&enc}, {target}, o);
  FaithfulnessResult r = evaluate_faithfulness(scorer, to_sequence(enc), ig[0].scores, removable, 3);
  // The full output is the model's probability of the target (fixture, float32 engine).
  std::ifstream in(shared_path("fixtures/reference-bert/cases.jsonl"));
  std::string line;
  std::getline(in, line);
  const double p = nlohmann::json::parse(line)["probs"][target].get<double>();
  EXPECT_NEAR(r.full, p, 1e-5);
  // At 100% removal the deletion curve ends at the all-[MASK] output.
  TokenSequence all_masked = to_sequence(enc);
  for (size_t t = 0; t < removable.size(); ++t)
    if (removable[t]) all_masked.ids[t] = clf.tokenizer.mask_id();
  EXPECT_NEAR(r.deletion_curve.back(), scorer({all_masked})[0], 1e-6);
  EXPECT_NEAR(r.insertion_curve.front(), scorer({all_masked})[0], 1e-6);
  EXPECT_NEAR(r.deletion_curve.front(), r.full, 1e-6);
}

TEST(Explain, ScoringRepeatedSequencesOnceGivesTheSameValues) {
  // score_sequences scores each distinct (sequence, target) once; repeats, other targets and
  // sequences that differ only in their type ids must still get their own values.
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = reference_model();
  TokenSequence a = to_sequence(clf.encode("a charming journey"));
  TokenSequence b = to_sequence(clf.encode("a dull and tedious film"));
  TokenSequence a_types = a;
  for (auto& t : a_types.type_ids) t = 1;
  std::vector<TokenSequence> seqs = {a, b, a, a_types, a, b};
  std::vector<int64_t> targets = {0, 0, 1, 0, 0, 0};
  std::vector<double> all = score_sequences(clf, seqs, targets, ModelOutput::Logit, BatchLimits{2});
  for (size_t i = 0; i < seqs.size(); ++i) {
    const double alone = score_sequences(clf, {seqs[i]}, {targets[i]}, ModelOutput::Logit, BatchLimits{1})[0];
    EXPECT_NEAR(all[i], alone, 1e-5) << i;
  }
  EXPECT_DOUBLE_EQ(all[0], all[4]);
  EXPECT_NE(all[0], all[2]);  // other target
  EXPECT_NE(all[0], all[3]);  // other type ids
}

TEST(Explain, Errors) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = reference_model();
  EXPECT_NE(error_of([] { make_explainer("nope"); }).find("--method: unknown method 'nope'"), std::string::npos);
  Encoding enc = clf.encode("a charming journey");
  ExplainOptions o;
  o.params = {{"rule", "simpson"}};
  EXPECT_NE(error_of([&] { make_explainer("ig")->explain(clf, {&enc}, {0}, o); }).find("--rule"), std::string::npos);
  o.params = {{"baseline", "noise"}};
  EXPECT_NE(error_of([&] { make_explainer("ig")->explain(clf, {&enc}, {0}, o); }).find("--baseline"), std::string::npos);
  o.params = {{"steps", "many"}};
  EXPECT_NE(error_of([&] { make_explainer("ig")->explain(clf, {&enc}, {0}, o); }).find("--steps"), std::string::npos);
  o.params = {{"impl", "fast"}};
  EXPECT_NE(error_of([&] { make_explainer("ig")->explain(clf, {&enc}, {0}, o); }).find("--impl"), std::string::npos);
  // Declared parameters only, within their ranges: an unknown name or a value out of range is an
  // error naming the flag, never silently ignored or replaced by the default.
  o.params = {{"samples", 100}};
  EXPECT_NE(error_of([&] { make_explainer("ig")->explain(clf, {&enc}, {0}, o); }).find("--samples: method 'ig' takes no"),
            std::string::npos);
  o.params = {{"exact_max", 4}};
  EXPECT_NE(error_of([&] { make_explainer("lime")->explain(clf, {&enc}, {0}, o); }).find("--exact-max"), std::string::npos);
  o.params = {{"steps", 0}};
  EXPECT_NE(error_of([&] { make_explainer("ig")->explain(clf, {&enc}, {0}, o); }).find("--steps: 0 is out of range"),
            std::string::npos);
  o.params = {{"samples", 1}};
  EXPECT_NE(error_of([&] { make_explainer("lime")->explain(clf, {&enc}, {0}, o); }).find("--samples"), std::string::npos);
  o.params = {{"positional_threshold", 1.5}};
  EXPECT_NE(error_of([&] { make_explainer("mgae")->explain(clf, {&enc}, {0}, o); }).find("--positional-threshold"),
            std::string::npos);
  o.params = {{"start_layer", 0}};
  EXPECT_NE(error_of([&] { make_explainer("saliency")->explain(clf, {&enc}, {0}, o); }).find("it takes --layer"),
            std::string::npos);
  EXPECT_NE(error_of([&] { make_explainer("raw_attention")->explain(clf, {&enc}, {0}, o); }).find("it takes none"),
            std::string::npos);
  o.params = {{"layer", "hidden"}};
  EXPECT_NE(error_of([&] { make_explainer("grad_x_input")->explain(clf, {&enc}, {0}, o); }).find("--layer"),
            std::string::npos);
  // The closed-form IG paths integrate over the word embeddings only.
  o.params = {{"layer", "embeddings"}, {"impl", "fused"}};
  EXPECT_NE(error_of([&] { make_explainer("ig")->explain(clf, {&enc}, {0}, o); }).find("--impl: fused integrates over the word"),
            std::string::npos);
  o.params = nlohmann::json::object();
  EXPECT_NE(error_of([&] { make_explainer("saliency")->explain(clf, {&enc}, {5}, o); }).find("--target"), std::string::npos);
  EXPECT_NE(error_of([] { parse_model_output("proba"); }).find("--score"), std::string::npos);
}

TEST(Explain, MgaeHeadMaskChangesOnlyWhatReachesLowerLayers) {
  // Mask-LRP's MGAE keeps each layer's map from an unmasked pass without the halving of the
  // attention matmul's relevance, so even with every head kept it is not transformer attribution
  // (ReferenceValues pins both against Mask-LRP's code); masking a head changes what reaches the
  // lower layers.
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = reference_model();
  Inputs in = first_cases(clf, 4);
  std::vector<int64_t> targets = predicted_classes(clf, in.ptrs());
  const auto& c = clf.model.config();
  std::string all;
  for (int64_t l = 0; l < c.num_hidden_layers; ++l)
    for (int64_t h = 0; h < c.num_attention_heads; ++h) all += (all.empty() ? "" : ",") + std::to_string(l) + "." + std::to_string(h);
  ExplainOptions o;
  o.output = ModelOutput::Logit;
  auto ta = make_explainer("transformer_attribution")->explain(clf, in.ptrs(), targets, o);
  o.params = {{"heads", all}};
  auto every = make_explainer("mgae")->explain(clf, in.ptrs(), targets, o);
  o.params = {{"heads", "0.0"}};
  auto one = make_explainer("mgae")->explain(clf, in.ptrs(), targets, o);
  for (size_t i = 0; i < ta.size(); ++i) {
    EXPECT_GT(rel_err(every[i].scores, ta[i].scores), 1e-3) << "case " << i;
    EXPECT_GT(rel_err(one[i].scores, every[i].scores), 1e-6) << "case " << i;
    EXPECT_EQ(every[i].extras["kept_heads"].size(), size_t(c.num_hidden_layers * c.num_attention_heads));
    EXPECT_EQ(one[i].extras["kept_heads"], nlohmann::json::array({"0.0"}));
  }
  // Automatic selection: each kept head is positional on that input (its top key is the next or
  // the previous token for more than the threshold's share of tokens), recomputed here from the
  // attentions. This model has no head above Mask-LRP's 0.8, so a low threshold exercises it.
  const double thr = 0.2;
  o.params = {{"positional_threshold", thr}};
  size_t kept_any = 0;
  for (size_t i = 0; i < in.encs.size(); ++i) {
    auto aut = make_explainer("mgae")->explain(clf, {&in.encs[i]}, {targets[i]}, o);
    ForwardRequest req;
    req.input_ids = torch::tensor(in.encs[i].ids).view({1, -1});
    req.token_type_ids = torch::tensor(in.encs[i].type_ids).view({1, -1});
    req.want_attentions = true;
    ForwardResult r = clf.model.forward(req);
    std::set<std::string> expected;
    for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
      torch::Tensor top = r.attentions[l][0].argmax(-1);  // [H, L]
      const int64_t L = top.size(1);
      for (int64_t h = 0; h < c.num_attention_heads; ++h) {
        int64_t next = 0, prev = 0;
        for (int64_t t = 0; t < L; ++t) {
          next += top[h][t].item<int64_t>() == t + 1;
          prev += top[h][t].item<int64_t>() == t - 1;
        }
        if (next > thr * L || prev > thr * L) expected.insert(std::to_string(l) + "." + std::to_string(h));
      }
    }
    std::set<std::string> got;
    for (const auto& k : aut[0].extras["kept_heads"]) got.insert(k.get<std::string>());
    EXPECT_EQ(got, expected) << "case " << i;
    kept_any += got.size();
  }
  EXPECT_GT(kept_any, 0u);
  o.params = {{"heads", "0.99"}};
  EXPECT_NE(error_of([&] { make_explainer("mgae")->explain(clf, {&in.encs[0]}, {targets[0]}, o); }).find("--heads: '0.99' is outside"),
            std::string::npos);
  o.params = {{"heads", "first"}};
  EXPECT_NE(error_of([&] { make_explainer("mgae")->explain(clf, {&in.encs[0]}, {targets[0]}, o); }).find("LAYER.HEAD"),
            std::string::npos);
}

TEST(Explain, CamIsTheMeanLastLayerAttentionGradient) {
  // Recomputed through the public forward: ∂logit_target/∂A of the last layer (the default output of
  // the gradient-weighted methods, as Mask-LRP), mean over heads and query rows, positive part,
  // [CLS] column 0.
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = reference_model();
  auto cases = load_cases();
  cases.resize(3);
  Inputs in = case_inputs(clf, cases);
  std::vector<int64_t> targets = predicted_classes(clf, in.ptrs());
  auto cam = make_explainer("cam")->explain(clf, in.ptrs(), targets, ExplainOptions{});
  for (size_t i = 0; i < cases.size(); ++i) {
    ForwardRequest req;
    req.input_ids = torch::tensor(in.encs[i].ids).view({1, -1});
    req.token_type_ids = torch::tensor(in.encs[i].type_ids).view({1, -1});
    req.want_attentions = true;
    Classifier copy = clf;
    copy.model = clf.model.clone();
    copy.model.set_requires_grad(true);  // a graph without touching the embeddings API
    ForwardResult r = copy.model.forward(req);
    torch::Tensor p = r.logits[0][targets[i]];
    torch::Tensor g = torch::autograd::grad({p}, {r.attentions.back()})[0][0];  // [H, L, L]
    torch::Tensor want = g.mean(0).mean(0).clamp_min(0).to(torch::kCPU, torch::kDouble);
    want[0] = 0;
    std::vector<double> w(want.data_ptr<double>(), want.data_ptr<double>() + want.numel());
    EXPECT_LT(rel_err(cam[i].scores, w), 1e-5) << "case " << i;
  }
}

// ---- CLI: salient explain / benchmark ----
namespace {

std::string tmp(const std::string& name) { return "/tmp/salient_explain_" + std::to_string(::getpid()) + "_" + name; }

using salient::test::expect_one_line_error;
using salient::test::RunResult;
RunResult run(const std::string& args, const std::string& stdin_text = "") { return salient::test::run_salient(args, stdin_text); }

size_t count_lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

}  // namespace

TEST(ExplainCli, ExplainJsonLines) {
  SALIENT_REQUIRE_SHARED(model_dir());
  auto r = run("explain --model " + model_dir() + " --method ig --steps 20 --rule gausslegendre",
               "{\"text\": \"unflinchingly bleak\", \"id\": \"a\"}\nit 's a charming journey\n");
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);
  auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["id"], "a");
  EXPECT_EQ(j["method"], "ig");
  EXPECT_EQ(j["tokens"].size(), 8u);
  EXPECT_EQ(j["token_scores"].size(), 8u);
  EXPECT_EQ(j["word_scores"].size(), 2u);
  EXPECT_TRUE(j["extras"].contains("delta"));
  EXPECT_EQ(j["extras"]["steps"], 20);
  std::getline(lines, line);
  EXPECT_EQ(nlohmann::json::parse(line)["word_scores"].size(), 5u);
  // --target and --score logit.
  r = run("explain --model " + model_dir() + " --method saliency --target 0 --score logit", "a charming journey\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["target"], 0);
}

TEST(ExplainCli, OneLineErrors) {
  SALIENT_REQUIRE_SHARED(model_dir());
  expect_one_line_error(run("explain --model " + model_dir() + " --method nope", "x\n"), "unknown method 'nope'");
  expect_one_line_error(run("explain --model " + model_dir() + " --method lime --max-batch-tokens 0", "x\n"),
                        "--max-batch-tokens");
  expect_one_line_error(run("explain --model " + model_dir() + " --method ig --rule simpson", "x\n"), "--rule");
  expect_one_line_error(run("explain --model " + model_dir() + " --method ig --target 7", "x\n"), "--target");
  expect_one_line_error(run("explain --model " + model_dir() + " --method ig --score odds", "x\n"), "--score");
  expect_one_line_error(run("explain --model " + model_dir() + " --method ig --output logit", "x\n"), "--score logit");
}

TEST(ExplainCli, BenchmarkTablesAndResume) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const std::string data = tmp("data.jsonl"), out = tmp("bench");
  write_file_atomic(data,
                    "{\"text\": \"a charming and often affecting journey\", \"label\": 1, \"rationale\": [0, 1, 0, 0, 1, 0]}\n"
                    "{\"text\": \"unflinchingly bleak and desperate\", \"label\": 0, \"rationale\": [1, 1, 0, 1]}\n"
                    "{\"text\": \"nothing to see here\", \"label\": 0, \"rationale\": [0, 0, 0, 0]}\n");
  const std::string args = "benchmark --model " + model_dir() + " --data " + data +
                           " --methods saliency,gae,random --metrics token_f1,token_auprc,word_auroc,aopc_comprehensiveness,sufficiency,time_ms --out " + out;
  auto r = run(args);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* f : {"results.jsonl", "summary.md", "summary.csv", "summary.json", "heatmaps.html"})
    EXPECT_TRUE(file_exists(join_path(out, f))) << f;
  EXPECT_EQ(count_lines(read_file(join_path(out, "results.jsonl"))), 9u);
  auto summary = parse_json_file(join_path(out, "summary.json"));
  // Example 3 has an empty rationale: plausibility over 2 examples, faithfulness over 3.
  EXPECT_EQ(summary["methods"]["saliency"]["token_f1"]["n"], 2);
  EXPECT_EQ(summary["methods"]["saliency"]["aopc_comprehensiveness"]["n"], 3);
  const auto& ci = summary["methods"]["gae"]["token_auprc"]["ci95"];
  ASSERT_EQ(ci.size(), 2u) << summary.dump();
  EXPECT_LE(ci[0].get<double>(), summary["methods"]["gae"]["token_auprc"]["mean"].get<double>());
  // Rerun: nothing recomputed, a new method only adds its lines.
  r = run(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count_lines(read_file(join_path(out, "results.jsonl"))), 9u);
  std::string args2 = args;
  args2.replace(args2.find("saliency,gae,random"), 19, "saliency,occlusion");
  r = run(args2);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count_lines(read_file(join_path(out, "results.jsonl"))), 12u);
  EXPECT_NE(read_file(join_path(out, "summary.md")).find("| occlusion |"), std::string::npos);
  // Unknown metric; plausibility on data without rationales.
  expect_one_line_error(run("benchmark --model " + model_dir() + " --data " + data + " --methods ig --metrics f2 --out " + out),
                        "unknown metric 'f2'");
  const std::string plain = tmp("plain.jsonl");
  write_file_atomic(plain, "{\"text\": \"a charming journey\", \"label\": 1}\n");
  expect_one_line_error(run("benchmark --model " + model_dir() + " --data " + plain + " --methods ig --metrics token_f1 --out " + out),
                        "has none");
  std::filesystem::remove_all(out);
}

// The benchmark runs as a library call: files, summary, resume without recomputation, and the
// metric registry's families and directions.
TEST(Benchmark, LibraryRunWritesTablesAndResumes) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const std::string dir = (std::filesystem::temp_directory_path() / "salient_bench_lib").string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string data = dir + "/data.jsonl";
  std::ofstream(data) << "{\"text\": \"a charming journey\", \"label\": 1, \"rationale\": [0, 1, 0]}\n"
                      << "{\"text\": \"bleak and dull\", \"label\": 0, \"rationale\": [1, 0, 1]}\n";
  BenchmarkOptions o;
  o.model_dir = model_dir();
  o.data_spec = data;
  o.out_dir = dir + "/out";
  o.methods = {"saliency", "ig"};
  o.metrics = {"token_f1", "comprehensiveness", "time_ms"};
  o.method_options["ig"].params = {{"steps", 8}};
  const std::string md = run_benchmark(o);
  EXPECT_NE(md.find("| saliency |"), std::string::npos);
  EXPECT_NE(md.find("| ig |"), std::string::npos);
  for (const char* f : {"results.jsonl", "summary.md", "summary.csv", "summary.json", "heatmaps.html"})
    EXPECT_TRUE(std::filesystem::exists(o.out_dir + "/" + f)) << f;
  auto summary = nlohmann::json::parse(read_file(o.out_dir + "/summary.json"));
  EXPECT_EQ(summary["methods"]["ig"]["token_f1"]["n"], 2);
  const std::string results = read_file(o.out_dir + "/results.jsonl");
  EXPECT_EQ(std::count(results.begin(), results.end(), '\n'), 4);
  auto first = nlohmann::json::parse(results.substr(0, results.find('\n')));
  EXPECT_EQ(first["params"]["steps"].is_null() ? 0 : 1, first["method"] == "ig" ? 1 : 0);
  // Resume: nothing is recomputed, the summary is the same.
  EXPECT_EQ(run_benchmark(o), md);
  EXPECT_EQ(read_file(o.out_dir + "/results.jsonl"), results);
  // The heatmap page has a legend and the prediction with its probability.
  const std::string html = read_file(o.out_dir + "/heatmaps.html");
  EXPECT_NE(html.find("class=\"legend\""), std::string::npos);
  EXPECT_NE(html.find("predicted"), std::string::npos);
  EXPECT_NE(html.find("(p = "), std::string::npos);
  EXPECT_NE(html.find("class=\"st\""), std::string::npos);  // [CLS]/[SEP] drawn outside the scale
  EXPECT_FALSE(metric_info("sufficiency").higher_is_better);
  EXPECT_EQ(metric_info("token_auprc").family, "plausibility");
  EXPECT_NE(error_of([] { metric_info("accuracy"); }).find("--metrics: unknown metric 'accuracy'"), std::string::npos);
  o.methods = {"ig"};
  o.method_options["ig"].params = {{"samples", 3}};
  EXPECT_NE(error_of([&] { run_benchmark(o); }).find("--samples"), std::string::npos);
}

// The metric registry (src/eval/metrics/): every metric belongs to exactly one family, which either
// computes per example or runs a study; each per-example family writes exactly its own metrics, with
// the values of the functions it is built on.
TEST(MetricRegistry, FamiliesComputeExactlyTheirOwnMetrics) {
  SALIENT_REQUIRE_SHARED(model_dir());
  std::vector<std::string> names;
  for (const MetricFamily& f : metric_families()) {
    EXPECT_NE(static_cast<bool>(f.compute), static_cast<bool>(f.run_study)) << f.name;
    for (const MetricInfo& m : f.metrics) {
      EXPECT_EQ(m.family, f.name) << m.name;
      EXPECT_EQ(&metric_family_of(m.name), &f) << m.name;
      names.push_back(m.name);
    }
  }
  std::vector<std::string> listed;
  for (const MetricInfo& m : metric_registry()) listed.push_back(m.name);
  EXPECT_EQ(listed, names);  // the public list is the families' metrics, in registry order
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  EXPECT_TRUE(static_cast<bool>(metric_family_of("simulability").run_study));

  const Classifier& clf = reference_model();
  Record rec;
  rec.id = "r0";
  rec.text = "a charming and moving journey";
  rec.rationale = {0, 1, 0, 1, 0};
  const Encoding enc = clf.encode(rec.text);
  const std::vector<int64_t> target = predicted_classes(clf, {&enc});
  const Explanation ex = make_explainer("saliency")->explain(clf, {&enc}, target, ExplainOptions{})[0];
  const SequenceScorer scorer = [&](const std::vector<TokenSequence>& seqs) {
    return score_sequences(clf, seqs, std::vector<int64_t>(seqs.size(), target[0]), ModelOutput::Probability, {});
  };
  const ScoredExample example{clf, rec, enc, ex, true, {12.5, 3.0, 40.0}, scorer};
  MetricSettings settings;
  settings.faithfulness.mask_id = clf.tokenizer.mask_id();
  for (const MetricFamily& f : metric_families()) {
    if (!f.compute) continue;
    settings.metrics.clear();
    for (const MetricInfo& m : f.metrics) settings.metrics.push_back(m.name);
    nlohmann::json out = nlohmann::json::object();
    f.compute(example, settings, out);
    std::set<std::string> written;
    for (const auto& [key, value] : out.items()) written.insert(key);
    EXPECT_EQ(written, std::set<std::string>(settings.metrics.begin(), settings.metrics.end())) << f.name;
  }
  // The values are the underlying functions': token F1 at k = the rationale's token count, and
  // ERASER's comprehensiveness at the same k.
  nlohmann::json out = nlohmann::json::object();
  settings.metrics = {"token_f1", "comprehensiveness"};
  metric_family_of("token_f1").compute(example, settings, out);
  metric_family_of("comprehensiveness").compute(example, settings, out);
  EXPECT_FALSE(out.contains("aopc_comprehensiveness"));  // AOPCs only when asked: their passes cost
  EXPECT_FALSE(out.contains("deletion_auc"));
  const std::vector<int> gold = token_gold(rec, enc);
  const int64_t k = std::count(gold.begin(), gold.end(), 1);
  ASSERT_EQ(k, 2);
  std::vector<double> content(ex.scores.begin() + 1, ex.scores.end() - 1);  // [CLS] and [SEP] are not words
  EXPECT_DOUBLE_EQ(out["token_f1"].get<double>(), token_prf_top_k(content, gold, k).f1);
  FaithfulnessOptions asked = settings.faithfulness;  // the perturbed inputs compute scores: no AOPCs, no curves
  asked.aopc_fractions.clear();
  asked.curve_steps = 0;
  const FaithfulnessResult fr = evaluate_faithfulness(scorer, to_sequence(enc), ex.scores, removable_positions(clf, enc), k, asked);
  EXPECT_DOUBLE_EQ(out["comprehensiveness"].get<double>(), fr.comprehensiveness);
  nlohmann::json cost = nlohmann::json::object();
  metric_family_of("time_ms").compute(example, settings, cost);
  EXPECT_EQ(cost, (nlohmann::json{{"time_ms", 12.5}, {"peak_mem_mb", 3.0}, {"estimated_mem_mb", 40.0}}));
}

// --windows: a review longer than the model's 128 positions is explained whole (window by window,
// stitched as the API's explain does) and its faithfulness measured on the windows' mean logits,
// checked against the model's own forward over each masked window; only the metrics asked for are
// computed, and a rerun asking for more recomputes those pairs.
TEST(Benchmark, LongInputsAreBenchmarkedWholeAsWindows) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const std::string dir = (std::filesystem::temp_directory_path() / "salient_bench_windows").string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string review;
  std::vector<int> rationale;
  for (int i = 0; i < 25; ++i) {
    review += "the acting is wooden but the ending is moving . ";
    for (int w = 0; w < 10; ++w) rationale.push_back(w == 3 || w == 8);  // "wooden", "moving"
  }
  const std::string data = dir + "/data.jsonl";
  std::ofstream(data) << nlohmann::json{{"text", review}, {"label", 1}, {"rationale", rationale}}.dump() << "\n";
  const Classifier& clf = reference_model();
  const Encoding whole = clf.tokenizer.encode(review, std::nullopt, 0);
  ASSERT_EQ(whole.ids.size(), 252u);  // three windows of 126 pieces, 63 apart

  BenchmarkOptions o;
  o.model_dir = model_dir();
  o.data_spec = data;
  o.out_dir = dir + "/out";
  o.methods = {"saliency"};
  o.metrics = {"token_f1", "comprehensiveness"};
  o.windows = true;
  run_benchmark(o);
  std::string results = read_file(o.out_dir + "/results.jsonl");
  nlohmann::json line = nlohmann::json::parse(results.substr(0, results.find('\n')));
  const std::vector<double> scores = line["token_scores"].get<std::vector<double>>();
  ASSERT_EQ(scores.size(), whole.ids.size());
  EXPECT_FALSE(line["metrics"].contains("deletion_auc"));  // not asked for: not computed

  // The windows' mean logits by the model's own forward (the predict path) over encodings.
  auto mean_logits = [&](const Encoding& e) {
    std::vector<Encoding> encs;
    for (const Window& w : split_windows(e, 128, 0, "stride")) encs.push_back(w.encoding);
    torch::NoGradGuard no_grad;
    Batch b = make_batch(encs, clf.tokenizer.pad_id(), clf.model.device());
    return clf.model.logits(b.input_ids, b.token_type_ids, b.attention_mask).to(torch::kDouble).mean(0);
  };
  const torch::Tensor full = mean_logits(whole);
  const int64_t target = full.argmax().item<int64_t>();
  EXPECT_EQ(line["target"].get<int64_t>(), target);
  // Scores: the saliency of each window for that class, stitched.
  auto explainer = make_explainer("saliency");
  const Explanation want = explain_windows(*explainer, clf, split_windows(whole, 128, 0, "stride"), whole.ids.size(),
                                           target, ExplainOptions{}, 8);
  for (size_t t = 0; t < scores.size(); ++t) EXPECT_NEAR(scores[t], want.scores[t], 1e-6) << t;
  // Comprehensiveness: the probability lost when the top-k pieces (k = the rationale's 50 words,
  // one piece each) are masked.
  const std::vector<bool> removable = removable_positions(clf, whole);
  const std::vector<int> top = top_k_removable(scores, removable, 50);
  Encoding masked = whole;
  for (size_t t = 0; t < top.size(); ++t)
    if (top[t]) masked.ids[t] = clf.tokenizer.mask_id();
  const double p_full = torch::softmax(full, 0)[target].item<double>();
  const double p_masked = torch::softmax(mean_logits(masked), 0)[target].item<double>();
  EXPECT_NEAR(line["metrics"]["comprehensiveness"].get<double>(), p_full - p_masked, 1e-5);
  EXPECT_TRUE(line["metrics"]["token_f1"].is_number());

  // Asking for a metric the first run did not compute recomputes the pair.
  o.metrics = {"token_f1", "comprehensiveness", "deletion_auc"};
  run_benchmark(o);
  results = read_file(o.out_dir + "/results.jsonl");
  EXPECT_EQ(std::count(results.begin(), results.end(), '\n'), 2);
  EXPECT_EQ(nlohmann::json::parse(read_file(o.out_dir + "/summary.json"))["methods"]["saliency"]["deletion_auc"]["n"], 1);

  // Without windows the review is cut at the model's positions.
  o.windows = false;
  o.out_dir = dir + "/cut";
  run_benchmark(o);
  line = nlohmann::json::parse(read_file(o.out_dir + "/results.jsonl"));
  EXPECT_EQ(line["token_scores"].size(), 128u);
  o.stride = 10;
  EXPECT_NE(error_of([&] { run_benchmark(o); }).find("--stride: only with --windows"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// LIME's features are lime's bag of words by default: every occurrence of a word goes together
// (the same weight at each), a word's pieces share its weight, and a word without a letter or digit
// is no feature; --lime-features positions makes each token its own feature.
TEST(Explain, LimeWordFeaturesRemoveEveryOccurrence) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = reference_model();
  Encoding enc = clf.encode("bleak film , unflinchingly bleak");
  const std::vector<std::string> want_tokens = {"[CLS]", "bleak", "film", ",", "un", "##fl", "##in", "##ching", "##ly",
                                                "bleak", "[SEP]"};
  ASSERT_EQ(enc.tokens, want_tokens);
  const int64_t target = predicted_classes(clf, {&enc})[0];
  ExplainOptions o;
  o.params = {{"samples", 300}};
  auto words = make_explainer("lime")->explain(clf, {&enc}, {target}, o)[0];
  EXPECT_EQ(words.params["features"], "words");
  EXPECT_EQ(words.params["samples"], 300);
  EXPECT_EQ(words.scores[1], words.scores[9]);  // both "bleak"
  EXPECT_NE(words.scores[1], 0.0);
  EXPECT_EQ(words.scores[3], 0.0);  // "," is not a feature
  for (int t = 5; t <= 8; ++t) EXPECT_DOUBLE_EQ(words.scores[t], words.scores[4]);  // one word, five pieces
  EXPECT_NEAR(word_scores("bleak film , unflinchingly bleak", enc, words.scores)[3], 5 * words.scores[4], 1e-12);
  o.params["features"] = "positions";
  auto positions = make_explainer("lime")->explain(clf, {&enc}, {target}, o)[0];
  EXPECT_NE(positions.scores[1], positions.scores[9]);
  EXPECT_NE(positions.scores[3], 0.0);
}

// IG's default rule is Captum's (Gauss–Legendre), and the explanation says which rule it used.
TEST(Explain, IgDefaultsToGaussLegendre) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = reference_model();
  Encoding enc = clf.encode("a charming journey");
  auto e = make_explainer("ig")->explain(clf, {&enc}, {0}, ExplainOptions{})[0];
  EXPECT_EQ(e.extras["rule"], "gausslegendre");
  EXPECT_EQ(e.params["rule"], "gausslegendre");
  EXPECT_EQ(e.params["steps"], 50);
  EXPECT_LT(std::abs(e.extras["delta"].get<double>()), 1e-5);  // trapezoid's is ~1e-3 here
  ASSERT_TRUE(e.output.has_value());
  EXPECT_EQ(*e.output, ModelOutput::Probability);
  e = make_explainer("gae")->explain(clf, {&enc}, {0}, ExplainOptions{})[0];
  EXPECT_EQ(*e.output, ModelOutput::Logit);
  EXPECT_FALSE(make_explainer("rollout")->explain(clf, {&enc}, {0}, ExplainOptions{})[0].output.has_value());
}

// A model whose head reads a scalar mix of every layer (salient_pooling scalar_mix, the SMaT
// authors' pooling) has no first-token shortcut: the gradient methods' logits (cls_logits) equal
// the full forward pass on a padded batch; IG's autograd path (the default for such a model)
// equals the textbook gradient and is complete; the fused path and LRP refuse it by name.
TEST(Explain, ScalarMixModelsExplainThroughEveryLayer) {
  SALIENT_REQUIRE_SHARED(model_dir());
  for (const std::string pooling : {"scalar_mix", "scalar_mix_cls"}) {
    for (int layers : {1, 3}) {
      Classifier clf;
      clf.tokenizer = reference_model().tokenizer;
      nlohmann::json cfg = {{"model_type", "bert"}, {"vocab_size", clf.tokenizer.vocab_size()},
                            {"max_position_embeddings", 40}, {"id2label", {{"0", "a"}, {"1", "b"}}},
                            {"hidden_size", 16}, {"num_hidden_layers", layers}, {"num_attention_heads", 4},
                            {"intermediate_size", 24}, {"salient_pooling", pooling}};
      clf.model = Transformer(ModelConfig::from_json(cfg, "config.json"), 3);
      std::map<std::string, torch::Tensor> w;
      torch::manual_seed(4);
      for (const auto& [name, t] : clf.model.weights()) {
        const bool keep = name.find("LayerNorm") != std::string::npos;
        torch::Tensor v = name.rfind("scalar_mix.coefficients", 0) == 0 ? torch::randn_like(t) : keep ? t : t * 20;
        w[name] = v.detach().to(torch::kFloat64);
      }
      clf.model.set_weights(w);
      Inputs in;
      for (const std::string text : {"a gripping, funny and humane film", "dull", "it is not as bad as you think"})
        in.encs.push_back(clf.encode(text));
      Batch b = make_batch(in.encs, clf.tokenizer.pad_id());
      {
        torch::NoGradGuard ng;
        torch::Tensor full = clf.model.logits(b.input_ids, b.token_type_ids, b.attention_mask);
        torch::Tensor fast = explain::cls_logits(clf.model, b.input_ids, b.token_type_ids, b.attention_mask);
        EXPECT_LT((fast - full).abs().max().item<double>(), 1e-12) << pooling << " " << layers;
      }
      const std::vector<int64_t> targets{0, 1, 1};
      std::map<std::string, std::vector<Explanation>> by_impl;
      for (const std::string impl : {"auto", "autograd", "plain"}) {
        ExplainOptions o;
        o.internal_batch = 4;
        o.params = {{"steps", 400}, {"rule", "gausslegendre"}, {"impl", impl}};
        by_impl[impl] = make_explainer("ig")->explain(clf, in.ptrs(), targets, o);
      }
      for (size_t i = 0; i < in.encs.size(); ++i) {
        const auto& ref = by_impl["plain"][i];
        double sum = 0, scale = 0;
        for (double v : ref.scores) sum += v, scale += std::abs(v);
        ASSERT_GT(scale, 1e-6);
        for (const std::string impl : {"auto", "autograd"})
          EXPECT_LT(rel_err(by_impl[impl][i].scores, ref.scores), 1e-9) << pooling << " " << layers << " " << impl;
        // Completeness: Σ attributions = F(x) − F(x') up to the quadrature's error (delta), small
        // against the attributions' size. These sharp weights need many points: at 50, one
        // example's delta is 0.55% of Σ|attribution|; at 400 every one is below 0.1%.
        EXPECT_LT(std::abs(ref.extras["delta"].get<double>()), 1e-3 * scale) << pooling << " " << layers << " sum " << sum;
      }
      ExplainOptions o;
      o.params = {{"impl", "fused"}};
      EXPECT_NE(error_of([&] { make_explainer("ig")->explain(clf, in.ptrs(), targets, o); })
                    .find("--impl: fused needs a head on the last layer's first token"),
                std::string::npos);
      o.params = nlohmann::json::object();
      EXPECT_NE(error_of([&] { make_explainer("lrp_full")->explain(clf, in.ptrs(), targets, o); }).find("mixes every layer"),
                std::string::npos);
    }
  }
}

// IG with steps=auto: each input gets 8, 16, 32, ... points until its completeness gap is within
// tol of |F(x) − F(x')|; its scores are exactly those of IG at the count it stopped at, inputs
// that need more points do not change those that stop early (up to batching's rounding, as
// BatchAndPaddingInvariance), and a tighter tol takes more points.
TEST(Explain, IgStepsAutoStopsAtTheAccuracyAsked) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Classifier& clf = reference_model();
  Inputs in = first_cases(clf, 6);
  const std::vector<int64_t> targets = predicted_classes(clf, in.ptrs());
  auto ig = make_explainer("ig");
  for (const double tol : {1e-2, 1e-5}) {
    ExplainOptions o;
    o.params = {{"steps", "auto"}, {"tol", tol}, {"baseline", "zeros"}};
    const std::vector<Explanation> got = ig->explain(clf, in.ptrs(), targets, o);
    std::set<int64_t> counts;
    for (size_t i = 0; i < got.size(); ++i) {
      const Explanation& e = got[i];
      const int64_t n = e.extras["steps"].get<int64_t>();
      counts.insert(n);
      EXPECT_TRUE(e.extras["converged"].get<bool>()) << i;
      EXPECT_EQ(e.params["steps"], "auto");
      double sum = 0;
      for (double v : e.scores) sum += v;
      const double delta = e.extras["delta"].get<double>(), change = std::abs(sum - delta);
      EXPECT_LE(std::abs(delta), tol * change) << i;
      // The same as IG at that count, run on this input alone; and fewer points would not do.
      ExplainOptions fixed;
      fixed.params = {{"steps", n}, {"baseline", "zeros"}};
      const Explanation alone = ig->explain(clf, {in.ptrs()[i]}, {targets[i]}, fixed)[0];
      EXPECT_LT(rel_err(alone.scores, e.scores), 2e-5) << i;  // batched or alone: float32 rounding
      if (n > 8) {
        fixed.params["steps"] = n / 2;
        const Explanation fewer = ig->explain(clf, {in.ptrs()[i]}, {targets[i]}, fixed)[0];
        EXPECT_GT(std::abs(fewer.extras["delta"].get<double>()), tol * change) << i;
      }
    }
    if (tol < 1e-3) EXPECT_GT(*counts.rbegin(), 8) << "a tight tol takes more than the first round";
  }
  ExplainOptions bad;
  bad.params = {{"steps", "many"}};
  EXPECT_NE(error_of([&] { ig->explain(clf, in.ptrs(), targets, bad); }).find("--steps: expected an integer or auto"),
            std::string::npos);
  bad.params = {{"steps", "auto"}, {"tol", 2}};
  EXPECT_NE(error_of([&] { ig->explain(clf, in.ptrs(), targets, bad); }).find("--tol"), std::string::npos);
}

// `salient info`'s estimates list only the methods the model runs: a head that mixes every layer has
// no pooler for the LRP rules, so no LRP estimate (and the methods refuse it with the same reason).
TEST(MemoryEstimate, ListsNoLrpMethodForAHeadWithoutThePooler) {
  SALIENT_REQUIRE_SHARED(model_dir());
  ModelConfig c = load_model(model_dir()).config();
  EXPECT_EQ(c.lrp_refusal(), "");
  EXPECT_TRUE(explain_bytes_per_method(c, 64, BatchLimits()).count("lrp_full"));
  c.pooling = "scalar_mix";
  EXPECT_NE(c.lrp_refusal().find("mixes every layer"), std::string::npos);
  const auto estimates = explain_bytes_per_method(c, 64, BatchLimits());
  for (const char* name : {"lrp_full", "lrp_partial", "transformer_attribution", "mgae"}) EXPECT_FALSE(estimates.count(name)) << name;
  EXPECT_TRUE(estimates.count("ig"));
}
