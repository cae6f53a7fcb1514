// The vision transformer's training, evaluation and patch explanations (src/vision), on the MNIST
// images of the shared data.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "model/checkpoint.h"
#include "test_util.h"
#include "util/io.h"
#include "util/quadrature.h"
#include "vision/render.h"
#include "vision/vit.h"

using namespace salient;
using salient::test::error_of;
using salient::test::run_salient;
using salient::test::shared_path;
using salient::test::temp_dir;

namespace {

nlohmann::json json_first(const std::string& lines) { return nlohmann::json::parse(lines.substr(0, lines.find('\n'))); }

vision::VitTrainOptions tiny_options(const std::string& out) {
  vision::VitTrainOptions o;
  o.train_data = "mnist:train";
  o.dev_data = "mnist:val";
  o.data_dir = shared_path("data");
  o.output_dir = out;
  o.patch_size = 7;
  o.hidden_size = 32;
  o.num_layers = 2;
  o.num_heads = 2;
  o.intermediate_size = 64;
  o.epochs = 3;
  o.max_train_examples = 4096;
  o.lr = 5e-3;
  return o;
}

}  // namespace

TEST(VitTraining, LearnsMnistAndResumesExactly) {
  SALIENT_REQUIRE_SHARED(shared_path("data/mnist"));
  const std::string whole = temp_dir("vit_whole"), split = temp_dir("vit_split");
  const vision::VitTrainResult r = vision::train_vit(tiny_options(whole));
  ASSERT_EQ(r.history.size(), 3u);
  // 192 steps on 4,096 digits: far above chance (0.1); 0.82 after 5 epochs when this was written.
  EXPECT_GT(r.best_accuracy, 0.5);
  // The kept model is the best epoch's, in HF layout, and scores what training recorded.
  const Transformer best = vision::load_vit(whole);
  EXPECT_EQ(best.config().model_type, "vit");
  EXPECT_TRUE(file_exists(join_path(whole, "preprocessor_config.json")));
  const ImageData dev = vision::load_vit_data(best, "mnist:val", shared_path("data"));
  EXPECT_DOUBLE_EQ(vision::vit_accuracy(best, dev), r.best_accuracy);
  // Interrupted after epoch 1 and resumed: the same weights as the uninterrupted run.
  vision::VitTrainOptions first = tiny_options(split);
  first.stop_after_epoch = 1;
  EXPECT_EQ(vision::train_vit(first).history.size(), 1u);
  vision::VitTrainOptions rest = tiny_options(split);
  rest.resume = true;
  const vision::VitTrainResult resumed = vision::train_vit(rest);
  ASSERT_EQ(resumed.history.size(), 3u);
  EXPECT_EQ(resumed.best_accuracy, r.best_accuracy);
  const Transformer a = load_model(join_path(whole, "checkpoint")), b = load_model(join_path(split, "checkpoint"));
  for (const auto& [name, t] : a.weights()) EXPECT_TRUE(torch::equal(t, b.weights().at(name))) << name;
  // Other settings in the same directory are refused.
  vision::VitTrainOptions other = tiny_options(split);
  other.resume = true;
  other.hidden_size = 16;
  EXPECT_NE(error_of([&] { vision::train_vit(other); }).find("other settings (hidden_size)"), std::string::npos);
  std::system(("rm -rf " + whole + " " + split).c_str());
}

TEST(VitExplain, AttentionScoresFollowTheirDefinitions) {
  SALIENT_REQUIRE_SHARED(shared_path("data/mnist"));
  nlohmann::json cfg = {{"model_type", "vit"}, {"image_size", 28}, {"patch_size", 7}, {"num_channels", 1},
                        {"hidden_size", 16}, {"num_hidden_layers", 2}, {"num_attention_heads", 4},
                        {"intermediate_size", 16}, {"num_labels", 10}};
  Transformer m(ModelConfig::from_json(cfg, "vit/config.json"), 11);
  const ImageData d = vision::load_vit_data(m, "mnist:test", shared_path("data"), 3);
  ForwardRequest req;
  req.pixel_values = vision::pixel_values(m, d.images);
  req.want_attentions = true;
  ForwardResult r = m.forward(req);
  // attention_mean: the attention each patch receives, averaged over heads, query rows and layers.
  const torch::Tensor mean = vision::patch_attention_scores(m, d.images, "attention_mean");
  ASSERT_EQ(mean.sizes(), torch::IntArrayRef({3, 16}));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t p : {0, 5, 15}) {
      double want = 0;
      for (const auto& a : r.attentions)
        for (int64_t h = 0; h < 4; ++h)
          for (int64_t q = 0; q < 17; ++q) want += a[i][h][q][p + 1].item<double>();
      EXPECT_NEAR(mean[i][p].item<double>(), want / (2 * 4 * 17), 1e-6);
    }
  // rollout: the [CLS] row of (Â_1 Â_0) with Â = (head mean + I), rows renormalised.
  const torch::Tensor roll = vision::patch_attention_scores(m, d.images, "rollout");
  auto hat = [&](int64_t l) {
    torch::Tensor a = r.attentions[l].mean(1) + torch::eye(17).unsqueeze(0);
    return a / a.sum(-1, true);
  };
  const torch::Tensor joint = torch::bmm(hat(1), hat(0));
  EXPECT_LT((roll - joint.select(1, 0).slice(1, 1)).abs().max().item<double>(), 1e-6);
  EXPECT_NE(error_of([&] { vision::patch_attention_scores(m, d.images, "lime"); }).find("--method"), std::string::npos);
  // A model for other images is refused by name.
  EXPECT_NE(error_of([&] { vision::load_vit_data(m, "fashion-mnist:nope", shared_path("data")); }).find("fashion-mnist"),
            std::string::npos);
}

