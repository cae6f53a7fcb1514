// The public API (include/salient/salient.h) against the CLI on the fixture model: the same numbers
// through both, and one-line errors for bad arguments.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <sstream>

#include "salient/salient.h"
#include "salient/studies.h"
#include "explain/explainer.h"
#include "model/classifier.h"
#include "model/windows.h"
#include "util/runtime.h"
#include "util/tensor_memory.h"
#include "test_util.h"

using namespace salient;
using salient::test::error_of;
using salient::test::run_salient;
using salient::test::json_lines;
using salient::test::shared_path;

namespace {

std::string model_dir() { return shared_path("fixtures/reference-bert/model"); }

const std::vector<TextInput> kInputs = {{"a charming and moving journey", std::nullopt},
                                        {"bad", std::string("very bad indeed")}};
const std::string kInputLines =
    "a charming and moving journey\n{\"text\": \"bad\", \"text_pair\": \"very bad indeed\"}\n";

}  // namespace

TEST(Api, PredictEqualsTheCli) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Model m = Model::load(model_dir());
  const std::vector<Prediction> got = m.predict(kInputs);
  auto r = run_salient("--quiet predict --model " + model_dir(), kInputLines);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto want = json_lines(r.out);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].label, want[i]["label"]);
    EXPECT_EQ(got[i].to_json(), want[i]);  // the same fields and the same numbers
  }
  // Batched and one by one agree.
  const std::vector<Prediction> single = m.predict(kInputs, 1);
  for (size_t i = 0; i < got.size(); ++i)
    for (size_t k = 0; k < got[i].logits.size(); ++k) EXPECT_NEAR(single[i].logits[k], got[i].logits[k], 1e-5);
  EXPECT_EQ(m.labels().size(), 2u);
  EXPECT_EQ(m.tokenize({"a charming journey", std::nullopt}).tokens.front(), "[CLS]");
}

TEST(Api, ExplainEqualsTheCliAndChecksItsArguments) {
  SALIENT_REQUIRE_SHARED(model_dir());
  // The CLI's thread count (every core): another count changes OpenBLAS's float32 blocking, and
  // LibTorch's own default (physical cores) differs from it on some machines.
  set_threads(0);
  const Model m = Model::load(model_dir());
  const auto got = m.explain(kInputs, "ig", {{"steps", 16}});
  auto r = run_salient("--quiet explain --model " + model_dir() + " --method ig --steps 16 --format json", kInputLines);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto want = json_lines(r.out);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].tokens, want[i]["tokens"].get<std::vector<std::string>>());
    EXPECT_EQ(got[i].target, want[i]["target"].get<int64_t>());
    EXPECT_EQ(got[i].target_label, want[i]["target_label"].get<std::string>());
    EXPECT_EQ(got[i].params, want[i]["params"]);
    ASSERT_EQ(got[i].scores.size(), want[i]["token_scores"].size());
    for (size_t t = 0; t < got[i].scores.size(); ++t)
      EXPECT_NEAR(got[i].scores[t], want[i]["token_scores"][t].get<double>(), 1e-9);
    // The typed value writes the CLI's object, key for key (scores to 1e-9: another thread count
    // is not at play here, but the CLI's own run is another process), and reads back unchanged.
    nlohmann::json mine = got[i].to_json();
    EXPECT_EQ(mine["words"], want[i]["words"]);
    mine["token_scores"] = want[i]["token_scores"];
    mine["word_scores"] = want[i]["word_scores"];
    mine["extras"] = want[i]["extras"];
    EXPECT_EQ(mine, want[i]);
    EXPECT_EQ(Explanation::from_json(got[i].to_json()).to_json(), got[i].to_json());
  }
  // A fixed target by label name, and the explained output.
  const auto second = m.explain(kInputs, "saliency", {}, m.labels()[1], "logit");
  EXPECT_EQ(second[0].target, 1);
  ASSERT_TRUE(second[0].output.has_value());
  EXPECT_EQ(*second[0].output, ModelOutput::Logit);
  EXPECT_EQ(second[0].to_json()["output"], "logit");
  // Reading an explanation back: a missing or mistyped field is an error naming it.
  nlohmann::json bad = second[0].to_json();
  bad.erase("target");
  EXPECT_NE(error_of([&] { Explanation::from_json(bad); }).find("'target' is missing"), std::string::npos);
  bad = second[0].to_json();
  bad["token_scores"] = {1.0};
  EXPECT_NE(error_of([&] { Explanation::from_json(bad); }).find("token_scores for"), std::string::npos);
  bad = second[0].to_json();
  bad["output"] = "probability";
  EXPECT_NE(error_of([&] { Explanation::from_json(bad); }).find("'output'"), std::string::npos);
  bad = second[0].to_json();
  bad.erase("word_scores");
  EXPECT_NE(error_of([&] { Explanation::from_json(bad); }).find("go together"), std::string::npos);
  EXPECT_NE(error_of([&] { m.explain(kInputs, "ig", {{"samples", 10}}); }).find("samples"), std::string::npos);
  EXPECT_NE(error_of([&] { m.explain(kInputs, "ig", {{"steps", 1}}); }).find("steps"), std::string::npos);
  EXPECT_NE(error_of([&] { m.explain(kInputs, "no_such_method"); }).find("no_such_method"), std::string::npos);
  EXPECT_NE(error_of([&] { m.explain(kInputs, "ig", {}, "maybe"); }).find("maybe"), std::string::npos);
  EXPECT_NE(error_of([&] { m.predict(kInputs, 0); }).find("batch_size"), std::string::npos);
  // Every registered explainer is listed with its parameters.
  EXPECT_EQ(methods().size(), explainer_names().size());
  bool has_ig = false;
  for (const auto& info : methods())
    if (info.name == "ig") has_ig = !info.params.empty();
  EXPECT_TRUE(has_ig);
}

