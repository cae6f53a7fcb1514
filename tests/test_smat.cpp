// SMaT's pieces so far: sparsemax and 1.5-entmax against hand-computed closed forms, an independent
// bisection for τ, the simplex (sum 1, exact zeros) and their Jacobians against finite differences;
// the per-head attention explainer against a direct computation, its uniform start, its gradient.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "data/dataset.h"
#include "eval/classification.h"
#include "eval/benchmark.h"
#include "eval/plausibility.h"
#include "explain/explainer.h"
#include "model/checkpoint.h"
#include "smat/head_explainer.h"
#include "smat/meta.h"
#include "smat/normalizers.h"
#include "smat/optimizer.h"
#include "smat/plausibility.h"
#include "smat/simulation.h"
#include "smat/study.h"
#include "test_util.h"
#include "util/io.h"
#include "vision/vit.h"

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
Transformer tiny_bert(uint64_t seed, double dropout = 0.0) {
  nlohmann::json cfg = {{"model_type", "bert"}, {"vocab_size", 60}, {"hidden_size", 12}, {"num_hidden_layers", 2},
                        {"num_attention_heads", 3}, {"intermediate_size", 20}, {"max_position_embeddings", 16},
                        {"hidden_dropout_prob", dropout}, {"attention_probs_dropout_prob", dropout}};
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
  SimulationBatch train = sim_batch(teacher, 3), valid = sim_batch(teacher, 4);
  torch::manual_seed(5);
  const torch::Tensor lambda0 = torch::randn({6}, torch::kFloat64) * 0.5;
  // ∂(meta loss)/∂λ by autograd (through the pilot step) against central differences.
  auto check = [&](const Student& student, const SimulationBatch& tr, const SimulationBatch& va, Normalizer n,
                   const StudentOptimizer& optimizer, const std::string& what) {
    torch::Tensor lambda = lambda0.clone().requires_grad_(true);
    torch::Tensor g = torch::autograd::grad({meta_loss(student, tr, va, lambda, n, 5.0, optimizer)}, {lambda})[0];
    EXPECT_GT(g.abs().max().item<double>(), 1e-8) << what;  // the teacher's explainer matters
    for (int64_t i = 0; i < 6; ++i) {
      torch::Tensor lp = lambda0.clone(), lm = lambda0.clone();
      lp[i] += 1e-5;
      lm[i] -= 1e-5;
      const double fd =
          (meta_loss(student, tr, va, lp, n, 5.0, optimizer) - meta_loss(student, tr, va, lm, n, 5.0, optimizer)).item<double>() /
          2e-5;
      EXPECT_NEAR(g[i].item<double>(), fd, 1e-6 + 1e-4 * std::abs(fd)) << what << " coefficient " << i;
    }
  };
  Student student{tiny_bert(2), torch::zeros({6}, torch::kFloat64).requires_grad_(true), {}};
  student.model.set_requires_grad(true);
  // Plain SGD (no clipping, no decay) at lr 0.5.
  const StudentOptimizer sgd({OptimizerKind::Sgd, 0.5, 0.0, 0.0}, student_parameters(student));
  check(student, train, valid, Normalizer::Softmax, sgd, "softmax");
  check(student, train, valid, Normalizer::Sparsemax, sgd, "sparsemax");
  // The pilot step by AdamW's rule with clipping, after two real steps (moments and bias
  // correction in play).
  Student adam_student{tiny_bert(2), torch::zeros({6}, torch::kFloat64).requires_grad_(true), {}};
  adam_student.model.set_requires_grad(true);
  const std::vector<torch::Tensor> adam_params = student_parameters(adam_student);
  StudentOptimizer adam({OptimizerKind::AdamW, 0.01, 0.01, 0.5}, adam_params);
  for (int k = 0; k < 2; ++k)
    adam.step(adam_params, torch::autograd::grad({student_loss(adam_student, train, lambda0, Normalizer::Sparsemax, 5.0)},
                                                 adam_params, {}, false, false, true));
  check(adam_student, train, valid, Normalizer::Sparsemax, adam, "adamw");
  // A regression teacher: L_sim is the squared error to its outputs, through the pilot step too.
  SimulationBatch rtrain = train, rvalid = valid;
  rtrain.teacher_values = torch::linspace(-1, 1, 4, torch::kFloat64);
  rvalid.teacher_values = torch::linspace(1, -0.5, 4, torch::kFloat64);
  check(student, rtrain, rvalid, Normalizer::Softmax, sgd, "regression");
  // Without explanations (β = 0) the teacher's coefficients cannot move the meta loss.
  torch::Tensor lambda = lambda0.clone().requires_grad_(true);
  auto g0 = torch::autograd::grad({meta_loss(student, train, valid, lambda, Normalizer::Softmax, 0.0, sgd)}, {lambda}, {},
                                  false, false, /*allow_unused=*/true)[0];
  EXPECT_TRUE(!g0.defined() || g0.abs().max().item<double>() == 0.0);
}

TEST(Meta, StudentLossIsCrossEntropyPlusBetaKlFromOneForward) {
  Transformer teacher = tiny_bert(1);
  const SimulationBatch b = sim_batch(teacher, 3);
  torch::manual_seed(6);
  const torch::Tensor lambda = torch::randn({6}, torch::kFloat64), mu = torch::randn({6}, torch::kFloat64);
  // L = CE(student logits, teacher labels) + β · mean_b KL(teacher explanation ‖ student explanation).
  auto direct = [&](const torch::Tensor& logits, const HeadScores& student_scores) {
    const torch::Tensor t = head_explanation(normalize(lambda, Normalizer::Sparsemax), b.teacher_scores);
    const torch::Tensor s = head_explanation(normalize(mu, Normalizer::Sparsemax), student_scores);
    const torch::Tensor kl = torch::where(t > 0, t * (t.log() - s.log()), torch::zeros_like(t)).sum(-1).mean();
    return torch::cross_entropy_loss(logits, b.teacher_labels) + 5.0 * kl;
  };
  Student plain{tiny_bert(2), mu, {}};
  EXPECT_NEAR(student_loss(plain, b, lambda, Normalizer::Sparsemax, 5.0).item<double>(),
              direct(batch_logits(plain.model, b.batch), head_scores(plain.model, b.batch)).item<double>(), 1e-12);
  // β = 0: the simulation loss alone.
  EXPECT_NEAR(student_loss(plain, b, lambda, Normalizer::Sparsemax, 0.0).item<double>(),
              torch::cross_entropy_loss(batch_logits(plain.model, b.batch), b.teacher_labels).item<double>(), 1e-12);
  // With dropout in training mode both terms come from one forward, so from the same dropout draw.
  Student noisy{tiny_bert(2, 0.3), mu, {}};
  noisy.model.train();
  torch::manual_seed(8);
  const double got = student_loss(noisy, b, lambda, Normalizer::Sparsemax, 5.0).item<double>();
  torch::manual_seed(8);
  const HeadScores one = head_scores(noisy.model, b.batch);
  EXPECT_NEAR(got, direct(one.logits, one).item<double>(), 1e-12);
  torch::manual_seed(8);
  EXPECT_GT(std::abs(got - direct(batch_logits(noisy.model, b.batch), head_scores(noisy.model, b.batch)).item<double>()), 1e-6);
}

