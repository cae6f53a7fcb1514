// Training: a tiny from-scratch run learns (loss falls, dev accuracy above chance), is
// reproducible under a seed, and a run resumed after an interruption ends where an uninterrupted
// run ends.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "eval/classification.h"
#include "explain/explainer.h"
#include "test_util.h"
#include "train/trainer.h"
#include "util/error.h"

using namespace salient;
using salient::test::shared_path;

namespace {

TrainOptions tiny_options(const std::string& out) {
  TrainOptions o;
  o.data_dir = shared_path("data");
  o.train_data = "sst2:train";
  o.dev_data = "sst2:dev";
  o.output_dir = out;
  o.vocab = shared_path("data/bert_base_uncased_tokenizer/vocab.txt");
  o.hidden_size = 32;
  o.num_layers = 1;
  o.num_heads = 2;
  o.intermediate_size = 64;
  o.max_length = 32;
  o.max_train_examples = 3000;
  o.batch_size = 32;
  o.lr = 2e-3;
  o.epochs = 2;
  o.seed = 5;
  return o;
}

std::string fresh_dir(const std::string& tag) {
  std::string d = "/tmp/salient_train_" + tag + "_" + std::to_string(::getpid());
  std::system(("rm -rf " + d).c_str());
  return d;
}

}  // namespace

TEST(Metrics, HandComputedAccuracyF1AndMcc) {
  // gold: 1 1 0 0 1, pred: 1 0 0 1 1 → TP 2, FN 1, FP 1, TN 1.
  auto m = classification_metrics({1, 1, 0, 0, 1}, {1, 0, 0, 1, 1}, 2);
  EXPECT_DOUBLE_EQ(m.accuracy, 0.6);
  // F1(pos) = 4/6, F1(neg) = 2/4 → macro 7/12.
  EXPECT_NEAR(m.macro_f1, 7.0 / 12.0, 1e-12);
  // MCC = (2·1 − 1·1)/sqrt(3·3·2·2) = 1/6.
  EXPECT_NEAR(m.mcc, 1.0 / 6.0, 1e-12);
  EXPECT_THROW(classification_metrics({0, 3}, {0, 1}, 2), salient::Error);
}

TEST(Train, TinyRunLearnsAndResumesExactly) {
  SALIENT_REQUIRE_SHARED(shared_path("data/sst2_glue/train.tsv"));
  torch::set_num_threads(1);
  const std::string full_dir = fresh_dir("full");
  TrainResult full = train_classifier(tiny_options(full_dir));
  ASSERT_EQ(full.history.size(), 2u);
  EXPECT_LT(full.history[1].train_loss, full.history[0].train_loss);
  EXPECT_LT(full.history[1].train_loss, 0.69);
  EXPECT_GT(full.best.accuracy, 0.55);

  // The same run interrupted after its first epoch, then resumed: identical final weights.
  const std::string part_dir = fresh_dir("resume");
  TrainOptions first = tiny_options(part_dir);
  first.stop_after_epoch = 1;
  TrainResult part = train_classifier(first);
  ASSERT_EQ(part.history.size(), 1u);
  TrainOptions rest = tiny_options(part_dir);
  rest.resume = true;
  TrainResult resumed = train_classifier(rest);
  ASSERT_EQ(resumed.history.size(), 2u);
  EXPECT_DOUBLE_EQ(resumed.history[1].train_loss, full.history[1].train_loss);
  Transformer a = load_model(full_dir + "/checkpoint"), b = load_model(part_dir + "/checkpoint");
  for (const auto& [name, t] : a.weights()) EXPECT_TRUE(torch::equal(t, b.weights().at(name))) << name;
  std::system(("rm -rf " + full_dir + " " + part_dir).c_str());
}

// The objective is a parameter: one that rewards the opposite label is what the trainer
// minimises (dev accuracy ends below chance), called once per batch.
TEST(Train, ObjectiveIsAParameter) {
  SALIENT_REQUIRE_SHARED(shared_path("data/sst2_glue/train.tsv"));
  torch::set_num_threads(1);
  const std::string dir = fresh_dir("objective");
  TrainOptions o = tiny_options(dir);
  int64_t calls = 0;
  o.objective = [&](const Classifier& clf, const Batch& b, const torch::Tensor& labels) {
    ++calls;
    EXPECT_EQ(labels.size(0), b.input_ids.size(0));
    return cross_entropy_objective()(clf, b, 1 - labels);
  };
  TrainResult r = train_classifier(o);
  EXPECT_EQ(calls, 2 * ((3000 + 31) / 32));
  EXPECT_LT(r.history[1].train_loss, r.history[0].train_loss);
  EXPECT_LT(r.history[1].dev.accuracy, 0.47);  // the cross-entropy objective reaches > 0.55 (TinyRun)
  std::system(("rm -rf " + dir).c_str());
}

