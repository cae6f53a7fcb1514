// Self-Attention Attribution: parity with the authors' code on the reference BERT fixture, the
// fast path against the straightforward one, completeness, quadrature rules, the head mask, the
// attribution tree on a hand-made tensor, argument errors and the CLI.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <fstream>
#include <functional>

#include "attattr/analysis.h"
#include "attattr/attribution.h"
#include "model/classifier.h"
#include "tensor_json.h"
#include "test_util.h"
#include "text/byte_level_bpe.h"
#include "util/error.h"
#include "util/io.h"

using namespace salient;
using namespace salient::attattr;
using salient::test::json_to_tensor;
using salient::test::shared_path;

namespace {

struct Case {
  torch::Tensor ids, types;
  int64_t pred;
  torch::Tensor attattr;  // [layer, head, L, L] float64
};


const std::vector<Case>& cases() {
  static std::vector<Case> all = [] {
    std::vector<Case> out;
    std::ifstream in(shared_path("fixtures/reference-bert/cases.jsonl"));
    std::string line;
    while (std::getline(in, line)) {
      auto j = nlohmann::json::parse(line);
      Case c;
      c.ids = torch::tensor(j["input_ids"].get<std::vector<int64_t>>(), torch::kLong).unsqueeze(0);
      c.types = torch::tensor(j["token_type_ids"].get<std::vector<int64_t>>(), torch::kLong).unsqueeze(0);
      c.pred = j["pred"].get<int64_t>();
      EXPECT_EQ(j["attattr"]["m"], 20);
      EXPECT_EQ(j["attattr"]["target"], c.pred);
      c.attattr = json_to_tensor(j["attattr"]["layers"]);
      out.push_back(std::move(c));
    }
    return out;
  }();
  return all;
}

std::string model_dir() { return shared_path("fixtures/reference-bert/model"); }

Transformer load(torch::Dtype dtype) {
  Transformer m = load_model(model_dir());
  m.to(dtype);
  m.set_requires_grad(false);
  m.eval();
  return m;
}

// Error relative to the scale of the reference tensor (entries near zero are not divided by ~0).
double scaled_err(const torch::Tensor& a, const torch::Tensor& ref) {
  auto r = ref.to(torch::kCPU, torch::kFloat64);
  return ((a.to(torch::kCPU, torch::kFloat64) - r).abs().max() / r.abs().max().clamp_min(1e-30)).item<double>();
}

torch::Tensor stacked(const AttributionResult& r) {
  std::vector<torch::Tensor> t;
  for (const auto& la : r.layers) t.push_back(la.attribution.to(torch::kCPU, torch::kFloat64));
  return torch::stack(t);
}

}  // namespace

TEST(AttAttr, FixtureParityAllCasesFloat64AndFloat32) {
  SALIENT_REQUIRE_SHARED(model_dir());
  ASSERT_EQ(cases().size(), 24u);
  for (auto dtype : {torch::kFloat64, torch::kFloat32}) {
    Transformer m = load(dtype);
    double worst = 0;
    for (const Case& c : cases()) {
      AttributionResult r = attribute(m, c.ids, c.types, -1, {});
      EXPECT_EQ(r.target, c.pred);
      ASSERT_EQ(r.layers.size(), (size_t)m.num_layers());
      for (size_t l = 0; l < r.layers.size(); ++l) {
        torch::Tensor ref = c.attattr[l];
        ASSERT_EQ(r.layers[l].attribution.sizes(), ref.sizes());
        worst = std::max(worst, scaled_err(r.layers[l].attribution, ref));
      }
    }
    EXPECT_LT(worst, dtype == torch::kFloat64 ? 1e-9 : 1e-5) << "dtype " << dtype;
  }
}

