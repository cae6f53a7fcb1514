// Sufficient Subset Training: masking (PGD, HotFlip), the faithfulness checks on a hand-built
// model whose answers are known, the objective's gradients (hard threshold vs straight-through),
// a planted-feature task, the post-hoc searches, and the CLI end to end.
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "explain/explainer.h"
#include "explain/long_inputs.h"
#include "model/checkpoint.h"
#include "model/windows.h"
#include "sst/data.h"
#include "sst/evaluate.h"
#include "sst/masking.h"
#include "sst/model.h"
#include "sst/render.h"
#include "sst/search.h"
#include "sst/train.h"
#include "test_util.h"

using namespace salient;
using namespace salient::sst;
using salient::test::error_of;
using salient::test::shared_path;
using salient::test::json_lines;

namespace {

// SST runs on the CPU only (the CLI refuses --device cuda, docs/gpu.md): its tests pin the device
// for the library and the spawned binary whatever $SALIENT_DEVICE says.
[[maybe_unused]] const bool cpu_pinned = (::setenv("SALIENT_DEVICE", "cpu", 1), true);

std::string fixture_model() { return shared_path("fixtures/reference-bert/model"); }

std::string tmp_dir(const std::string& name) {
  const std::string d = (std::filesystem::temp_directory_path() / ("salient_sst_" + std::to_string(::getpid()) + "_" + name)).string();
  std::filesystem::remove_all(d);
  return d;
}

// An image "model" over `f` features in one row: MLP with one hidden layer of width f whose
// weights are the identity (ReLU is the identity on [0, 1]), and the given classifier.
std::unique_ptr<SstModel> hand_model(int64_t f, const torch::Tensor& cls_w, const torch::Tensor& cls_b) {
  ImageModelSpec spec;
  spec.channels = 1, spec.height = 1, spec.width = f, spec.classes = cls_w.size(0), spec.hidden = {f};
  auto m = make_image_model(spec, 1);
  m->load_state({{"trunk.0.weight", torch::eye(f)}, {"trunk.0.bias", torch::zeros({f})},
                 {"classifier.weight", cls_w}, {"classifier.bias", cls_b},
                 {"explainer.weight", torch::zeros({f, f})}, {"explainer.bias", torch::zeros({f})}},
                "hand model");
  return m;
}

FeatureBatch image_batch(const torch::Tensor& values) {
  FeatureBatch b;
  b.values = values.to(torch::kFloat32);
  b.features = torch::ones(values.sizes(), torch::kBool);
  return b;
}

torch::Tensor bools(std::vector<int> v) {
  return torch::tensor(std::vector<int64_t>(v.begin(), v.end())).to(torch::kBool).unsqueeze(0);
}

// logit0 = 2·x0 − x1 − 1, logit1 = 0: class 0 iff 2·x0 − x1 > 1.
std::unique_ptr<SstModel> two_feature_model() {
  return hand_model(2, torch::tensor({{2.0f, -1.0f}, {0.0f, 0.0f}}), torch::tensor({-1.0f, 0.0f}));
}

}  // namespace

