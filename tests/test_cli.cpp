// The salient binary end to end: outputs of tokenize/predict/info, and bad input giving a
// one-line error, a non-zero exit and no partial output file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "explain/explainer.h"
#include "test_util.h"
#include "util/io.h"

using salient::test::shared_path;

namespace {

std::string tmp(const std::string& name) { return "/tmp/salient_cli_" + std::to_string(::getpid()) + "_" + name; }

using salient::test::expect_one_line_error;
using salient::test::RunResult;
RunResult run(const std::string& args, const std::string& stdin_text = "") { return salient::test::run_salient(args, stdin_text); }

std::string model() { return shared_path("fixtures/reference-bert/model"); }

// A JSONL file of n two-label examples ("the film was great" / "awful") for the train tests.
std::string tiny_sentiment_data(const std::string& name, int n) {
  const std::string path = tmp(name);
  std::ofstream f(path);
  for (int i = 0; i < n; ++i)
    f << "{\"text\": \"the film was " << (i % 2 ? "great" : "awful") << "\", \"label\": " << i % 2 << "}\n";
  return path;
}

// A from-scratch model small enough for a train test to take seconds.
const std::string kTinyModel = " --hidden 16 --layers 1 --heads 2 --intermediate 32 --max-length 16 --batch-size 8 --seed 3";

}  // namespace

TEST(Cli, PredictOutputsLabelsLogitsAndProbs) {
  SALIENT_REQUIRE_SHARED(model());
  auto r = run("predict --model " + model(),
               "a charming journey\n{\"text\": \"bad\", \"text_pair\": \"very bad\", \"id\": \"x1\"}\n"
               "{\"input_ids\": [101, 2009, 102], \"token_type_ids\": [0, 0, 0]}\n");
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line);
    ASSERT_TRUE(j.contains("label") && j.contains("label_id") && j.contains("logits") && j.contains("probs"));
    double sum = j["probs"][0].get<double>() + j["probs"][1].get<double>();
    EXPECT_NEAR(sum, 1.0, 1e-9);
    if (n == 1) EXPECT_EQ(j["id"], "x1");
    ++n;
  }
  EXPECT_EQ(n, 3);
}

