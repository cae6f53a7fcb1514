// SMaT's pieces so far: sparsemax and 1.5-entmax against hand-computed closed forms, an independent
// bisection for τ, the simplex (sum 1, exact zeros) and their Jacobians against finite differences;
// the per-head attention explainer against a direct computation, its uniform start, its gradient.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "model/checkpoint.h"
#include "smat/head_explainer.h"
#include "smat/meta.h"
#include "smat/normalizers.h"
#include "test_util.h"

using namespace salient;
using namespace salient::smat;

namespace {

// p = [z/(α−1)… ] by bisection on τ: Σ f(z_i − τ) = 1, f(u) = [u]₊ (sparsemax) or [u/2]₊² shifted
// (entmax15: p_i = [z_i/2 − τ]₊²). Independent of the sort-based forms.
torch::Tensor by_bisection(const torch::Tensor& z, bool entmax) {
  auto zz = z.to(torch::kFloat64).contiguous();
  std::vector<double> v(zz.data_ptr<double>(), zz.data_ptr<double>() + zz.numel()), p(v.size());
  auto mass = [&](double tau) {
    double s = 0;
    for (double x : v) {
      const double u = std::max(0.0, (entmax ? x / 2 : x) - tau);
      s += entmax ? u * u : u;
    }
    return s;
  };
  double lo = -1e3, hi = 1e3;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (mass(mid) > 1 ? lo : hi) = mid;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    const double u = std::max(0.0, (entmax ? v[i] / 2 : v[i]) - lo);
    p[i] = entmax ? u * u : u;
  }
  return torch::tensor(p, torch::kFloat64);
}

// ∂p/∂z by central differences, [K, K] (row i: ∂p_i/∂z_·).
torch::Tensor jacobian_fd(const std::function<torch::Tensor(const torch::Tensor&)>& f, const torch::Tensor& z) {
  const int64_t K = z.size(0);
  torch::Tensor J = torch::zeros({K, K}, torch::kFloat64);
  const double h = 1e-6;
  for (int64_t j = 0; j < K; ++j) {
    torch::Tensor zp = z.clone(), zm = z.clone();
    zp[j] += h;
    zm[j] -= h;
    J.select(1, j).copy_((f(zp) - f(zm)) / (2 * h));
  }
  return J;
}

torch::Tensor jacobian_autograd(const std::function<torch::Tensor(const torch::Tensor&)>& f, const torch::Tensor& z) {
  const int64_t K = z.size(0);
  torch::Tensor J = torch::zeros({K, K}, torch::kFloat64);
  for (int64_t i = 0; i < K; ++i) {
    torch::Tensor x = z.clone().requires_grad_(true);
    J[i].copy_(torch::autograd::grad({f(x)[i]}, {x})[0]);
  }
  return J;
}

}  // namespace

TEST(Sparsemax, HandCasesSimplexAndExactZeros) {
  auto p = sparsemax(torch::tensor({1.0, 0.5, -1.0}, torch::kFloat64));
  EXPECT_LT((p - torch::tensor({0.75, 0.25, 0.0}, torch::kFloat64)).abs().max().item<double>(), 1e-15);
  EXPECT_EQ(p[2].item<double>(), 0.0);  // exactly zero, not small
  // Equal scores (SMaT's initialisation): the uniform distribution.
  EXPECT_LT((sparsemax(torch::full({6}, 0.3, torch::kFloat64)) - 1.0 / 6).abs().max().item<double>(), 1e-15);
  torch::manual_seed(0);
  torch::Tensor z = torch::randn({7, 12}, torch::kFloat64) * 2;
  torch::Tensor batch = sparsemax(z);
  EXPECT_LT((batch.sum(-1) - 1).abs().max().item<double>(), 1e-12);
  EXPECT_GT(batch.eq(0).sum().item<int64_t>(), 0);
  for (int64_t r = 0; r < 7; ++r)
    EXPECT_LT((batch[r] - by_bisection(z[r], false)).abs().max().item<double>(), 1e-10) << r;
}

TEST(Sparsemax, JacobianIsTheClosedFormAndMatchesFiniteDifferences) {
  torch::Tensor z = torch::tensor({0.9, 0.1, 0.6, -1.2, 0.45}, torch::kFloat64);
  torch::Tensor p = sparsemax(z);
  torch::Tensor s = p.gt(0).to(torch::kFloat64);
  torch::Tensor closed = torch::diag(s) - torch::outer(s, s) / s.sum();  // Martins & Astudillo, eq. 13
  torch::Tensor J = jacobian_autograd(sparsemax, z);
  EXPECT_LT((J - closed).abs().max().item<double>(), 1e-12);
  EXPECT_LT((J - jacobian_fd(sparsemax, z)).abs().max().item<double>(), 1e-6);
}

