// Transformer engine: parity with the reference BERT fixtures, gradients of the attention hooks
// against finite differences, batch/padding invariance and checkpoint round trips.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <fstream>

#include "model/checkpoint.h"
#include "tensor_json.h"
#include "test_util.h"
#include "util/error.h"
#include "util/io.h"
#include "util/runtime.h"

using namespace salient;
using salient::test::json_to_tensor;
using salient::test::shared_path;
using salient::test::error_of;
using salient::test::temp_dir;

namespace {

struct RefCase {
  std::vector<int64_t> ids, types;
  std::vector<double> logits, probs;
  int64_t pred;
  nlohmann::json attentions;
};

std::vector<RefCase> load_cases() {
  std::vector<RefCase> cases;
  std::ifstream in(shared_path("fixtures/reference-bert/cases.jsonl"));
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    RefCase c;
    c.ids = j["input_ids"].get<std::vector<int64_t>>();
    c.types = j["token_type_ids"].get<std::vector<int64_t>>();
    c.logits = j["logits"].get<std::vector<double>>();
    c.probs = j["probs"].get<std::vector<double>>();
    c.pred = j["pred"].get<int64_t>();
    c.attentions = j["attentions"];
    cases.push_back(std::move(c));
  }
  return cases;
}

torch::Tensor row(const std::vector<int64_t>& v) { return torch::tensor(v, torch::kLong).unsqueeze(0); }


std::string model_dir() { return shared_path("fixtures/reference-bert/model"); }

double max_rel_err(const torch::Tensor& a, const torch::Tensor& b) {
  auto diff = (a.to(torch::kCPU, torch::kFloat64) - b.to(torch::kCPU, torch::kFloat64)).abs();
  auto scale = b.to(torch::kCPU, torch::kFloat64).abs().clamp_min(1e-3);
  return (diff / scale).max().item<double>();
}

// The first B fixture cases as one padded batch; the padding holds a real token id (2009), which
// the attention mask must keep from changing anything.
ForwardRequest padded_request(const std::vector<RefCase>& cases, int64_t B) {
  int64_t L = 0;
  for (int64_t i = 0; i < B; ++i) L = std::max<int64_t>(L, cases[i].ids.size());
  auto ids = torch::zeros({B, L}, torch::kLong), types = torch::zeros({B, L}, torch::kLong),
       mask = torch::zeros({B, L}, torch::kLong);
  for (int64_t i = 0; i < B; ++i) {
    const int64_t n = cases[i].ids.size();
    ids[i].slice(0, 0, n).copy_(torch::tensor(cases[i].ids));
    types[i].slice(0, 0, n).copy_(torch::tensor(cases[i].types));
    mask[i].slice(0, 0, n).fill_(1);
    ids[i].slice(0, n, L).fill_(2009);
  }
  ForwardRequest req;
  req.input_ids = ids;
  req.token_type_ids = types;
  req.attention_mask = mask;
  return req;
}

}  // namespace

TEST(ReferenceBert, LogitsProbsAndAttentionsMatchFixture) {
  SALIENT_REQUIRE_SHARED(model_dir());
  auto cases = load_cases();
  ASSERT_EQ(cases.size(), 24u);
  for (auto dtype : {torch::kFloat32, torch::kFloat64}) {
    Transformer model = load_model(model_dir());
    model.to(dtype);
    const double tol = dtype == torch::kFloat32 ? 1e-4 : 1e-9;
    int pairs = 0;
    for (const auto& c : cases) {
      ForwardRequest req;
      req.input_ids = row(c.ids);
      req.token_type_ids = row(c.types);
      req.want_attentions = true;
      torch::NoGradGuard ng;
      auto out = model.forward(req);
      auto want_logits = torch::tensor(c.logits, torch::kFloat64);
      EXPECT_LT((out.logits[0].to(torch::kCPU, torch::kFloat64) - want_logits).abs().max().item<double>(), tol);
      auto probs = torch::softmax(out.logits[0].to(torch::kCPU, torch::kFloat64), 0);
      EXPECT_LT((probs - torch::tensor(c.probs, torch::kFloat64)).abs().max().item<double>(), tol);
      EXPECT_EQ(out.logits[0].argmax().item<int64_t>(), c.pred);
      auto want_attn = json_to_tensor(c.attentions);  // [layer][head][q][k]
      ASSERT_EQ(want_attn.size(0), model.num_layers());
      for (int64_t l = 0; l < model.num_layers(); ++l)
        EXPECT_LT((out.attentions[l][0].to(torch::kCPU, torch::kFloat64) - want_attn[l]).abs().max().item<double>(), tol)
            << "layer " << l;
      if (std::any_of(c.types.begin(), c.types.end(), [](int64_t t) { return t == 1; })) ++pairs;
    }
    EXPECT_EQ(pairs, 8);
  }
}