TEST(Api, EvaluateEqualsTheCli) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const std::string file = salient::test::temp_dir("api_eval") + "/data.jsonl";
  write_file_atomic(file, "{\"text\": \"a charming journey\", \"label\": 1}\n{\"text\": \"dull and bad\", \"label\": 0}\n"
                          "{\"text\": \"not good\", \"label\": 0}\n");
  const nlohmann::json got = Model::load(model_dir()).evaluate(file);
  auto r = run_salient("--quiet evaluate --model " + model_dir() + " --data " + file);
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json want = nlohmann::json::parse(r.out);
  EXPECT_EQ(got["examples"], 3);
  EXPECT_EQ(got["accuracy"], want["accuracy"]);
  EXPECT_EQ(got["mcc"], want["mcc"]);
}

TEST(Api, ForwardGivesEveryStateAndThePredictionsLogits) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Model m = Model::load(model_dir());
  ASSERT_TRUE(m.has_task_head());
  std::vector<Encoding> encs;
  for (const auto& in : kInputs) encs.push_back(m.tokenize(in));
  encs.push_back(m.tokenize({"bad", std::nullopt}));  // shorter than the others: padded
  const ForwardOutputs all = m.forward(encs);
  const int64_t layers = m.config().num_hidden_layers, longest = all.input_ids.size(1);
  ASSERT_EQ(static_cast<int64_t>(all.hidden_states.size()), layers + 1);
  ASSERT_EQ(static_cast<int64_t>(all.attentions.size()), layers);
  EXPECT_EQ(all.attentions[0].sizes(), torch::IntArrayRef({3, m.config().num_attention_heads, longest, longest}));
  const std::vector<Prediction> preds = m.predict(encs);
  for (size_t i = 0; i < preds.size(); ++i)
    for (size_t c = 0; c < preds[i].logits.size(); ++c)
      EXPECT_NEAR(all.logits[i][c].item<double>(), preds[i].logits[c], 1e-5);
  // One at a time, in batches of one: the same states at the real tokens, zeros in the padding.
  const ForwardOutputs ones = m.forward(encs, true, false, 1);
  EXPECT_TRUE(ones.attentions.empty());
  const int64_t n = static_cast<int64_t>(encs[2].ids.size());
  ASSERT_LT(n, longest);
  EXPECT_TRUE(torch::allclose(ones.hidden_states.back()[2].slice(0, 0, n), all.hidden_states.back()[2].slice(0, 0, n),
                              1e-5, 1e-5));
  EXPECT_EQ(ones.hidden_states.back()[2].slice(0, n).abs().max().item<float>(), 0.f);
  EXPECT_EQ(ones.attention_mask[2].sum().item<int64_t>(), n);
  EXPECT_NE(error_of([&] { m.forward({}); }).find("inputs: empty"), std::string::npos);
  EXPECT_NE(error_of([&] { m.forward(encs, true, true, 0); }).find("batch_size: must be positive"), std::string::npos);
}