TEST(Entmax15, HandCasesBisectionAndFiniteDifferences) {
  // z = (1, 0): (1/2 − τ)² + τ² = 1 → τ = (1 − √7)/4.
  const double tau = (1 - std::sqrt(7.0)) / 4;
  auto p = entmax15(torch::tensor({1.0, 0.0}, torch::kFloat64));
  EXPECT_NEAR(p[0].item<double>(), (0.5 - tau) * (0.5 - tau), 1e-14);
  EXPECT_NEAR(p[1].item<double>(), tau * tau, 1e-14);
  // z = (2, 0): all the mass on the first, the second exactly zero.
  auto q = entmax15(torch::tensor({2.0, 0.0}, torch::kFloat64));
  EXPECT_NEAR(q[0].item<double>(), 1.0, 1e-14);
  EXPECT_EQ(q[1].item<double>(), 0.0);
  EXPECT_LT((entmax15(torch::full({5}, -2.0, torch::kFloat64)) - 0.2).abs().max().item<double>(), 1e-14);
  torch::manual_seed(1);
  torch::Tensor z = torch::randn({6, 10}, torch::kFloat64) * 3;
  torch::Tensor batch = entmax15(z);
  EXPECT_LT((batch.sum(-1) - 1).abs().max().item<double>(), 1e-12);
  EXPECT_GT(batch.eq(0).sum().item<int64_t>(), 0);
  for (int64_t r = 0; r < 6; ++r)
    EXPECT_LT((batch[r] - by_bisection(z[r], true)).abs().max().item<double>(), 1e-10) << r;
  torch::Tensor x = torch::tensor({0.8, 0.2, -0.3, 1.1, -2.0}, torch::kFloat64);
  EXPECT_LT((jacobian_autograd(entmax15, x) - jacobian_fd(entmax15, x)).abs().max().item<double>(), 1e-6);
}

TEST(Normalizers, NamesAndErrors) {
  for (const char* n : {"sparsemax", "entmax15", "softmax", "none"})
    EXPECT_EQ(normalizer_name(parse_normalizer(n, "--normalizer")), n);
  EXPECT_NE(test::error_of([] { parse_normalizer("sparse", "--normalizer"); }).find("--normalizer: expected"), std::string::npos);
  torch::Tensor z = torch::tensor({0.2, -0.1}, torch::kFloat64);
  EXPECT_TRUE(torch::equal(normalize(z, Normalizer::None), z));
  EXPECT_LT((normalize(z, Normalizer::Softmax) - torch::softmax(z, 0)).abs().max().item<double>(), 1e-15);
}

// ---- the head explainer on the reference fixture model ----

namespace {
using salient::test::shared_path;
std::string fixture_model() { return shared_path("fixtures/reference-bert/model"); }
}  // namespace

TEST(HeadExplainer, ScoresAreMeanRealRowLogitsAndUniformCoefficientsGiveTheStaticMean) {
  SALIENT_REQUIRE_SHARED(fixture_model());
  Classifier clf = load_classifier(fixture_model());
  clf.model.to(torch::kFloat64);
  Encoding a = clf.encode("a charming and often affecting journey"), b = clf.encode("bleak");
  Batch batch = make_batch(std::vector<Encoding>{a, b}, clf.tokenizer.pad_id());
  torch::NoGradGuard ng;
  HeadScores hs = head_scores(clf.model, batch);
  const int64_t NL = clf.model.num_layers(), H = clf.model.num_heads();
  ASSERT_EQ(hs.scores.size(1), NL * H);
  // Direct: example b alone (no padding), its layers' attention logits, mean over all rows.
  Batch single = make_batch(std::vector<Encoding>{b}, clf.tokenizer.pad_id());
  ForwardRequest req;
  req.input_ids = single.input_ids;
  req.token_type_ids = single.token_type_ids;
  req.want_attention_logits = true;
  ForwardResult r = clf.model.forward(req);
  const int64_t Lb = static_cast<int64_t>(b.ids.size());
  for (int64_t l = 0; l < NL; ++l) {
    torch::Tensor want = r.attention_logits[l][0].mean(1);  // [H, Lb]
    torch::Tensor got = hs.scores[1].slice(0, l * H, (l + 1) * H).slice(1, 0, Lb);
    EXPECT_LT((got.cpu() - want.cpu()).abs().max().item<double>(), 1e-9) << "layer " << l;
  }
  // Uniform coefficients (sparsemax of equal values) = softmax over tokens of the mean head score.
  torch::Tensor lambda = sparsemax(torch::zeros({NL * H}, torch::kFloat64));
  torch::Tensor e = head_explanation(lambda, hs).cpu();
  torch::Tensor mean = hs.scores.mean(1).cpu();
  torch::Tensor want_b = torch::softmax(mean[1].slice(0, 0, Lb), 0);
  EXPECT_LT((e[1].slice(0, 0, Lb) - want_b).abs().max().item<double>(), 1e-12);
  EXPECT_EQ(e[1].slice(0, Lb).abs().sum().item<double>(), 0.0);  // padding: exactly zero
  EXPECT_LT((e.sum(-1) - 1).abs().max().item<double>(), 1e-12);
  EXPECT_NE(test::error_of([&] { head_explanation(torch::zeros({3}), hs); }).find("coefficients"), std::string::npos);
}