TEST(SstMasking, PgdAscendsInsideTheBallOnTheComplementOnly) {
  ImageModelSpec spec;
  spec.channels = 1, spec.height = 4, spec.width = 4, spec.classes = 3, spec.hidden = {16};
  auto model = make_image_model(spec, 5);
  auto gen = at::detail::createCPUGenerator(3);
  torch::Tensor x = torch::rand({8, 16}, gen);
  torch::Tensor keep = torch::rand({8, 16}, gen) < 0.4;
  FeatureBatch b = image_batch(x);
  torch::Tensor target = model->logits(b).argmax(1).detach();
  auto logits_of = [&](const torch::Tensor& v) { return model->mixed_logits(image_batch(v), v, torch::ones_like(v)); };
  auto loss_of = [&](const torch::Tensor& v) {
    torch::NoGradGuard ng;
    return torch::nn::functional::cross_entropy(logits_of(v), target,
                                                torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  };
  FillOptions a;  // ε 0.12, 10 steps of 0.01
  auto g1 = at::detail::createCPUGenerator(11);
  torch::Tensor adv = pgd_complement(logits_of, x, keep, target, a, g1);
  EXPECT_LE((adv - x).abs().max().item<double>(), a.epsilon + 1e-6);
  EXPECT_TRUE(torch::equal(adv.masked_select(keep), x.masked_select(keep)));
  EXPECT_GE(adv.min().item<double>(), 0.0);
  EXPECT_LE(adv.max().item<double>(), 1.0);
  EXPECT_TRUE((loss_of(adv) > loss_of(x)).all().item<bool>());
  // The steps accumulate: ten steps beat the random start alone (the reference code's PGD
  // discards every step and returns its random start).
  FillOptions start_only = a;
  start_only.steps = 1;
  start_only.step = 1e-9;
  auto g2 = at::detail::createCPUGenerator(11);
  torch::Tensor noise = pgd_complement(logits_of, x, keep, target, start_only, g2);
  EXPECT_GT(loss_of(adv).mean().item<double>(), loss_of(noise).mean().item<double>() + 1e-3);
  // Without a random start, one step moves every free coordinate with a non-zero gradient by the step.
  FillOptions one = a;
  one.steps = 1, one.random_start = false, one.step = 0.05;
  auto g3 = at::detail::createCPUGenerator(1);
  torch::Tensor moved = pgd_complement(logits_of, x, keep, target, one, g3);
  torch::Tensor free = keep.logical_not().logical_and(x > 0.05).logical_and(x < 0.95);
  torch::Tensor delta = (moved - x).abs().masked_select(free);
  EXPECT_GT(delta.gt(0.049).to(torch::kFloat32).mean().item<double>(), 0.9);
}

TEST(SstMasking, FillsKeepTheSubsetAndReplaceTheRest) {
  auto model = two_feature_model();
  FeatureBatch x = image_batch(torch::tensor({{0.6f, 0.15f}}));
  auto gen = at::detail::createCPUGenerator(0);
  torch::Tensor keep = bools({1, 0});
  torch::Tensor target = torch::tensor({int64_t{0}});
  torch::Tensor base = complement_fill(*model, x, keep, MaskKind::Baseline, target, {}, gen);
  EXPECT_TRUE(torch::allclose(base, torch::tensor({{0.6f, 0.0f}})));
  torch::Tensor prob = complement_fill(*model, x, keep, MaskKind::Probabilistic, target, {}, gen);
  EXPECT_FLOAT_EQ(prob[0][0].item<float>(), 0.6f);
  EXPECT_NE(prob[0][1].item<float>(), 0.15f);
  EXPECT_EQ(parse_mask_kind("robust", "--masking"), MaskKind::Robust);
  EXPECT_NE(error_of([] { parse_mask_kind("noise", "--masking"); }).find("--masking"), std::string::npos);
}

// Probabilistic masking's two fills: the authors' (sax) moves each complement value up by at most
// ε and clamps to [0, 1]; the domain fill draws anywhere in [0, 1].
TEST(SstMasking, SaxNoiseIsAnEpsilonOffsetDomainNoiseIsUniform) {
  auto model = hand_model(50, torch::zeros({2, 50}), torch::zeros({2}));
  auto gen = at::detail::createCPUGenerator(4);
  FeatureBatch x = image_batch(torch::rand({40, 50}, gen));
  x.values.slice(1, 0, 5).fill_(0.97);  // near the top: the offset is clamped at 1
  const torch::Tensor keep = torch::rand({40, 50}, gen) < 0.3;
  const torch::Tensor target = torch::zeros({40}, torch::kInt64);
  FillOptions sax;
  const torch::Tensor s = complement_fill(*model, x, keep, MaskKind::Probabilistic, target, sax, gen);
  EXPECT_TRUE(torch::equal(s.masked_select(keep), x.values.masked_select(keep)));
  const torch::Tensor shift = (s - x.values).masked_select(keep.logical_not());
  EXPECT_GE(shift.min().item<double>(), 0.0);
  EXPECT_LE(shift.max().item<double>(), sax.epsilon + 1e-6);
  EXPECT_GT(shift.mean().item<double>(), 0.02);  // it does move them
  EXPECT_LE(s.max().item<double>(), 1.0);
  EXPECT_EQ(s.slice(1, 0, 5).masked_select(keep.slice(1, 0, 5).logical_not()).gt(0.97 + 0.031).sum().item<int64_t>(), 0);
  FillOptions domain;
  domain.noise = NoiseFill::Domain;
  const torch::Tensor d = complement_fill(*model, x, keep, MaskKind::Probabilistic, target, domain, gen);
  EXPECT_TRUE(torch::equal(d.masked_select(keep), x.values.masked_select(keep)));
  const torch::Tensor moved = (d - x.values).masked_select(keep.logical_not()).abs();
  EXPECT_GT(moved.gt(0.3).to(torch::kFloat32).mean().item<double>(), 0.2);  // far outside any ε-ball
  EXPECT_EQ(parse_noise_fill("domain", "--noise"), NoiseFill::Domain);
  EXPECT_EQ(noise_fill_name(NoiseFill::Sax), "sax");
  EXPECT_NE(error_of([] { parse_noise_fill("gauss", "--noise"); }).find("--noise"), std::string::npos);
}

TEST(SstFaithfulness, ThreeKindsOnAHandBuiltModel) {
  auto model = two_feature_model();
  FeatureBatch x = image_batch(torch::tensor({{0.6f, 0.15f}}));  // 1.2 − 0.15 − 1 = 0.05 > 0: class 0
  torch::Tensor target = torch::tensor({int64_t{0}});
  ASSERT_EQ(model->logits(x).argmax(1).item<int64_t>(), 0);
  FillOptions wide;  // ε = 0.12: x1 can reach 0.27, and 1.2 − 0.27 − 1 < 0
  wide.noise = NoiseFill::Domain;
  FillOptions narrow;
  narrow.epsilon = 0.04, narrow.step = 0.01;  // x1 ≤ 0.19: still class 0
  FillOptions sax;  // the authors' fill: x + 0.12·U[0, 1)
  auto check = [&](std::vector<int> subset, MaskKind kind, const FillOptions& a, int samples) {
    auto gen = at::detail::createCPUGenerator(42);
    return subset_faithfulness(*model, x, bools(subset), target, kind, a, samples, gen)[0];
  };
  // Keeping x0: the baseline x1 = 0 helps (0.2 > 0); random x1 keeps class 0 iff x1 < 0.2; the
  // adversary within 0.12 flips it, within 0.04 it cannot.
  EXPECT_EQ(check({1, 0}, MaskKind::Baseline, wide, 1), 1.0);
  EXPECT_NEAR(check({1, 0}, MaskKind::Probabilistic, wide, 4000), 0.2, 0.02);
  EXPECT_EQ(check({1, 0}, MaskKind::Robust, wide, 1), 0.0);
  EXPECT_EQ(check({1, 0}, MaskKind::Robust, narrow, 1), 1.0);
  // Keeping x1: the baseline x0 = 0 gives −1.15; random x0 keeps class 0 iff x0 > 0.575.
  EXPECT_EQ(check({0, 1}, MaskKind::Baseline, wide, 1), 0.0);
  EXPECT_NEAR(check({0, 1}, MaskKind::Probabilistic, wide, 4000), 0.425, 0.02);
  // The authors' ε-noise: x1 + 0.12·u keeps class 0 iff u < 0.05 / 0.12; x0 + 0.12·u always does.
  EXPECT_NEAR(check({1, 0}, MaskKind::Probabilistic, sax, 4000), 0.05 / 0.12, 0.02);
  EXPECT_EQ(check({0, 1}, MaskKind::Probabilistic, sax, 200), 1.0);
  // The empty subset fails, the whole input passes every check.
  EXPECT_EQ(check({0, 0}, MaskKind::Baseline, wide, 1), 0.0);
  for (MaskKind k : {MaskKind::Baseline, MaskKind::Probabilistic, MaskKind::Robust})
    EXPECT_EQ(check({1, 1}, k, wide, 50), 1.0);
  EXPECT_NE(error_of([&] { check({1, 0}, MaskKind::Probabilistic, wide, 0); }).find("--samples"), std::string::npos);
}

TEST(SstObjective, StraightThroughReachesTheExplanationHeadHardThresholdDoesNot) {
  ImageModelSpec spec;
  spec.channels = 1, spec.height = 3, spec.width = 3, spec.classes = 2, spec.hidden = {6};
  auto gen = at::detail::createCPUGenerator(9);
  torch::Tensor values = torch::rand({16, 9}, gen);
  torch::Tensor labels = torch::randint(2, {16}, gen);
  for (bool ste : {false, true}) {
    auto model = make_image_model(spec, 4);
    SstObjective o;
    o.kind = MaskKind::Baseline;
    o.lambda = 1, o.xi = 0;  // the faithfulness term alone
    o.straight_through = ste;
    auto g = at::detail::createCPUGenerator(1);
    SstLoss l = sst_loss(*model, image_batch(values), labels, o, g);
    l.total.backward();
    const torch::Tensor grad = model->state().at("explainer.weight").grad();
    const double norm = grad.defined() ? grad.abs().sum().item<double>() : 0.0;
    if (ste) EXPECT_GT(norm, 1e-6);
    else EXPECT_EQ(norm, 0.0);
    // The classifier learns from the faithfulness term either way.
    EXPECT_GT(model->state().at("classifier.weight").grad().abs().sum().item<double>(), 0.0);
  }
}

TEST(SstObjective, BadValuesAreOneLineErrors) {
  auto bad = [](auto change) {
    SstObjective o;
    change(o);
    return error_of([&] { o.validate(); });
  };
  EXPECT_NE(bad([](SstObjective& o) { o.tau = 0; }).find("--tau"), std::string::npos);
  EXPECT_NE(bad([](SstObjective& o) { o.tau = 1.5; }).find("--tau"), std::string::npos);
  EXPECT_NE(bad([](SstObjective& o) { o.lambda = -1; }).find("--lambda"), std::string::npos);
  EXPECT_NE(bad([](SstObjective& o) { o.xi = std::nan(""); }).find("--xi"), std::string::npos);
  EXPECT_NE(bad([](SstObjective& o) { o.kind = MaskKind::Robust, o.fill.epsilon = 0; }).find("--epsilon"), std::string::npos);
  EXPECT_NE(bad([](SstObjective& o) { o.kind = MaskKind::Robust, o.fill.steps = 0; }).find("--pgd-steps"), std::string::npos);
}

// Sixteen features in [0, 1]; the label is whether feature 3 exceeds 0.5, the rest is noise. Under
// probabilistic masking a subset without feature 3 cannot keep the prediction, so a trained SST
// model must select it, and little else.
TEST(SstTraining, PlantedFeatureIsSelected) {
  ImageModelSpec spec;
  spec.channels = 1, spec.height = 4, spec.width = 4, spec.classes = 2, spec.hidden = {32, 32};
  auto model = make_image_model(spec, 2);
  auto gen = at::detail::createCPUGenerator(5);
  SstObjective o;
  o.kind = MaskKind::Probabilistic;
  o.fill.noise = NoiseFill::Domain;  // the authors' ε-noise barely moves feature 3: it need not be kept
  o.straight_through = true;
  o.xi = 0.5;
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(3e-3).weight_decay(0));
  for (int step = 0; step < 600; ++step) {
    torch::Tensor v = torch::rand({64, 16}, gen);
    torch::Tensor y = (v.select(1, 3) > 0.5).to(torch::kInt64);
    SstLoss l = sst_loss(*model, image_batch(v), y, o, gen);
    opt.zero_grad();
    l.total.backward();
    opt.step();
  }
  torch::NoGradGuard ng;
  torch::Tensor v = torch::rand({200, 16}, gen);
  FeatureBatch x = image_batch(v);
  SstOutput f = model->forward(x);
  torch::Tensor subset = subset_of(f.selection, x.features, o.tau);
  const double has_planted = subset.select(1, 3).to(torch::kFloat32).mean().item<double>();
  const double size = subset.to(torch::kFloat32).mean().item<double>();
  const double accuracy = f.logits.argmax(1).eq((v.select(1, 3) > 0.5).to(torch::kInt64)).to(torch::kFloat32).mean().item<double>();
  EXPECT_GT(has_planted, 0.9);
  EXPECT_LT(size, 0.5);
  EXPECT_GT(accuracy, 0.9);
}

