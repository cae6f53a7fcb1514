// ExpNet: label projection, focal loss, batch-invariant features, recovery of planted rationale
// tokens, save/load and its refusals. Uses the reference-bert fixture tokenizer/model and a tiny
// hand-wired Transformer (no models/ needed).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "expnet/crosstask.h"
#include "expnet/expnet.h"
#include "test_util.h"
#include "util/error.h"
#include "util/io.h"

using namespace salient;
using salient::test::shared_path;

namespace {

std::string fixture_model() { return shared_path("fixtures/reference-bert/model"); }

std::string temp_dir(const std::string& tag) {
  std::string d = "/tmp/salient_test_expnet_" + tag + "_" + std::to_string(::getpid());
  make_dirs(d);
  return d;
}

bool is_one_line(const std::string& s) { return !s.empty() && s.find('\n') == std::string::npos; }

// A 1-layer, 2-head BERT whose attention is wired so that every query (also [CLS]) attends to the
// planted words: their embedding alone has a large coordinate 0, keys read coordinate 0, and
// queries are a constant. Everything else keeps its random initialisation.
Classifier planted_classifier(const std::vector<std::string>& planted) {
  Classifier clf;
  clf.tokenizer = Tokenizer::from_dir(fixture_model());
  nlohmann::json cfg = {{"model_type", "bert"}, {"vocab_size", clf.tokenizer.vocab_size()}, {"hidden_size", 16},
                        {"num_hidden_layers", 1}, {"num_attention_heads", 2}, {"intermediate_size", 32},
                        {"hidden_act", "gelu"}, {"max_position_embeddings", 64}, {"type_vocab_size", 2},
                        {"id2label", {{"0", "a"}, {"1", "b"}}}};
  clf.model = Transformer(ModelConfig::from_json(cfg, "<test>"), 7);
  auto w = clf.model.weights();
  std::map<std::string, torch::Tensor> nw;
  for (const auto& [k, v] : w) nw[k] = v.detach().clone();
  torch::NoGradGuard ng;
  nw["embeddings.word_embeddings.weight"].select(1, 0).zero_();
  nw["embeddings.position_embeddings.weight"].select(1, 0).zero_();
  nw["embeddings.token_type_embeddings.weight"].select(1, 0).zero_();
  for (const auto& word : planted) nw["embeddings.word_embeddings.weight"][clf.tokenizer.token_to_id(word)][0] = 1.0;
  const std::string p = "encoder.layer.0.attention.self.";
  nw[p + "query.weight"].zero_();
  nw[p + "query.bias"].zero_();
  nw[p + "key.weight"].zero_();
  nw[p + "key.bias"].zero_();
  for (int64_t head = 0; head < 2; ++head) {
    nw[p + "query.bias"][head * 8] = 4.0;
    nw[p + "key.weight"][head * 8][0] = 1.0;
  }
  clf.model.set_weights(nw);
  clf.model.eval();
  return clf;
}

// JSONL records of random filler words with 1–2 planted words marked as rationale.
std::string write_planted(const std::string& path, int n, uint64_t seed, const std::vector<std::string>& planted) {
  const std::vector<std::string> filler = {"the", "movie", "was", "a", "story", "about", "people", "who", "live", "in",
                                           "city", "and", "play", "music", "at", "night", "with", "friends", "on", "it"};
  std::mt19937_64 rng(seed);
  std::ofstream out(path);
  for (int i = 0; i < n; ++i) {
    int len = 5 + static_cast<int>(rng() % 10);
    std::vector<std::string> words;
    std::vector<int> rat;
    for (int k = 0; k < len; ++k) words.push_back(filler[rng() % filler.size()]), rat.push_back(0);
    int plants = 1 + static_cast<int>(rng() % 2);
    for (int k = 0; k < plants; ++k) {
      size_t pos = rng() % (words.size() + 1);
      words.insert(words.begin() + pos, planted[rng() % planted.size()]);
      rat.insert(rat.begin() + pos, 1);
    }
    std::string text;
    for (size_t k = 0; k < words.size(); ++k) text += (k ? " " : "") + words[k];
    out << nlohmann::json({{"id", i}, {"text", text}, {"label", int(rng() % 2)}, {"rationale", rat}}).dump() << "\n";
  }
  return path;
}

}  // namespace