TEST(Api, ABaseEncoderLoadsForItsStatesAndRefusesToPredict) {
  SALIENT_REQUIRE_SHARED(model_dir());
  // The fixture's weights without the classifier: what a Hugging Face BertModel folder holds.
  const std::string dir = salient::test::temp_dir("api_base_encoder");
  Transformer t = load_model(model_dir());
  SafetensorsFile file;
  for (const auto& [name, w] : t.weights())
    if (name.rfind("classifier.", 0) != 0) file.tensors[name] = tensor_to_data(w);  // no "bert." prefix
  write_safetensors(dir + "/model.safetensors", file);
  for (const char* f : {"config.json", "vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"})
    std::filesystem::copy_file(model_dir() + "/" + f, dir + "/" + f, std::filesystem::copy_options::overwrite_existing);
  const Model base = Model::load(dir);
  EXPECT_FALSE(base.has_task_head());
  const Model full = Model::load(model_dir());
  const std::vector<Encoding> encs = {full.tokenize(kInputs[0])};
  const ForwardOutputs a = base.forward(encs), b = full.forward(encs);
  EXPECT_FALSE(a.logits.defined());
  EXPECT_TRUE(torch::equal(a.hidden_states.back(), b.hidden_states.back()));
  const std::string err = error_of([&] { base.predict(kInputs); });
  EXPECT_NE(err.find("no classification head"), std::string::npos) << err;
  EXPECT_NE(err.find("salient train --init " + dir), std::string::npos) << err;
  EXPECT_NE(error_of([&] { base.explain(kInputs, "saliency"); }).find("no classification head"), std::string::npos);
  EXPECT_NE(error_of([&] { load_classifier(dir); }).find("no classification head"), std::string::npos);
  auto r = run_salient("info --model " + dir + " --json", "");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out)["model"]["task_head"].get<bool>());

  // The same encoder in an old sentence-transformers folder: modules.json on top, the model's
  // files in 0_Transformer/ (as sentence-transformers < 2.3 saved them).
  const std::string st = salient::test::temp_dir("api_st_layout");
  std::filesystem::remove_all(st + "/0_Transformer");
  std::filesystem::copy(dir, st + "/0_Transformer");
  salient::write_file_atomic(st + "/modules.json",
                             R"([{"idx": 0, "name": "0", "path": "0_Transformer", "type": "sentence_transformers.models.Transformer"},
                                 {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])");
  const Model nested = Model::load(st);
  EXPECT_TRUE(torch::equal(nested.forward({nested.tokenize(kInputs[0])}).hidden_states.back(), b.hidden_states.back()));
  r = run_salient("info --model " + st + " --json", "");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["model"]["heads"], full.classifier().model.config().num_attention_heads)
      << r.out;
}