TEST(AttAttr, FastPathEqualsStraightforwardPath) {
  SALIENT_REQUIRE_SHARED(model_dir());
  for (auto dtype : {torch::kFloat64, torch::kFloat32}) {
    Transformer m = load(dtype);
    for (Rule rule : {Rule::Left, Rule::GaussLegendre, Rule::Trapezoid}) {
      for (size_t i : {0, 5, 17}) {
        const Case& c = cases()[i];
        AttributionOptions o;
        o.rule = rule;
        o.m = 7;
        o.max_batch_mb = 1e-3;  // chunks of one point: exercises the chunk loop
        AttributionResult fast = attribute(m, c.ids, c.types, 1, o);
        o.max_batch_mb = 2048;
        AttributionResult fast_one_chunk = attribute(m, c.ids, c.types, 1, o);
        AttributionResult slow = attribute_straightforward(m, c.ids, c.types, 1, o);
        const double tol = dtype == torch::kFloat64 ? 1e-10 : 1e-5;
        EXPECT_LT(scaled_err(stacked(fast), stacked(slow)), tol) << rule_name(rule) << " case " << i;
        EXPECT_LT(scaled_err(stacked(fast_one_chunk), stacked(slow)), tol) << rule_name(rule) << " case " << i;
        for (size_t l = 0; l < fast.layers.size(); ++l)
          EXPECT_NEAR(fast.layers[l].f_full - fast.layers[l].f_zero, slow.layers[l].f_full - slow.layers[l].f_zero, 1e-6);
      }
    }
  }
}

// Completeness: Σ attributions → F(A) − F(0·A). At m = 100 the trapezoid and Gauss–Legendre
// rules are within 1% on every case and layer (the left Riemann sum is not: its error is O(1/m)
// with a constant set by F'(0) − F'(1), reported by the benchmark).
TEST(AttAttr, CompletenessWithinOnePercentAtM100) {
  SALIENT_REQUIRE_SHARED(model_dir());
  Transformer m = load(torch::kFloat64);
  for (Rule rule : {Rule::Trapezoid, Rule::GaussLegendre}) {
    for (const Case& c : cases()) {
      AttributionOptions o;
      o.m = 100;
      o.rule = rule;
      AttributionResult r = attribute(m, c.ids, c.types, -1, o);
      for (const auto& la : r.layers) {
        const double delta = la.f_full - la.f_zero;
        EXPECT_LE(std::abs(la.completeness_gap()), 0.01 * std::max(std::abs(delta), 1e-3))
            << rule_name(rule) << " layer " << la.layer << " sum " << la.attribution_sum << " delta " << delta;
      }
    }
  }
}

TEST(AttAttr, QuadratureRules) {
  for (Rule rule : {Rule::Left, Rule::Right, Rule::Midpoint, Rule::Trapezoid, Rule::GaussLegendre}) {
    Quadrature q = make_quadrature(rule, 8);
    double wsum = 0;
    for (double w : q.weights) wsum += w;
    EXPECT_NEAR(wsum, 1.0, 1e-14) << rule_name(rule);
    for (double a : q.alphas) EXPECT_TRUE(a >= 0 && a <= 1);
  }
  Quadrature left = make_quadrature(Rule::Left, 4);
  EXPECT_EQ(left.alphas, (std::vector<double>{0, 0.25, 0.5, 0.75}));
  // Gauss–Legendre with m points integrates degree 2m − 1 exactly: ∫0^1 x^7 = 1/8 with m = 4.
  Quadrature gl = make_quadrature(Rule::GaussLegendre, 4);
  double integral = 0;
  for (size_t k = 0; k < gl.alphas.size(); ++k) integral += gl.weights[k] * std::pow(gl.alphas[k], 7);
  EXPECT_NEAR(integral, 0.125, 1e-14);
  for (int m : {1, 2, 3, 10, 64}) {
    Quadrature g = make_quadrature(Rule::GaussLegendre, m);
    for (size_t k = 1; k < g.alphas.size(); ++k) EXPECT_LT(g.alphas[k - 1], g.alphas[k]);
  }
}