// class 0 iff 3·x0 + 3·x1 > 2; features 2–5 do nothing. x = (1, 1, ½, ½, ½, ½): either of x0, x1
// alone is sufficient under every kind, and nothing smaller is.
TEST(SstSearch, PostHocSearchesReturnSufficientSubsets) {
  torch::Tensor w = torch::zeros({2, 6});
  w[0][0] = 3, w[0][1] = 3;
  auto model = hand_model(6, w, torch::tensor({-2.0f, 0.0f}));
  FeatureBatch x = image_batch(torch::tensor({{1.0f, 1.0f, 0.5f, 0.5f, 0.5f, 0.5f}}));
  ASSERT_EQ(model->logits(x).argmax(1).item<int64_t>(), 0);
  SearchOptions o;
  o.time_limit = 30;
  // Anchors' precision under the domain fill: with the authors' ε-noise, x0 = x1 = 1 stay 1 and
  // any one feature is a precise anchor.
  o.fill.noise = NoiseFill::Domain;
  for (const std::string method : {"sis", "anchors", "gradient"}) {
    SearchResult r = sufficient_subset_search(method, *model, x, 0, o);
    ASSERT_FALSE(r.timed_out) << method;
    ASSERT_TRUE(r.subset.defined()) << method;
    EXPECT_EQ(r.subset.sum().item<int64_t>(), 1) << method;
    EXPECT_TRUE(r.subset[0].item<bool>() || r.subset[1].item<bool>()) << method;
    EXPECT_GT(r.forward_rows, 0) << method;
    auto gen = at::detail::createCPUGenerator(0);
    for (MaskKind k : {MaskKind::Baseline, MaskKind::Probabilistic})
      EXPECT_EQ(subset_faithfulness(*model, x, r.subset.unsqueeze(0), torch::tensor({int64_t{0}}), k, {}, 50, gen)[0], 1.0)
          << method;
  }
  o.time_limit = 1e-9;
  EXPECT_TRUE(sufficient_subset_search("sis", *model, x, 0, o).timed_out);
  o.time_limit = 30;
  o.sis_criterion = "threshold";
  o.sis_threshold = 2;
  EXPECT_NE(error_of([&] { o.validate(); }).find("--sis-threshold"), std::string::npos);
  o.sis_threshold = 0.9, o.sis_criterion = "max";
  EXPECT_NE(error_of([&] { o.validate(); }).find("--sis-criterion"), std::string::npos);
}

// Carter et al.'s SIS: sufficient means P(class) ≥ the threshold on the baseline completion, and
// the collection holds disjoint SISes. On the model above, x0 or x1 alone gives P(0) =
// sigmoid(1) = 0.731, both sigmoid(4) = 0.982, neither sigmoid(−2) = 0.119.
TEST(SstSearch, SisWithAThresholdFindsCartersDisjointCollection) {
  torch::Tensor w = torch::zeros({2, 6});
  w[0][0] = 3, w[0][1] = 3;
  auto model = hand_model(6, w, torch::tensor({-2.0f, 0.0f}));
  FeatureBatch x = image_batch(torch::tensor({{1.0f, 1.0f, 0.5f, 0.5f, 0.5f, 0.5f}}));
  SearchOptions o;
  o.time_limit = 30;
  o.sis_criterion = "threshold";
  auto positions = [](const torch::Tensor& s) { return subset_positions(s); };
  // 0.7: x0 alone suffices, then x1 alone in what is left, then nothing: two singletons.
  o.sis_threshold = 0.7;
  SearchResult r = sufficient_subset_search("sis", *model, x, 0, o);
  ASSERT_EQ(r.collection.size(), 2u);
  EXPECT_TRUE(r.complete);
  EXPECT_FALSE(r.no_sis);
  std::set<int64_t> both;
  for (const auto& s : r.collection) {
    ASSERT_EQ(positions(s).size(), 1u);
    both.insert(positions(s)[0]);
  }
  EXPECT_EQ(both, (std::set<int64_t>{0, 1}));
  EXPECT_TRUE(torch::equal(r.subset, r.collection[0]));
  // 0.9: only both together; once masked, the rest (0.119) is not sufficient.
  o.sis_threshold = 0.9;
  r = sufficient_subset_search("sis", *model, x, 0, o);
  ASSERT_EQ(r.collection.size(), 1u);
  EXPECT_EQ(positions(r.subset), (std::vector<int64_t>{0, 1}));
  // 0.99: the whole input (0.982) is below it: no SIS, and the subset is the whole input.
  o.sis_threshold = 0.99;
  r = sufficient_subset_search("sis", *model, x, 0, o);
  EXPECT_TRUE(r.collection.empty());
  EXPECT_TRUE(r.no_sis);
  EXPECT_EQ(r.subset.sum().item<int64_t>(), 6);
  // The argmax criterion (salient's): one feature, no collection.
  o.sis_criterion = "argmax";
  r = sufficient_subset_search("sis", *model, x, 0, o);
  EXPECT_EQ(r.subset.sum().item<int64_t>(), 1);
  EXPECT_TRUE(r.collection.empty());
  EXPECT_NE(error_of([&] { sufficient_subset_search("lime", *model, x, 0, o); }).find("unknown search"), std::string::npos);
}