TEST(Api, LongInputsAreReadAsWindowsWhoseLogitsAndScoresCombine) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Model m = Model::load(model_dir());  // 128 positions: a window holds 126 pieces
  std::string review;
  for (int i = 0; i < 30; ++i) review += "the acting is wooden but the score soars and the ending is moving . ";
  const TextInput long_input{review, std::nullopt};
  const Encoding whole = m.classifier().tokenizer.encode(review, std::nullopt, 0);
  const int64_t pieces = static_cast<int64_t>(whole.ids.size()) - 2;
  ASSERT_GT(pieces, 300);

  // The windows: [CLS] + 126 pieces + [SEP], starts a stride apart, the last one ending at the end.
  const std::vector<Window> w = split_windows(whole, 128, 50, "stride");
  ASSERT_GT(w.size(), 2u);
  for (size_t k = 0; k < w.size(); ++k) {
    EXPECT_EQ(w[k].encoding.ids.size(), 128u);
    EXPECT_EQ(w[k].encoding.ids.front(), whole.ids.front());
    EXPECT_EQ(w[k].encoding.ids.back(), whole.ids.back());
    EXPECT_EQ(w[k].encoding.ids[1], whole.ids[1 + w[k].start]);
    if (k + 1 < w.size()) EXPECT_EQ(w[k].start, static_cast<int64_t>(k) * 50);
  }
  EXPECT_EQ(w.back().start, pieces - 126);
  EXPECT_EQ(split_windows(m.tokenize({"a short one", std::nullopt}), 128, 0, "stride").size(), 1u);
  EXPECT_NE(error_of([&] { split_windows(whole, 128, 127, "stride"); }).find("stride: must be in [1, 126]"),
            std::string::npos);

  // Logits: the mean of the windows' own (stride 0: half a window, 63).
  const std::vector<Window> halves = split_windows(whole, 128, 0, "stride");
  std::vector<Encoding> encs;
  for (const auto& x : halves) encs.push_back(x.encoding);
  const std::vector<Prediction> per_window = m.predict(encs);
  const Prediction p = m.predict({long_input}, 32, {true, 0})[0];
  EXPECT_EQ(p.windows, static_cast<int64_t>(halves.size()));
  for (size_t c = 0; c < p.logits.size(); ++c) {
    double mean = 0;
    for (const auto& q : per_window) mean += q.logits[c] / per_window.size();
    EXPECT_NEAR(p.logits[c], mean, 1e-5);
  }
  // A short input reads as one window: the prediction without windows.
  const Prediction short_w = m.predict({kInputs[0]}, 32, {true, 0})[0], short_t = m.predict({kInputs[0]})[0];
  EXPECT_EQ(short_w.windows, 1);
  EXPECT_NEAR(short_w.logits[0], short_t.logits[0], 1e-5);

  // Scores: each window explained for the whole input's class, averaged where windows overlap.
  const nlohmann::json j = m.explain({long_input}, "saliency", nullptr, "pred", "", 8, 0, {true, 0})[0].to_json();
  ASSERT_EQ(j["token_scores"].size(), whole.ids.size());
  EXPECT_EQ(j["target"].get<int64_t>(), p.label_id);
  ASSERT_EQ(j["extras"]["windows"].size(), halves.size());
  auto explainer = make_explainer("saliency");
  std::vector<const Encoding*> ptrs;
  for (const auto& x : halves) ptrs.push_back(&x.encoding);
  const std::vector<Explanation> ex =
      explainer->explain(m.classifier(), ptrs, std::vector<int64_t>(halves.size(), p.label_id), ExplainOptions{});
  // Piece 10 is in the first window only; piece 70 in the first two (starts 0 and 63).
  EXPECT_NEAR(j["token_scores"][11].get<double>(), ex[0].scores[11], 1e-6);
  EXPECT_NEAR(j["token_scores"][71].get<double>(), (ex[0].scores[71] + ex[1].scores[71 - 63]) / 2, 1e-6);

  EXPECT_NE(error_of([&] { m.predict({kInputs[1]}, 32, {true, 0}); }).find("text_pair: windows read one text"),
            std::string::npos);
  EXPECT_NE(error_of([&] { m.predict({long_input}, 32, {false, 10}); }).find("stride: only with windows"),
            std::string::npos);
}