// Masking head h with the head mask (on the probabilities) equals removing its contribution:
// zeroing head h's slice of V, which makes its context vector zero.
// Both Taylor forms against central finite differences of the summed cross-entropy in a scale ξ
// of one head's context at one token (a route independent of the implementation's hooks), in
// float64 on three fixture cases with made-up gold labels; and the same whatever the batch size
// (each example weighs the same: the old per-batch mean gave a short last batch more weight).
TEST(AttAttr, TaylorHeadScoresBothFormsAgainstFiniteDifferences) {
  Transformer m = load(torch::kFloat64);
  LabelledSet set;
  for (size_t c = 0; c < 3; ++c) {
    Encoding e;
    e.ids = std::vector<int64_t>(cases()[c].ids.data_ptr<int64_t>(), cases()[c].ids.data_ptr<int64_t>() + cases()[c].ids.numel());
    e.type_ids = std::vector<int64_t>(cases()[c].types.data_ptr<int64_t>(),
                                      cases()[c].types.data_ptr<int64_t>() + cases()[c].types.numel());
    set.encodings.push_back(e);
    set.labels.push_back(int64_t(c % 2));
  }
  const int64_t NL = m.num_layers(), H = m.num_heads();
  // t[example][layer][head][token] by finite differences of the loss in ξ at one (head, token) row.
  torch::Tensor per_token = torch::zeros({NL, H}, torch::kFloat64), per_example = torch::zeros({NL, H}, torch::kFloat64);
  for (size_t c = 0; c < set.encodings.size(); ++c) {
    const Encoding& e = set.encodings[c];
    const int64_t L = static_cast<int64_t>(e.ids.size());
    auto loss_at = [&](int64_t layer, int64_t head, int64_t tok, double xi) {
      torch::NoGradGuard no_grad;
      ForwardRequest req;
      req.input_ids = torch::tensor(e.ids).view({1, -1});
      req.token_type_ids = torch::tensor(e.type_ids).view({1, -1});
      req.hooks.resize(NL);
      torch::Tensor scale = torch::ones({1, H, L, 1}, torch::kFloat64);
      scale[0][head][tok][0] = xi;
      req.hooks[layer].attn_scale = scale;
      torch::Tensor logits = m.forward(req).logits;
      return torch::nn::functional::cross_entropy(logits.cpu(), torch::tensor({set.labels[c]})).item<double>();
    };
    const double h = 1e-6;
    for (int64_t l = 0; l < NL; ++l)
      for (int64_t hd = 0; hd < H; ++hd) {
        double sum = 0;
        for (int64_t i = 0; i < L; ++i) {
          const double t = (loss_at(l, hd, i, 1 + h) - loss_at(l, hd, i, 1 - h)) / (2 * h);
          per_token[l][hd] += std::abs(t);
          sum += t;
        }
        per_example[l][hd] += std::abs(sum);
      }
  }
  auto normalised = [](const torch::Tensor& t) { return t / t.norm(2, -1, true); };
  for (int64_t batch : {1, 2, 32}) {
    TaylorHeadScores got = taylor_head_scores(m, set, batch);
    EXPECT_LT(scaled_err(got.attattr, normalised(per_token)), 1e-6) << "batch " << batch;
    EXPECT_LT(scaled_err(got.michel, normalised(per_example)), 1e-6) << "batch " << batch;
    // The two forms rank differently somewhere (|Σ| ≤ Σ| |, with cancellations).
    EXPECT_GT(scaled_err(got.attattr, got.michel), 1e-3);
  }
}

TEST(AttAttr, ZeroHeadMaskEqualsRemovingTheHead) {
  SALIENT_REQUIRE_SHARED(model_dir());
  Transformer m = load(torch::kFloat64);
  const Case& c = cases()[3];
  torch::NoGradGuard ng;
  for (int64_t layer = 0; layer < m.num_layers(); ++layer) {
    for (int64_t head : {0, 2}) {
      ForwardRequest req;
      req.input_ids = c.ids;
      req.token_type_ids = c.types;
      req.hooks.resize(m.num_layers());
      torch::Tensor mask = torch::ones({m.num_heads()}, torch::kFloat64);
      mask[head] = 0.0;
      req.hooks[layer].head_mask = mask;
      torch::Tensor masked = m.forward(req).logits;

      const int64_t L = c.ids.size(1);
      torch::Tensor ext = m.extended_mask({}, 1, L);
      torch::Tensor h = m.embed(c.ids, c.types, {});
      for (int64_t l = 0; l < layer; ++l) h = m.layer_forward(l, h, ext);
      QKV qkv = m.project_qkv(layer, h);
      torch::Tensor probs = torch::softmax(m.attention_scores(layer, qkv, ext), -1);
      torch::Tensor v = qkv.v.clone();
      v.select(1, head).zero_();
      h = m.finish_layer(layer, h, probs, v);
      torch::Tensor removed = m.classify(m.run_layers(layer + 1, h, ext));
      EXPECT_LT((masked - removed).abs().max().item<double>(), 1e-12);
      EXPECT_GT((masked - m.logits(c.ids, c.types)).abs().max().item<double>(), 1e-6);  // the head mattered
    }
  }
}