TEST(SstSearch, KlBoundsBracketTheMean) {
  for (double p : {0.0, 0.3, 0.9, 1.0}) {
    const double up = kl_upper_bound(p, 0.05), lo = kl_lower_bound(p, 0.05);
    EXPECT_GE(up, p);
    EXPECT_LE(lo, p);
    if (p < 1) EXPECT_GT(up, p + 1e-3);
    if (p > 0) EXPECT_LT(lo, p - 1e-3);
  }
  EXPECT_NEAR(kl_upper_bound(0.5, 0.0), 0.5, 1e-6);
}

TEST(SstText, HotFlipChangesOnlyComplementTokensAndRaisesTheLoss) {
  SALIENT_REQUIRE_SHARED(fixture_model());
  auto model = make_text_model(load_classifier(fixture_model()), 3);
  model->set_training(false);
  const Classifier& clf = text_classifier(*model);
  SstData d;
  d.modality = "text";
  d.pad_id = clf.tokenizer.pad_id();
  for (const std::string t : {"a charming and often affecting journey", "the film is bleak but honest"}) {
    Encoding e = clf.encode(t);
    std::vector<bool> flags;
    for (int64_t id : e.ids) flags.push_back(!clf.tokenizer.is_structural(id));
    d.is_feature.push_back(flags);
    d.encodings.push_back(e);
  }
  FeatureBatch x = d.batch(0, 2);
  // [CLS] and [SEP] (and padding) are not features.
  EXPECT_FALSE(x.features[0][0].item<bool>());
  EXPECT_FALSE(x.features[1][x.features.size(1) - 1].item<bool>() && x.attention_mask[1][x.features.size(1) - 1].item<int64_t>() == 0);
  torch::Tensor keep = keep_of(torch::zeros_like(x.features).index_fill_(1, torch::tensor({int64_t{1}}), true), x.features);
  torch::Tensor target = model->logits(x).argmax(1).detach();
  torch::Tensor vocab = ordinary_token_ids(clf.tokenizer);
  torch::Tensor adv = hotflip_complement(*model, x, keep, target, 3, vocab);
  EXPECT_TRUE(torch::equal(adv.masked_select(keep), x.values.masked_select(keep)));
  EXPECT_LE(adv.ne(x.values).sum(1).max().item<int64_t>(), 3);
  auto loss = [&](const torch::Tensor& ids) {
    torch::NoGradGuard ng;
    FeatureBatch b = x;
    b.values = ids;
    return torch::nn::functional::cross_entropy(model->logits(b), target).item<double>();
  };
  EXPECT_GT(loss(adv), loss(x.values));
  // The baseline fill of text is [MASK], outside the kept positions only.
  auto gen = at::detail::createCPUGenerator(0);
  torch::Tensor base = complement_fill(*model, x, keep, MaskKind::Baseline, target, {}, gen);
  EXPECT_TRUE(torch::equal(base.masked_select(keep), x.values.masked_select(keep)));
  EXPECT_TRUE(base.masked_select(keep.logical_not()).eq(clf.tokenizer.mask_id()).all().item<bool>());
  FillOptions domain;
  domain.noise = NoiseFill::Domain;
  torch::Tensor random = complement_fill(*model, x, keep, MaskKind::Probabilistic, target, domain, gen, vocab);
  torch::Tensor drawn = random.masked_select(keep.logical_not());
  for (int64_t i = 0; i < drawn.numel(); ++i) EXPECT_FALSE(clf.tokenizer.is_structural(drawn[i].item<int64_t>()));
  // The authors' fill draws any id of the vocabulary, the domain fill's exclusions included (randint(0, V)).
  const int64_t v = clf.model.embedding_weights().word.size(0);
  FeatureBatch many = d.batch(0, 1).repeat(400);
  const torch::Tensor many_keep = keep.slice(0, 0, 1).repeat({400, 1});
  torch::Tensor any = complement_fill(*model, many, many_keep, MaskKind::Probabilistic, target.slice(0, 0, 1).repeat(400),
                                      FillOptions{}, gen)
                          .masked_select(many_keep.logical_not());
  EXPECT_GE(any.min().item<int64_t>(), 0);
  EXPECT_LT(any.max().item<int64_t>(), v);
  const torch::Tensor ordinary = torch::zeros({v}, torch::kBool).index_fill_(0, vocab, true);
  EXPECT_GT(ordinary.index_select(0, any).logical_not().sum().item<int64_t>(), 0);  // [unusedN], [MASK]... drawn too
}

// A long text (repeated phrases) and a short one, as JSON lines with labels.
std::string long_text_rows() {
  std::string long_text;
  for (int i = 0; i < 70; ++i) long_text += i % 3 ? "the film was good and " : "a dull plot ";
  return nlohmann::json{{"text", long_text}, {"label", 1}}.dump() + "\n" +
         nlohmann::json{{"text", "a short and charming film"}, {"label", 0}}.dump() + "\n" +
         nlohmann::json{{"text", long_text.substr(0, 700)}, {"label", 0}}.dump() + "\n";
}

