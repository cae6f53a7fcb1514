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

struct RunResult {
  int code;
  std::string out, err;
};

std::string tmp(const std::string& name) { return "/tmp/salient_cli_" + std::to_string(::getpid()) + "_" + name; }

RunResult run(const std::string& args, const std::string& stdin_text = "") {
  std::string in = tmp("stdin"), out = tmp("stdout"), err = tmp("stderr");
  salient::write_file_atomic(in, stdin_text);
  std::string cmd = std::string(SALIENT_BIN) + " --quiet " + args + " < " + in + " > " + out + " 2> " + err;
  int status = std::system(cmd.c_str());
  RunResult r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, salient::read_file(out), salient::read_file(err)};
  return r;
}

void expect_one_line_error(const RunResult& r, const std::string& needle) {
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(r.err.rfind("salient: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "expected '" << needle << "' in: " << r.err;
}

std::string model() { return shared_path("fixtures/reference-bert/model"); }

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
  expect_one_line_error(run("smat train --help"), "unknown command 'smat'");
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
