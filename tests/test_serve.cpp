// The JSON API of `salient serve` without HTTP (serve/api.h) on the reference model: every answer
// equals the public API's own, and bad requests are 4xx errors with one-line messages. The HTTP
// server, concurrency, shutdown and the page in Chromium are tested in tests/python/test_serve.py.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include "serve/api.h"
#include "smat/head_explainer.h"
#include "util/io.h"
#include "test_util.h"

using namespace salient;
using salient::serve::Api;
using salient::serve::ApiError;
using salient::test::shared_path;

namespace {

std::string model_dir() { return shared_path("fixtures/reference-bert/model"); }

// The status and message of the ApiError (or 400 for a library Error, as the server maps it).
std::pair<int, std::string> failure_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ApiError& e) {
    return {e.status(), e.what()};
  } catch (const Error& e) {
    return {400, e.what()};
  }
  ADD_FAILURE() << "expected an error";
  return {0, ""};
}

}  // namespace

TEST(ServeApi, AnswersEqualThePublicApi) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Api api({model_dir(), model_dir()}, {}, "");
  const Model m = Model::load(model_dir());
  // Two directories with the same name are told apart.
  const nlohmann::json models = api.models()["models"];
  ASSERT_EQ(models.size(), 2u);
  EXPECT_EQ(models[0]["name"], "model");
  EXPECT_EQ(models[1]["name"], "model-2");
  EXPECT_EQ(models[0]["labels"], m.labels());
  EXPECT_EQ(api.methods()["methods"].size(), methods().size());

  const nlohmann::json pred = api.predict({{"text", "a charming and moving journey"}});
  const Prediction want = m.predict(std::vector<TextInput>{{"a charming and moving journey", std::nullopt}})[0];
  EXPECT_EQ(pred["label"], want.label);
  EXPECT_EQ(pred["probs"], want.probs);
  EXPECT_EQ(pred["tokens"].front(), "[CLS]");

  const nlohmann::json body = {{"model", "model-2"},
                               {"text", "a charming and moving journey"},
                               {"methods", {{{"name", "ig"}, {"params", {{"steps", 8}}}}, "saliency"}},
                               {"target", 0}};
  const nlohmann::json got = api.explain(body);
  ASSERT_EQ(got["explanations"].size(), 2u);
  const TextInput in{"a charming and moving journey", std::nullopt};
  const nlohmann::json ig = m.explain({in}, "ig", {{"steps", 8}}, "0")[0].to_json();
  const nlohmann::json& e = got["explanations"][0];
  EXPECT_EQ(e["target"], 0);
  EXPECT_EQ(e["tokens"], ig["tokens"]);
  EXPECT_EQ(e["token_scores"], ig["token_scores"]);
  EXPECT_EQ(e["word_scores"], ig["word_scores"]);
  const std::vector<double> ig_scores = ig["token_scores"].get<std::vector<double>>();
  const nlohmann::json faith = m.faithfulness(in, ig_scores, 0, "prob", 0, "mask", {}, "eraser");
  EXPECT_EQ(e["faithfulness"], faith);
  // The server's per-input numbers take ERASER's AOPC bins (1, 5, 10, 20, 50% of the 5 removable
  // tokens: k = 0, 0, 0, 1, 2), without the deletion / insertion curves; "deciles" asks for the
  // benchmark's.
  EXPECT_EQ(faith["aopc_bins"], "eraser");
  EXPECT_FALSE(faith.contains("deletion_auc"));
  const double comp1 = m.faithfulness(in, ig_scores, 0, "prob", 1)["comprehensiveness"].get<double>(),
               comp2 = m.faithfulness(in, ig_scores, 0, "prob", 2)["comprehensiveness"].get<double>();
  EXPECT_NEAR(faith["aopc_comprehensiveness"].get<double>(), (comp1 + comp2) / 2, 1e-12);
  nlohmann::json deciles_body = body;
  deciles_body["aopc_bins"] = "deciles";
  EXPECT_EQ(api.explain(deciles_body)["explanations"][0]["faithfulness"], m.faithfulness(in, ig_scores, 0));
  EXPECT_TRUE(m.faithfulness(in, ig_scores, 0).contains("deletion_auc"));
  deciles_body["aopc_bins"] = "percent";
  EXPECT_EQ(failure_of([&] { api.explain(deciles_body); }).first, 400);
  EXPECT_THROW(m.faithfulness(in, ig_scores, 0, "prob", 0, "mask", {}, "percent"), Error);
  EXPECT_GE(e["seconds"].get<double>(), 0.0);
  EXPECT_EQ(got["explanations"][1]["method"], "saliency");
  // Comprehensiveness by hand: the model's probability of class 0 minus that with the top-20%
  // removable tokens masked (one of five words here).
  EXPECT_EQ(faith["k"], 1);

  // AttAttr of one layer: the public API's matrices for that layer, and its tree.
  AttAttrOptions ao;
  ao.m = 8;
  const nlohmann::json attr = api.attattr({{"text", "a charming journey"}, {"layer", 0}, {"m", 8}, {"target", 1}});
  const nlohmann::json direct = m.attattr({"a charming journey", std::nullopt}, "1", ao);
  EXPECT_EQ(attr["heads"], direct["layers"][0]);
  EXPECT_EQ(attr["completeness"], direct["completeness"][0]);
  EXPECT_EQ(attr["head_importance"], direct["head_importance"]);
  EXPECT_EQ(attr["tree"]["edges"], m.attattr_tree({"a charming journey", std::nullopt}, "1", 0.4, ao)["edges"]);
  EXPECT_EQ(attr["tree"]["svg"].get<std::string>().rfind("<svg", 0), 0u);
  EXPECT_EQ(failure_of([&] { api.attattr({{"text", "fine"}, {"layer", 9}}); }).first, 400);
  EXPECT_EQ(failure_of([&] { api.attattr({{"text", "fine"}, {"m", 1000}}); }).first, 400);

  const nlohmann::json att = api.attention({{"text", "a charming journey"}});
  const int64_t L = static_cast<int64_t>(att["tokens"].size());
  ASSERT_EQ(att["attentions"].size(), static_cast<size_t>(m.info().layers));
  for (const auto& head : att["attentions"][0])
    for (const auto& row : head) {
      ASSERT_EQ(static_cast<int64_t>(row.size()), L);
      double sum = 0;
      for (const auto& v : row) sum += v.get<double>();
      EXPECT_NEAR(sum, 1.0, 1e-6);  // softmax rows (float32)
    }
}