TEST(Cli, PredictTruncatesLongInputsAndSaysSo) {
  SALIENT_REQUIRE_SHARED(model());
  std::string longtext;
  for (int i = 0; i < 300; ++i) longtext += "word ";
  auto r = run("predict --model " + model(), longtext + "\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("truncated"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(r.out)["truncated"].get<bool>());
}

TEST(Cli, TokenizeOutputsAlignment) {
  SALIENT_REQUIRE_SHARED(model());
  auto r = run("tokenize --model " + model(), "{\"text\": \"Héllo, world!\", \"text_pair\": \"ok\"}\n");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["tokens"], nlohmann::json({"[CLS]", "hello", ",", "world", "!", "[SEP]", "ok", "[SEP]"}));
  EXPECT_EQ(j["type_ids"], nlohmann::json({0, 0, 0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(j["word_ids"], nlohmann::json({-1, 0, 1, 2, 3, -1, 0, -1}));
  EXPECT_EQ(j["offsets"][1], nlohmann::json({0, 6}));  // "Héllo" is 6 bytes in UTF-8
}

TEST(Cli, InfoNamesBlasAndThreads) {
  SALIENT_REQUIRE_SHARED(model());
  auto r = run("--threads 2 info --json --model " + model());
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["threads"], 2);
  EXPECT_EQ(j["model"]["parameters"], 999138);
  EXPECT_FALSE(j["blas"]["library"].get<std::string>().empty());
}

TEST(Cli, BadInputsGiveOneLineErrorsAndNoPartialOutput) {
  SALIENT_REQUIRE_SHARED(model());
  expect_one_line_error(run("predict --model /nonexistent/dir", "x\n"), "/nonexistent/dir");
  // Malformed JSON on line 2: nothing is written to the output file.
  std::string out = tmp("pred.jsonl");
  std::remove(out.c_str());
  expect_one_line_error(run("predict --model " + model() + " -o " + out, "fine text\n{\"text\": \n"), "<stdin>:2");
  EXPECT_FALSE(salient::file_exists(out));
  expect_one_line_error(run("predict --model " + model(), "{\"text\": \"\"}\n"), "empty");
  expect_one_line_error(run("predict --model " + model(), "{\"input_ids\": [101, 99999, 102]}\n"), "input_ids[1]");
  expect_one_line_error(run("predict --model " + model(), "{\"label\": 1}\n"), "text");
  expect_one_line_error(run("tokenize --model " + model() + " --truncation sideways", "x\n"), "sideways");
  expect_one_line_error(run("predict --model " + model() + " --batch-size 0", "x\n"), "--batch-size");
  expect_one_line_error(run("benchmark --model " + model() + " --data sst2:dev --methods random --metrics simulability"
                            " --sim-beta -1 --out " + tmp("bm")), "--sim-beta");
  EXPECT_FALSE(salient::dir_exists(tmp("bm")));
  // Malformed dataset row, named by file and line.
  std::string bad = tmp("bad.jsonl");
  salient::write_file_atomic(bad, "{\"text\": \"good\", \"label\": 0}\n{\"text\": \"oops\", \"label\": [1]}\n");
  expect_one_line_error(run("train --train " + bad + " --dev " + bad + " --out " + tmp("m") + " --vocab " +
                            model() + "/vocab.txt"), bad + ":2");
  EXPECT_FALSE(salient::dir_exists(tmp("m")));
  // Unknown dataset name.
  expect_one_line_error(run("train --train imdb:train --dev imdb:test --out " + tmp("m") + " --vocab " + model() +
                            "/vocab.txt"), "imdb");
}

// A word that names no command is an error at every level, also before --help (CLI11 would print
// the help of the command that follows it).
TEST(Cli, UnknownCommandWordsAreErrors) {
  expect_one_line_error(run("vision train --help"), "unknown command 'vision'");
  expect_one_line_error(run("--threads 1 attattr foo --help"), "attattr: unknown command 'foo'");
  auto r = run("--quiet --threads 1 info");
  EXPECT_EQ(r.code, 0) << r.err;
}

// explain --list names every registered method with its parameters' flags.
TEST(Cli, ExplainListShowsEveryMethodAndItsParameters) {
  auto r = run("explain --list");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const auto& info : salient::explainer_registry()) {
    EXPECT_NE(r.out.find(info.name + "  ["), std::string::npos) << info.name;
    for (const auto& p : info.params) EXPECT_NE(r.out.find(p.flag() + " ("), std::string::npos) << p.flag();
  }
}

// The success paths of the commands that write models and analyses, on tiny inputs: train (from
// scratch, then predict and evaluate with the result) and attattr heads | prune | tree | triggers.
TEST(Cli, TrainPredictEvaluateOnATinySet) {
  SALIENT_REQUIRE_SHARED(model());
  const std::string data = tiny_sentiment_data("tiny.jsonl", 24);
  const std::string out = tmp("tiny_model");
  auto r = run("train --train " + data + " --dev " + data + " --out " + out + " --vocab " + model() + kTinyModel +
               " --epochs 2");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.contains("accuracy") && j.contains("best_epoch"));
  for (const char* f : {"config.json", "model.safetensors", "vocab.txt", "training.json"})
    EXPECT_TRUE(salient::file_exists(out + "/" + f)) << f;
  r = run("predict --model " + out, "the film was great\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["probs"].size(), 2u);
  r = run("evaluate --model " + out + " --data " + data);
  ASSERT_EQ(r.code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["examples"], 24);
  EXPECT_GE(j["accuracy"].get<double>(), 0.0);
  expect_one_line_error(run("evaluate --model " + out + " --data sst2:nope"), "nope");
}

// train --init: the checkpoint's vocabulary and shape are used, so a from-scratch option is an
// error; its dropout is kept unless --dropout / --attention-dropout replace it (as HF
// from_pretrained's config overrides), and the fine-tuned model's config.json says which.
TEST(Cli, TrainInitKeepsTheShapeAndReplacesDropoutOnlyWhenGiven) {
  SALIENT_REQUIRE_SHARED(model());
  const std::string data = tiny_sentiment_data("tiny_init.jsonl", 16);
  const std::string tiny = " --max-length 16 --epochs 1 --batch-size 8 --seed 3";
  const std::string base = tmp("init_base");
  auto r = run("train --train " + data + " --dev " + data + " --out " + base + " --vocab " + model() + kTinyModel +
               " --epochs 1 --dropout 0 --attention-dropout 0.05");
  ASSERT_EQ(r.code, 0) << r.err;
  auto dropouts = [](const std::string& dir) {
    auto c = nlohmann::json::parse(salient::read_file(dir + "/config.json"));
    return std::pair{c["hidden_dropout_prob"].get<double>(), c["attention_probs_dropout_prob"].get<double>()};
  };
  EXPECT_EQ(dropouts(base), (std::pair{0.0, 0.05}));
  const std::string fine = " --train " + data + " --dev " + data + " --init " + base + tiny;
  const std::pair<std::string, std::string> scratch_only[] = {
      {"--hidden", "32"}, {"--layers", "2"}, {"--heads", "4"}, {"--intermediate", "64"}, {"--activation", "relu"},
      {"--vocab", model()}};
  for (const auto& [flag, value] : scratch_only)
    expect_one_line_error(run("train --out " + tmp("init_bad") + fine + " " + flag + " " + value), flag);
  expect_one_line_error(run("train --out " + tmp("init_bad") + fine + " --dropout 1"), "--dropout");
  expect_one_line_error(run("train --out " + tmp("init_bad") + fine + " --attention-dropout -0.1"), "--attention-dropout");
  expect_one_line_error(run("train --out " + tmp("init_bad") + fine + " --warmup 1"), "--warmup: must be in [0, 1) (got 1)");
  expect_one_line_error(run("train --out " + tmp("init_bad") + fine + " --warmup nan"), "--warmup");
  EXPECT_FALSE(salient::dir_exists(tmp("init_bad")));

  r = run("train --out " + tmp("init_own") + fine);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(dropouts(tmp("init_own")), (std::pair{0.0, 0.05}));
  r = run("train --out " + tmp("init_hidden") + fine + " --dropout 0.2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(dropouts(tmp("init_hidden")), (std::pair{0.2, 0.05}));
  r = run("train --out " + tmp("init_both") + fine + " --dropout 0.1 --attention-dropout 0.1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(dropouts(tmp("init_both")), (std::pair{0.1, 0.1}));
}

// --max-minutes counts the whole run: a --resume whose cap is already spent trains nothing and
// must not record (and checkpoint) an empty epoch; a cap that ends before the first step is an
// error with no model written.
TEST(Cli, TrainTimeCapRecordsNoEmptyEpoch) {
  SALIENT_REQUIRE_SHARED(model());
  const std::string data = tiny_sentiment_data("tiny_cap.jsonl", 16);
  const std::string args = "train --train " + data + " --dev " + data + " --vocab " + model() + kTinyModel + " --epochs 3";
  const std::string out = tmp("cap_model");
  auto r = run(args + " --out " + out + " --stop-after-epoch 1");
  ASSERT_EQ(r.code, 0) << r.err;
  r = run(args + " --out " + out + " --resume --max-minutes 1e-9");
  ASSERT_EQ(r.code, 0) << r.err;
  auto history = nlohmann::json::parse(salient::read_file(out + "/training.json"))["history"];
  ASSERT_EQ(history.size(), 1u) << history.dump();
  EXPECT_EQ(nlohmann::json::parse(salient::read_file(out + "/checkpoint/trainer_state.json"))["epochs_done"], 1);
  expect_one_line_error(run(args + " --out " + tmp("cap_none") + " --max-minutes 1e-9"), "--max-minutes");
  EXPECT_FALSE(salient::dir_exists(tmp("cap_none")));
}

TEST(Cli, AttAttrHeadsPruneTreeTriggersOnATinySet) {
  SALIENT_REQUIRE_SHARED(model());
  const std::string data = tmp("tiny_attattr.jsonl");
  {
    std::ofstream f(data);
    const char* texts[] = {"a charming and often affecting journey", "unflinchingly bleak and desperate",
                           "the acting rarely rises above the material", "a gorgeous , witty , seductive movie"};
    for (int i = 0; i < 4; ++i) f << "{\"text\": \"" << texts[i] << "\", \"label\": " << (i == 0 || i == 3) << "}\n";
  }
  const std::string heads = tmp("heads.json"), prune = tmp("prune.json");
  auto r = run("attattr heads --model " + model() + " --data " + data + " --limit 4 --steps 4 --out " + heads);
  ASSERT_EQ(r.code, 0) << r.err;
  auto h = nlohmann::json::parse(salient::read_file(heads));
  for (const char* k : {"attattr", "attention", "taylor", "taylor_michel", "random"})
    EXPECT_EQ(h["scores"][k].size(), 2u) << k;  // [layers][heads]
  EXPECT_EQ(h["m"], 4);
  r = run("attattr prune --model " + model() + " --heads " + heads + " --eval-data " + data + " --prune-steps 2 --out " + prune);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(salient::read_file(prune))["curves"]["taylor"].size(), 3u);  // 0%, 50%, 100%
  r = run("attattr tree --model " + model() + " --text \"a charming and often affecting journey\" --steps 4");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out).contains("root"));
  const std::string mined = tmp("triggers.json");
  r = run("attattr triggers --model " + model() + " --train " + data + " --n 4 --dev " + data + " --steps 4 --top 2 -o " +
          mined);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto own = nlohmann::json::parse(salient::read_file(mined));
  ASSERT_GT(own["patterns"].size(), 0u);
  // The saved patterns, evaluated again from the file (as on another seed's model), attack alike.
  r = run("attattr triggers --model " + model() + " --patterns " + mined + " --dev " + data + " --top 2");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto again = nlohmann::json::parse(r.out);
  EXPECT_EQ(again["patterns_from"], mined);
  ASSERT_EQ(again["patterns"].size(), own["patterns"].size());
  for (size_t p = 0; p < own["patterns"].size(); ++p) {
    EXPECT_EQ(again["patterns"][p]["inserted_tokens"], own["patterns"][p]["inserted_tokens"]) << p;
    EXPECT_EQ(again["patterns"][p]["accuracy_after"], own["patterns"][p]["accuracy_after"]) << p;
  }
  expect_one_line_error(run("attattr triggers --model " + model() + " --patterns " + mined + " --n 4 --dev " + data),
                        "--patterns");
  auto altered = own;
  altered["patterns"][0]["top1"][0] = "zzz";
  const std::string bad = tmp("triggers_altered.json");
  salient::write_file_atomic(bad, altered.dump());
  expect_one_line_error(run("attattr triggers --model " + model() + " --patterns " + bad + " --dev " + data),
                        "pattern 0");
}

// A readable view on request (and by default on a terminal); JSON lines stay the default in a pipe.
TEST(Cli, TextFormatForExplainAndPredict) {
  SALIENT_REQUIRE_SHARED(model());
  auto r = run("explain --model " + model() + " --method saliency --format text", "a charming journey\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("(p = "), std::string::npos);
  EXPECT_NE(r.out.find("saliency explains"), std::string::npos);
  EXPECT_NE(r.out.find("charming["), std::string::npos);  // no terminal: scores in brackets
  EXPECT_EQ(r.out.find("[CLS]"), std::string::npos);
  r = run("predict --model " + model() + " --format text", "a charming journey\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("(p = "), std::string::npos);
  r = run("predict --model " + model(), "a charming journey\n");  // a pipe: JSON lines
  EXPECT_NO_THROW(nlohmann::json::parse(r.out));
  expect_one_line_error(run("predict --model " + model() + " --format xml", "x\n"), "--format");
}