TEST(AttAttr, ViewsAreConsistent) {
  SALIENT_REQUIRE_SHARED(model_dir());
  Classifier clf = load_classifier(model_dir());
  clf.model.set_requires_grad(false);
  Encoding e = clf.encode("a charming and often affecting journey", std::string("unflinchingly bleak"));
  AttributionResult r = attribute(clf.model, torch::tensor(e.ids).unsqueeze(0), torch::tensor(e.type_ids).unsqueeze(0), -1, {});
  torch::Tensor hi = head_importance(r);
  EXPECT_EQ(hi.size(0), clf.model.num_layers());
  EXPECT_EQ(hi.size(1), clf.model.num_heads());
  EXPECT_NEAR(hi[1][2].item<double>(), r.layers[1].attribution[2].max().item<double>(), 1e-12);
  TokenFlow tf = token_flow(r.layers[0]);
  WordFlow wf = word_flow(r.layers[0], e.tokens, e.word_ids, e.type_ids, clf.tokenizer);
  double ts = 0, ws = 0, wi = 0;
  for (double x : tf.out) ts += x;
  for (double x : wf.out) ws += x;
  for (double x : wf.in) wi += x;
  EXPECT_NEAR(ts, r.layers[0].attribution_sum, 1e-4);
  EXPECT_NEAR(ws, ts, 1e-4);
  EXPECT_NEAR(wi, ts, 1e-4);
  EXPECT_LT(wf.labels.size(), e.tokens.size());  // "unflinchingly" is several pieces
  EXPECT_NE(std::find(wf.labels.begin(), wf.labels.end(), "unflinchingly"), wf.labels.end());
}

// Word labels are the text of the words, whatever the tokenizer: byte-level BPE's pieces ("Ġ" for
// the space, a multi-byte character split over two pieces) join as WordPiece's "##" pieces do.
TEST(AttAttr, WordFlowLabelsAreWordsForByteLevelBpe) {
  std::vector<std::string> vocab = {"<s>", "<pad>", "</s>", "<unk>", "<mask>"};
  for (int b = 0; b < 256; ++b) vocab.push_back(salient::byte_level::byte_char(static_cast<unsigned char>(b)));
  const std::vector<std::pair<std::string, std::string>> merges = {{"Ġ", "c"}, {"a", "f"}, {"Ġc", "af"}};
  for (const auto& [left, right] : merges) vocab.push_back(left + right);
  const Tokenizer tok = Tokenizer::byte_level_bpe(vocab, merges, TokenizerOptions::roberta());
  const Encoding e = tok.encode("a caf\xc3\xa9");
  ASSERT_EQ(e.tokens, (std::vector<std::string>{"<s>", "a", "Ġcaf", "Ã", "©", "</s>"}));
  LayerAttribution layer;
  layer.attribution = torch::arange(2 * 6 * 6, torch::kFloat64).reshape({2, 6, 6});
  const WordFlow wf = word_flow(layer, e.tokens, e.word_ids, e.type_ids, tok);
  EXPECT_EQ(wf.labels, (std::vector<std::string>{"<s>", "a", "caf\xc3\xa9", "</s>"}));
  const TokenFlow tf = token_flow(layer);
  EXPECT_DOUBLE_EQ(wf.out[2], tf.out[2] + tf.out[3] + tf.out[4]);
  EXPECT_DOUBLE_EQ(wf.in[2], tf.in[2] + tf.in[3] + tf.in[4]);
}