TEST(ServeApi, BadRequestsAreFourHundredsWithOneLineMessages) {
  SALIENT_REQUIRE_SHARED(model_dir());
  serve::ApiLimits limits;
  limits.max_text_bytes = 100;
  limits.max_methods = 2;
  const Api api({model_dir()}, {}, "", limits);
  const nlohmann::json ok = {{"text", "fine"}, {"methods", {"saliency"}}};
  struct Case {
    nlohmann::json body;
    int status;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {nlohmann::json::array(), 400, "JSON object"},
      {{{"methods", {"saliency"}}}, 400, "\"text\""},
      {{{"text", 5}, {"methods", {"saliency"}}}, 400, "\"text\""},
      {{{"text", "   "}, {"methods", {"saliency"}}}, 400, "empty"},
      {{{"text", std::string(101, 'a')}, {"methods", {"saliency"}}}, 413, "--max-text-bytes"},
      {{{"text", "fine"}, {"methods", nlohmann::json::array()}}, 400, "methods"},
      {{{"text", "fine"}, {"methods", {"saliency", "ig", "lime"}}}, 400, "at most 2"},
      {{{"text", "fine"}, {"methods", {"no_such"}}}, 400, "no_such"},
      {{{"text", "fine"}, {"methods", {{{"name", "ig"}, {"params", {{"samples", 3}}}}}}}, 400, "samples"},
      {{{"text", "fine"}, {"methods", {{{"name", "ig"}, {"params", {{"steps", 0}}}}}}}, 400, "steps"},
      {{{"text", "fine"}, {"methods", {"saliency"}}, {"model", "other"}}, 404, "other"},
      {{{"text", "fine"}, {"methods", {"saliency"}}, {"target", "maybe"}}, 400, "maybe"},
      {{{"text", "fine"}, {"methods", {"saliency"}}, {"target", 7}}, 400, "7"},
  };
  for (const Case& c : cases) {
    const auto [status, message] = failure_of([&] { api.explain(c.body); });
    EXPECT_EQ(status, c.status) << c.body.dump() << ": " << message;
    EXPECT_NE(message.find(c.needle), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_EQ(api.explain(ok)["explanations"].size(), 1u);
  EXPECT_EQ(failure_of([&] { api.examples("sst2:dev", 0, 5); }).first, 404);
  EXPECT_EQ(failure_of([&] { api.predict({{"text", ""}}); }).first, 400);
}

TEST(ServeApi, ExamplesCarryLabelsAndRationales) {
  SALIENT_REQUIRE_SHARED(shared_path("data"));
  SALIENT_REQUIRE_SHARED(model_dir());
  const Api api({model_dir()}, {"hatexplain:test"}, shared_path("data"));
  const nlohmann::json d = api.datasets()["datasets"];
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(d[0]["rationales"].get<bool>());
  const nlohmann::json x = api.examples("hatexplain:test", 3, 20);
  ASSERT_EQ(x["examples"].size(), 20u);
  const Dataset direct = load_dataset("hatexplain:test", shared_path("data"));
  int with_rationale = 0;
  for (size_t i = 0; i < 20; ++i) {
    const Record& r = direct.records[3 + i];
    const nlohmann::json& e = x["examples"][i];
    EXPECT_EQ(e["index"], 3 + i);
    EXPECT_EQ(e["text"], r.text);
    EXPECT_EQ(e["label"], r.label);
    if (r.rationale.empty()) {
      EXPECT_FALSE(e.contains("rationale"));
      continue;
    }
    ++with_rationale;
    EXPECT_EQ(e["rationale"].get<std::vector<float>>(), r.rationale);
    EXPECT_EQ(e["words"].size(), r.rationale.size());
  }
  EXPECT_GT(with_rationale, 0);
  EXPECT_EQ(failure_of([&] { api.examples("hatexplain:test", 0, 0); }).first, 400);
  EXPECT_EQ(failure_of([&] { api.examples("hatexplain:test", -1, 3); }).first, 400);
}

TEST(ServeRequest, MessagesQuotingBytesThatAreNotUtf8CanBeSentAsJson) {
  // fuzz_request's finding (docs/RELIABILITY.md): a Content-Type with bytes that are not UTF-8 was
  // quoted into the 415 message, and the server's JSON reply of it threw (a 500 instead).
  const std::string bad_type = "text/plai" + std::string(40, '\xbf') + "n";
  auto [status, message] = failure_of([&] { serve::parse_json_body(bad_type, "hello"); });
  EXPECT_EQ(status, 415);
  EXPECT_NO_THROW((void)nlohmann::json({{"error", message}}).dump()) << message;
  EXPECT_NE(message.find("text/plai\xEF\xBF\xBD"), std::string::npos) << message;
  // nlohmann's parse error quotes the bytes it read, too.
  std::tie(status, message) = failure_of([&] { serve::parse_json_body("application/json", "{\"a\": \xff\xfe}"); });
  EXPECT_EQ(status, 400);
  EXPECT_NO_THROW((void)nlohmann::json({{"error", message}}).dump()) << message;
  // The query parameters of /api/examples, likewise.
  std::tie(status, message) = failure_of([&] { serve::parse_examples_request("sst2:dev", "1\xc3", std::nullopt, {}); });
  EXPECT_EQ(status, 400);
  EXPECT_NO_THROW((void)nlohmann::json({{"error", message}}).dump()) << message;
  EXPECT_EQ(one_line("a\nb\r\xff\xc3\xa9"), "a b \xEF\xBF\xBD\xC3\xA9");
}

// The memory gate: first come first served within the budget; a request beyond the whole budget
// is 413, one the queue cannot take or that waited too long 503 with a Retry-After.
TEST(ServeMemoryGate, AdmitsInOrderWithinTheBudgetAndShedsTheRest) {
  using salient::serve::MemoryGate;
  MemoryGate gate(100, /*max_waiting=*/1, /*max_wait_seconds=*/0.2);
  EXPECT_EQ(failure_of([&] { gate.admit(101, "explain"); }).first, 413);
  EXPECT_NE(failure_of([&] { gate.admit(101, "explain"); }).second.find("--max-memory"), std::string::npos);
  std::optional<MemoryGate::Admission> first = gate.admit(60, "explain");
  EXPECT_EQ(gate.in_use(), 60);
  {
    const auto second = gate.admit(40, "explain");  // fits beside the first
    EXPECT_EQ(gate.in_use(), 100);
  }
  EXPECT_EQ(gate.in_use(), 60);
  // Waits, and is refused when the time is up.
  try {
    gate.admit(50, "explain");
    ADD_FAILURE() << "expected 503";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 503);
    EXPECT_GE(e.retry_after(), 1);
    EXPECT_NE(std::string(e.what()).find("--max-wait"), std::string::npos);
  }
  EXPECT_EQ(gate.waiting(), 0);
  // One waits (admitted when the first ends); a second waiting one is over the queue's bound.
  std::atomic<bool> admitted{false};
  std::thread waiter([&] {
    const auto a = gate.admit(50, "explain");
    admitted = true;
  });
  while (gate.waiting() == 0) std::this_thread::yield();
  EXPECT_EQ(failure_of([&] { gate.admit(1, "predict"); }).first, 503);  // queue full, and no overtaking
  first.reset();
  waiter.join();
  EXPECT_TRUE(admitted);
  EXPECT_EQ(gate.in_use(), 0);
}

// The API under a budget: requests say what they need before they run, /api/models reports it,
// and one that can never fit is refused without running.
TEST(ServeApi, RequestsWaitForTheirEstimatedMemory) {
  SALIENT_REQUIRE_SHARED(model_dir());
  Api api({model_dir()}, {}, "");
  const nlohmann::json models = api.models();
  const nlohmann::json& memory = models["models"][0]["memory"];
  EXPECT_GT(memory["weight_bytes"].get<int64_t>(), 0);
  EXPECT_GT(memory["explain_bytes"]["lime"].get<int64_t>(), memory["explain_bytes"]["saliency"].get<int64_t>());
  EXPECT_FALSE(models["memory"].contains("budget_bytes"));  // no budget unless set
  const nlohmann::json body = {{"text", "a charming and moving journey"}, {"methods", {"lime"}}};
  api.set_memory_budget(1 << 20);  // less than any explanation needs
  const auto [status, message] = failure_of([&] { api.explain(body); });
  EXPECT_EQ(status, 413);
  EXPECT_NE(message.find("--max-memory"), std::string::npos) << message;
  api.set_memory_budget(int64_t{1} << 32);
  EXPECT_EQ(api.explain(body)["explanations"].size(), 1u);
  EXPECT_EQ(api.models()["memory"]["budget_bytes"], int64_t{1} << 32);
  EXPECT_EQ(api.models()["memory"]["in_use_bytes"], 0);
}

// Texts longer than the model's positions read whole: the same prediction, token scores and
// faithfulness as the public API's LongInputs, each window listed; endpoints that read one window
// refuse the option.
TEST(ServeApi, LongTextsAreReadWholeInWindows) {
  SALIENT_REQUIRE_SHARED(model_dir());
  const Api api({model_dir()}, {}, "");
  const Model m = Model::load(model_dir());
  std::string text;
  for (int i = 0; i < 50; ++i) text += "a charming and moving journey, or a dull one? ";  // ~600 pieces
  const TextInput in{text, std::nullopt};
  const LongInputs whole{true, 0};

  const nlohmann::json cut = api.predict({{"text", text}});
  EXPECT_TRUE(cut["truncated"].get<bool>());
  EXPECT_EQ(static_cast<int64_t>(cut["tokens"].size()), m.info().max_tokens);
  const nlohmann::json pred = api.predict({{"text", text}, {"windows", true}});
  const Prediction want = m.predict({in}, 32, whole)[0];
  EXPECT_EQ(pred["probs"], want.probs);
  EXPECT_GT(want.windows, 4);
  EXPECT_EQ(pred["windows"], want.windows);
  const Encoding all = m.tokenize(in, whole);
  EXPECT_EQ(pred["tokens"], all.tokens);
  EXPECT_GT(all.ids.size(), 500u);

  const nlohmann::json got = api.explain({{"text", text}, {"windows", true}, {"methods", {"saliency"}}, {"target", 1}});
  const nlohmann::json& e = got["explanations"][0];
  const Explanation direct = m.explain({in}, "saliency", {}, "1", "", 8, 0, whole)[0];
  EXPECT_EQ(e["tokens"], all.tokens);
  // The server runs one window at a time, the call above eight: equal to float32 rounding.
  const std::vector<double> scores = e["token_scores"].get<std::vector<double>>();
  ASSERT_EQ(scores.size(), direct.scores.size());
  for (size_t i = 0; i < scores.size(); ++i) EXPECT_NEAR(scores[i], direct.scores[i], 1e-6 * std::abs(direct.scores[i]) + 1e-9);
  EXPECT_EQ(static_cast<int64_t>(e["extras"]["windows"].size()), want.windows);
  EXPECT_EQ(e["extras"]["windows"][1]["start"], (m.info().max_tokens - 2) / 2);  // half a window apart
  const nlohmann::json faith = e["faithfulness"];
  EXPECT_EQ(faith, m.faithfulness(in, scores, 1, "prob", 0, "mask", whole, "eraser"));
  // Scored whole: the unperturbed text's probability is the windowed prediction's, and k is a fifth
  // of the whole text's removable tokens, not of one window's.
  EXPECT_NEAR(faith["full"].get<double>(), want.probs[1], 1e-6);  // batched with other sequences: float32
  EXPECT_GT(faith["k"].get<int64_t>(), m.info().max_tokens / 5);

  // A narrower stride reads more windows.
  EXPECT_GT(api.predict({{"text", text}, {"windows", true}, {"stride", 30}})["windows"].get<int64_t>(), want.windows);

  const nlohmann::json ok = {{"text", text}, {"methods", {"saliency"}}};
  const std::vector<std::pair<nlohmann::json, std::string>> bad = {
      {{{"windows", "yes"}}, "\"windows\""},
      {{{"stride", 30}}, "only with"},
      {{{"windows", true}, {"stride", -1}}, "stride"},
      {{{"windows", true}, {"stride", 10000}}, "stride"},
      {{{"windows", true}, {"text_pair", "and a second text"}}, "text_pair"},
  };
  for (const auto& [extra, needle] : bad) {
    nlohmann::json body = ok;
    body.update(extra);
    const auto [status, message] = failure_of([&] { api.explain(body); });
    EXPECT_EQ(status, 400) << body.dump() << ": " << message;
    EXPECT_NE(message.find(needle), std::string::npos) << message;
  }
  EXPECT_EQ(failure_of([&] { api.attention({{"text", "fine"}, {"windows", true}}); }).first, 400);
  EXPECT_EQ(failure_of([&] { api.attattr({{"text", "fine"}, {"windows", true}}); }).first, 400);
}

// Learned explainers' artifacts come only from the folders given (salient serve --artifacts): a
// path inside one is read, any other refused with the same answer whether or not it exists.
TEST(ServeApi, ArtifactsAreReadOnlyFromTheFoldersGiven) {
  SALIENT_REQUIRE_SHARED(model_dir());
  Api api({model_dir()}, {}, "");
  const Model m = Model::load(model_dir());
  char tmpl[] = "/tmp/salient_artifacts_XXXXXX";
  const std::string root = mkdtemp(tmpl);
  const std::string folder = join_path(root, "served"), outside = join_path(root, "private");
  make_dirs(join_path(folder, "smat"));
  make_dirs(outside);
  torch::manual_seed(5);
  const Transformer& model = m.classifier().model;
  const auto e = smat::all_heads_explainer(model, smat::Normalizer::Sparsemax,
                                           torch::randn({model.num_layers() * model.num_heads()}));
  smat::save_head_explainer(e, join_path(folder, "smat/smat_explainer.json"));
  smat::save_head_explainer(e, join_path(outside, "smat_explainer.json"));
  std::filesystem::create_directory_symlink(outside, join_path(folder, "link"));
  const auto body = [](const std::string& path) {
    return nlohmann::json{{"text", "a charming journey"}, {"methods", {{{"name", "smat"}, {"params", {{"smat", path}}}}}},
                          {"faithfulness", false}};
  };
  // No folder given: nothing is read.
  auto [status, message] = failure_of([&] { api.explain(body(join_path(folder, "smat"))); });
  EXPECT_EQ(status, 403);
  EXPECT_NE(message.find("--artifacts"), std::string::npos) << message;

  api.set_artifact_folders({folder});
  const std::vector<double> want =
      m.explain({{"a charming journey", std::nullopt}}, "smat", {{"smat", join_path(folder, "smat")}})[0].scores;
  for (const std::string& inside : {std::string("smat"), join_path(folder, "smat/smat_explainer.json"),
                                    join_path(folder, "smat/../smat")})
    EXPECT_EQ(api.explain(body(inside))["explanations"][0]["token_scores"].get<std::vector<double>>(), want) << inside;
  // Inside but missing: the loader's own error (what is inside the folder is the server's to show).
  EXPECT_EQ(failure_of([&] { api.explain(body("nothing-here")); }).first, 400);
  // Outside, existing or not, by an absolute path, "..", or a link out of the folder: one answer.
  std::set<std::string> answers;
  for (const std::string& path : {join_path(outside, "smat_explainer.json"), join_path(outside, "missing.json"),
                                  std::string("../private/smat_explainer.json"), std::string("../private/missing.json"),
                                  std::string("link/smat_explainer.json"), std::string("link/missing.json"),
                                  std::string("/etc/passwd"), std::string("/no/such/file")}) {
    std::tie(status, message) = failure_of([&] { api.explain(body(path)); });
    EXPECT_EQ(status, 403) << path << ": " << message;
    std::string general = message;
    general.replace(general.find(path), path.size(), "PATH");
    answers.insert(general);
  }
  EXPECT_EQ(answers.size(), 1u) << *answers.begin();
  EXPECT_THROW(api.set_artifact_folders({join_path(root, "absent")}), Error);
  std::filesystem::remove_all(root);
}