TEST(Train, BadOptionsGiveOneLineErrors) {
  TrainOptions o = tiny_options(fresh_dir("bad"));
  o.epochs = 0;
  EXPECT_THROW(train_classifier(o), salient::Error);
  o = tiny_options(fresh_dir("bad"));
  o.train_data = "nosuchset:train";
  EXPECT_THROW(train_classifier(o), salient::Error);
  o = tiny_options(fresh_dir("bad"));
  o.select_metric = "bleu";
  EXPECT_THROW(train_classifier(o), salient::Error);
}

TEST(Train, FineTunesACheckpointWithoutAHead) {
  SALIENT_REQUIRE_SHARED(shared_path("fixtures/reference-bert/model"));
  // A base-model checkpoint: the reference BERT without pooler and classifier weights.
  const std::string base = fresh_dir("base");
  make_dirs(base);
  const std::string ref = shared_path("fixtures/reference-bert/model");
  SafetensorsFile st = read_safetensors(ref + "/model.safetensors");
  for (auto it = st.tensors.begin(); it != st.tensors.end();)
    it = (it->first.rfind("classifier.", 0) == 0 || it->first.rfind("bert.pooler.", 0) == 0) ? st.tensors.erase(it) : std::next(it);
  write_safetensors(base + "/model.safetensors", st);
  for (const char* f : {"config.json", "vocab.txt", "tokenizer_config.json"})
    write_file_atomic(base + "/" + f, read_file(ref + "/" + f));
  EXPECT_THROW(load_model(base), salient::Error);  // a classifier needs its head unless told otherwise
  LoadReport report;
  LoadOptions lo;
  lo.allow_new_head = true;
  load_model(base, lo, &report);
  EXPECT_EQ(report.initialised.size(), 4u);

  torch::set_num_threads(1);
  TrainOptions o = tiny_options(fresh_dir("finetune"));
  o.vocab.clear();
  o.init_model = base;
  o.epochs = 1;
  o.max_train_examples = 500;
  TrainResult r = train_classifier(o);
  ASSERT_EQ(r.history.size(), 1u);
  Classifier tuned = load_classifier(o.output_dir);
  EXPECT_EQ(tuned.model.config().hidden_size, 32);  // the checkpoint's architecture, not the options'
  EXPECT_EQ(tuned.model.config().id2label, (std::vector<std::string>{"negative", "positive"}));
  EXPECT_EQ(tuned.tokenizer.vocab_size(), 30522u);
  std::system(("rm -rf " + base + " " + o.output_dir).c_str());
}

TEST(Metrics, PearsonAndMseByHand) {
  // numpy: np.corrcoef([1, 2, 3, 4], [1, 3, 2, 5])[0, 1] = 0.8315218406202999
  EXPECT_NEAR(pearson({1, 2, 3, 4}, {1, 3, 2, 5}), 0.8315218406202999, 1e-12);
  EXPECT_EQ(pearson({1, 1, 1}, {1, 2, 3}), 0.0);  // a constant side
  const RegressionMetrics m = regression_metrics({0, 1, 2}, {0.5, 1, 1});
  EXPECT_NEAR(m.mse, (0.25 + 0 + 1) / 3, 1e-12);
  EXPECT_EQ(m.count, 3);
}