// Hand-made [3 layers, 4 tokens] attribution: root = token 1 (largest row sum); layer 1 (the
// second-to-last) gives 1→2; layer 0 gives 2→3 (2 is expandable) and 3→0; 1→2 in layer 0 is a
// repeat, 2→1 is below τ.
TEST(AttAttr, TreeOnHandMadeAttribution) {
  torch::Tensor a = torch::zeros({3, 4, 4}, torch::kFloat64);
  a[1][1][2] = 1.0;
  a[0][1][2] = 0.9;
  a[0][2][3] = 1.0;
  a[0][3][0] = 0.5;
  a[0][2][1] = 0.3;
  a[2][3][3] = 0.2;  // the last layer is not used by the tree (only by the root choice)
  AttributionTree t = build_tree(a, 0.4, 0.4);
  EXPECT_EQ(t.root, 1);
  EXPECT_EQ(t.top_layer, 1);
  ASSERT_EQ(t.edges.size(), 3u);
  EXPECT_EQ(std::make_tuple(t.edges[0].from, t.edges[0].to, t.edges[0].layer), std::make_tuple(1L, 2L, 1L));
  EXPECT_EQ(std::make_tuple(t.edges[1].from, t.edges[1].to, t.edges[1].layer), std::make_tuple(2L, 3L, 0L));
  EXPECT_EQ(std::make_tuple(t.edges[2].from, t.edges[2].to, t.edges[2].layer), std::make_tuple(3L, 0L, 0L));
  EXPECT_NEAR(t.edges[2].weight, 0.5, 1e-12);
  EXPECT_EQ(t.state, (std::vector<int>{0, 1, 1, 1}));
  // A higher threshold on the top layer removes the root's child; the root stays expandable, so
  // (as in the original) the descent grows the tree from it in layer 0 instead.
  AttributionTree t2 = build_tree(a, 0.4, 1.0);
  ASSERT_EQ(t2.edges.size(), 3u);
  EXPECT_EQ(std::make_tuple(t2.edges[0].from, t2.edges[0].to, t2.edges[0].layer), std::make_tuple(1L, 2L, 0L));
  EXPECT_NEAR(t2.edges[0].weight, 0.9, 1e-12);
  // τ = 0.6 drops 3→0 (0.5).
  AttributionTree t3 = build_tree(a, 0.6, 0.6);
  EXPECT_EQ(t3.edges.size(), 2u);
}

TEST(AttAttr, BadArgumentsGiveOneLineErrors) {
  SALIENT_REQUIRE_SHARED(model_dir());
  Transformer m = load(torch::kFloat32);
  const Case& c = cases()[0];
  auto expect_error = [&](const std::function<void()>& fn, const std::string& needle) {
    try {
      fn();
      ADD_FAILURE() << "no error, expected: " << needle;
    } catch (const salient::Error& e) {
      std::string msg = e.what();
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    }
  };
  AttributionOptions o;
  o.layers = {2};
  expect_error([&] { attribute(m, c.ids, c.types, -1, o); }, "--layers: layer 2 out of range");
  o.layers = {-1};
  expect_error([&] { attribute(m, c.ids, c.types, -1, o); }, "--layers");
  o = {};
  o.m = 0;
  expect_error([&] { attribute(m, c.ids, c.types, -1, o); }, "--m");
  o.m = -3;
  expect_error([&] { attribute_straightforward(m, c.ids, c.types, -1, o); }, "--m");
  o = {};
  expect_error([&] { attribute(m, c.ids, c.types, 2, o); }, "--target: class 2 out of range");
  torch::Tensor long_ids = torch::full({1, m.config().max_tokens() + 1}, 1000, torch::kLong);
  expect_error([&] { attribute(m, long_ids, {}, -1, o); }, "at most");
  expect_error([] { parse_rule("simpson"); }, "--rule");
  o.rule = Rule::Trapezoid;
  o.m = 1;
  expect_error([&] { attribute(m, c.ids, c.types, -1, o); }, "--m");
}