TEST(HeadExplainer, CoefficientGradientMatchesFiniteDifferences) {
  SALIENT_REQUIRE_SHARED(fixture_model());
  Classifier clf = load_classifier(fixture_model());
  clf.model.to(torch::kFloat64);
  Batch batch = make_batch(std::vector<Encoding>{clf.encode("unflinchingly bleak and desperate")}, clf.tokenizer.pad_id());
  HeadScores hs;
  {
    torch::NoGradGuard ng;
    hs = head_scores(clf.model, batch, {clf.model.num_layers() - 1});
  }
  const int64_t N = hs.scores.size(1);
  torch::manual_seed(4);
  torch::Tensor target = torch::softmax(torch::randn({hs.scores.size(2)}, torch::kFloat64), 0);
  auto loss = [&](const torch::Tensor& z) {  // KL(target ‖ explanation) through sparsemax
    return (target * (target.log() - head_explanation(sparsemax(z), hs)[0].log())).sum();
  };
  torch::Tensor z = torch::randn({N}, torch::kFloat64) * 0.1;
  torch::Tensor zg = z.clone().requires_grad_(true);
  torch::Tensor g = torch::autograd::grad({loss(zg)}, {zg})[0];
  for (int64_t i = 0; i < N; ++i) {
    torch::Tensor zp = z.clone(), zm = z.clone();
    zp[i] += 1e-6;
    zm[i] -= 1e-6;
    const double fd = (loss(zp) - loss(zm)).item<double>() / 2e-6;
    EXPECT_NEAR(g[i].item<double>(), fd, 1e-6 * std::max(1.0, std::abs(fd))) << i;
  }
}

// ---- the meta-gradient ----

namespace {
Transformer tiny_bert(uint64_t seed) {
  nlohmann::json cfg = {{"model_type", "bert"}, {"vocab_size", 60}, {"hidden_size", 12}, {"num_hidden_layers", 2},
                        {"num_attention_heads", 3}, {"intermediate_size", 20}, {"max_position_embeddings", 16},
                        {"hidden_dropout_prob", 0.0}, {"attention_probs_dropout_prob", 0.0}};
  Transformer m(ModelConfig::from_json(cfg, "cfg"), seed);
  m.to(torch::kCPU, torch::kFloat64);
  return m;
}
SimulationBatch sim_batch(const Transformer& teacher, uint64_t seed) {
  torch::manual_seed(seed);
  SimulationBatch b;
  b.batch.input_ids = torch::randint(5, 60, {4, 9}, torch::kLong);
  b.batch.input_ids.select(1, 0).fill_(2);
  b.batch.token_type_ids = torch::zeros({4, 9}, torch::kLong);
  b.batch.attention_mask = torch::ones({4, 9}, torch::kLong);
  b.batch.attention_mask[3].slice(0, 6).zero_();  // one padded row
  torch::NoGradGuard ng;
  b.teacher_labels = teacher.logits(b.batch.input_ids, b.batch.token_type_ids, b.batch.attention_mask).argmax(-1);
  b.teacher_scores = head_scores(teacher, b.batch);
  return b;
}
}  // namespace

TEST(Meta, GradientThroughThePilotStepMatchesFiniteDifferences) {
  Transformer teacher = tiny_bert(1);
  Student student{tiny_bert(2), torch::zeros({6}, torch::kFloat64).requires_grad_(true), {}};
  student.model.set_requires_grad(true);
  SimulationBatch train = sim_batch(teacher, 3), valid = sim_batch(teacher, 4);
  torch::manual_seed(5);
  const torch::Tensor lambda0 = torch::randn({6}, torch::kFloat64) * 0.5;
  for (Normalizer n : {Normalizer::Softmax, Normalizer::Sparsemax}) {
    torch::Tensor lambda = lambda0.clone().requires_grad_(true);
    torch::Tensor g = torch::autograd::grad({meta_loss(student, train, valid, lambda, n, 5.0, 0.5)}, {lambda})[0];
    EXPECT_GT(g.abs().max().item<double>(), 1e-8) << normalizer_name(n);  // the teacher's explainer matters
    for (int64_t i = 0; i < 6; ++i) {
      torch::Tensor lp = lambda0.clone(), lm = lambda0.clone();
      lp[i] += 1e-5;
      lm[i] -= 1e-5;
      const double fd = (meta_loss(student, train, valid, lp, n, 5.0, 0.5) - meta_loss(student, train, valid, lm, n, 5.0, 0.5))
                            .item<double>() / 2e-5;
      EXPECT_NEAR(g[i].item<double>(), fd, 1e-6 + 1e-4 * std::abs(fd)) << normalizer_name(n) << " coefficient " << i;
    }
  }
  // Without explanations (β = 0) the teacher's coefficients cannot move the meta loss.
  torch::Tensor lambda = lambda0.clone().requires_grad_(true);
  auto g0 = torch::autograd::grad({meta_loss(student, train, valid, lambda, Normalizer::Softmax, 0.0, 0.5)}, {lambda}, {},
                                  false, false, /*allow_unused=*/true)[0];
  EXPECT_TRUE(!g0.defined() || g0.abs().max().item<double>() == 0.0);
}