// Texts longer than the encoder's positions (the fixture's 128) read whole (`windows`): a row's
// logits are its windows' mean, as `salient predict --windows` computes them (windowed_logits), and
// each token's s the mean over the windows that hold it (stitch_window_scores); rows batched with
// shorter ones equal each row alone, and mixing with keep = 1 gives the plain logits.
TEST(SstText, LongTextsAreReadWholeAsWindows) {
  SALIENT_REQUIRE_SHARED(fixture_model());
  const std::string data = tmp_dir("long.jsonl");
  write_file_atomic(data, long_text_rows());
  auto model = make_text_model(load_classifier(fixture_model()), 3);
  model->set_training(false);
  const Classifier& clf = text_classifier(*model);
  const SstData d = load_text_data(data, "", clf, 0, 0, true);
  ASSERT_GT(d.encodings[0].ids.size(), 300u);  // whole, not cut to 128
  EXPECT_EQ(load_text_data(data, "", clf, 0).encodings[0].ids.size(), 128u);  // without windows: cut
  torch::NoGradGuard ng;
  const FeatureBatch x = d.batch(0, 3);
  const SstOutput out = model->forward(x);
  for (int64_t row : {0, 2}) {
    const Encoding& whole = d.encodings[row];
    const std::vector<double> want = windowed_logits(clf, {to_sequence(whole)}, 0, BatchLimits{8})[0];
    for (size_t c = 0; c < want.size(); ++c) EXPECT_NEAR(out.logits[row][c].item<double>(), want[c], 1e-5);
    // s: each window alone (within the positions: the plain path), stitched onto the whole text.
    const std::vector<Window> windows = split_windows(whole, 128, 0, "test");
    ASSERT_GT(windows.size(), 1u);
    std::vector<std::vector<double>> per_window;
    for (const Window& w : windows) {
      FeatureBatch b;
      b.values = torch::tensor(w.encoding.ids, torch::kInt64).unsqueeze(0);
      b.token_type_ids = torch::zeros_like(b.values);
      b.attention_mask = torch::ones_like(b.values);
      b.features = torch::ones_like(b.values).to(torch::kBool);
      const torch::Tensor s = model->forward(b).selection[0].to(torch::kFloat64).contiguous();
      per_window.emplace_back(s.data_ptr<double>(), s.data_ptr<double>() + s.numel());
    }
    const std::vector<double> stitched = stitch_window_scores(windows, per_window, whole.ids.size());
    for (size_t j = 1; j + 1 < whole.ids.size(); ++j)
      EXPECT_NEAR(out.selection[row][static_cast<int64_t>(j)].item<double>(), stitched[j], 1e-5) << "row " << row << " token " << j;
    // Alone, the row gives the same logits and s.
    const SstOutput alone = model->forward(d.batch(row, row + 1));
    EXPECT_TRUE(torch::allclose(alone.logits[0], out.logits[row], 1e-5, 1e-5));
    EXPECT_TRUE(torch::allclose(alone.selection[0], out.selection[row].slice(0, 0, alone.selection.size(1)), 1e-5, 1e-5));
  }
  EXPECT_EQ(out.selection[0][0].item<double>(), 0.0);  // [CLS] is no feature
  EXPECT_TRUE(torch::allclose(model->mixed_logits(x, x.values, torch::ones(x.values.sizes())), out.logits, 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(model->logits(x), out.logits, 1e-5, 1e-5));
}

// The post-hoc searches pass a text model at most batch_tokens token positions at a time (a long
// document's row is all of its windows; 512 such rows at once ran out of memory on ERASER): one row
// a pass finds the same subset from the same inputs as the default's batches.
TEST(SstSearch, TextSearchesPassAtMostBatchTokens) {
  SALIENT_REQUIRE_SHARED(fixture_model());
  const std::string data = tmp_dir("long-search.jsonl");
  write_file_atomic(data, long_text_rows());
  auto model = make_text_model(load_classifier(fixture_model()), 3);
  model->set_training(false);
  const SstData d = load_text_data(data, "", text_classifier(*model), 0, 0, true);
  for (const auto& [method, row] : {std::pair<std::string, int64_t>{"gradient", 0}, {"sis", 1}}) {
    const FeatureBatch x = d.batch(row, row + 1);
    const int64_t target = model->logits(x).argmax(1).item<int64_t>();
    SearchOptions o;
    o.time_limit = 120;
    const SearchResult batched = sufficient_subset_search(method, *model, x, target, o);
    o.batch_tokens = x.width();  // one row a pass
    const SearchResult one = sufficient_subset_search(method, *model, x, target, o);
    ASSERT_FALSE(batched.timed_out || one.timed_out) << method;
    EXPECT_TRUE(torch::equal(batched.subset, one.subset)) << method;
    EXPECT_EQ(batched.forward_rows, one.forward_rows) << method;
    EXPECT_EQ(one.forward_passes, one.forward_rows) << method;
    EXPECT_LT(batched.forward_passes, batched.forward_rows) << method;
  }
  SearchOptions bad;
  bad.batch_tokens = 0;
  EXPECT_NE(error_of([&] { bad.validate(); }).find("--search-tokens"), std::string::npos);
}

// A batch in parts of at most N windows (--max-windows) is the same step: the parts' totals add up
// to the batch's loss and their gradients to its gradient (dropout off; the robust attack, HotFlip,
// is deterministic), and validation gives the same numbers.
TEST(SstText, BatchInPartsHasTheBatchsLossAndGradient) {
  SALIENT_REQUIRE_SHARED(fixture_model());
  const std::string data = tmp_dir("parts.jsonl");
  write_file_atomic(data, long_text_rows() + long_text_rows());
  auto model = make_text_model(load_classifier(fixture_model()), 3);
  model->set_training(false);
  const SstData d = load_text_data(data, "", text_classifier(*model), 0, 0, true);
  const std::vector<int64_t> rows = {0, 1, 2, 4, 5};
  const auto parts = batch_parts(d, rows, 128, 3);
  ASSERT_GT(parts.size(), 2u);
  std::vector<int64_t> joined;
  for (const auto& p : parts) joined.insert(joined.end(), p.begin(), p.end());
  EXPECT_EQ(joined, rows);  // every row once, in order
  EXPECT_EQ(parts[0], std::vector<int64_t>{0});  // 4 windows: a part alone
  EXPECT_EQ(batch_parts(d, rows, 128, 0).size(), 1u);
  const torch::Tensor y = d.labels.index_select(0, torch::tensor(rows, torch::kInt64));
  const torch::Tensor vocab = ordinary_token_ids(text_classifier(*model).tokenizer);
  int64_t all_features = 0;
  for (int64_t r : rows) all_features += std::count(d.is_feature[r].begin(), d.is_feature[r].end(), true);
  for (MaskKind kind : {MaskKind::None, MaskKind::Baseline, MaskKind::Robust}) {
    SstObjective o;
    o.kind = kind;
    o.xi = 0.5;
    o.fill.steps = 1;
    auto grads = [&] {
      std::vector<torch::Tensor> g;
      for (const auto& p : model->parameters()) {
        g.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
        if (p.grad().defined()) p.mutable_grad().zero_();
      }
      return g;
    };
    grads();
    auto gen = at::detail::createCPUGenerator(5);
    SstLoss whole = sst_loss(*model, d.batch(rows), y, o, gen, vocab, false);
    whole.total.backward();
    const std::vector<torch::Tensor> want = grads();
    double total = 0;
    for (const auto& part : parts) {
      int64_t features = 0;
      for (int64_t r : part) features += std::count(d.is_feature[r].begin(), d.is_feature[r].end(), true);
      const LossShare share{static_cast<double>(part.size()) / rows.size(), static_cast<double>(features) / all_features};
      SstLoss l = sst_loss(*model, d.batch(part), d.labels.index_select(0, torch::tensor(part, torch::kInt64)), o, gen,
                           vocab, false, share);
      l.total.backward();
      total += l.total.item<double>();
    }
    const std::vector<torch::Tensor> got = grads();
    EXPECT_NEAR(total, whole.total.item<double>(), 1e-5) << mask_kind_name(kind);
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_TRUE(torch::allclose(got[i], want[i], 1e-4, 1e-6)) << mask_kind_name(kind) << " parameter " << i;
    const SstEpoch a = evaluate_objective(*model, d, o, 9, 8, vocab), b = evaluate_objective(*model, d, o, 9, 8, vocab, 3);
    EXPECT_NEAR(a.val_loss, b.val_loss, 1e-5) << mask_kind_name(kind);
    EXPECT_EQ(a.val_accuracy, b.val_accuracy);
    EXPECT_EQ(a.val_faithfulness, b.val_faithfulness);
    EXPECT_NEAR(a.val_size, b.val_size, 1e-6);  // float sums in another order
  }
}

// --limit-random: N rows drawn with the seed come first, in the data's order, then the rest; on data
// sorted by class (ERASER's splits: 800 negative reviews, then 800 positive) the first N rows are one
// class, the drawn ones both.
TEST(SstData, RandomLimitDrawsRowsInTheDatasOrder) {
  const std::vector<int64_t> order = sample_first_order(20, 6, 13);
  ASSERT_EQ(order.size(), 20u);
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 20; ++i) EXPECT_EQ(sorted[i], i);  // a permutation
  EXPECT_TRUE(std::is_sorted(order.begin(), order.begin() + 6));
  EXPECT_TRUE(std::is_sorted(order.begin() + 6, order.end()));
  EXPECT_TRUE(std::any_of(order.begin(), order.begin() + 6, [](int64_t r) { return r < 10; }));
  EXPECT_TRUE(std::any_of(order.begin(), order.begin() + 6, [](int64_t r) { return r >= 10; }));
  EXPECT_EQ(sample_first_order(20, 6, 13), order);  // seeded
  EXPECT_NE(sample_first_order(20, 6, 14), order);
  EXPECT_EQ(sample_first_order(5, 9, 1), (std::vector<int64_t>{0, 1, 2, 3, 4}));  // more than there are: all
  SstData d;
  d.modality = "image";
  d.images = torch::arange(20, torch::kFloat32).view({20, 1});
  d.labels = torch::arange(20, torch::kInt64);
  const SstData picked = select_rows(d, {3, 1});
  EXPECT_EQ(picked.labels[0].item<int64_t>(), 3);
  EXPECT_EQ(picked.images[1][0].item<float>(), 1.0f);
}