TEST(StudentOptimizer, StepsEqualLibTorchsSgdAndAdamWWithClipping) {
  torch::manual_seed(7);
  const std::vector<torch::Tensor> start = {torch::randn({3, 4}, torch::kFloat64), torch::randn({5}, torch::kFloat64)};
  auto gradients = [](int k) {
    torch::manual_seed(100 + k);
    return std::vector<torch::Tensor>{torch::randn({3, 4}, torch::kFloat64) * 3, torch::randn({5}, torch::kFloat64)};
  };
  for (OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::AdamW}) {
    std::vector<torch::Tensor> ours, theirs;
    for (const auto& t : start) {
      ours.push_back(t.clone());
      theirs.push_back(t.clone().requires_grad_(true));
    }
    const OptimizerRule rule{kind, 0.05, 0.01, 2.0};
    StudentOptimizer mine(rule, ours);
    std::unique_ptr<torch::optim::Optimizer> ref;
    if (kind == OptimizerKind::Sgd)
      ref = std::make_unique<torch::optim::SGD>(theirs, torch::optim::SGDOptions(0.05).weight_decay(0.01));
    else
      ref = std::make_unique<torch::optim::AdamW>(theirs, torch::optim::AdamWOptions(0.05).weight_decay(0.01));
    for (int k = 0; k < 4; ++k) {
      const std::vector<torch::Tensor> g = gradients(k);
      // The pilot's update is the step's, without advancing the state.
      const std::vector<torch::Tensor> preview = mine.updated(ours, g);
      mine.step(ours, g);
      for (size_t i = 0; i < ours.size(); ++i) EXPECT_TRUE(torch::allclose(preview[i], ours[i], 0, 1e-15));
      ref->zero_grad();
      for (size_t i = 0; i < theirs.size(); ++i) theirs[i].mutable_grad() = g[i].clone();
      torch::nn::utils::clip_grad_norm_(theirs, 2.0);
      ref->step();
      for (size_t i = 0; i < ours.size(); ++i)
        EXPECT_LT((ours[i] - theirs[i].detach()).abs().max().item<double>(), 1e-12) << optimizer_name(kind) << " step " << k;
    }
  }
  EXPECT_NE(test::error_of([] { parse_optimizer("adam", "--optimizer"); }).find("--optimizer: unknown optimizer 'adam'"),
            std::string::npos);
}

// ---- simulation, the learned explainer, the study report ----

namespace {
std::vector<Encoding> fixture_encodings(const Classifier& clf) {
  std::vector<Encoding> out;
  for (const char* t : {"a charming and often affecting journey", "bleak", "the plot is nothing but clichés",
                        "an utterly gorgeous film", "it drags"})
    out.push_back(clf.encode(t));
  return out;
}

// Examples labelled by a tiny teacher: random ids, some padded, per-head scores from its forward.
std::vector<SimulationExample> tiny_examples(const Transformer& teacher, int64_t count, uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<SimulationExample> out;
  torch::NoGradGuard ng;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t len = 5 + i % 4;
    Encoding e;
    e.ids.push_back(2);
    for (int64_t j = 1; j < len; ++j) e.ids.push_back(torch::randint(5, 60, {1}).item<int64_t>());
    e.type_ids.assign(e.ids.size(), 0);
    Batch b = make_batch(std::vector<Encoding>{e}, 0);
    SimulationExample ex;
    ex.teacher_label = teacher.logits(b.input_ids, b.token_type_ids, b.attention_mask).argmax(-1).item<int64_t>();
    ex.head_scores = head_scores(teacher, b).scores[0].to(torch::kFloat32);
    ex.encoding = std::move(e);
    out.push_back(std::move(ex));
  }
  return out;
}
}  // namespace

TEST(Simulation, AnnotationsAreTheTeachersPredictionsScoresAndStaticExplanations) {
  SALIENT_REQUIRE_SHARED(fixture_model());
  Classifier clf = load_classifier(fixture_model());
  const std::vector<Encoding> encs = fixture_encodings(clf);
  const auto examples = annotate(clf, encs, /*batch_size=*/2);  // batches of 2 pad differently
  std::vector<const Encoding*> ptrs;
  for (const auto& e : encs) ptrs.push_back(&e);
  const std::vector<int64_t> predicted = predicted_classes(clf, ptrs);
  const int64_t heads = clf.model.num_layers() * clf.model.num_heads();
  for (size_t i = 0; i < encs.size(); ++i) {
    EXPECT_EQ(examples[i].teacher_label, predicted[i]);
    ASSERT_EQ(examples[i].head_scores.sizes(), (std::vector<int64_t>{heads, static_cast<int64_t>(encs[i].ids.size())}));
    // The same scores as the example alone (no padding).
    HeadScores alone = head_scores(clf.model, make_batch(std::vector<Encoding>{encs[i]}, clf.tokenizer.pad_id()));
    EXPECT_LT((alone.scores[0] - examples[i].head_scores).abs().max().item<double>(), 1e-4);
  }
  // attention_all: the all-heads mean at SMaT's uniform start; attention_last: the last layer's heads.
  const auto all = with_explanations(clf, examples, TeacherExplainer::AttentionAll);
  const auto last = with_explanations(clf, examples, TeacherExplainer::AttentionLast);
  const int64_t H = clf.model.num_heads();
  for (size_t i = 0; i < encs.size(); ++i) {
    HeadScores hs{examples[i].head_scores.unsqueeze(0), torch::ones({1, examples[i].head_scores.size(1)}, torch::kBool)};
    torch::Tensor start = head_explanation(normalize(uniform_coefficient_logits(heads), Normalizer::Sparsemax), hs)[0];
    EXPECT_LT((all[i].explanation - start).abs().max().item<double>(), 1e-5);
    torch::Tensor direct = torch::softmax(examples[i].head_scores.slice(0, heads - H).mean(0), 0);
    EXPECT_LT((last[i].explanation - direct).abs().max().item<double>(), 1e-5);
    EXPECT_NEAR(last[i].explanation.sum().item<double>(), 1.0, 1e-5);
  }
  // Gradient explainers: softmax over the tokens of the registry's logit scores / temperature,
  // taken at the embedding layer's output by default (the authors' hidden_states[0]), at the word
  // embeddings with gradient_layer = word_embeddings.
  StaticExplainerOptions so;
  so.grad_x_input_temperature = 0.25;
  for (const std::string layer : {"embeddings", "word_embeddings"}) {
    if (layer != "embeddings") so.gradient_layer = layer;
    const auto gx = with_explanations(clf, examples, TeacherExplainer::GradXInput, so);
    ExplainOptions eo;
    eo.output = ModelOutput::Logit;
    if (layer == "embeddings") eo.params = {{"layer", layer}};  // word_embeddings: the registry's default
    const auto ref = make_explainer("grad_x_input")->explain(clf, ptrs, predicted, eo);
    for (size_t i = 0; i < encs.size(); ++i) {
      torch::Tensor expected = torch::softmax(torch::tensor(ref[i].scores, torch::kFloat64) / 0.25, 0);
      EXPECT_LT((gx[i].explanation.to(torch::kFloat64) - expected).abs().max().item<double>(), 1e-5) << layer;
    }
  }
  so.gradient_layer = "output";
  EXPECT_NE(test::error_of([&] { with_explanations(clf, examples, TeacherExplainer::None, so); }).find("--gradient-layer"),
            std::string::npos);
  EXPECT_FALSE(with_explanations(clf, examples, TeacherExplainer::None)[0].explanation.defined());
  // The authors' defaults by the teacher's kind: patience 10 for text, 5 for image and regression;
  // meta learning rate 5e-4, 2e-4 for regression; an option given is kept.
  StudentOptions defaults;
  EXPECT_EQ(student_patience(defaults, examples), 10);
  EXPECT_DOUBLE_EQ(meta_learning_rate(defaults, examples), 5e-4);
  auto regression = examples;
  regression[0].teacher_value = 0.5;
  EXPECT_EQ(student_patience(defaults, regression), 5);
  EXPECT_DOUBLE_EQ(meta_learning_rate(defaults, regression), 2e-4);
  auto image = examples;
  image[0].image = torch::zeros({4});
  EXPECT_EQ(student_patience(defaults, image), 5);
  EXPECT_DOUBLE_EQ(meta_learning_rate(defaults, image), 5e-4);
  defaults.patience = 3;
  defaults.meta_lr = 1e-3;
  EXPECT_EQ(student_patience(defaults, regression), 3);
  EXPECT_DOUBLE_EQ(meta_learning_rate(defaults, regression), 1e-3);
}