// The attention logits and the queries and keys a forward can return are the ones behind the
// fixture's attention probabilities: softmax(logits) = A, and logits = q·kᵀ/√d (no padding here).
TEST(ReferenceBert, AttentionLogitsQueriesAndKeysGiveTheFixtureAttention) {
  SALIENT_REQUIRE_SHARED(model_dir());
  auto cases = load_cases();
  Transformer model = load_model(model_dir());
  model.to(torch::kFloat64);
  for (size_t i = 0; i < 4; ++i) {
    const auto& c = cases[i];
    ForwardRequest req;
    req.input_ids = row(c.ids);
    req.token_type_ids = row(c.types);
    req.want_attention_logits = true;
    req.want_queries_keys = true;
    torch::NoGradGuard ng;
    auto out = model.forward(req);
    auto want_attn = json_to_tensor(c.attentions);
    ASSERT_EQ(out.attention_logits.size(), size_t(model.num_layers()));
    for (int64_t l = 0; l < model.num_layers(); ++l) {
      EXPECT_LT((torch::softmax(out.attention_logits[l][0], -1).cpu() - want_attn[l]).abs().max().item<double>(), 1e-9);
      torch::Tensor qk = torch::matmul(out.queries[l], out.keys[l].transpose(-1, -2)) /
                         std::sqrt(double(model.config().head_dim()));
      EXPECT_LT((qk - out.attention_logits[l]).abs().max().item<double>(), 1e-9) << "layer " << l;
    }
  }
}

TEST(Transformer, BatchedWithPaddingEqualsOneByOne) {
  SALIENT_REQUIRE_SHARED(model_dir());
  Transformer model = load_model(model_dir());
  model.to(torch::kFloat64);
  auto cases = load_cases();
  const int64_t B = 6;
  torch::NoGradGuard ng;
  ForwardRequest req = padded_request(cases, B);  // padding filled with real ids must not matter either
  const int64_t L = req.input_ids.size(1);
  req.want_attentions = true;
  auto batched = model.forward(req);
  for (int64_t i = 0; i < B; ++i) {
    ForwardRequest one;
    one.input_ids = row(cases[i].ids);
    one.token_type_ids = row(cases[i].types);
    one.want_attentions = true;
    auto single = model.forward(one);
    EXPECT_LT((batched.logits[i] - single.logits[0]).abs().max().item<double>(), 1e-10);
    int64_t n = cases[i].ids.size();
    for (int64_t l = 0; l < model.num_layers(); ++l) {
      auto a = batched.attentions[l][i].slice(1, 0, n).slice(2, 0, n);
      EXPECT_LT((a - single.attentions[l][0]).abs().max().item<double>(), 1e-10);
      // Real queries give padding keys exactly zero weight.
      if (n < L) EXPECT_EQ(batched.attentions[l][i].slice(1, 0, n).slice(2, n, L).abs().max().item<double>(), 0.0);
    }
  }
}

// Directional derivative of f at x along a random direction, by central differences, against
// autograd, in double precision.
static void check_gradient(const std::function<torch::Tensor(const torch::Tensor&)>& f, torch::Tensor x) {
  x = x.detach().clone().requires_grad_(true);
  auto y = f(x);
  auto g = torch::autograd::grad({y}, {x})[0];
  torch::manual_seed(7);
  auto dir = torch::randn_like(x);
  const double eps = 1e-6;
  torch::NoGradGuard ng;
  double fd = (f(x + eps * dir).item<double>() - f(x - eps * dir).item<double>()) / (2 * eps);
  double an = (g * dir).sum().item<double>();
  EXPECT_NEAR(an, fd, 1e-6 * std::max(1.0, std::abs(fd))) << "autograd " << an << " vs finite difference " << fd;
}

TEST(Transformer, AttentionHookGradientsMatchFiniteDifferences) {
  SALIENT_REQUIRE_SHARED(model_dir());
  Transformer model = load_model(model_dir());
  model.to(torch::kFloat64);
  auto c = load_cases()[9];
  auto ids = row(c.ids), types = row(c.types);
  const int64_t L = c.ids.size(), H = model.num_heads();
  ForwardRequest base;
  base.input_ids = ids;
  base.token_type_ids = types;
  base.want_attentions = true;
  torch::Tensor A1;
  {
    torch::NoGradGuard ng;
    A1 = model.forward(base).attentions[1].clone();
  }
  auto prob0 = [&](const ForwardRequest& r) { return torch::softmax(model.forward(r).logits, -1)[0][0]; };
  // Replacement of layer 1's attention probabilities.
  check_gradient([&](const torch::Tensor& A) {
    ForwardRequest r = base;
    r.hooks.resize(model.num_layers());
    r.hooks[1].attn_override = A;
    return prob0(r);
  }, A1);
  // Scale α of layer 0's attention (the integrated-gradients path of attention attribution).
  check_gradient([&](const torch::Tensor& a) {
    ForwardRequest r = base;
    r.hooks.resize(model.num_layers());
    r.hooks[0].attn_scale = a.view({1, 1, 1, 1});
    return prob0(r);
  }, torch::full({1}, 0.7, torch::kFloat64));
  // Head mask.
  check_gradient([&](const torch::Tensor& m) {
    ForwardRequest r = base;
    r.hooks.resize(model.num_layers());
    r.hooks[0].head_mask = m;
    return prob0(r);
  }, torch::full({H}, 0.9, torch::kFloat64));
  // Input embeddings instead of ids.
  torch::Tensor emb;
  {
    torch::NoGradGuard ng;
    emb = model.word_embeddings(ids).clone();
  }
  check_gradient([&](const torch::Tensor& e) {
    ForwardRequest r = base;
    r.input_ids = torch::Tensor();
    r.inputs_embeds = e;
    return prob0(r);
  }, emb);
  (void)L;
}