TEST(Api, StudyOptionsAreCheckedByName) {
  // Options go by name with JSON values: an unknown name or a value of the wrong type is an
  // OptionError naming it, before anything is read or trained.
  auto option_error = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const OptionError& e) {
      return e.what();
    } catch (const std::exception& e) {
      return std::string("not an OptionError: ") + e.what();
    }
    return "no error";
  };
  const std::string tmp = (std::filesystem::temp_directory_path() / "salient_api_study_options").string();
  EXPECT_NE(option_error([&] { sst_train("mnist:train", "mnist:dev", tmp, {{"learning_rate", 0.1}}); })
                .find("sst.train: unknown option 'learning_rate' (valid: "),
            std::string::npos);
  EXPECT_NE(option_error([&] { sst_train("mnist:train", "mnist:dev", tmp, {{"lr", "fast"}}); })
                .find("option 'lr' has the wrong type (string)"),
            std::string::npos);
  EXPECT_NE(option_error([&] { sst_evaluate("mnist:test", tmp, {{"limit", 2.5}}); }).find("'limit' has the wrong type"),
            std::string::npos);
  EXPECT_NE(option_error([&] { expnet_train({"sst2=none"}, tmp, {{"seed", -1}}); }).find("'seed' has the wrong type"),
            std::string::npos);
  EXPECT_NE(option_error([&] { smat_train({{"teachr", "m"}}, 10, 0, tmp); }).find("smat: unknown option 'teachr'"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(tmp));
  // A value in range for its type but invalid for the option: the library's own error, not an OptionError.
  EXPECT_NE(error_of([&] { smat_train({{"early_stopping", "never"}}, 10, 0, tmp); }).find("early_stopping"),
            std::string::npos);
  const std::vector<std::string> names = option_names("sst.train");
  EXPECT_NE(std::find(names.begin(), names.end(), "lr"), names.end());
  EXPECT_NE(error_of([&] { option_names("sst.nothing"); }).find("sst.nothing"), std::string::npos);
}

// Model::memory_estimate is an upper bound on what each method's tensors hold at once (counted
// exactly by a counting CPU allocator), and not a loose one: the rows' part of it within 3x of
// what was measured. Lengths up to the fixture's 128 positions; passes filled to the token budget.
TEST(MemoryEstimate, BoundsWhatEveryMethodHolds) {
  const Model model = Model::load(model_dir());
  tensor_memory::install();
  const std::vector<std::string> words = {"a", "charming", "and", "moving", "journey", "through", "memory"};
  const int threads = current_threads();
  for (const ExplainerInfo& info : methods()) {
    if (info.family == "learned") continue;  // they need a trained artifact; their passes are attentions'
    // IG's fused chunks run on every thread at once: checked on one thread and on two, and at the
    // default budget, where two chunks of IG's own cap fill it.
    const bool ig = info.name == "ig";
    for (const auto& [t, budget] : ig ? std::vector<std::pair<int, int64_t>>{{1, 2048}, {2, 2048}, {2, 4096}}
                                      : std::vector<std::pair<int, int64_t>>{{threads, 2048}}) {
      set_threads(t);
      for (const int64_t pieces : {8, 60, 126}) {
        std::string text;
        for (size_t i = 0; static_cast<int64_t>(model.tokenize({text + " " + words[i % words.size()]}).ids.size()) <= pieces; ++i)
          text += (text.empty() ? "" : " ") + words[i % words.size()];
        const int64_t tokens = static_cast<int64_t>(model.tokenize({text}).ids.size());
        const int64_t before = tensor_memory::current();
        tensor_memory::reset_peak();
        model.explain({{text}}, info.name, nlohmann::json::object(), "pred", "", 8, 0, {}, budget);
        const int64_t measured = tensor_memory::peak() - before;
        const int64_t estimate = model.memory_estimate(tokens, info.name, nlohmann::json::object(), budget).request_bytes;
        const std::string at = fmt::format("{} at {} tokens, {} threads, budget {}", info.name, tokens, t, budget);
        EXPECT_LE(measured, estimate) << at;
        EXPECT_LE(estimate - (4 << 20), 3 * measured) << at;
      }
    }
  }
  set_threads(threads);
  EXPECT_GT(model.memory_estimate(100, "lime").request_bytes, model.memory_estimate(100, "lime", {}, 256).request_bytes);
  EXPECT_GT(model.memory_estimate(100, "ig").weight_bytes, 0);
  EXPECT_NE(error_of([&] { model.memory_estimate(100, "limes"); }).find("limes"), std::string::npos);
  EXPECT_NE(error_of([&] { model.memory_estimate(100, "lime", {{"samples", 0}}); }).find("--samples"), std::string::npos);
  EXPECT_NE(error_of([&] { model.memory_estimate(0, "lime"); }).find("tokens"), std::string::npos);
}