TEST(Simulation, StudentRunsAreDeterministicAndMetaTrainingMovesTheCoefficients) {
  Transformer teacher = tiny_bert(1);
  teacher.to(torch::kFloat32);
  const auto train = tiny_examples(teacher, 24, 3), valid = tiny_examples(teacher, 12, 4), test = tiny_examples(teacher, 12, 5);
  Transformer student = tiny_bert(2);
  student.to(torch::kFloat32);
  StudentOptions o;
  o.explainer = TeacherExplainer::Smat;
  o.batch_size = 8;
  o.max_epochs = 3;
  o.lr = 0.05;
  o.meta_lr = 0.05;
  const torch::Tensor start = uniform_coefficient_logits(6);
  StudentRun a = run_student(student, 0, train, valid, test, o, start, /*meta_train=*/true);
  StudentRun b = run_student(student, 0, train, valid, test, o, start, /*meta_train=*/true);
  EXPECT_EQ(a.simulability, b.simulability);
  EXPECT_TRUE(torch::equal(a.teacher_coefficient_logits, b.teacher_coefficient_logits));
  EXPECT_EQ(a.steps, 9);  // 3 epochs × 3 batches
  EXPECT_EQ(a.meta_steps, a.steps);
  EXPECT_GT((a.teacher_coefficient_logits - start).abs().max().item<double>(), 1e-6);
  // Simulability is the kept student's agreement with the teacher on `test`; the kept epoch is the
  // first with the lowest validation loss, and training stops `patience` + 1 epochs after it (the
  // authors' `not_improved > patience`).
  StudentOptions none = o;
  none.explainer = TeacherExplainer::None;
  none.select_by_accuracy = false;
  none.max_epochs = 40;
  none.patience = 2;
  Transformer kept;
  StudentRun c = run_student(student, 0, train, valid, test, none, {}, false, &kept);
  EXPECT_EQ(c.meta_steps, 0);
  EXPECT_FALSE(c.teacher_coefficient_logits.defined());
  EXPECT_EQ(c.simulability, simulation_loss_and_accuracy(kept, 0, test).second);
  EXPECT_NEAR(c.valid_loss, simulation_loss_and_accuracy(kept, 0, valid).first, 1e-6);
  double lowest = 1e300;
  int argmin = 0;
  for (const auto& h : c.history)
    if (h.at("valid_loss").get<double>() < lowest) {
      lowest = h.at("valid_loss").get<double>();
      argmin = h.at("epoch").get<int>();
    }
  EXPECT_EQ(c.best_epoch, argmin);
  EXPECT_DOUBLE_EQ(c.valid_loss, lowest);
  EXPECT_EQ(c.epochs, std::min(none.max_epochs, c.best_epoch + none.patience + 1));
  // By accuracy (the authors' rule): the first epoch with the highest validation simulability.
  none.select_by_accuracy = true;
  StudentRun d = run_student(student, 0, train, valid, test, none);
  double highest = -1;
  int argmax = 0;
  for (const auto& h : d.history)
    if (h.at("valid_simulability").get<double>() > highest) {
      highest = h.at("valid_simulability").get<double>();
      argmax = h.at("epoch").get<int>();
    }
  EXPECT_EQ(d.best_epoch, argmax);
  EXPECT_DOUBLE_EQ(d.valid_simulability, highest);
  none.select_by_accuracy = false;
  none.max_epochs = 3;
  // SMaT meta-training without explanations would learn nothing: an error, not a silent no-op.
  StudentOptions no_beta = o;
  no_beta.beta = 0;
  EXPECT_NE(test::error_of([&] { run_student(student, 0, train, valid, test, no_beta, start, true); }).find("--beta"),
            std::string::npos);
  // A registered explainer's β depends on its family: the caller gives it.
  StudentOptions registered = none;
  registered.explainer = TeacherExplainer::Registered;
  EXPECT_NE(test::error_of([&] { run_student(student, 0, train, valid, test, registered); }).find("needs its β"),
            std::string::npos);
  // One-line errors naming what is wrong.
  EXPECT_NE(test::error_of([&] { run_student(student, 0, train, valid, test, none, {}, true); }).find("meta-training needs explainer 'smat'"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] { run_student(student, 0, train, valid, test, o); }).find("needs the teacher's coefficients"),
            std::string::npos);
  StudentOptions bad = none;
  bad.lr = 0;
  EXPECT_NE(test::error_of([&] { run_student(student, 0, train, valid, test, bad); }).find("--lr"), std::string::npos);
  bad = none;
  bad.beta = -3;
  EXPECT_NE(test::error_of([&] { run_student(student, 0, train, valid, test, bad); }).find("--beta"), std::string::npos);
  StudentOptions gradient = none;
  gradient.explainer = TeacherExplainer::Saliency;
  EXPECT_NE(test::error_of([&] { run_student(student, 0, train, valid, test, gradient); }).find("no 'saliency' explanations"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] { run_student(student, 0, {}, valid, test, none); }).find("no student training examples"),
            std::string::npos);
}