TEST(Transformer, SecondOrderGradientsMatchFiniteDifferences) {
  SALIENT_REQUIRE_SHARED(model_dir());
  Transformer model = load_model(model_dir());
  model.to(torch::kFloat64);
  auto c = load_cases()[3];
  ForwardRequest base;
  base.input_ids = row(c.ids);
  base.token_type_ids = row(c.types);
  base.hooks.resize(model.num_layers());
  // f(m) = p(m); check d/dm [ v · ∇p(m) ] (a Hessian-vector product) against differences of ∇p.
  auto grad_at = [&](const torch::Tensor& m, bool create_graph) {
    ForwardRequest r = base;
    r.hooks[1].head_mask = m;
    auto p = torch::softmax(model.forward(r).logits, -1)[0][1];
    return torch::autograd::grad({p}, {m}, {}, create_graph, create_graph)[0];
  };
  const int64_t H = model.num_heads();
  auto m = torch::full({H}, 0.8, torch::kFloat64).requires_grad_(true);
  torch::manual_seed(3);
  auto v = torch::randn({H}, torch::kFloat64), u = torch::randn({H}, torch::kFloat64);
  auto g = grad_at(m, true);
  auto hv = torch::autograd::grad({(g * v).sum()}, {m})[0];
  const double eps = 1e-5;
  auto mp = (m.detach() + eps * u).requires_grad_(true), mm = (m.detach() - eps * u).requires_grad_(true);
  double fd = (((grad_at(mp, false) - grad_at(mm, false)) * v).sum().item<double>()) / (2 * eps);
  double an = (hv * u).sum().item<double>();
  EXPECT_NEAR(an, fd, 1e-6 * std::max(1.0, std::abs(fd)));
}

// Every text row of the family table (model/family.cpp): a new row is tested here without a change.
TEST(Checkpoint, SaveLoadRoundTripForEveryFamily) {
  for (const ModelFamily& family : model_families()) {
    if (family.input != ModelFamily::Input::Text) continue;
    const std::string type = family.model_type;
    nlohmann::json cfg = {{"model_type", type}, {"vocab_size", 50}, {"max_position_embeddings", 40},
                          {"id2label", {{"0", "no"}, {"1", "yes"}, {"2", "maybe"}}}};
    if (type == "distilbert") {
      cfg.update({{"dim", 16}, {"n_layers", 2}, {"n_heads", 2}, {"hidden_dim", 24}, {"activation", "gelu"}});
    } else {
      cfg.update({{"hidden_size", 16}, {"num_hidden_layers", 2}, {"num_attention_heads", 2},
                  {"intermediate_size", 24}, {"hidden_act", "gelu"}, {"type_vocab_size", type == "roberta" ? 1 : 2}});
      if (type == "electra") cfg["embedding_size"] = 8;
      if (type == "roberta") cfg["pad_token_id"] = 1;
      if (type == "deberta-v2")
        cfg.update({{"relative_attention", true}, {"pos_att_type", "p2c|c2p"}, {"position_buckets", 8},
                    {"max_relative_positions", 16}, {"embedding_size", 8}, {"pooler_hidden_size", 12}});
    }
    ModelConfig config = ModelConfig::from_json(cfg, type + "/config.json");
    EXPECT_EQ(ModelConfig::from_json(config.to_json(), "saved").to_json(), config.to_json()) << type;
    Transformer model(config, 42);
    std::string dir = temp_dir("rt_" + type);
    save_model(model, dir);
    SafetensorsFile st = read_safetensors(join_path(dir, "model.safetensors"));
    for (const auto& name : model.expected_weight_names())
      EXPECT_TRUE(st.tensors.count(find_model_family(type)->hf_weight_name(name))) << type << ": " << name;
    LoadReport report;
    Transformer loaded = load_model(dir, {}, &report);
    EXPECT_TRUE(report.missing.empty());
    EXPECT_TRUE(report.unexpected.empty());
    EXPECT_EQ(loaded.config().id2label, (std::vector<std::string>{"no", "yes", "maybe"}));
    auto ids = torch::tensor({{2, 7, 9, 11, 3}}, torch::kLong);
    torch::NoGradGuard ng;
    EXPECT_TRUE(torch::equal(model.logits(ids), loaded.logits(ids).cpu())) << type;
    // Half-precision files load back close to the original.
    save_model(model, dir, DType::BF16);
    Transformer half = load_model(dir);
    EXPECT_LT((half.logits(ids).cpu() - model.logits(ids)).abs().max().item<float>(), 0.05) << type;
    std::system(("rm -rf " + dir).c_str());
  }
  EXPECT_EQ(find_model_family("distilbert")->hf_weight_name("encoder.layer.3.attention.self.query.weight"),
            "distilbert.transformer.layer.3.attention.q_lin.weight");
  EXPECT_EQ(find_model_family("distilbert")->hf_weight_name("encoder.layer.0.output.LayerNorm.bias"),
            "distilbert.transformer.layer.0.output_layer_norm.bias");
  EXPECT_EQ(find_model_family("bert")->hf_weight_name("pooler.dense.weight"), "bert.pooler.dense.weight");
  EXPECT_EQ(find_model_family("roberta")->hf_weight_name("classifier.out_proj.bias"), "classifier.out_proj.bias");
}