TEST(ExpNet, ProjectsWordRationalesOntoEveryPiece) {
  auto tok = Tokenizer::from_dir(fixture_model());
  Classifier clf;
  clf.tokenizer = tok;
  const std::string text = "The unbelievably charming film, truly wonderful.";
  const std::vector<float> rationale = {0, 1, 1, 0, 0, 1};  // words: The unbelievably charming film, truly wonderful.
  Encoding enc = tok.encode(text);
  std::vector<int> labels = project_rationale(text, enc, rationale, "test");
  ASSERT_EQ(labels.size(), enc.ids.size());
  EXPECT_EQ(labels.front(), -1);  // [CLS]
  EXPECT_EQ(labels.back(), -1);   // [SEP]
  // "unbelievably" is split into several pieces; all of them are positive.
  int unbeliev_pieces = 0;
  for (size_t t = 0; t < enc.tokens.size(); ++t) {
    if (enc.offsets[t].first >= 4 && enc.offsets[t].second <= 16 && enc.word_ids[t] >= 0) {
      ++unbeliev_pieces;
      EXPECT_EQ(labels[t], 1) << enc.tokens[t];
    }
    if (enc.tokens[t] == "film" || enc.tokens[t] == "," || enc.tokens[t] == "truly" || enc.tokens[t] == "the") EXPECT_EQ(labels[t], 0) << enc.tokens[t];
    if (enc.tokens[t] == "wonderful" || enc.tokens[t] == "." || enc.tokens[t] == "charming") EXPECT_EQ(labels[t], 1) << enc.tokens[t];
  }
  EXPECT_GT(unbeliev_pieces, 1);
  // Scored tokens are exactly the labelled ones.
  std::vector<int> scored = scored_tokens(clf, enc);
  for (size_t t = 0; t < labels.size(); ++t) EXPECT_EQ(scored[t], labels[t] >= 0 ? 1 : 0);
}