// Size is |subset| / |features|: structural tokens and padding never count, even when s ≥ τ there.
TEST(SstSize, SubsetsCountOnlyFeatures) {
  torch::Tensor features = torch::tensor({{0, 1, 1, 1, 0, 0}, {0, 1, 1, 1, 1, 0}}).to(torch::kBool);
  torch::Tensor s = torch::tensor({{0.9, 0.9, 0.2, 0.5, 0.99, 0.99}, {1.0, 0.1, 0.1, 0.1, 0.7, 1.0}});
  torch::Tensor subset = subset_of(s, features, 0.5);
  EXPECT_TRUE(torch::equal(subset, torch::tensor({{0, 1, 0, 1, 0, 0}, {0, 0, 0, 0, 1, 0}}).to(torch::kBool)));
  torch::Tensor size = subset.to(torch::kFloat32).sum(1) / features.to(torch::kFloat32).sum(1);
  EXPECT_NEAR(size[0].item<double>(), 2.0 / 3.0, 1e-6);
  EXPECT_NEAR(size[1].item<double>(), 1.0 / 4.0, 1e-6);
  // keep = the subset plus every non-feature position: [CLS]/[SEP]/padding are never replaced.
  EXPECT_TRUE(torch::equal(keep_of(subset, features), torch::tensor({{1, 1, 0, 1, 1, 1}, {1, 0, 0, 0, 1, 1}}).to(torch::kBool)));
}

TEST(SstModelDir, SaveLoadRoundTripsBothModalities) {
  ImageModelSpec spec;
  spec.arch = "resnet";
  auto image = make_image_model(spec, 7);
  image->set_label_names({"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"});
  const std::string dir = tmp_dir("resnet");
  save_sst_model(*image, dir, {{"tau", 0.4}});
  LoadedSstModel back = load_sst_model(dir);
  EXPECT_EQ(back.tau, 0.4);
  FeatureBatch x = image_batch(torch::rand({2, 784}));
  torch::NoGradGuard ng;
  EXPECT_TRUE(torch::allclose(image->forward(x).logits, back.model->forward(x).logits));
  EXPECT_TRUE(torch::allclose(image->forward(x).selection, back.model->forward(x).selection));
  EXPECT_NE(error_of([] { load_sst_model("/nonexistent"); }).find("sst.json"), std::string::npos);
}