TEST(Checkpoint, BadModelDirectoriesGiveOneLineErrors) {
  auto expect_error = [](const std::function<void()>& f, const std::string& needle) {
    try {
      f();
      ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
    } catch (const salient::Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  };
  expect_error([] { load_model("/nonexistent/model"); }, "not found");
  std::string dir = temp_dir("bad");
  expect_error([&] { load_model(dir); }, "config.json");
  SALIENT_REQUIRE_SHARED(model_dir());
  write_file_atomic(join_path(dir, "config.json"), read_file(join_path(model_dir(), "config.json")));
  expect_error([&] { load_model(dir); }, "model.safetensors");
  // Truncated weights.
  std::string weights = read_file(join_path(model_dir(), "model.safetensors"));
  write_file_atomic(join_path(dir, "model.safetensors"), weights.substr(0, weights.size() / 2));
  expect_error([&] { load_model(dir); }, "model.safetensors");
  // Config that disagrees with the weights' shapes.
  write_file_atomic(join_path(dir, "model.safetensors"), weights);
  auto cfg = parse_json_file(join_path(model_dir(), "config.json"));
  cfg["intermediate_size"] = 65;
  write_file_atomic(join_path(dir, "config.json"), cfg.dump());
  expect_error([&] { load_model(dir); }, "shape");
  cfg["intermediate_size"] = 64;
  cfg["model_type"] = "gpt2";
  write_file_atomic(join_path(dir, "config.json"), cfg.dump());
  expect_error([&] { load_model(dir); }, "gpt2");
  std::system(("rm -rf " + dir).c_str());
}

TEST(Transformer, RejectsInputsLongerThanMaxPositions) {
  SALIENT_REQUIRE_SHARED(model_dir());
  Transformer model = load_model(model_dir());
  auto ids = torch::full({1, 129}, 2009, torch::kLong);
  EXPECT_THROW(model.logits(ids), salient::Error);
}

TEST(Transformer, GrownPositionTableKeepsShortInputsAndRepeatsLearnedRows) {
  // train --init --extend-positions: the grown model must compute exactly what the original did on
  // inputs that fit the old table, accept longer ones, and start its new rows from the learned ones.
  SALIENT_REQUIRE_SHARED(model_dir());
  Transformer model = load_model(model_dir());
  const int64_t old_rows = model.config().max_position_embeddings;
  Transformer grown = model.with_position_table(old_rows * 2 + 3);
  EXPECT_EQ(grown.config().max_position_embeddings, old_rows * 2 + 3);
  EXPECT_EQ(model.config().max_position_embeddings, old_rows);  // the original is untouched
  const torch::Tensor& a = model.weights().at("embeddings.position_embeddings.weight");
  const torch::Tensor& b = grown.weights().at("embeddings.position_embeddings.weight");
  ASSERT_EQ(b.size(0), old_rows * 2 + 3);
  EXPECT_TRUE(torch::equal(b.slice(0, 0, old_rows), a));
  EXPECT_TRUE(torch::equal(b.slice(0, old_rows, 2 * old_rows), a));
  EXPECT_TRUE(torch::equal(b.slice(0, 2 * old_rows), a.slice(0, 0, 3)));
  auto cases = load_cases();
  torch::Tensor ids = torch::tensor(cases[0].ids).view({1, -1}), types = torch::tensor(cases[0].types).view({1, -1});
  torch::NoGradGuard ng;
  EXPECT_TRUE(torch::allclose(grown.logits(ids, types), model.logits(ids, types), 0, 0));
  auto long_ids = torch::full({1, old_rows + 5}, 2009, torch::kLong);
  EXPECT_THROW(model.logits(long_ids), salient::Error);
  EXPECT_EQ(grown.logits(long_ids).size(0), 1);
  EXPECT_THROW(model.with_position_table(0), salient::Error);
}

// --device / $SALIENT_DEVICE: malformed names and devices this build or machine lacks are one-line
// errors naming the option; nothing falls back to the CPU silently.
TEST(Runtime, DeviceNamesAreCheckedAgainstBuildAndMachine) {
  EXPECT_TRUE(parse_device("cpu").is_cpu());
  for (const char* bad : {"gpu", "CUDA", "cuda:", "cuda:x", "cuda:-1", "cuda0", "cpu:0", ""})
    EXPECT_NE(test::error_of([&] { parse_device(bad); }).find("--device: expected cpu, cuda or cuda:N"), std::string::npos)
        << bad;
  EXPECT_NE(test::error_of([] { parse_device("gpu", "$SALIENT_DEVICE"); }).find("$SALIENT_DEVICE"), std::string::npos);
  if (!torch::cuda::is_available()) {
    const std::string e = test::error_of([] { parse_device("cuda"); });
    EXPECT_TRUE(e.find("CUDA build") != std::string::npos || e.find("no CUDA device") != std::string::npos) << e;
  } else {
    EXPECT_TRUE(parse_device("cuda").is_cuda());
    EXPECT_EQ(parse_device("cuda:0").index(), 0);
    EXPECT_NE(test::error_of([] { parse_device("cuda:99"); }).find("CUDA device(s) are visible"), std::string::npos);
  }
}

// ---- Vision transformer (HF ViTForImageClassification) ----

namespace {

// A small ViT in float64 with every weight random (LayerNorm scales around 1), so that no term of
// the forward pass can hide behind a zero bias or a unit scale.
Transformer random_vit(int64_t layers = 2) {
  nlohmann::json cfg = {{"model_type", "vit"}, {"architectures", {"ViTForImageClassification"}},
                        {"image_size", 8}, {"patch_size", 4}, {"num_channels", 2}, {"hidden_size", 16},
                        {"num_hidden_layers", layers}, {"num_attention_heads", 4}, {"intermediate_size", 24},
                        {"hidden_act", "gelu"}, {"layer_norm_eps", 1e-12}, {"qkv_bias", true},
                        {"id2label", {{"0", "a"}, {"1", "b"}, {"2", "c"}}}};
  Transformer m(ModelConfig::from_json(cfg, "vit/config.json"), 3);
  m.to(torch::kDouble);
  torch::manual_seed(5);
  std::map<std::string, torch::Tensor> w;
  for (const auto& [name, t] : m.weights()) {
    const bool norm_scale = name.find("layernorm") != std::string::npos && name.find(".weight") != std::string::npos;
    w[name] = norm_scale ? 1.0 + 0.3 * torch::randn_like(t) : 0.3 * torch::randn_like(t);
  }
  m.set_weights(w);
  return m;
}

// HF's ViT written out with plain tensor ops, independently of the engine's code: Conv2d patch
// embeddings, [CLS] + positions, ViTLayer (pre-LN) blocks, the final LayerNorm, the classifier on
// [CLS]. Returns the logits and each layer's attention probabilities.
std::pair<torch::Tensor, std::vector<torch::Tensor>> vit_by_hand(const Transformer& m, const torch::Tensor& pixels) {
  const auto& W = m.weights();
  const int64_t B = pixels.size(0), Hd = 16, H = 4, D = 4;
  auto ln = [&](const torch::Tensor& x, const std::string& name) {
    return torch::layer_norm(x, {Hd}, W.at(name + ".weight"), W.at(name + ".bias"), 1e-12);
  };
  auto lin = [&](const torch::Tensor& x, const std::string& name) {
    return torch::linear(x, W.at(name + ".weight"), W.at(name + ".bias"));
  };
  torch::Tensor x = torch::conv2d(pixels, W.at("embeddings.patch_embeddings.projection.weight"),
                                  W.at("embeddings.patch_embeddings.projection.bias"), /*stride=*/4);
  x = x.flatten(2).transpose(1, 2);  // [B, P, Hd]
  x = torch::cat({W.at("embeddings.cls_token").expand({B, 1, Hd}), x}, 1) + W.at("embeddings.position_embeddings");
  std::vector<torch::Tensor> attentions;
  for (int64_t l = 0; l < m.num_layers(); ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    torch::Tensor y = ln(x, p + "layernorm_before");
    auto split = [&](const torch::Tensor& t) { return t.view({B, -1, H, D}).permute({0, 2, 1, 3}); };
    torch::Tensor q = split(lin(y, p + "attention.self.query")), k = split(lin(y, p + "attention.self.key")),
                  v = split(lin(y, p + "attention.self.value"));
    torch::Tensor a = torch::softmax(torch::matmul(q, k.transpose(-1, -2)) / std::sqrt(double(D)), -1);
    attentions.push_back(a);
    torch::Tensor ctx = torch::matmul(a, v).permute({0, 2, 1, 3}).reshape({B, -1, Hd});
    x = x + lin(ctx, p + "attention.output.dense");
    x = x + lin(torch::gelu(lin(ln(x, p + "layernorm_after"), p + "intermediate.dense")), p + "output.dense");
  }
  return {lin(ln(x.select(1, 0), "layernorm"), "classifier"), attentions};
}

}  // namespace

TEST(Vit, ForwardMatchesADirectComputation) {
  Transformer m = random_vit();
  torch::manual_seed(7);
  torch::Tensor pixels = torch::rand({3, 2, 8, 8}, torch::kDouble);
  ForwardRequest req;
  req.pixel_values = pixels;
  req.want_attentions = true;
  req.want_hidden_states = true;
  ForwardResult got = m.forward(req);
  auto [logits, attentions] = vit_by_hand(m, pixels);
  EXPECT_LT((got.logits - logits).abs().max().item<double>(), 1e-12);
  ASSERT_EQ(got.attentions.size(), attentions.size());
  for (size_t l = 0; l < attentions.size(); ++l)
    EXPECT_LT((got.attentions[l] - attentions[l]).abs().max().item<double>(), 1e-12) << "layer " << l;
  EXPECT_EQ(got.hidden_states.size(), 3u);
  EXPECT_EQ(got.hidden_states[0].sizes(), torch::IntArrayRef({3, 5, 16}));  // [CLS] + 4 patches
  // The [CLS]-only last layer (what explainers and students use) equals the full layer's first row
  // in a pre-LN block too.
  torch::Tensor h = got.hidden_states[1], ext = m.extended_mask({}, 3, 5);
  EXPECT_LT((m.first_token_layer(1, h, ext) - m.layer_forward(1, h, ext).slice(1, 0, 1)).abs().max().item<double>(), 1e-12);
  // Patch embeddings given instead of pixels (what gradient methods differentiate) give the same.
  ForwardRequest by_embeds;
  by_embeds.inputs_embeds = m.patch_embeddings(pixels);
  EXPECT_LT((m.forward(by_embeds).logits - logits).abs().max().item<double>(), 1e-12);
}

TEST(Vit, GradientsThroughPatchEmbeddingsMatchFiniteDifferences) {
  Transformer m = random_vit(1);
  torch::manual_seed(9);
  torch::Tensor e = m.patch_embeddings(torch::rand({1, 2, 8, 8}, torch::kDouble)).detach().requires_grad_(true);
  ForwardRequest req;
  req.inputs_embeds = e;
  torch::Tensor f = m.forward(req).logits[0][1];
  torch::Tensor g = torch::autograd::grad({f}, {e})[0];
  const double h = 1e-6;
  for (int64_t i : {0, 3}) {
    for (int64_t j : {0, 7, 15}) {
      torch::NoGradGuard ng;
      torch::Tensor up = e.detach().clone(), down = e.detach().clone();
      up[0][i][j] += h;
      down[0][i][j] -= h;
      ForwardRequest ru, rd;
      ru.inputs_embeds = up;
      rd.inputs_embeds = down;
      const double fd = (m.forward(ru).logits[0][1] - m.forward(rd).logits[0][1]).item<double>() / (2 * h);
      EXPECT_NEAR(g[0][i][j].item<double>(), fd, 1e-7) << i << "," << j;
    }
  }
}

TEST(Vit, SavesAndLoadsInHuggingFaceLayout) {
  Transformer m = random_vit();
  m.to(torch::kFloat);
  const std::string dir = temp_dir("rt_vit");
  save_model(m, dir);
  SafetensorsFile st = read_safetensors(join_path(dir, "model.safetensors"));
  for (const char* name : {"vit.embeddings.cls_token", "vit.embeddings.position_embeddings",
                           "vit.embeddings.patch_embeddings.projection.weight",
                           "vit.encoder.layer.1.attention.attention.query.weight",
                           "vit.encoder.layer.0.attention.output.dense.bias", "vit.encoder.layer.0.layernorm_before.weight",
                           "vit.encoder.layer.0.layernorm_after.bias", "vit.encoder.layer.0.intermediate.dense.weight",
                           "vit.encoder.layer.0.output.dense.weight", "vit.layernorm.weight", "classifier.weight"})
    EXPECT_TRUE(st.tensors.count(name)) << name;
  EXPECT_EQ(st.tensors.size(), m.weights().size());
  const nlohmann::json cfg = parse_json_file(join_path(dir, "config.json"));
  EXPECT_EQ(cfg["model_type"], "vit");
  EXPECT_EQ(cfg["image_size"], 8);
  EXPECT_EQ(cfg["patch_size"], 4);
  EXPECT_EQ(cfg["num_channels"], 2);
  EXPECT_EQ(cfg["qkv_bias"], true);
  EXPECT_FALSE(cfg.contains("vocab_size"));
  LoadReport report;
  Transformer loaded = load_model(dir, {}, &report);
  EXPECT_TRUE(report.missing.empty());
  EXPECT_TRUE(report.unexpected.empty());
  torch::Tensor pixels = torch::rand({2, 2, 8, 8});
  ForwardRequest req;
  req.pixel_values = pixels;
  torch::NoGradGuard ng;
  EXPECT_TRUE(torch::equal(m.forward(req).logits, loaded.forward(req).logits.cpu()));
  std::system(("rm -rf " + dir).c_str());
}

TEST(Vit, WrongInputsAndConfigsGiveOneLineErrors) {
  Transformer m = random_vit(1);
  ForwardRequest ids;
  ids.input_ids = torch::zeros({1, 5}, torch::kLong);
  EXPECT_NE(error_of([&] { m.forward(ids); }).find("takes pixel_values, not input_ids"), std::string::npos);
  ForwardRequest wrong_size;
  wrong_size.pixel_values = torch::zeros({1, 2, 9, 9}, torch::kDouble);
  EXPECT_NE(error_of([&] { m.forward(wrong_size); }).find("pixel_values: expected [batch, 2, 8, 8], got [1, 2, 9, 9]"), std::string::npos);
  EXPECT_NE(error_of([&] { m.word_embeddings(torch::zeros({1, 2}, torch::kLong)); }).find("vision transformer"), std::string::npos);
  nlohmann::json cfg = {{"model_type", "vit"}, {"image_size", 10}, {"patch_size", 4}};
  EXPECT_NE(error_of([&] { ModelConfig::from_json(cfg, "v/config.json"); }).find("v/config.json: field 'image_size' (10) is not divisible by 'patch_size' (4)"), std::string::npos);
  cfg = {{"model_type", "vit"}, {"qkv_bias", false}};
  EXPECT_NE(error_of([&] { ModelConfig::from_json(cfg, "v/config.json"); }).find("qkv_bias"), std::string::npos);
  // A text model refuses pixels.
  nlohmann::json text = {{"model_type", "bert"}, {"vocab_size", 20}, {"hidden_size", 8}, {"num_hidden_layers", 1},
                         {"num_attention_heads", 2}, {"intermediate_size", 8}, {"max_position_embeddings", 16}};
  Transformer bert(ModelConfig::from_json(text, "b/config.json"), 1);
  ForwardRequest pixels;
  pixels.pixel_values = torch::zeros({1, 3, 8, 8});
  EXPECT_NE(error_of([&] { bert.forward(pixels); }).find("pixel_values given to a text model"), std::string::npos);
}

namespace {

// The reference BERT with its head reading a scalar mix of every layer (salient_pooling `pooling`):
// the encoder's weights, the classifier's, and drawn (not the initial, uniform) mix weights.
Transformer scalar_mix_model(const std::string& pooling) {
  Transformer ref = load_model(model_dir());
  ModelConfig cfg = ref.config();
  cfg.pooling = pooling;
  Transformer m(cfg, 5);
  std::map<std::string, torch::Tensor> w;
  for (const auto& name : m.expected_weight_names())
    w[name] = ref.weights().count(name) ? ref.weights().at(name) : m.weights().at(name);
  torch::manual_seed(21);
  w[kScalarMixCoefficients] = torch::randn({m.num_layers() + 1});
  w[kScalarMixScale] = torch::full({1}, 1.7);
  m.set_weights(w);
  m.to(torch::kFloat64);
  return m;
}

}  // namespace

// The authors' pooling (learning-scaffold's ScalarMix: the softmax-weighted sum, times γ, of every
// state's mean over its non-padding tokens; BERT's classifier then reads it without the pooler)
// written out here from the states the forward pass returns, on a padded batch; and its [CLS]
// variant. Padding changes nothing: each row equals the example run alone.
TEST(ScalarMix, LogitsEqualADirectComputationOnAPaddedBatch) {
  SALIENT_REQUIRE_SHARED(model_dir());
  auto cases = load_cases();
  for (const std::string pooling : {"scalar_mix", "scalar_mix_cls"}) {
    Transformer m = scalar_mix_model(pooling);
    EXPECT_EQ(m.weights().count("pooler.dense.weight"), 0u);
    const int64_t B = 4;
    torch::NoGradGuard ng;
    ForwardRequest req = padded_request(cases, B);  // real ids in the padding: must not count
    req.want_hidden_states = true;
    ForwardResult out = m.forward(req);
    ASSERT_EQ(static_cast<int64_t>(out.hidden_states.size()), m.num_layers() + 1);
    const torch::Tensor coef = m.weights().at(kScalarMixCoefficients);
    const double gamma = m.weights().at(kScalarMixScale).item<double>();
    for (int64_t i = 0; i < B; ++i) {
      const int64_t n = cases[i].ids.size();
      double denom = 0;
      for (int64_t l = 0; l <= m.num_layers(); ++l) denom += std::exp(coef[l].item<double>());
      torch::Tensor mixed = torch::zeros({m.config().hidden_size}, torch::kFloat64);
      for (int64_t l = 0; l <= m.num_layers(); ++l) {
        torch::Tensor h = out.hidden_states[l][i];
        torch::Tensor pooled = pooling == "scalar_mix" ? h.slice(0, 0, n).sum(0) / double(n) : h[0];
        mixed += std::exp(coef[l].item<double>()) / denom * pooled;
      }
      torch::Tensor direct = torch::matmul(m.weights().at("classifier.weight"), gamma * mixed) +
                             m.weights().at("classifier.bias");
      EXPECT_LT((out.logits[i] - direct).abs().max().item<double>(), 1e-10) << pooling << " row " << i;
      EXPECT_LT((m.logits(row(cases[i].ids), row(cases[i].types))[0] - out.logits[i]).abs().max().item<double>(), 1e-10)
          << pooling << " row " << i << " alone";
    }
  }
}

// The mix's weights train: their gradients against central differences.
TEST(ScalarMix, GradientsOfTheMixWeightsMatchFiniteDifferences) {
  SALIENT_REQUIRE_SHARED(model_dir());
  Transformer m = scalar_mix_model("scalar_mix");
  auto c = load_cases()[7];
  const auto weights = m.weights();
  for (const char* name : {kScalarMixCoefficients, kScalarMixScale}) {
    check_gradient([&](const torch::Tensor& x) {
      auto w = weights;
      w[name] = x;
      m.set_weights(w);
      return torch::softmax(m.logits(row(c.ids), row(c.types)), -1)[0][1];
    }, weights.at(name));
  }
}

// Saved as a Hugging Face directory with salient_pooling in config.json and the mix's two tensors;
// loads back equal. A checkpoint with the pooler gets a fresh mix under LoadOptions::pooling (and
// its pooler is reported unused); an unknown pooling is a one-line error naming the field.
TEST(ScalarMix, SavesLoadsAndConvertsCheckpoints) {
  SALIENT_REQUIRE_SHARED(model_dir());
  Transformer m = scalar_mix_model("scalar_mix");
  m.to(torch::kFloat32);
  const std::string dir = temp_dir("scalar_mix");
  save_model(m, dir);
  const nlohmann::json cfg = nlohmann::json::parse(read_file(join_path(dir, "config.json")));
  EXPECT_EQ(cfg.value("salient_pooling", ""), "scalar_mix");
  SafetensorsFile st = read_safetensors(join_path(dir, "model.safetensors"));
  EXPECT_EQ(st.tensors.at("scalar_mix.coefficients").shape, (std::vector<int64_t>{m.num_layers() + 1}));
  EXPECT_EQ(st.tensors.count("bert.pooler.dense.weight"), 0u);
  LoadReport report;
  Transformer loaded = load_model(dir, {}, &report);
  EXPECT_TRUE(report.unexpected.empty());
  auto ids = row(load_cases()[2].ids);
  torch::NoGradGuard ng;
  EXPECT_TRUE(torch::equal(m.logits(ids), loaded.logits(ids).cpu()));

  LoadOptions lo;
  lo.allow_new_head = true;
  lo.pooling = "scalar_mix_cls";
  Transformer converted = load_model(model_dir(), lo, &report);
  EXPECT_EQ(converted.config().pooling, "scalar_mix_cls");
  EXPECT_EQ(report.initialised, (std::vector<std::string>{"scalar_mix.coefficients", "scalar_mix.scale"}));
  EXPECT_EQ(report.unexpected.size(), 2u);  // bert.pooler.dense.{weight,bias}
  EXPECT_TRUE(torch::equal(converted.weights().at(kScalarMixCoefficients), torch::zeros({converted.num_layers() + 1})));
  EXPECT_EQ(converted.weights().at(kScalarMixScale).item<float>(), 1.0f);

  lo.pooling = "mean";
  EXPECT_NE(salient::test::error_of([&] { load_model(model_dir(), lo); }).find("'salient_pooling': unsupported value 'mean'"),
            std::string::npos);
  std::system(("rm -rf " + dir).c_str());
}