TEST(ExpNet, EmptyOrShortRationaleIsAOneLineError) {
  auto tok = Tokenizer::from_dir(fixture_model());
  Encoding enc = tok.encode("a good film");
  try {
    project_rationale("a good film", enc, {}, "data.jsonl: example '3'");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(is_one_line(e.what()));
    EXPECT_NE(std::string(e.what()).find("empty rationale"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("data.jsonl"), std::string::npos) << e.what();
  }
  EXPECT_THROW(project_rationale("a good film", enc, {0, 1}, "x"), Error);

  // A dataset without any rationale cannot train or evaluate ExpNet.
  std::string dir = temp_dir("norat");
  std::string path = join_path(dir, "plain.jsonl");
  std::ofstream(path) << "{\"text\": \"a good film\", \"label\": 1}\n";
  Classifier clf = load_classifier(fixture_model());
  try {
    load_task_split(clf, path, "");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(is_one_line(e.what()));
    EXPECT_NE(std::string(e.what()).find("no human rationales"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_task_spec("cola=models/cola"), Error);
}

// The MLP's dropout is a rate in [0, 1): 1, a negative value and NaN are one-line errors naming it.
TEST(ExpNet, DropoutOutsideZeroOneIsAOneLineError) {
  ExpNetConfig c;
  c.num_layers = 2;
  c.num_heads = 4;
  c.dropout = 0.5;
  EXPECT_NO_THROW(ExpNet(c, 1));
  for (double bad : {1.0, -0.1, std::nan("")}) {
    c.dropout = bad;
    try {
      ExpNet(c, 1);
      FAIL() << "no error for dropout " << bad;
    } catch (const Error& e) {
      EXPECT_TRUE(is_one_line(e.what()));
      EXPECT_NE(std::string(e.what()).find("--dropout: must be in [0, 1)"), std::string::npos) << e.what();
    }
  }
}

TEST(ExpNet, FocalLossIsHalfBceAtGammaZeroAlphaHalf) {
  torch::manual_seed(3);
  torch::Tensor z = torch::randn({50}, torch::kFloat64) * 3;
  torch::Tensor y = (torch::rand({50}, torch::kFloat64) > 0.7).to(torch::kCPU, torch::kFloat64);
  double bce = torch::binary_cross_entropy_with_logits(z, y).item<double>();
  EXPECT_NEAR(focal_loss(z, y, 0.5, 0.0).item<double>() * 2, bce, 1e-12);
  // γ > 0 down-weights easy examples: never above the α-weighted BCE.
  EXPECT_LT(focal_loss(z, y, 0.5, 2.0).item<double>(), bce / 2);
}

TEST(ExpNet, BatchedFeaturesEqualOneByOne) {
  Classifier clf = load_classifier(fixture_model());
  std::vector<std::string> texts = {"a", "the film is good but not bad", "utterly predictable , yet oddly charming and warm",
                                    "no"};
  std::vector<Encoding> encs;
  for (const auto& t : texts) encs.push_back(clf.encode(t));
  std::vector<const Encoding*> all;
  for (const auto& e : encs) all.push_back(&e);
  auto batched = extract_raw_features(clf, all, 4);
  for (size_t i = 0; i < encs.size(); ++i) {
    auto single = extract_raw_features(clf, {&encs[i]}, 1);
    ASSERT_EQ(batched[i].stats.sizes(), single[0].stats.sizes());
    EXPECT_EQ(batched[i].stats.size(0), static_cast<int64_t>(encs[i].ids.size()));
    EXPECT_EQ(batched[i].stats.size(1), 2);  // layers
    EXPECT_EQ(batched[i].stats.size(2), 4);  // heads
    EXPECT_TRUE(torch::allclose(batched[i].stats, single[0].stats, 1e-4, 1e-5)) << texts[i];
    EXPECT_EQ(batched[i].predicted, single[0].predicted);
  }
  // Column selection: both directions of the last layer → 2H per token.
  FeatureOptions fo;
  EXPECT_EQ(select_features(batched[1].stats, fo).size(1), 8);
  // Raw [CLS]→token row sums to 1 over the real tokens.
  fo.scale = "raw";
  fo.head_pool = "none";
  fo.token_to_cls = false;
  EXPECT_NEAR(select_features(batched[2].stats, fo).sum(0).select(0, 0).item<double>(), 1.0, 1e-5);
  fo.layers = "all";
  fo.token_to_cls = true;
  fo.stats = true;
  EXPECT_EQ(select_features(batched[1].stats, fo).size(1), 2 * 4 * 5);
  fo.head_pool = "mean_max";
  EXPECT_EQ(select_features(batched[1].stats, fo).size(1), 2 * 2 * 5);
  EXPECT_EQ(fo.dim(2, 4), 2 * 2 * 5);
}

TEST(ExpNet, RecoversPlantedRationaleTokensAndRoundTrips) {
  const std::vector<std::string> planted = {"excellent", "terrible"};
  Classifier clf = planted_classifier(planted);
  std::string dir = temp_dir("planted");
  TaskSplit train = load_task_split(clf, write_planted(join_path(dir, "train.jsonl"), 300, 1, planted), "");
  TaskSplit val = load_task_split(clf, write_planted(join_path(dir, "val.jsonl"), 60, 2, planted), "");
  TaskSplit test = load_task_split(clf, write_planted(join_path(dir, "test.jsonl"), 100, 3, planted), "");

  ExpNetTrainOptions o;
  o.model.hidden = {16};
  o.model.num_layers = 1;
  o.model.num_heads = 2;
  o.filter_correct = false;  // the wired classifier's predictions are arbitrary
  o.batch_size = 128;
  o.max_epochs = 15;
  o.progress = false;
  ExpNetTrainResult r = train_expnet({&train}, {&val}, o);
  EXPECT_EQ(r.model.config().input_dim, 4);  // 2 heads x 2 directions

  std::vector<std::vector<double>> scores;
  for (const auto& ex : test.examples) scores.push_back(r.model.explain(clf, ex.enc, ex.raw));
  PlausibilityRow row = plausibility(test.examples, scores, 0.5);
  EXPECT_EQ(row.examples, 100);
  EXPECT_GT(row.f1_threshold, 0.9);
  EXPECT_GT(row.f1_top_k, 0.9);
  EXPECT_GT(row.auroc, 0.9);
  // Specials get 0.
  EXPECT_EQ(scores[0].front(), 0.0);
  EXPECT_EQ(scores[0].back(), 0.0);

  // Deterministic: the same seed trains the same network to the bit (a leave-one-task-out unit
  // recomputed in one process equals the one an MPI rank wrote); another seed trains another.
  ExpNetTrainResult again_same = train_expnet({&train}, {&val}, o);
  ExpNetTrainOptions reseeded = o;
  reseeded.seed = o.seed + 1;
  ExpNetTrainResult other_seed = train_expnet({&train}, {&val}, reseeded);
  bool seed_matters = false;
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(again_same.model.explain(clf, test.examples[i].enc, test.examples[i].raw), scores[i]);
    seed_matters |= other_seed.model.explain(clf, test.examples[i].enc, test.examples[i].raw) != scores[i];
  }
  EXPECT_TRUE(seed_matters);

  // Save → load gives the same scores; batched explain agrees with the per-example one.
  std::string net_dir = join_path(dir, "net");
  r.model.save(net_dir);
  ExpNet loaded = ExpNet::load(net_dir);
  std::vector<const Encoding*> inputs;
  for (size_t i = 0; i < 5; ++i) inputs.push_back(&test.examples[i].enc);
  auto again = loaded.explain(clf, inputs, 3);
  for (size_t i = 0; i < 5; ++i)
    for (size_t t = 0; t < again[i].size(); ++t) EXPECT_NEAR(again[i][t], scores[i][t], 1e-5);

  // A classifier with another layout is refused with one line naming both layouts.
  Classifier other = load_classifier(fixture_model());  // 2 layers x 4 heads
  try {
    loaded.explain(other, inputs, 3);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(is_one_line(e.what()));
    EXPECT_NE(std::string(e.what()).find("2 layers x 4 heads"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1 layers x 2 heads"), std::string::npos) << e.what();
  }
  // A corrupted config is refused too.
  auto cfg = parse_json_file(join_path(net_dir, "expnet.json"));
  cfg["input_dim"] = 99;
  write_file_atomic(join_path(net_dir, "expnet.json"), cfg.dump());
  EXPECT_THROW(ExpNet::load(net_dir), Error);
}

TEST(ExpNet, CliRefusesCoLaWithOneLine) {
  std::string dir = temp_dir("cli");
  std::string err = join_path(dir, "err.txt");
  std::string cmd = std::string(SALIENT_BIN) + " expnet train --task cola=" + fixture_model() + " --out " + join_path(dir, "net") +
                    " 2> " + err;
  int rc = std::system(cmd.c_str());
  EXPECT_NE(rc, 0);
  std::string text = read_file(err);
  EXPECT_NE(text.find("CoLA has no human rationales"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
}

TEST(ExpNet, CrossTaskReportOnPlantedTasks) {
  // Leave-one-task-out end to end on two tasks whose classifier attends to planted rationale words:
  // ExpNet trained on one task must find the other's rationales, beat the random baseline, and the
  // report must carry every section (main table, baselines, ablation with feature selection, cost).
  const std::vector<std::string> planted = {"excellent", "terrible", "brilliant"};
  Classifier clf = planted_classifier(planted);
  std::string dir = temp_dir("crosstask");
  const std::string model_dir = join_path(dir, "clf");
  save_classifier(clf, model_dir);
  CrossTaskOptions o;
  for (int t = 0; t < 2; ++t) {
    TaskSpec spec;
    spec.name = t == 0 ? "alpha" : "beta";
    spec.model_dir = model_dir;
    spec.train = write_planted(join_path(dir, spec.name + "_train.jsonl"), 120, 10 + t, planted);
    spec.val = write_planted(join_path(dir, spec.name + "_val.jsonl"), 30, 20 + t, planted);
    spec.test = write_planted(join_path(dir, spec.name + "_test.jsonl"), 40, 30 + t, planted);
    o.tasks.push_back(spec);
  }
  o.seeds = {0};
  o.train.model.hidden = {16};
  o.train.model.num_layers = 1;
  o.train.model.num_heads = 2;
  o.train.filter_correct = false;  // the wired classifier's predictions are arbitrary
  o.train.batch_size = 128;
  o.train.max_epochs = 6;
  o.train.progress = false;
  o.baselines = {"random", "raw_attention"};
  o.tune_examples = 10;
  o.ablation = true;
  o.out_dir = join_path(dir, "report");
  nlohmann::json r = run_cross_task(o);
  for (const std::string f : {"report.md", "report.csv", "report.json"}) EXPECT_TRUE(file_exists(join_path(o.out_dir, f))) << f;
  const auto& res = r.at("results");
  for (const std::string task : {"alpha", "beta"}) {
    const double expnet_topk = res.at("expnet").at(task).at("f1_top_k").at("mean").get<double>();
    const double random_topk = res.at("random").at(task).at("f1_top_k").at("mean").get<double>();
    EXPECT_GT(expnet_topk, 0.9) << task;
    EXPECT_LT(random_topk, expnet_topk - 0.3) << task;
  }
  ASSERT_TRUE(r.contains("ablation"));
  bool saw_selection = false;
  for (const auto& v : r.at("ablation")) {
    if (v.at("variant") != "select:features") continue;
    saw_selection = true;
    for (const auto& [task, cell] : v.at("results").items())
      for (const auto& run : cell.at("extra").at("runs")) EXPECT_TRUE(run.contains("selected")) << task;
  }
  EXPECT_TRUE(saw_selection);
  EXPECT_TRUE(r.contains("cost"));

  // Every ExpNet run and baseline is a unit file: a second run recomputes none of them and
  // rebuilds the same results; other settings in the directory are refused.
  const std::string units = join_path(o.out_dir, "units");
  const std::vector<std::string> files = list_files(units);
  EXPECT_EQ(files.size(), 2u /* main */ + 2u * 2 /* baselines */ + 2u * (r.at("ablation").size() - 1)) << files.size();
  std::map<std::string, std::string> before;
  std::map<std::string, std::filesystem::file_time_type> stamped;  // an hour back: a rewrite would show
  for (const auto& f : files) {
    const std::string path = join_path(units, f);
    before[f] = read_file(path);
    stamped[f] = std::filesystem::last_write_time(path) - std::chrono::hours(1);
    std::filesystem::last_write_time(path, stamped[f]);
  }
  nlohmann::json again = run_cross_task(o);
  EXPECT_EQ(again.at("results"), r.at("results"));
  EXPECT_EQ(again.at("ablation"), r.at("ablation"));
  for (const auto& f : files) {
    EXPECT_TRUE(std::filesystem::last_write_time(join_path(units, f)) == stamped[f]) << f;
    EXPECT_EQ(read_file(join_path(units, f)), before[f]) << f;
  }
  CrossTaskOptions other = o;
  other.seeds = {1};
  try {
    run_cross_task(other);
    ADD_FAILURE() << "other seeds in the same directory were accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("other settings (seeds"), std::string::npos) << e.what();
  }
  // A run that fails to start (here a test file that is not there) writes no evaluate.json that
  // would refuse the corrected command; a baseline given twice is refused before any work.
  CrossTaskOptions broken = o;
  broken.out_dir = join_path(dir, "broken");
  broken.tasks[1].test = join_path(dir, "no_such_test.jsonl");
  EXPECT_NE(test::error_of([&] { run_cross_task(broken); }).find("no_such_test.jsonl"), std::string::npos);
  EXPECT_FALSE(file_exists(join_path(broken.out_dir, "evaluate.json")));
  CrossTaskOptions twice = o;
  twice.out_dir = join_path(dir, "twice");
  twice.baselines = {"random", "raw_attention", "random"};
  EXPECT_NE(test::error_of([&] { run_cross_task(twice); }).find("--baselines: 'random' is given twice"), std::string::npos);
  EXPECT_FALSE(file_exists(join_path(twice.out_dir, "evaluate.json")));
}