TEST(SstRender, PngOverlayAndTokenHtml) {
  std::string png = subset_overlay_png({0.0f, 1.0f, 0.5f, 0.25f}, 2, 2, {1, 0, 0, 1}, 3);
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  std::string html = subset_tokens_html({"[CLS]", "good", "<b>", "[SEP]"}, {0, 1, 0, 0}, {0, 0.9, 0.1, 0}, {false, true, true, false});
  EXPECT_NE(html.find("font-weight:bold\" title=\"s = 0.900\">good"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;"), std::string::npos);
  EXPECT_NE(error_of([] { subset_overlay_png({0.0f}, 2, 2, {1}, 1); }).find("2x2"), std::string::npos);
}

#ifdef SALIENT_BIN
using salient::test::expect_one_line_error;
using salient::test::run_salient;

TEST(SstCli, TrainExplainEvaluateOnMnist) {
  SALIENT_REQUIRE_SHARED(shared_path("data/mnist/t10k-images-idx3-ubyte.gz"));
  const std::string sst = tmp_dir("cli_sst"), standard = tmp_dir("cli_std"), eval = tmp_dir("cli_eval"), png = tmp_dir("png");
  auto r = run_salient("sst train --train mnist:train --dev mnist:val --limit 300 --epochs 2 --masking baseline "
                       "--straight-through --xi 0.5 -o " + sst);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["out"], sst);
  r = run_salient("sst train --train mnist:train --dev mnist:val --limit 300 --epochs 1 --masking none -o " + standard);
  ASSERT_EQ(r.code, 0) << r.err;
  r = run_salient("sst explain --model " + sst + " --data mnist:test --limit 2 --png-dir " + png);
  ASSERT_EQ(r.code, 0) << r.err;
  auto first = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
  EXPECT_EQ(first["pixel_scores"].size(), 784u);
  EXPECT_TRUE(file_exists(first["png"].get<std::string>()));
  r = run_salient("sst evaluate --model " + sst + " --standard " + standard +
                  " --data mnist:test --limit 2 --accuracy-limit 50 --methods sst,sst_shuffled,sst_standard,gradient --samples 5 --views 2 -o " + eval);
  ASSERT_EQ(r.code, 0) << r.err;
  auto table = parse_json_file(join_path(eval, "table.json"));
  ASSERT_EQ(table["rows"].size(), 4u);
  // The control keeps as many pixels as the SST subset, drawn elsewhere.
  auto records = [&](const std::string& method) { return json_lines(read_file(join_path(eval, "examples-" + method + ".jsonl"))); };
  const auto own = records("sst"), shuffled = records("sst_shuffled");
  ASSERT_EQ(own.size(), 2u);
  ASSERT_EQ(shuffled.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const auto a = own[i]["subset"].get<std::vector<int64_t>>(), b = shuffled[i]["subset"].get<std::vector<int64_t>>();
    EXPECT_EQ(a.size(), b.size());
    EXPECT_EQ(own[i]["size_percent"], shuffled[i]["size_percent"]);
    for (int64_t p : b) EXPECT_TRUE(p >= 0 && p < 784) << p;
    if (!a.empty() && a.size() < 784) EXPECT_NE(a, b);
  }
  // sst_standard: the SST model's subsets, kept or not by the standard model's prediction; judged by
  // the SST model itself it is exactly `sst`.
  const auto judged = records("sst_standard");
  ASSERT_EQ(judged.size(), 2u);
  const std::string self = tmp_dir("cli_eval_self");
  r = run_salient("sst evaluate --model " + sst + " --standard " + sst +
                  " --data mnist:test --limit 2 --accuracy-limit 50 --methods sst_standard --samples 5 --views 0 -o " + self);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto by_itself = json_lines(read_file(join_path(self, "examples-sst_standard.jsonl")));
  ASSERT_EQ(by_itself.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(judged[i]["subset"], own[i]["subset"]);
    for (const char* k : {"subset", "target", "baseline", "probabilistic", "robust"}) EXPECT_EQ(by_itself[i][k], own[i][k]) << k;
  }
  expect_one_line_error(run_salient("sst evaluate --model " + sst + " --data mnist:test --methods sst_standard -o " + tmp_dir("no_std")),
                        "--standard");
  for (const auto& row : table["rows"]) {
    EXPECT_EQ(row["explained"], 2);
    EXPECT_GE(row["faithful_baseline"].get<double>(), 0.0);
    EXPECT_LE(row["faithful_baseline"].get<double>(), 100.0);
  }
  EXPECT_TRUE(file_exists(join_path(eval, "report.html")));
  EXPECT_TRUE(file_exists(join_path(eval, "views/sst-0.png")));
  // A second run resumes: nothing is recomputed, the table is the same.
  const std::string before = read_file(join_path(eval, "table.csv"));
  r = run_salient("sst evaluate --model " + sst + " --standard " + standard +
                  " --data mnist:test --limit 2 --accuracy-limit 50 --methods sst,gradient --samples 5 --views 2 -o " + eval);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string after = read_file(join_path(eval, "table.csv"));
  EXPECT_EQ(before.substr(before.find("gradient")), after.substr(after.find("gradient")));
  // Other settings in the same directory are refused.
  expect_one_line_error(run_salient("sst evaluate --model " + sst + " --data mnist:test --limit 3 --methods sst -o " + eval),
                        "other settings");
  // ... naming what differs, search options that change the records included.
  expect_one_line_error(run_salient("sst evaluate --model " + sst + " --standard " + standard +
                                    " --data mnist:test --limit 2 --accuracy-limit 50 --methods sst,gradient --samples 5 --views 2"
                                    " --ig-steps 7 -o " + eval),
                        "other settings (search;");
}

// Long studies are resumed after a kill (scripts/sst_experiments.sh): a training stopped after its
// first epoch and resumed ends with the model and history of one that ran straight through (the
// shuffle, the fills and the attack's start are seeded per epoch; the optimizer state is saved).
TEST(SstCli, InterruptedTrainingResumesToTheSameModel) {
  SALIENT_REQUIRE_SHARED(shared_path("data/mnist/t10k-images-idx3-ubyte.gz"));
  const std::string straight = tmp_dir("straight"), resumed = tmp_dir("resumed");
  const std::string args = "sst train --train mnist:train --dev mnist:val --limit 200 --epochs 3 --patience 3 "
                           "--masking robust --pgd-steps 2 --xi 1e-3 --seed 5 -o ";
  auto r = run_salient(args + straight);
  ASSERT_EQ(r.code, 0) << r.err;
  r = run_salient(args + resumed + " --max-minutes 1e-9");  // stops once its first epoch is saved
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(parse_json_file(join_path(resumed, "last/trainer_state.json"))["epoch"], 1);
  r = run_salient(args + resumed + " --resume");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("resuming"), std::string::npos) << r.err;
  for (const char* f : {"model.safetensors", "last/model.safetensors"})
    EXPECT_EQ(read_file(join_path(straight, f)), read_file(join_path(resumed, f))) << f;
  const auto a = parse_json_file(join_path(straight, "sst.json")), b = parse_json_file(join_path(resumed, "sst.json"));
  EXPECT_EQ(a["best_epoch"], b["best_epoch"]);
  ASSERT_EQ(a["history"].size(), 3u);
  ASSERT_EQ(b["history"].size(), 3u);
  for (size_t e = 0; e < 3; ++e)
    for (const char* k : {"train_loss", "val_loss", "val_accuracy", "val_faithfulness", "val_size"})
      EXPECT_EQ(a["history"][e][k], b["history"][e][k]) << "epoch " << e + 1 << " " << k;
}