TEST(VitRender, PatchTintsFollowTheScores) {
  const std::vector<float> grey(16, 0.5f);  // 4x4, 2x2 patches
  // Non-negative: min-max over patches. Patch 3 (the highest) gets the full tint, patch 1 (the lowest) none.
  std::vector<uint8_t> rgb = vision::patch_heat_rgb(grey, 4, 4, {0.2, 0.1, 0.1, 0.3}, 2, 1);
  auto px = [&](int64_t y, int64_t x) {
    const size_t at = static_cast<size_t>((y * 4 + x) * 3);
    return std::vector<int>{rgb[at], rgb[at + 1], rgb[at + 2]};
  };
  EXPECT_EQ(px(3, 3), (std::vector<int>{217, 38, 38}));   // 255·(0.3·0.5 + 0.7), 255·0.3·0.5
  EXPECT_EQ(px(0, 3), (std::vector<int>{128, 128, 128}));  // patch 1: grey
  EXPECT_EQ(px(0, 0), (std::vector<int>{172, 83, 83}));    // half: 255·(0.65·0.5 + 0.35), 255·0.65·0.5
  // Signed: relative to the largest |score|, negative in blue.
  rgb = vision::patch_heat_rgb(grey, 4, 4, {-1.0, 0.0, 0.0, 0.5}, 2, 1);
  EXPECT_EQ(px(0, 0), (std::vector<int>{38, 38, 217}));
  const std::string png = vision::patch_heat_png(grey, 4, 4, {0.2, 0.1, 0.1, 0.3}, 2, 3);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  EXPECT_NE(error_of([&] { vision::patch_heat_rgb(grey, 4, 4, {1.0}, 2, 1); }).find("1 patch scores"), std::string::npos);
}

TEST(VitCli, TrainEvaluateExplainAndErrors) {
  SALIENT_REQUIRE_SHARED(shared_path("data/mnist"));
  const std::string model = temp_dir("vit_cli_model"), views = temp_dir("vit_cli_views");
  const std::string data = " --data-dir " + shared_path("data");
  auto r = run_salient("--quiet vit train --data mnist:train --dev mnist:val -o " + model + data +
                       " --hidden 16 --layers 1 --heads 2 --intermediate 16 --epochs 1 --max-train-examples 256");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["best_epoch"], 1);
  r = run_salient("vit evaluate --model " + model + " --data mnist:test --limit 50" + data);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["examples"], 50);
  r = run_salient("vit explain --model " + model + " --data mnist:test --limit 2 --method rollout -o " + views + data);
  ASSERT_EQ(r.code, 0) << r.err;
  r = run_salient("vit explain --model " + model + " --data mnist:test --limit 2 --method ig --steps 8" + data);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json_first(r.out)["steps"], 8);
  r = run_salient("vit explain --model " + model + " --data mnist:test --limit 2 --method rollout -o " + views + data);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string lines = read_file(join_path(views, "explanations.jsonl"));
  const nlohmann::json first = nlohmann::json::parse(lines.substr(0, lines.find('\n')));
  EXPECT_EQ(first["patch_scores"].size(), 4u);
  EXPECT_EQ(first["patch_scores"][0].size(), 4u);
  EXPECT_TRUE(file_exists(join_path(views, first["png"].get<std::string>())));
  salient::test::expect_one_line_error(
      run_salient("vit train --data mnist:train --dev mnist:val -o " + model + "2 --patch-size 5" + data), "--patch-size: 5 does not divide");
  salient::test::expect_one_line_error(run_salient("vit train --data mnist:train --dev mnist:val -o " + model + "2 --heads 0" + data),
                                       "--heads: must be positive");
  salient::test::expect_one_line_error(run_salient("vit explain --model " + model + " --method lime" + data), "--method");
  std::system(("rm -rf " + model + " " + model + "2 " + views).c_str());
}