#ifdef SALIENT_BIN
TEST(AttAttrCli, AttributeWritesJsonLinesAndHtml) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const std::string dir = "/tmp/salient_attattr_cli_" + std::to_string(::getpid());
  make_dirs(dir);
  write_file_atomic(dir + "/in.jsonl", "{\"text\": \"a charming journey\"}\nbleak and desperate\n");
  std::string cmd = std::string(SALIENT_BIN) + " --quiet --threads 1 attattr attribute --model " + model_dir() +
                    " --m 5 --rule gauss --layers 1 --html " + dir + "/view.html < " + dir + "/in.jsonl > " + dir +
                    "/out.jsonl 2> " + dir + "/err.txt";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(dir + "/err.txt");
  std::ifstream in(dir + "/out.jsonl");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["m"], 5);
    EXPECT_EQ(j["rule"], "gauss");
    EXPECT_EQ(j["layers"].size(), 1u);
    EXPECT_EQ(j["layer_ids"][0], 1);
    EXPECT_EQ(j["layers"][0].size(), 4u);  // heads
    EXPECT_EQ(j["layers"][0][0].size(), j["tokens"].size());
    EXPECT_TRUE(j["completeness"][0].contains("gap"));
    ++n;
  }
  EXPECT_EQ(n, 2);
  EXPECT_NE(read_file(dir + "/view.html").find("<canvas"), std::string::npos);
  // A bad layer is a one-line error and a non-zero exit.
  cmd = std::string(SALIENT_BIN) + " --quiet attattr attribute --model " + model_dir() + " --layers 7 < " + dir +
        "/in.jsonl > /dev/null 2> " + dir + "/err.txt";
  EXPECT_NE(std::system(cmd.c_str()), 0);
  std::string err = read_file(dir + "/err.txt");
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("--layers"), std::string::npos) << err;
}
#endif

// A head that reads a scalar mix of every layer (salient_pooling scalar_mix, the SMaT authors'
// pooling) also reads the states below the attributed layer: the fast path, which re-runs only the
// layers above it, equals the straightforward one (a full forward pass with the attention
// replaced) and stays complete.
TEST(AttAttr, ScalarMixHeadFastPathEqualsStraightforwardAndIsComplete) {
  SALIENT_REQUIRE_SHARED(model_dir());
  Transformer ref = load(torch::kFloat64);
  ModelConfig cfg = ref.config();
  cfg.pooling = "scalar_mix";
  Transformer m(cfg, 5);
  std::map<std::string, torch::Tensor> w;
  for (const auto& name : m.expected_weight_names())
    w[name] = (ref.weights().count(name) ? ref.weights().at(name) : m.weights().at(name)).to(torch::kFloat64);
  torch::manual_seed(8);
  w[kScalarMixCoefficients] = torch::randn({m.num_layers() + 1}, torch::kFloat64);
  m.set_weights(w);
  m.set_requires_grad(false);
  for (size_t i : {1, 9}) {
    const Case& c = cases()[i];
    AttributionOptions o;
    o.rule = Rule::GaussLegendre;
    o.m = 7;
    o.max_batch_mb = 1e-3;  // chunks of one point
    AttributionResult fast = attribute(m, c.ids, c.types, 0, o);
    AttributionResult slow = attribute_straightforward(m, c.ids, c.types, 0, o);
    EXPECT_LT(scaled_err(stacked(fast), stacked(slow)), 1e-10) << "case " << i;
    o.m = 100;
    for (const auto& la : attribute(m, c.ids, c.types, -1, o).layers) {
      const double delta = la.f_full - la.f_zero;
      EXPECT_LE(std::abs(la.completeness_gap()), 0.01 * std::max(std::abs(delta), 1e-3)) << "layer " << la.layer;
    }
  }
}