TEST(SstCli, BadValuesAreOneLineErrors) {
  const std::string out = tmp_dir("bad");
  const std::string base = "sst train --train mnist:train --dev mnist:val -o " + out + " ";
  expect_one_line_error(run_salient(base + "--tau 1.5"), "--tau");
  expect_one_line_error(run_salient(base + "--lambda -2"), "--lambda");
  expect_one_line_error(run_salient(base + "--xi -1"), "--xi");
  expect_one_line_error(run_salient(base + "--masking robust --epsilon 0"), "--epsilon");
  expect_one_line_error(run_salient(base + "--masking noisy"), "--masking");
  expect_one_line_error(run_salient(base + "--masking probabilistic --noise gaussian"), "--noise");
  expect_one_line_error(run_salient(base + "--arch vgg"), "--arch");
  EXPECT_FALSE(dir_exists(out) && file_exists(join_path(out, "sst.json")));
  expect_one_line_error(run_salient("sst evaluate --data mnist:test -o " + out + " --methods sst"), "--model");
  expect_one_line_error(run_salient("sst evaluate --data mnist:test -o " + out + " --methods sst_shuffled"), "--model");
  expect_one_line_error(run_salient("sst evaluate --data mnist:test -o " + out + " --methods lime --standard x"), "lime");
  expect_one_line_error(run_salient("sst evaluate --data mnist:test -o " + out + " --methods sis --standard x --sis-criterion max"),
                        "--sis-criterion");
  expect_one_line_error(run_salient("sst evaluate --data mnist:test -o " + out + " --methods sis --standard x --sis-threshold 1"),
                        "--sis-threshold");
  expect_one_line_error(run_salient("sst evaluate --data mnist:test -o " + out + " --methods sis --standard x --search-tokens 0"),
                        "--search-tokens");
  expect_one_line_error(run_salient("sst evaluate --data mnist:test -o " + out + " --methods sis --standard x --search-batch 0"),
                        "--search-batch");
  expect_one_line_error(run_salient("sst evaluate --data mnist:test -o " + out + " --methods sst --model x --noise none"),
                        "--noise");
  expect_one_line_error(run_salient("sst explain --model /nonexistent"), "sst.json");
  // No silent CPU fallback: a CUDA device is refused (this build lacks CUDA, or SST is CPU-only).
  expect_one_line_error(run_salient("sst explain --model /nonexistent --device cuda"), "--device");
}

// A text SST model trained from the fixture, explained through the registry (salient explain
// --method sst) in the explanation schema; its subset never holds [CLS] or [SEP].
TEST(SstCli, TextModelThroughTheExplainerRegistry) {
  SALIENT_REQUIRE_SHARED(fixture_model());
  const std::string dir = tmp_dir("text"), data = tmp_dir("text_data.jsonl");
  std::string rows;
  for (int i = 0; i < 40; ++i)
    rows += nlohmann::json{{"text", i % 2 ? "a great and charming film" : "a dull and awful film"}, {"label", i % 2}}.dump() + "\n";
  write_file_atomic(data, rows);
  auto r = run_salient("sst train --train " + data + " --dev " + data + " --arch transformer --init " + fixture_model() +
                       " --epochs 1 --batch-size 8 --straight-through --xi 0.5 -o " + dir);
  ASSERT_EQ(r.code, 0) << r.err;
  r = run_salient("explain --model " + dir + " --method sst", "a great film\n");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "sst");
  const auto scores = j["token_scores"].get<std::vector<double>>();
  EXPECT_EQ(scores.front(), 0.0);
  EXPECT_EQ(scores.back(), 0.0);
  for (double s : scores) EXPECT_TRUE(s == 0.0 || s == 1.0);
  EXPECT_EQ(j["extras"]["selection"].size(), scores.size());
  r = run_salient("sst explain --model " + dir, "a great film\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["token_scores"], j["token_scores"]);
  r = run_salient("predict --model " + dir, "a great film\n");  // an SST text model is a classifier directory
  ASSERT_EQ(r.code, 0) << r.err;
}

// --windows end to end: training and evaluation read the long texts whole; with --max-length, or
// on images, it is a one-line error.
TEST(SstCli, TrainAndEvaluateReadLongTextsAsWindows) {
  SALIENT_REQUIRE_SHARED(fixture_model());
  const std::string dir = tmp_dir("windows"), data = tmp_dir("windows.jsonl"), eval = tmp_dir("windows_eval");
  write_file_atomic(data, long_text_rows());
  auto r = run_salient("sst train --train " + data + " --dev " + data + " --arch transformer --init " + fixture_model() +
                       " --windows --epochs 1 --batch-size 2 --xi 0.5 -o " + dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(read_file(dir + "/sst.json"))["training"]["windows"].get<bool>());
  r = run_salient("sst evaluate --model " + dir + " --data " + data + " --windows --methods sst,sst_shuffled --limit 2 --samples 2 --pgd-steps 1 -o " + eval);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto records = json_lines(read_file(eval + "/examples-sst.jsonl"));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["selection"].size(), 304u);  // every token of the whole text
  EXPECT_TRUE(nlohmann::json::parse(read_file(eval + "/run.json"))["windows"].get<bool>());
  expect_one_line_error(run_salient("sst train --train " + data + " --dev " + data + " --arch transformer --init " +
                                    fixture_model() + " --windows --max-length 64 -o " + tmp_dir("w2")),
                        "--max-length");
  expect_one_line_error(run_salient("sst evaluate --model " + dir + " --data " + data + " --methods sst --windows --max-length 64 -o " + tmp_dir("w3")),
                        "--max-length");
  expect_one_line_error(run_salient("sst evaluate --model " + dir + " --data mnist:test --methods sst --windows -o " + tmp_dir("w4")), "--windows");
  // --max-windows: a batch through the model in parts, recorded with the run; needs --windows.
  const std::string parted = tmp_dir("w5");
  r = run_salient("sst train --train " + data + " --dev " + data + " --arch transformer --init " + fixture_model() +
                  " --windows --max-windows 2 --epochs 1 --batch-size 3 --xi 0.5 -o " + parted);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(read_file(parted + "/sst.json"))["training"]["max_windows"].get<int64_t>(), 2);
  expect_one_line_error(run_salient("sst train --train " + data + " --dev " + data + " --arch transformer --init " +
                                    fixture_model() + " --max-windows 2 -o " + tmp_dir("w6")),
                        "--max-windows");
  expect_one_line_error(run_salient("sst train --train " + data + " --dev " + data + " --arch transformer --init " +
                                    fixture_model() + " --windows --max-windows -1 -o " + tmp_dir("w7")),
                        "--max-windows");
  // --limit-random: recorded with the training and the evaluation; it needs a limit, and an
  // evaluation with it takes its accuracy over the whole split.
  const std::string sampled = tmp_dir("w8"), sampled_eval = tmp_dir("w9");
  r = run_salient("sst train --train " + data + " --dev " + data + " --arch transformer --init " + fixture_model() +
                  " --windows --limit 2 --limit-random --epochs 1 --xi 0.5 -o " + sampled);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(read_file(sampled + "/sst.json"))["training"]["limit_random"].get<bool>());
  r = run_salient("sst evaluate --model " + sampled + " --data " + data + " --windows --methods sst --limit 2 --limit-random --samples 2 --pgd-steps 1 -o " + sampled_eval);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(read_file(sampled_eval + "/run.json"))["limit_random"].get<bool>());
  expect_one_line_error(run_salient("sst train --train " + data + " --dev " + data + " --arch transformer --init " +
                                    fixture_model() + " --limit-random -o " + tmp_dir("w10")),
                        "--limit-random");
  expect_one_line_error(run_salient("sst evaluate --model " + sampled + " --data " + data + " --methods sst --limit-random --accuracy-limit 2 -o " + tmp_dir("w11")),
                        "--limit-random");
}
#endif