// A regression model (HF's problem_type "regression": one output, MSE) on the SST sentences'
// sentiment scores: it learns (dev Pearson above what its untrained start gives), is saved as a
// one-output model, and resumes; classification-only options are refused.
TEST(Train, RegressionOnSstScoresLearnsAndSavesOneOutput) {
  const std::string dir = fresh_dir("regression");
  TrainOptions o = tiny_options(dir);
  o.train_data = "sst-trees-score:train";
  o.dev_data = "sst-trees-score:dev";
  o.regression = true;
  o.max_train_examples = 3000;
  o.epochs = 2;
  TrainResult r = train_classifier(o);
  ASSERT_EQ(r.history.size(), 2u);
  EXPECT_GT(r.best_regression.pearson, 0.2);
  EXPECT_EQ(r.best_regression.count, 1101);
  Classifier clf = load_classifier(dir);
  EXPECT_EQ(clf.model.config().num_labels, 1);
  EXPECT_EQ(clf.model.config().problem_type, "regression");
  // The saved model's dev Pearson is the best epoch's.
  const RegressionMetrics dev = evaluate_regressor(clf, load_dataset("sst-trees-score:dev", o.data_dir), 32);
  EXPECT_NEAR(dev.pearson, r.best_regression.pearson, 1e-4);
  auto training = nlohmann::json::parse(read_file(dir + "/training.json"));
  EXPECT_EQ(training.at("select_metric"), "pearson");
  EXPECT_TRUE(training.at("best_dev").contains("mse"));
  // Resume: a run stopped after epoch 1 and continued gives the uninterrupted history.
  const std::string resumed_dir = fresh_dir("regression_resume");
  TrainOptions first = o;
  first.output_dir = resumed_dir;
  first.stop_after_epoch = 1;
  train_classifier(first);
  TrainOptions rest = o;
  rest.output_dir = resumed_dir;
  rest.resume = true;
  TrainResult resumed = train_classifier(rest);
  ASSERT_EQ(resumed.history.size(), 2u);
  for (size_t e = 0; e < 2; ++e) EXPECT_NEAR(resumed.history[e].dev_regression.pearson, r.history[e].dev_regression.pearson, 1e-5);
  std::system(("rm -rf " + resumed_dir).c_str());
  // A regression model is explained on its value: an explicit probability is an error.
  std::vector<const Encoding*> one = {nullptr};
  const Encoding e = clf.encode("a gorgeous film");
  one[0] = &e;
  ExplainOptions prob;
  prob.output = ModelOutput::Probability;
  EXPECT_NE(test::error_of([&] { make_explainer("saliency")->explain(clf, one, {0}, prob); }).find("--score"), std::string::npos);
  const auto scores = make_explainer("saliency")->explain(clf, one, {0}, ExplainOptions{});
  EXPECT_EQ(*scores[0].output, ModelOutput::Logit);
  double total = 0;
  for (double v : scores[0].scores) total += v;
  EXPECT_GT(total, 0.0);  // not the zero gradient of a one-way softmax
  TrainOptions bad = o;
  bad.train_data = "sst2:dev";  // no targets
  bad.output_dir = fresh_dir("regression_bad");
  EXPECT_NE(test::error_of([&] { train_classifier(bad); }).find("has no regression target"), std::string::npos);
  bad = o;
  bad.select_metric = "mcc";
  EXPECT_NE(test::error_of([&] { train_classifier(bad); }).find("--select-metric"), std::string::npos);
  std::system(("rm -rf " + dir).c_str());
}

// --pooling scalar_mix: the head reads a learned mix of every layer; the mix trains with the
// rest (its coefficients leave their initial zeros), the model learns, the saved config keeps the
// pooling, and an unknown value or a resume under another pooling is refused by name.
TEST(Train, ScalarMixPoolingTrainsAndIsKeptOnResume) {
  SALIENT_REQUIRE_SHARED(shared_path("data/sst2_glue/train.tsv"));
  torch::set_num_threads(1);
  const std::string dir = fresh_dir("scalar_mix");
  TrainOptions o = tiny_options(dir);
  o.pooling = "scalar_mix";
  TrainResult r = train_classifier(o);
  EXPECT_GT(r.best.accuracy, 0.55);
  Classifier clf = load_classifier(dir);
  EXPECT_EQ(clf.model.config().pooling, "scalar_mix");
  EXPECT_GT(clf.model.weights().at(kScalarMixCoefficients).abs().max().item<float>(), 1e-4);
  EXPECT_EQ(clf.model.weights().count("pooler.dense.weight"), 0u);
  TrainOptions again = tiny_options(dir);
  again.resume = true;
  again.pooling = "first_token";
  EXPECT_NE(salient::test::error_of([&] { train_classifier(again); }).find("--pooling"), std::string::npos);
  TrainOptions bad = tiny_options(fresh_dir("bad_pooling"));
  bad.pooling = "mean";
  EXPECT_NE(salient::test::error_of([&] { train_classifier(bad); }).find("--pooling: unknown value 'mean'"),
            std::string::npos);
  std::system(("rm -rf " + dir).c_str());
}