TEST(LearnedHeadExplainer, SaveLoadRoundTripAndTheRegistryMethodsValues) {
  SALIENT_REQUIRE_SHARED(fixture_model());
  Classifier clf = load_classifier(fixture_model());
  torch::manual_seed(7);
  LearnedHeadExplainer e = all_heads_explainer(clf.model, Normalizer::Entmax15,
                                               torch::randn({clf.model.num_layers() * clf.model.num_heads()}));
  char tmpl[] = "/tmp/smat_explainer_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  save_head_explainer(e, join_path(dir, "smat_explainer.json"), {{"note", "test"}});
  const LearnedHeadExplainer back = load_head_explainer(dir);
  EXPECT_EQ(back.normalizer, Normalizer::Entmax15);
  EXPECT_EQ(back.layers, e.layers);
  EXPECT_LT((back.coefficient_logits - e.coefficient_logits).abs().max().item<double>(), 1e-6);
  // `--method smat`: the distribution softmax(Σ λ_h s_h) over the tokens, λ = entmax15(logits).
  const std::vector<Encoding> encs = fixture_encodings(clf);
  std::vector<const Encoding*> ptrs;
  for (const auto& x : encs) ptrs.push_back(&x);
  ExplainOptions eo;
  eo.params = {{"smat", dir}};
  const auto got = make_explainer("smat")->explain(clf, ptrs, predicted_classes(clf, ptrs), eo);
  for (size_t i = 0; i < encs.size(); ++i) {
    torch::NoGradGuard ng;
    HeadScores hs = head_scores(clf.model, make_batch(std::vector<Encoding>{encs[i]}, clf.tokenizer.pad_id()));
    torch::Tensor lambda = entmax15(e.coefficient_logits.to(torch::kFloat64));
    torch::Tensor direct = torch::softmax((hs.scores[0].to(torch::kFloat64) * lambda.unsqueeze(1)).sum(0), 0);
    EXPECT_LT(test::rel_err(got[i].scores, std::vector<double>(direct.data_ptr<double>(), direct.data_ptr<double>() + direct.numel())),
              1e-4);
  }
  // Bad files: one-line errors naming the field.
  auto j = parse_json_file(join_path(dir, "smat_explainer.json"));
  j["coefficient_logits"].erase(0);
  write_file_atomic(join_path(dir, "bad.json"), j.dump());
  EXPECT_NE(test::error_of([&] { load_head_explainer(join_path(dir, "bad.json")); }).find("coefficient_logits"), std::string::npos);
  j = parse_json_file(join_path(dir, "smat_explainer.json"));
  j["normalizer"] = "sparsest";
  write_file_atomic(join_path(dir, "bad.json"), j.dump());
  EXPECT_NE(test::error_of([&] { load_head_explainer(join_path(dir, "bad.json")); }).find("normalizer"), std::string::npos);
  e.num_heads += 1;
  e.coefficient_logits = torch::zeros({e.num_layers * e.num_heads});
  EXPECT_NE(test::error_of([&] { explain_with(e, clf.model, make_batch(encs, clf.tokenizer.pad_id())); }).find("trained for"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Study, QuantilesAndTheReportMarksRangesThatDoNotOverlapTheBaseline) {
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.25), 1.75);  // numpy.quantile([1,2,3,4], .25)
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({5}, 0.75), 5);
  char tmpl[] = "/tmp/smat_study_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  make_dirs(join_path(dir, "runs"));
  auto put = [&](const std::string& e, uint64_t seed, double sim) {
    nlohmann::json r = {{"explainer", e}, {"size", 500}, {"seed", seed},
                        {"run", {{"simulability", sim}, {"student_step_seconds", 0.01}}}};
    write_file_atomic(join_path(dir, fmt::format("runs/{}_n500_s{}.json", e, seed)), r.dump());
  };
  for (uint64_t s : {0, 9, 11}) {
    put("none", s, 0.60 + 0.01 * static_cast<double>(s % 3));
    put("attention_all", s, 0.70 + 0.01 * static_cast<double>(s % 3));
    put("saliency", s, 0.59 + 0.02 * static_cast<double>(s % 3));
  }
  const nlohmann::json summary = report_study(dir);
  std::map<std::string, std::string> versus;
  for (const auto& row : summary["rows"]) versus[row["explainer"]] = row["vs_none"];
  EXPECT_EQ(versus["none"], "baseline");
  EXPECT_EQ(versus["attention_all"], "better");
  EXPECT_EQ(versus["saliency"], "overlap");
  const std::string md = read_file(join_path(dir, "report.md"));
  EXPECT_LT(md.find("| none |"), md.find("| saliency |"));  // the study's order, none first
  // A SMaT run: its row is the student co-trained during meta-training (the authors' number), and
  // the fresh student taught by the frozen coefficients is a row of its own, after it.
  for (uint64_t s : {0, 9, 11}) {
    nlohmann::json r = {{"explainer", "smat"}, {"size", 500}, {"seed", s},
                        {"run", {{"simulability", 0.50}, {"student_step_seconds", 0.01}}},
                        {"meta_run", {{"simulability", 0.80}, {"student_step_seconds", 0.01}, {"meta_step_seconds", 0.03}}},
                        {"explainer_file", "explainers/smat.json"}};
    write_file_atomic(join_path(dir, fmt::format("runs/smat_n500_s{}.json", s)), r.dump());
  }
  make_dirs(join_path(dir, "explainers"));
  LearnedHeadExplainer learned;
  learned.num_layers = 1, learned.num_heads = 2, learned.layers = {0};
  learned.coefficient_logits = torch::zeros({2});
  save_head_explainer(learned, join_path(dir, "explainers/smat.json"), {});
  const nlohmann::json with_smat = report_study(dir);
  std::map<std::string, double> median;
  for (const auto& row : with_smat["rows"]) median[row["explainer"]] = row["median"];
  EXPECT_DOUBLE_EQ(median["smat"], 0.80);
  EXPECT_DOUBLE_EQ(median["smat_fresh_student"], 0.50);
  const std::string md2 = read_file(join_path(dir, "report.md"));
  EXPECT_LT(md2.find("| smat |"), md2.find("| smat_fresh_student |"));
  EXPECT_NE(md.find("▲"), std::string::npos);
  std::filesystem::remove_all(dir);
  EXPECT_NE(test::error_of([&] { report_study(dir); }).find("has no runs/"), std::string::npos);
}

// ---- the planted-token task: an oracle explanation must help a student ----

namespace {
// [CLS] + 8–12 tokens: fillers (20..63) and, at one random place, a planted token whose set decides
// the label (10..13 → 0, 14..17 → 1). The oracle explanation puts all mass on that place; the
// misleading one on another random place. Lengths differ, so batches pad.
std::vector<SimulationExample> planted_examples(int64_t count, uint64_t seed, int64_t heads, bool misleading = false) {
  std::mt19937_64 rng(seed);
  std::vector<SimulationExample> out;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t length = 8 + static_cast<int64_t>(rng() % 5);
    const int64_t label = static_cast<int64_t>(rng() % 2);
    const int64_t place = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(length));
    const int64_t decoy = 1 + (place + static_cast<int64_t>(rng() % static_cast<uint64_t>(length - 1))) % length;
    SimulationExample ex;
    ex.encoding.ids.push_back(2);
    for (int64_t j = 1; j <= length; ++j)
      ex.encoding.ids.push_back(j == place ? 10 + 4 * label + static_cast<int64_t>(rng() % 4)
                                           : 20 + static_cast<int64_t>(rng() % 44));
    ex.encoding.type_ids.assign(ex.encoding.ids.size(), 0);
    ex.teacher_label = label;
    const int64_t L = static_cast<int64_t>(ex.encoding.ids.size());
    ex.head_scores = torch::zeros({heads, L});
    ex.explanation = torch::zeros({L});
    ex.explanation[misleading ? decoy : place] = 1.0;
    out.push_back(std::move(ex));
  }
  return out;
}
}  // namespace

// The paper's sanity check of the simulation framework: an explanation that points at the token
// deciding the label lets a student simulate from few examples; one pointing elsewhere does not.
TEST(Simulation, AnOracleExplanationBeatsNoExplanationOnAPlantedTokenTask) {
  nlohmann::json cfg = {{"model_type", "bert"}, {"vocab_size", 64}, {"hidden_size", 16}, {"num_hidden_layers", 1},
                        {"num_attention_heads", 2}, {"intermediate_size", 32}, {"max_position_embeddings", 16},
                        {"hidden_dropout_prob", 0.0}, {"attention_probs_dropout_prob", 0.0}};
  const int64_t heads = 2;
  const auto train = planted_examples(24, 1, heads), misleading = planted_examples(24, 1, heads, true),
             valid = planted_examples(40, 2, heads), test = planted_examples(300, 3, heads);
  StudentOptions o;
  o.optimizer = OptimizerKind::AdamW;  // students from scratch (plain SGD at small rates does not move them)
  o.lr = 0.003;
  o.batch_size = 8;
  o.max_epochs = 40;
  o.patience = 40;
  double none_mean = 0, oracle_mean = 0, misleading_mean = 0;
  for (uint64_t seed : {0, 1, 2}) {
    Transformer student(ModelConfig::from_json(cfg, "cfg"), 100 + seed);
    student.to(torch::kFloat32);
    o.seed = seed;
    o.explainer = TeacherExplainer::None;
    const double none = run_student(student, 0, train, valid, test, o).simulability;
    o.explainer = TeacherExplainer::AttentionAll;  // a static explanation: the oracle's distribution
    const double oracle = run_student(student, 0, train, valid, test, o).simulability;
    const double wrong = run_student(student, 0, misleading, valid, test, o).simulability;
    EXPECT_GT(oracle, none + 0.1) << "seed " << seed;
    none_mean += none / 3;
    oracle_mean += oracle / 3;
    misleading_mean += wrong / 3;
  }
  EXPECT_GT(oracle_mean, 0.9);
  EXPECT_LT(none_mean, 0.85);
  EXPECT_GT(oracle_mean, misleading_mean + 0.15);
}