TEST(VitCli, TextCommandsRefuseAVit) {
  const std::string dir = temp_dir("vit_text_cmds");
  nlohmann::json cfg = {{"model_type", "vit"}, {"image_size", 8}, {"patch_size", 4}, {"num_channels", 1},
                        {"hidden_size", 8}, {"num_hidden_layers", 1}, {"num_attention_heads", 2},
                        {"intermediate_size", 8}, {"num_labels", 2}};
  save_model(Transformer(ModelConfig::from_json(cfg, "vit/config.json"), 1), dir);
  salient::test::expect_one_line_error(run_salient("explain --model " + dir + " --method ig", "a b\n"),
                                       "a vision transformer (model_type vit) takes images, not text");
  salient::test::expect_one_line_error(run_salient("predict --model " + dir, "a b\n"), "use salient vit");
  std::system(("rm -rf " + dir).c_str());
}

TEST(VitExplain, GradientScoresHaveTheirDefinitionsAndIgIsComplete) {
  SALIENT_REQUIRE_SHARED(shared_path("data/mnist"));
  nlohmann::json cfg = {{"model_type", "vit"}, {"image_size", 28}, {"patch_size", 7}, {"num_channels", 1},
                        {"hidden_size", 16}, {"num_hidden_layers", 2}, {"num_attention_heads", 4},
                        {"intermediate_size", 16}, {"num_labels", 10}};
  Transformer m(ModelConfig::from_json(cfg, "vit/config.json"), 11);
  m.to(torch::kDouble);
  const ImageData d = vision::load_vit_data(m, "mnist:test", shared_path("data"), 2);
  const std::vector<int64_t> targets = {3, 7};
  auto prob = [&](const torch::Tensor& pixels) {  // the explained output on raw pixels [N, C, H, W]
    ForwardRequest req;
    req.pixel_values = pixels;
    return torch::softmax(m.forward(req).logits, -1).gather(1, torch::tensor(targets).view({-1, 1})).squeeze(1);
  };
  // IG: completeness, and equality with pixel-space IG summed per patch (the projection is linear).
  const torch::Tensor ig = vision::patch_gradient_scores(m, d.images, "ig", targets, 48);
  const torch::Tensor x = vision::pixel_values(m, d.images), black = vision::pixel_values(m, torch::zeros_like(d.images));
  const torch::Tensor gap = (prob(x) - prob(black)).detach();
  EXPECT_LT((ig.sum(1) - gap).abs().max().item<double>(), 1e-8);
  const Quadrature q = make_quadrature(Rule::GaussLegendre, 48, QuadratureConvention::Exact);
  torch::Tensor total = torch::zeros_like(x);
  for (size_t k = 0; k < q.alphas.size(); ++k) {
    torch::Tensor pt = (black + q.alphas[k] * (x - black)).detach().requires_grad_(true);
    total += q.weights[k] * torch::autograd::grad({prob(pt).sum()}, {pt})[0];
  }
  const torch::Tensor pixel_ig = ((x - black) * total).view({2, 1, 4, 7, 4, 7}).sum({1, 3, 5}).view({2, 16});
  EXPECT_LT((ig - pixel_ig).abs().max().item<double>(), 1e-10);
  // saliency and gradient × input from ∂F/∂e taken directly.
  torch::Tensor e = m.patch_embeddings(x).detach().requires_grad_(true);
  ForwardRequest req;
  req.inputs_embeds = e;
  torch::Tensor f = torch::softmax(m.forward(req).logits, -1).gather(1, torch::tensor(targets).view({-1, 1})).sum();
  torch::Tensor g = torch::autograd::grad({f}, {e})[0];
  EXPECT_LT((vision::patch_gradient_scores(m, d.images, "saliency", targets) - g.norm(2, -1)).abs().max().item<double>(), 1e-12);
  EXPECT_LT((vision::patch_gradient_scores(m, d.images, "grad_x_input", targets) - (g * e).sum(-1)).abs().max().item<double>(),
            1e-12);
  EXPECT_NE(error_of([&] { vision::patch_gradient_scores(m, d.images, "ig", targets, 1); }).find("--steps"), std::string::npos);
  EXPECT_NE(error_of([&] { vision::patch_gradient_scores(m, d.images, "ig", {3}); }).find("targets"), std::string::npos);
}