// Pruning curves resume: MaskAccuracies evaluates a mask once (the orderings share their end
// points), keeps each value in its file, reads them back on a rerun with the same settings (a
// value planted in the file is what the rerun returns: it was read, not recomputed), drops a
// truncated last line, and refuses a file written with other settings.
TEST(AttAttr, PruningAccuraciesAreKeptOnceAndResume) {
  SALIENT_REQUIRE_SHARED(model_dir());
  Classifier clf = load_classifier(model_dir());
  LabelledSet data;
  for (const char* t : {"a charming journey", "bleak and dull", "an utterly gorgeous film", "it drags"}) {
    data.encodings.push_back(clf.encode(t));
    data.labels.push_back(std::string(t).find("charming") != std::string::npos || std::string(t).find("gorgeous") != std::string::npos);
  }
  const int64_t H = clf.model.num_layers() * clf.model.num_heads();
  torch::Tensor by_index = torch::arange(H, torch::kFloat64).view({clf.model.num_layers(), clf.model.num_heads()});
  torch::Tensor reversed = -by_index;
  const auto plain = pruning_curve(clf.model, data, by_index, 4);
  const std::string file = ::testing::TempDir() + "/prune.partial.jsonl";
  std::remove(file.c_str());
  const nlohmann::json settings = {{"model", model_dir()}, {"eval", "four sentences"}};
  size_t first_run = 0;
  {
    MaskAccuracies acc(file, settings);
    const auto a = pruning_curve(clf.model, data, by_index, 4, &acc);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].accuracy, plain[i].accuracy);
    pruning_curve(clf.model, data, reversed, 4, &acc);
    first_run = acc.evaluated();
    EXPECT_EQ(first_run, 2u * 5u - 2u);  // 0% and 100% are the same masks in both orderings
  }
  // Plant a value for the all-heads mask and leave a truncated line behind it.
  {
    std::ofstream out(file, std::ios::app);
    out << nlohmann::json{{"mask", std::string(static_cast<size_t>(H - 1), '1') + "0"}, {"accuracy", 0.125}}.dump() << "\n";
    out << "{\"mask\": \"01";
  }
  {
    MaskAccuracies acc(file, settings);
    const auto again = pruning_curve(clf.model, data, by_index, 4, &acc);
    EXPECT_EQ(acc.evaluated(), 0u);
    for (size_t i = 0; i < again.size(); ++i) EXPECT_EQ(again[i].accuracy, plain[i].accuracy);
    torch::Tensor last_off = torch::ones({clf.model.num_layers(), clf.model.num_heads()}, torch::kFloat64);
    last_off[clf.model.num_layers() - 1][clf.model.num_heads() - 1] = 0.0;
    EXPECT_EQ(acc(clf.model, data, last_off), 0.125);
    acc.remove_file();
  }
  EXPECT_FALSE(std::ifstream(file).good());
  { MaskAccuracies acc(file, settings); }
  const std::string error = test::error_of([&] { MaskAccuracies(file, {{"model", "another"}, {"eval", "four sentences"}}); });
  EXPECT_NE(error.find(file), std::string::npos) << error;
  EXPECT_NE(error.find("model"), std::string::npos) << error;
  std::remove(file.c_str());
}

// Trigger insertion finds the segments by the tokenizer's own specials and framing: BERT's [CLS] A
// [SEP] B [SEP] and XLM-R's (RoBERTa's) <s> A </s></s> B </s> (tests/data/sentencepiece's models).
TEST(AttAttrTriggers, SegmentsFollowTheTokenizersFraming) {
  for (const char* family : {"xlmr", "deberta"}) {
    const Tokenizer tok = Tokenizer::from_dir(std::string(SALIENT_TEST_DATA) + "/sentencepiece/" + family);
    const Encoding e = tok.encode("the movie is great", std::string("a pair"));
    TriggerPattern p;
    p.set_example(e, tok);
    const int64_t first_sep = std::find(e.ids.begin(), e.ids.end(), tok.sep_id()) - e.ids.begin();
    EXPECT_EQ(p.seg_pos, first_sep) << family;
    const bool xlmr = std::string(family) == "xlmr";
    EXPECT_EQ(p.b_start, first_sep + (xlmr ? 2 : 1)) << family;
    EXPECT_EQ(e.type_ids[static_cast<size_t>(p.b_start)], xlmr ? 0 : 1) << family;  // B's first piece
    EXPECT_FALSE(p.structural[static_cast<size_t>(p.b_start)]);
    for (size_t i = 0; i < e.ids.size(); ++i)
      EXPECT_EQ(p.structural[i], e.ids[i] == tok.cls_id() || e.ids[i] == tok.sep_id()) << family << " " << i;
    // the top positions on specials are never inserted
    p.pos1 = {0, first_sep};
    p.pos2 = {1, p.b_start};
    p.score1 = 1.0;
    p.score2 = 0.5;
    EXPECT_EQ(p.positions(), (std::vector<int64_t>{1, p.b_start})) << family;
  }
}