// `salient benchmark --metrics simulability`: the study protocol for any registered method, each
// through the registry (registered:M), against students without explanations; a run equals the
// same student trained directly, the explanations are softmax(score / max|score| / T), β follows
// the method's family, and a rerun redoes nothing.
TEST(Benchmark, SimulabilityMetricRunsTheStudyForRegisteredMethods) {
  SALIENT_REQUIRE_SHARED(fixture_model());
  const std::string dir = (std::filesystem::temp_directory_path() / "salient_bench_simulability").string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string pool = dir + "/pool.jsonl";
  {
    std::ofstream out(pool);
    const char* words[] = {"charming", "bleak", "film", "plot", "gorgeous", "dull", "story", "actors", "funny", "slow"};
    std::mt19937_64 rng(5);
    for (int i = 0; i < 40; ++i) {
      std::string text;
      for (int w = 0; w < 4 + i % 5; ++w) text += std::string(w ? " " : "") + words[rng() % 10];
      out << nlohmann::json{{"text", text}}.dump() << "\n";
    }
  }
  BenchmarkOptions o;
  o.model_dir = fixture_model();
  o.data_spec = pool;
  o.out_dir = dir + "/out";
  o.methods = {"attention_mean", "saliency"};
  o.metrics = {"simulability"};
  o.simulability.sizes = {8};
  o.simulability.seeds = {0, 1};
  o.simulability.test_size = 12;
  o.simulability.valid_size = 8;
  o.simulability.student.optimizer = OptimizerKind::AdamW;
  o.simulability.student.lr = 1e-3;
  o.simulability.student.max_epochs = 2;
  o.simulability.student.batch_size = 4;
  o.simulability.temperature = 0.2;
  const std::string md = run_benchmark(o);
  for (const char* row : {"| none |", "| registered:attention_mean |", "| registered:saliency |"})
    EXPECT_NE(md.find(row), std::string::npos) << row << "\n" << md;
  const std::string runs = o.out_dir + "/simulability/runs/";
  const auto record = nlohmann::json::parse(read_file(runs + "registered:saliency_n8_s1.json"));
  EXPECT_DOUBLE_EQ(record.at("beta").get<double>(), 0.2);  // a gradient method
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(read_file(runs + "registered:attention_mean_n8_s0.json")).at("beta").get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(read_file(runs + "none_n8_s0.json")).at("beta").get<double>(), 0.0);

  // The same student trained directly: the same simulability, bit for bit.
  SimulationSetup setup;
  setup.teacher = o.model_dir;
  setup.pool = pool;
  setup.test_size = 12;
  setup.valid_size = 8;
  SimulationData data = load_simulation_data(setup, 8);
  StaticExplainerOptions so;
  so.registered_temperature = 0.2;
  const auto explained = with_explanations(data.teacher, {data.train.begin(), data.train.begin() + 8}, "registered:saliency", so);
  StudentOptions student = o.simulability.student;
  student.explainer = TeacherExplainer::Registered;
  student.seed = 1;
  student.beta = 0.2;
  const StudentRun direct = run_student(make_student(setup, data.teacher, 1), data.teacher.tokenizer.pad_id(), explained,
                                        data.valid, data.test, student);
  EXPECT_EQ(direct.simulability, record.at("run").at("simulability").get<double>());
  // The explanations: the registry's scores for the teacher's label, scaled and softened.
  std::vector<const Encoding*> ptrs;
  std::vector<int64_t> labels;
  for (size_t i = 0; i < 8; ++i) {
    ptrs.push_back(&explained[i].encoding);
    labels.push_back(explained[i].teacher_label);
  }
  const auto reference = make_explainer("saliency")->explain(data.teacher, ptrs, labels, ExplainOptions{});
  for (size_t i = 0; i < 8; ++i) {
    torch::Tensor s = torch::tensor(reference[i].scores, torch::kFloat64);
    torch::Tensor expected = torch::softmax(s / s.abs().max() / 0.2, 0);
    EXPECT_LT((explained[i].explanation.to(torch::kFloat64) - expected).abs().max().item<double>(), 1e-6);
  }
  // Rerun: nothing is trained again (the run files, timings included, are unchanged).
  const std::string before = read_file(runs + "none_n8_s1.json");
  EXPECT_EQ(run_benchmark(o), md);
  EXPECT_EQ(read_file(runs + "none_n8_s1.json"), before);
  EXPECT_EQ(metric_info("simulability").family, "simulation");
  // Errors name the option.
  o.simulability.temperature = 0;
  EXPECT_NE(test::error_of([&] { run_benchmark(o); }).find("--sim-temperature"), std::string::npos);
  o.simulability.temperature = 0.2;
  o.simulability.student.beta = -2;
  EXPECT_NE(test::error_of([&] { run_benchmark(o); }).find("--sim-beta"), std::string::npos);
  o.simulability.student.beta = -1;
  o.simulability.student.optimizer = OptimizerKind::Sgd;  // other settings in the same directory
  EXPECT_NE(test::error_of([&] { run_benchmark(o); }).find("other settings"), std::string::npos);
  EXPECT_NE(test::error_of([] { parse_teacher_explainer("registered:nope", "--explainers"); }).find("unknown explainer"),
            std::string::npos);
  // A value given twice would train a run twice.
  o.simulability.student.optimizer = OptimizerKind::AdamW;
  o.simulability.seeds = {0, 1, 0};
  EXPECT_NE(test::error_of([&] { run_benchmark(o); }).find("--seeds: '0' is given twice"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// Fix 6 of issue #48, end to end: a teacher whose head mixes every layer (the authors' scalar mix),
// students from a pre-trained encoder. The student reads its encoder as the teacher does (scalar
// mix), keeps every encoder weight of the checkpoint (and the classifier a sequence-classification
// checkpoint has; the mix's coefficients are new), and trains with SGD by default, which moves the
// encoder's weights, not the head's alone.
TEST(Study, PretrainedStudentsMixEveryLayerAsTheTeacherAndFineTuneWithSgd) {
  SALIENT_REQUIRE_SHARED(fixture_model());
  LoadOptions lo;
  lo.allow_new_head = true;
  lo.pooling = "scalar_mix";
  lo.seed = 5;
  const Classifier teacher = load_classifier(fixture_model(), lo);
  ASSERT_TRUE(teacher.model.pools_every_layer());
  const Classifier encoder = load_classifier(fixture_model());
  SimulationSetup setup;
  setup.teacher = fixture_model();
  setup.pool = "unused";
  setup.student_init = fixture_model();
  const Transformer a = make_student(setup, teacher, 3), b = make_student(setup, teacher, 4);
  EXPECT_EQ(a.config().pooling, "scalar_mix");
  size_t encoder_weights = 0, new_head_weights = 0;
  for (const auto& [name, w] : a.weights()) {
    EXPECT_TRUE(torch::equal(w, b.weights().at(name))) << name;
    const auto in_checkpoint = encoder.model.weights().find(name);
    if (in_checkpoint == encoder.model.weights().end()) {
      EXPECT_TRUE(is_head_weight(name)) << name;  // the scalar mix's coefficients
      ++new_head_weights;
      continue;
    }
    EXPECT_TRUE(torch::equal(w, in_checkpoint->second)) << name;
    if (!is_head_weight(name)) ++encoder_weights;
  }
  EXPECT_GT(encoder_weights, 10u);
  EXPECT_GT(new_head_weights, 0u);
  StudentOptions o;
  EXPECT_EQ(o.optimizer, OptimizerKind::Sgd);
  o.explainer = TeacherExplainer::AttentionAll;
  o.max_epochs = 2;
  o.lr = 0.05;
  const auto examples = with_explanations(teacher, annotate(teacher, fixture_encodings(teacher)), o.explainer);
  Transformer kept;
  const StudentRun run = run_student(a, teacher.tokenizer.pad_id(), examples, examples, examples, o, {}, false, &kept);
  EXPECT_TRUE(std::isfinite(run.simulability));
  EXPECT_GT(run.steps, 0);
  double moved = 0;
  for (const auto& [name, w] : kept.weights())
    if (!is_head_weight(name)) moved = std::max(moved, (w - a.weights().at(name)).abs().max().item<double>());
  EXPECT_GT(moved, 0.0);
}

// --student-dropout sets the students' hidden and attention dropout, from scratch and from an encoder;
// unset, each keeps what it starts from; out of [0, 1) it is a one-line error naming the flag.
TEST(Study, StudentDropoutSetsTheStudentsDropoutOnlyWhenGiven) {
  SALIENT_REQUIRE_SHARED(fixture_model());
  const Classifier teacher = load_classifier(fixture_model());
  const ModelConfig& own = teacher.model.config();
  SimulationSetup setup;
  setup.teacher = fixture_model();
  setup.pool = "unused";
  for (const std::string& init : {std::string(), fixture_model()}) {
    setup.student_init = init;
    setup.student_dropout.reset();
    const Transformer plain = make_student(setup, teacher, 3);
    EXPECT_EQ(plain.config().hidden_dropout_prob, own.hidden_dropout_prob) << init;
    EXPECT_EQ(plain.config().attention_probs_dropout_prob, own.attention_probs_dropout_prob) << init;
    setup.student_dropout = 0.25;
    const Transformer dropped = make_student(setup, teacher, 3);
    EXPECT_EQ(dropped.config().hidden_dropout_prob, 0.25) << init;
    EXPECT_EQ(dropped.config().attention_probs_dropout_prob, 0.25) << init;
    // Only dropout changes: the same seed draws the same weights.
    for (const auto& [name, w] : plain.weights()) EXPECT_TRUE(torch::equal(w, dropped.weights().at(name))) << init << " " << name;
  }
  for (double bad : {-0.1, 1.0}) {
    setup.student_dropout = bad;
    EXPECT_NE(test::error_of([&] { setup.validate(); }).find("--student-dropout"), std::string::npos) << bad;
  }
  test::expect_one_line_error(test::run_salient("smat evaluate --teacher " + fixture_model() +
                                                " --pool sst2:train --explainer none --student-dropout 1.5"),
                              "--student-dropout");
}

// The plausibility table: attention_all is the AUROC of the all-heads mean of the logits against
// the rationale, a learned explainer that keeps one head scores as that head, and the oracle rows
// are the best of every layer and every head.
TEST(Plausibility, RowsAreDirectAurocsAndOraclesAreTheBestLayerAndHead) {
  SALIENT_REQUIRE_SHARED(fixture_model());
  const std::string dir = (std::filesystem::temp_directory_path() / "salient_smat_plausibility").string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string data = dir + "/data.jsonl";
  std::ofstream(data) << "{\"text\": \"a charming and moving journey\", \"label\": 1, \"rationale\": [0, 1, 0, 1, 0]}\n"
                      << "{\"text\": \"bleak and dull\", \"label\": 0, \"rationale\": [1, 0, 1]}\n"
                      << "{\"text\": \"the plot is nothing but cliches\", \"label\": 0, \"rationale\": [0, 1, 0, 0, 0, 1]}\n"
                      << "{\"text\": \"no rationale here\", \"label\": 0}\n";
  // A learned explainer that reads head 1.2 only (normalizer none: the coefficients are the logits).
  Classifier clf = load_classifier(fixture_model());
  const int64_t L = clf.model.num_layers(), H = clf.model.num_heads();
  torch::Tensor one = torch::zeros({L * H});
  one[1 * H + 2] = 1.0;
  save_head_explainer(all_heads_explainer(clf.model, Normalizer::None, one), dir + "/head12.json");
  PlausibilityOptions o;
  o.teacher = fixture_model();
  o.data = data;
  o.out_dir = dir + "/out";
  o.smat_files = {dir + "/head12.json"};
  o.unit = "token";
  const nlohmann::json out = run_plausibility(o);
  std::map<std::string, nlohmann::json> rows;
  for (const auto& r : out.at("rows")) rows[r.at("explainer").get<std::string>()] = r;
  // attention_all by hand: mean over heads of the mean real-row attention logits, AUROC per example.
  double expected = 0;
  const Dataset d = load_dataset(data, "");
  for (size_t i = 0; i < 3; ++i) {
    const Encoding e = clf.encode(d.records[i].text);
    const std::vector<int> g = project_rationale(d.records[i].text, e, d.records[i].rationale, "test");
    HeadScores hs = head_scores(clf.model, make_batch(std::vector<Encoding>{e}, clf.tokenizer.pad_id()));
    torch::Tensor mean = hs.scores[0].to(torch::kFloat64).mean(0);
    std::vector<double> s;
    std::vector<int> gg;
    for (size_t t = 0; t < g.size(); ++t)
      if (g[t] >= 0) {
        s.push_back(mean[static_cast<int64_t>(t)].item<double>());
        gg.push_back(g[t]);
      }
    expected += auroc(s, gg) / 3;
  }
  EXPECT_NEAR(rows.at("attention_all").at("auroc").get<double>(), expected, 1e-9);
  EXPECT_EQ(rows.at("attention_all").at("examples").get<int64_t>(), 3);  // the record without a rationale is left out
  // Per word (the authors' Appendix A, the default): the pieces of a word summed, AUROC over words.
  double expected_words = 0;
  for (size_t i = 0; i < 3; ++i) {
    const Encoding e = clf.encode(d.records[i].text);
    const std::vector<int> g = project_rationale(d.records[i].text, e, d.records[i].rationale, "test");
    HeadScores hs = head_scores(clf.model, make_batch(std::vector<Encoding>{e}, clf.tokenizer.pad_id()));
    torch::Tensor mean = hs.scores[0].to(torch::kFloat64).mean(0);
    std::map<int64_t, double> word_score;
    std::map<int64_t, int> word_gold;
    for (size_t t = 0; t < g.size(); ++t)
      if (g[t] >= 0) {
        word_score[e.word_ids[t]] += mean[static_cast<int64_t>(t)].item<double>();
        word_gold[e.word_ids[t]] = std::max(word_gold[e.word_ids[t]], g[t]);
      }
    std::vector<double> s;
    std::vector<int> gg;
    for (const auto& [w, v] : word_score) s.push_back(v), gg.push_back(word_gold[w]);
    expected_words += auroc(s, gg) / 3;
  }
  PlausibilityOptions per_word = o;
  per_word.unit = "word";
  per_word.out_dir = dir + "/out-words";
  double words_auroc = -1;
  const nlohmann::json words_out = run_plausibility(per_word);
  EXPECT_EQ(words_out.at("unit"), "word");
  for (const auto& r : words_out.at("rows"))
    if (r.at("explainer").get<std::string>() == "attention_all") words_auroc = r.at("auroc").get<double>();
  EXPECT_NEAR(words_auroc, expected_words, 1e-9);
  PlausibilityOptions bad_unit = o;
  bad_unit.unit = "sentence";
  EXPECT_NE(test::error_of([&] { run_plausibility(bad_unit); }).find("--unit"), std::string::npos);
  // The one-head explainer is head 1.2; the oracles are the maxima over layers and heads.
  double best_head = -1, best_layer = -1, head12 = -1;
  for (const auto& h : out.at("heads")) {
    best_head = std::max(best_head, h.at("auroc").get<double>());
    if (h.at("layer") == 1 && h.at("head") == 2) head12 = h.at("auroc").get<double>();
  }
  for (const auto& l : out.at("layers")) best_layer = std::max(best_layer, l.at("auroc").get<double>());
  EXPECT_EQ(out.at("heads").size(), static_cast<size_t>(L * H));
  EXPECT_NEAR(rows.at("smat (" + dir + "/head12.json)").at("auroc").get<double>(), head12, 1e-12);
  double oracle_head = -2, oracle_layer = -2;
  for (const auto& [name, r] : rows) {
    if (name.rfind("oracle: best head", 0) == 0) oracle_head = r.at("auroc").get<double>();
    if (name.rfind("oracle: best layer", 0) == 0) oracle_layer = r.at("auroc").get<double>();
  }
  EXPECT_EQ(oracle_head, best_head);
  EXPECT_EQ(oracle_layer, best_layer);
  for (const char* f : {"plausibility.md", "plausibility.csv", "plausibility.json"})
    EXPECT_TRUE(std::filesystem::exists(o.out_dir + "/" + f)) << f;
  // Errors: data without rationales; an explainer of another shape.
  const std::string plain = dir + "/plain.jsonl";
  std::ofstream(plain) << "{\"text\": \"bleak\", \"label\": 0}\n";
  PlausibilityOptions bad = o;
  bad.data = plain;
  EXPECT_NE(test::error_of([&] { run_plausibility(bad); }).find("has no human rationales"), std::string::npos);
  save_head_explainer(all_heads_explainer(tiny_bert(1), Normalizer::None, torch::zeros({6})), dir + "/other.json");
  bad = o;
  bad.smat_files = {dir + "/other.json"};
  EXPECT_NE(test::error_of([&] { run_plausibility(bad); }).find("--smat"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// A regression teacher (one output): annotations carry its output, the simulation loss is the mean
// squared error and simulability Pearson's r of the student's outputs against the teacher's.
TEST(Simulation, RegressionTeachersAreSimulatedBySquaredErrorAndPearson) {
  nlohmann::json cfg = {{"model_type", "bert"}, {"vocab_size", 60}, {"hidden_size", 12}, {"num_hidden_layers", 2},
                        {"num_attention_heads", 3}, {"intermediate_size", 20}, {"max_position_embeddings", 16},
                        {"hidden_dropout_prob", 0.0}, {"attention_probs_dropout_prob", 0.0},
                        {"id2label", {{"0", "score"}}}};
  SALIENT_REQUIRE_SHARED(fixture_model());
  Classifier teacher;
  teacher.tokenizer = load_classifier(fixture_model()).tokenizer;  // BERT's vocabulary: [PAD] is 0
  teacher.model = Transformer(ModelConfig::from_json(cfg, "cfg"), 4);
  EXPECT_EQ(teacher.model.config().problem_type, "regression");
  std::vector<Encoding> encodings;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 20; ++i) {
    Encoding e;
    e.ids.push_back(2);
    for (int j = 0; j < 4 + i % 4; ++j) e.ids.push_back(5 + static_cast<int64_t>(rng() % 55));
    e.type_ids.assign(e.ids.size(), 0);
    encodings.push_back(e);
  }
  const auto examples = annotate(teacher, encodings, /*batch_size=*/6);
  std::vector<double> values;
  for (size_t i = 0; i < examples.size(); ++i) {
    Batch b = make_batch(std::vector<Encoding>{encodings[i]}, 0);
    const double direct = teacher.model.logits(b.input_ids, b.token_type_ids, b.attention_mask)[0][0].item<double>();
    ASSERT_TRUE(examples[i].teacher_value.has_value());
    EXPECT_NEAR(*examples[i].teacher_value, direct, 1e-5);
    EXPECT_EQ(examples[i].teacher_label, 0);
    values.push_back(*examples[i].teacher_value);
  }
  // Any model scored against them: mean squared error and Pearson's r, by hand.
  Transformer other(ModelConfig::from_json(cfg, "cfg"), 9);
  std::vector<double> outputs;
  double squared = 0;
  // In the batches of 7 the function uses: r is near 0 here, so one-by-one float32 outputs (another
  // BLAS blocking) would move it by more than the tolerance on some CPUs.
  for (size_t start = 0; start < examples.size(); start += 7) {
    const size_t end = std::min(examples.size(), start + 7);
    Batch b = make_batch(std::vector<Encoding>(encodings.begin() + start, encodings.begin() + end), 0);
    torch::Tensor out = other.logits(b.input_ids, b.token_type_ids, b.attention_mask);
    for (size_t i = start; i < end; ++i) {
      outputs.push_back(out[static_cast<int64_t>(i - start)][0].item<double>());
      squared += std::pow(outputs.back() - values[i], 2) / static_cast<double>(examples.size());
    }
  }
  const auto [loss, r] = simulation_loss_and_accuracy(other, 0, examples, 7);
  EXPECT_NEAR(loss, squared, 1e-6 * std::max(1.0, squared));
  EXPECT_NEAR(r, pearson(values, outputs), 1e-6);
  // A student run: deterministic, its simulability a correlation.
  const std::vector<SimulationExample> train(examples.begin(), examples.begin() + 12), valid(examples.begin() + 12, examples.end());
  StudentOptions o;
  o.optimizer = OptimizerKind::AdamW;
  o.lr = 1e-2;
  o.batch_size = 4;
  o.max_epochs = 3;
  Transformer kept;
  const StudentRun a = run_student(other, 0, train, valid, valid, o, {}, false, &kept),
                   b = run_student(other, 0, train, valid, valid, o);
  EXPECT_EQ(a.simulability, b.simulability);
  // Pearson's r of the kept student's outputs against the teacher's.
  std::vector<double> kept_outputs;
  for (size_t i = 12; i < examples.size(); ++i) {
    Batch batch = make_batch(std::vector<Encoding>{encodings[i]}, 0);
    kept_outputs.push_back(kept.logits(batch.input_ids, batch.token_type_ids, batch.attention_mask)[0][0].item<double>());
  }
  EXPECT_NEAR(a.simulability, pearson(std::vector<double>(values.begin() + 12, values.end()), kept_outputs), 1e-5);
  // A student of another output count cannot simulate it.
  EXPECT_NE(test::error_of([&] { run_student(tiny_bert(1), 0, train, valid, valid, o); }).find("regression (one-output)"),
            std::string::npos);
}

// ---- the image study: a ViT teacher, students on pixels ----

namespace {
// 1 × 8 × 8 images cut into 4 × 4 patches: [CLS] + 4 tokens.
Transformer tiny_vit(uint64_t seed, int64_t labels = 3) {
  nlohmann::json cfg = {{"model_type", "vit"}, {"image_size", 8}, {"patch_size", 4}, {"num_channels", 1},
                        {"hidden_size", 12}, {"num_hidden_layers", 2}, {"num_attention_heads", 2},
                        {"intermediate_size", 16}, {"num_labels", labels}};
  Transformer m(ModelConfig::from_json(cfg, "vit/config.json"), seed);
  m.to(torch::kCPU, torch::kFloat64);
  return m;
}
torch::Tensor random_images(int64_t n, uint64_t seed) {
  torch::manual_seed(seed);
  return torch::rand({n, 64}, torch::kFloat64);
}
}  // namespace

TEST(SimulationImages, AnnotationsBatchesAndStaticExplanationsFollowTheirDefinitions) {
  const Transformer teacher = tiny_vit(3);
  const torch::Tensor images = random_images(5, 1);
  const auto examples = annotate_images(teacher, images, /*batch_size=*/2);
  ASSERT_EQ(examples.size(), 5u);
  // Direct: one forward of all five images; s_h = mean over the query rows of the attention logits.
  ForwardRequest req;
  req.pixel_values = vision::pixel_values(teacher, images);
  req.want_attention_logits = true;
  const ForwardResult r = teacher.forward(req);
  const torch::Tensor direct_scores = torch::cat({r.attention_logits[0].mean(2), r.attention_logits[1].mean(2)}, 1);  // [5, 4, 5]
  for (int64_t i = 0; i < 5; ++i) {
    const SimulationExample& ex = examples[static_cast<size_t>(i)];
    EXPECT_EQ(ex.teacher_label, r.logits[i].argmax().item<int64_t>());
    EXPECT_LT((ex.head_scores.to(torch::kFloat64) - direct_scores[i]).abs().max().item<double>(), 1e-5);
    EXPECT_LT((ex.pixels.to(torch::kFloat64) - req.pixel_values[i]).abs().max().item<double>(), 1e-6);
  }
  // A batch: stacked pixel_values, no padding, the teacher's labels.
  const SimulationBatch b = make_simulation_batch(examples, {4, 0, 2}, 0, torch::kCPU);
  EXPECT_FALSE(b.batch.input_ids.defined());
  EXPECT_EQ(b.batch.pixel_values.sizes(), (std::vector<int64_t>{3, 1, 8, 8}));
  EXPECT_EQ(b.batch.attention_mask.sum().item<int64_t>(), 15);
  EXPECT_EQ(b.teacher_labels[0].item<int64_t>(), examples[4].teacher_label);
  EXPECT_LT((batch_logits(teacher, b.batch) - r.logits.index_select(0, torch::tensor({4, 0, 2}))).abs().max().item<double>(), 1e-5);
  // attention_all: softmax over the tokens of the heads' mean score.
  const auto all = with_explanations(Classifier{teacher, {}, ""}, examples, "attention_all");
  EXPECT_LT((all[1].explanation.to(torch::kFloat64) - torch::softmax(direct_scores[1].mean(0), 0)).abs().max().item<double>(), 1e-5);
  // saliency: softmax of ‖∂ logit_label / ∂e_p‖ over the patches, [CLS] exactly 0.
  StaticExplainerOptions so;
  so.internal_batch = 2;
  const auto sal = with_image_explanations(teacher, examples, TeacherExplainer::Saliency, so);
  torch::Tensor e = teacher.patch_embeddings(req.pixel_values).detach().requires_grad_(true);
  ForwardRequest er;
  er.inputs_embeds = e;
  std::vector<int64_t> labels;
  for (const auto& ex : examples) labels.push_back(ex.teacher_label);
  const torch::Tensor logit = teacher.forward(er).logits.gather(1, torch::tensor(labels).view({-1, 1})).sum();
  const torch::Tensor norms = torch::autograd::grad({logit}, {e})[0].norm(2, -1);  // [5, 4]
  for (int64_t i = 0; i < 5; ++i) {
    const torch::Tensor got = sal[static_cast<size_t>(i)].explanation.to(torch::kFloat64);
    EXPECT_EQ(got[0].item<double>(), 0.0);
    EXPECT_NEAR(got.sum().item<double>(), 1.0, 1e-6);
    EXPECT_LT((got.slice(0, 1) - torch::softmax(norms[i], 0)).abs().max().item<double>(), 1e-5);
  }
  // ig at the authors' temperature: a distribution over the patches too.
  const auto ig = with_image_explanations(teacher, examples, TeacherExplainer::IntegratedGradients, so);
  EXPECT_NEAR(ig[3].explanation.sum().item<double>(), 1.0, 1e-6);
  EXPECT_EQ(ig[3].explanation[0].item<double>(), 0.0);
  // Registered (text) methods do not explain images.
  EXPECT_NE(test::error_of([&] { with_explanations(Classifier{teacher, {}, ""}, examples, "lime"); }).find("registered explainers explain text"),
            std::string::npos);
}

TEST(SimulationImages, MetaGradientThroughAnImageStudentMatchesFiniteDifferences) {
  const Transformer teacher = tiny_vit(3);
  const auto examples = annotate_images(teacher, random_images(8, 2));
  SimulationBatch train = make_simulation_batch(examples, {0, 1, 2, 3}, 0, torch::kCPU);
  SimulationBatch valid = make_simulation_batch(examples, {4, 5, 6, 7}, 0, torch::kCPU);
  for (SimulationBatch* b : {&train, &valid}) {
    b->batch.pixel_values = b->batch.pixel_values.to(torch::kFloat64);
    b->teacher_scores.scores = b->teacher_scores.scores.to(torch::kFloat64);
  }
  Student student{tiny_vit(5), torch::zeros({4}, torch::kFloat64).requires_grad_(true), {}};
  student.model.set_requires_grad(true);
  const StudentOptimizer sgd({OptimizerKind::Sgd, 0.5, 0.0, 0.0}, student_parameters(student));
  torch::manual_seed(6);
  const torch::Tensor lambda0 = torch::randn({4}, torch::kFloat64) * 0.5;
  torch::Tensor lambda = lambda0.clone().requires_grad_(true);
  const torch::Tensor g =
      torch::autograd::grad({meta_loss(student, train, valid, lambda, Normalizer::Sparsemax, 5.0, sgd)}, {lambda})[0];
  EXPECT_GT(g.abs().max().item<double>(), 1e-8);
  for (int64_t i = 0; i < 4; ++i) {
    torch::Tensor lp = lambda0.clone(), lm = lambda0.clone();
    lp[i] += 1e-5;
    lm[i] -= 1e-5;
    const double fd = (meta_loss(student, train, valid, lp, Normalizer::Sparsemax, 5.0, sgd) -
                       meta_loss(student, train, valid, lm, Normalizer::Sparsemax, 5.0, sgd))
                          .item<double>() /
                      2e-5;
    EXPECT_NEAR(g[i].item<double>(), fd, 1e-6 + 1e-4 * std::abs(fd)) << "coefficient " << i;
  }
}

// The image study end to end through the CLI on the MNIST images: a tiny ViT teacher, the pool's
// own test / valid sources, every explainer at one size and seed, resume, and the learned
// explainer's patch overlays.
TEST(SimulationImages, StudyCliRunsResumesAndDrawsTheLearnedExplainer) {
  SALIENT_REQUIRE_SHARED(test::shared_path("data/mnist"));
  const std::string dir = test::temp_dir("smat_images");
  const std::string data = " --data-dir " + test::shared_path("data");
  auto trained = test::run_salient("vit train -o " + dir + "/teacher --data mnist:train --dev mnist:val --max-train-examples 1024"
                                   " --epochs 1 --hidden 16 --layers 2 --heads 2 --intermediate 16 --patch-size 7" + data);
  ASSERT_EQ(trained.code, 0) << trained.err;
  const std::string study = "smat study --teacher " + dir + "/teacher --pool mnist:train --test-pool mnist:test "
                            "--valid-pool mnist:val --test-size 60 --valid-size 40 --sizes 48 --seeds 0 --max-epochs 2 "
                            "--optimizer adamw --lr 1e-3 --batch-size 16 --ig-steps 4 -o " + dir + "/study" + data;
  auto first = test::run_salient(study);
  ASSERT_EQ(first.code, 0) << first.err;
  const nlohmann::json summary = parse_json_file(dir + "/study/summary.json");
  EXPECT_EQ(summary.at("rows").size(), 8u);  // none, three gradient, two attention, smat, smat_fresh_student
  for (const auto& row : summary.at("rows")) {
    const double v = row.at("median").get<double>();
    EXPECT_TRUE(v >= 0 && v <= 1) << row.dump();
  }
  EXPECT_EQ(parse_json_file(dir + "/study/data.json").at("test").get<int64_t>(), 60);
  // Resuming redoes nothing: the run files are untouched.
  const auto before = std::filesystem::last_write_time(dir + "/study/runs/smat_n48_s0.json");
  auto again = test::run_salient(study);
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(std::filesystem::last_write_time(dir + "/study/runs/smat_n48_s0.json"), before);
  // The learned explainer as patch overlays: a distribution over the patches (≤ 1 with [CLS]'s share).
  auto drawn = test::run_salient("vit explain --model " + dir + "/teacher --data mnist:test --limit 2 --method smat --smat " +
                                 dir + "/study/explainers/smat_n48_s0.json -o " + dir + "/overlay" + data);
  ASSERT_EQ(drawn.code, 0) << drawn.err;
  EXPECT_TRUE(file_exists(dir + "/overlay/0001.png"));
  const std::string lines = read_file(dir + "/overlay/explanations.jsonl");
  const nlohmann::json line = nlohmann::json::parse(lines.substr(0, lines.find('\n')));
  double total = 0;
  for (const auto& row : line.at("patch_scores"))
    for (const auto& v : row) total += v.get<double>();
  EXPECT_GT(total, 0.0);
  EXPECT_LE(total, 1.0 + 1e-9);
  // Errors: a text pool for an image teacher; students from a pre-trained directory; the pool twice.
  const std::string teacher = " --teacher " + dir + "/teacher";
  test::expect_one_line_error(test::run_salient("smat evaluate" + teacher + " --pool sst2:train --explainer none" + data), "--pool");
  test::expect_one_line_error(test::run_salient("smat evaluate" + teacher + " --pool mnist:train --student-init " + dir +
                                                "/teacher --explainer none" + data),
                              "--student-init");
  test::expect_one_line_error(test::run_salient("smat evaluate" + teacher + " --pool mnist:train --test-pool mnist:train --explainer none" + data),
                              "--test-pool");
  test::expect_one_line_error(test::run_salient("vit explain --model " + dir + "/teacher --method smat" + data), "--smat");
}
