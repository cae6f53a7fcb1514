// Pre-training: masking statistics (token level and whole words), the MLM head against a direct
// computation with the tied embeddings, a tiny run that lowers held-out MLM loss, exact resume, the
// BertForMaskedLM layout, fine-tuning from the result, the corpus's held-out filter, CLI errors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_set>

#include "data/dataset.h"
#include "model/checkpoint.h"
#include "pretrain/corpus.h"
#include "pretrain/mlm.h"
#include "test_util.h"
#include "train/trainer.h"

using namespace salient;
using namespace salient::pretrain;
using salient::test::expect_one_line_error;
using salient::test::run_salient;
using salient::test::shared_path;

namespace {

std::string tokenizer_dir() { return shared_path("data/bert_base_uncased_tokenizer"); }
const WordPieceTokenizer& bert_tokenizer() {
  static WordPieceTokenizer t = WordPieceTokenizer::from_dir(tokenizer_dir());
  return t;
}
std::string tmp_dir(const std::string& name) {
  const std::string d = (std::filesystem::temp_directory_path() / ("salient_pretrain_" + std::to_string(::getpid()) + "_" + name)).string();
  std::filesystem::remove_all(d);
  return d;
}

std::vector<std::string> sst2_lines(size_t n) {
  std::vector<std::string> out;
  for (const auto& r : load_dataset("sst2:train", shared_path("data")).records) {
    out.push_back(r.text);
    if (out.size() == n) break;
  }
  return out;
}

// A small corpus file of SST-2 train phrases.
std::string corpus_file() {
  static std::string path = [] {
    const std::string p = tmp_dir("corpus.txt");
    std::string text;
    for (const auto& l : sst2_lines(3000)) text += l + "\n";
    write_file_atomic(p, text);
    return p;
  }();
  return path;
}

PretrainOptions tiny_options(const std::string& out) {
  PretrainOptions o;
  o.corpus = {corpus_file()};
  o.vocab = tokenizer_dir();
  o.output_dir = out;
  o.layers = 2;
  o.hidden = 32;
  o.heads = 4;
  o.intermediate = 64;
  o.max_length = 32;
  o.batch_size = 16;
  o.lr = 2e-3;
  o.max_steps = 80;
  o.eval_every = 40;
  o.save_every = 20;
  o.seed = 5;
  return o;
}

std::set<std::string> safetensors_names(const std::string& path) {
  std::set<std::string> names;
  for (const auto& [name, t] : read_safetensors(path).tensors) names.insert(name);
  return names;
}

}  // namespace

TEST(Masking, TokenLevelRatesAndSpecialsNeverChosen) {
  SALIENT_REQUIRE_SHARED(tokenizer_dir());
  const auto& tok = bert_tokenizer();
  const auto seqs = pack_texts(sst2_lines(400), tok, 64);
  ASSERT_GT(seqs.size(), 50u);
  const auto ordinary = tok.ordinary_ids();
  std::mt19937_64 rng(1);
  double candidates = 0, predicted = 0, masked = 0, kept = 0;
  for (int draw = 0; draw < 20; ++draw) {
    MaskedBatch mb = mask_batch(seqs, tok, ordinary, {}, rng);
    for (size_t b = 0; b < seqs.size(); ++b)
      for (size_t j = 0; j < seqs[b].size(); ++j) {
        const int64_t label = mb.labels[b][j].item<int64_t>(), id = mb.input_ids[b][j].item<int64_t>();
        if (tok.is_structural(seqs[b][j])) {
          EXPECT_EQ(label, -100);
          EXPECT_EQ(id, seqs[b][j]);
          continue;
        }
        ++candidates;
        if (label == -100) {
          EXPECT_EQ(id, seqs[b][j]);
          continue;
        }
        EXPECT_EQ(label, seqs[b][j]);
        ++predicted;
        masked += id == tok.mask_id();
        kept += id == seqs[b][j];
      }
  }
  EXPECT_NEAR(predicted / candidates, 0.15, 0.005);
  EXPECT_NEAR(masked / predicted, 0.80, 0.01);
  EXPECT_NEAR(kept / predicted, 0.10, 0.01);  // a random draw equal to the original is ~1/30000
  EXPECT_NEAR((predicted - masked - kept) / predicted, 0.10, 0.01);
}

TEST(Masking, WholeWordsAreNeverSplit) {
  SALIENT_REQUIRE_SHARED(tokenizer_dir());
  const auto& tok = bert_tokenizer();
  const auto seqs = pack_texts({"unflinchingly bleak and desperately unsentimental filmmaking", "the screenplay sags"}, tok, 16);
  ASSERT_FALSE(seqs.empty());
  MaskingOptions o;
  o.whole_word = true;
  o.rate = 0.3;
  std::mt19937_64 rng(2);
  int words_seen = 0;
  for (int draw = 0; draw < 200; ++draw) {
    MaskedBatch mb = mask_batch(seqs, tok, tok.ordinary_ids(), o, rng);
    for (size_t b = 0; b < seqs.size(); ++b) {
      const auto& s = seqs[b];
      int64_t n_candidates = 0, n_predicted = 0;
      for (size_t j = 0; j < s.size(); ++j) {
        if (tok.is_structural(s[j])) continue;
        ++n_candidates;
        const bool p = mb.labels[b][j].item<int64_t>() != -100;
        n_predicted += p;
        // A continuation piece is predicted exactly when the piece before it is.
        if (j > 0 && tok.id_to_token(s[j]).rfind("##", 0) == 0) {
          ++words_seen;
          EXPECT_EQ(p, mb.labels[b][j - 1].item<int64_t>() != -100) << tok.id_to_token(s[j]);
        }
      }
      EXPECT_LE(n_predicted, std::lround(0.3 * n_candidates));
      EXPECT_GE(n_predicted, 1);
    }
  }
  EXPECT_GT(words_seen, 0);  // the text does have multi-piece words
}

TEST(MlmHead, LogitsEqualTheDirectComputationWithTiedEmbeddings) {
  nlohmann::json cfg = {{"model_type", "bert"}, {"vocab_size", 40}, {"hidden_size", 8}, {"num_hidden_layers", 1},
                        {"num_attention_heads", 2}, {"intermediate_size", 16}, {"max_position_embeddings", 16}};
  Transformer m(ModelConfig::from_json(cfg, "cfg"), 3);
  m.to(torch::kCPU, torch::kFloat64);
  MlmHead head = init_mlm_head(m, 4);
  torch::NoGradGuard ng;
  head.dense_b.normal_(0, 0.1);
  head.ln_w.uniform_(0.5, 1.5);
  head.ln_b.normal_(0, 0.1);
  head.bias.normal_(0, 0.1);
  torch::Tensor h = torch::randn({5, 8}, torch::kFloat64);
  torch::Tensor got = mlm_logits(m, head, h);
  // By hand: dense, exact GELU, LayerNorm from its definition, then the word-embedding matrix.
  torch::Tensor x = h.matmul(head.dense_w.t()) + head.dense_b;
  x = 0.5 * x * (1 + torch::erf(x / std::sqrt(2.0)));
  torch::Tensor mean = x.mean(-1, true), var = (x - mean).pow(2).mean(-1, true);
  x = (x - mean) / torch::sqrt(var + 1e-12) * head.ln_w + head.ln_b;
  torch::Tensor want = x.matmul(m.embedding_weights().word.t()) + head.bias;
  EXPECT_LT((got - want).abs().max().item<double>(), 1e-10);
  // Tied: changing a word embedding changes that word's logit.
  m.embedding_weights().word[7].add_(1.0);
  torch::Tensor after = mlm_logits(m, head, h);
  EXPECT_GT((after.select(1, 7) - got.select(1, 7)).abs().max().item<double>(), 1e-3);
  EXPECT_LT((after.select(1, 6) - got.select(1, 6)).abs().max().item<double>(), 1e-12);
}

TEST(Pretrain, TinyRunLowersHeldoutLossResumesExactlyAndSavesBertForMaskedLm) {
  SALIENT_REQUIRE_SHARED(tokenizer_dir());
  const std::string a = tmp_dir("a"), b = tmp_dir("b");
  PretrainResult ra = pretrain_mlm(tiny_options(a));
  ASSERT_GE(ra.history.size(), 3u);
  EXPECT_EQ(ra.history.front().step, 0);
  EXPECT_EQ(ra.history.back().step, 80);
  EXPECT_LT(ra.history.back().loss, ra.history.front().loss - 1.0);
  EXPECT_GT(ra.tokens, 80 * 16 * 31);

  // Interrupted after 30 steps (checkpoint at 20 and 30), then resumed: the same model.
  PretrainOptions ob = tiny_options(b);
  ob.stop_after_steps = 30;
  pretrain_mlm(ob);
  EXPECT_FALSE(file_exists(join_path(b, "model.safetensors")));  // unfinished: only the checkpoint
  ob.stop_after_steps = 0;
  ob.resume = true;
  PretrainResult rb = pretrain_mlm(ob);
  EXPECT_EQ(rb.steps, 80);
  MlmModel ma = load_mlm_model(a), mb = load_mlm_model(b);
  for (const auto& [name, t] : ma.model.weights())
    if (!is_head_weight(name)) EXPECT_TRUE(torch::equal(t, mb.model.weights().at(name))) << name;
  for (size_t i = 0; i < ma.head.named().size(); ++i)
    EXPECT_TRUE(torch::equal(ma.head.named()[i].second, mb.head.named()[i].second)) << ma.head.named()[i].first;
  EXPECT_DOUBLE_EQ(ra.history.back().loss, rb.history.back().loss);

  // Hugging Face BertForMaskedLM names: the encoder under bert., no pooler, cls.predictions.*;
  // the decoder weight is the word embedding and not stored twice.
  std::set<std::string> want;
  for (const auto& name : ma.model.expected_weight_names())
    if (!is_head_weight(name)) want.insert(hf_weight_name(name, "bert"));
  for (const char* n : {"cls.predictions.transform.dense.weight", "cls.predictions.transform.dense.bias",
                        "cls.predictions.transform.LayerNorm.weight", "cls.predictions.transform.LayerNorm.bias",
                        "cls.predictions.bias"})
    want.insert(n);
  EXPECT_EQ(safetensors_names(join_path(a, "model.safetensors")), want);
  auto cfg = parse_json_file(join_path(a, "config.json"));
  EXPECT_EQ(cfg["architectures"][0], "BertForMaskedLM");
  EXPECT_EQ(cfg["num_attention_heads"], 4);
  EXPECT_EQ(ma.head.bias.size(0), static_cast<int64_t>(bert_tokenizer().vocab_size()));
  // The saved model evaluates to the loss the run reported.
  HeldoutEval e = evaluate_mlm(ma.model, ma.head, ma.tokenizer, pack_texts({"a charming and often affecting journey"}, ma.tokenizer, 32), {}, 1, 8);
  EXPECT_TRUE(std::isfinite(e.loss));

  // Another setting cannot resume into the same directory.
  PretrainOptions other = tiny_options(b);
  other.resume = true;
  other.hidden = 64;
  EXPECT_NE(test::error_of([&] { pretrain_mlm(other); }).find("other settings"), std::string::npos);

  // Fine-tuning from it: the encoder is the pre-trained one, only the classification head is new.
  TrainOptions to;
  to.init_model = a;
  to.seed = 1;
  Classifier clf = initial_classifier(to, {"negative", "positive"});
  for (const auto& [name, t] : clf.model.weights())
    if (!is_head_weight(name)) EXPECT_TRUE(torch::equal(t, ma.model.weights().at(name))) << name;
  EXPECT_EQ(clf.model.config().num_labels, 2);
  std::filesystem::remove_all(a);
  std::filesystem::remove_all(b);
}

TEST(Corpus, TrainTextsOnlyNeverADevOrTestText) {
  SALIENT_REQUIRE_SHARED(shared_path("data"));
  const std::string out = tmp_dir("tasks.txt");
  CorpusReport r = build_task_corpus(shared_path("data"), bert_tokenizer(), out);
  // Independently of the builder's own filter: every dev/test text of every task, normalised.
  std::unordered_set<std::string> heldout;
  for (const char* spec : {"sst2:dev", "sst2:test", "sst-trees:dev", "sst-trees:test", "cola:dev", "cola:ood",
                           "hatexplain:val", "hatexplain:test", "eraser:val", "eraser:test"})
    for (const auto& rec : load_dataset(spec, shared_path("data")).records) heldout.insert(normalized_text(rec.text));
  std::ifstream in(out);
  std::string line;
  int64_t lines = 0, leaked = 0;
  while (std::getline(in, line)) {
    ++lines;
    leaked += heldout.count(normalized_text(line));
  }
  EXPECT_EQ(leaked, 0);
  EXPECT_EQ(lines, r.texts);
  ASSERT_EQ(r.sources.size(), 5u);
  int64_t dropped = 0;
  for (const auto& s : r.sources) {
    EXPECT_GT(s.texts, 0) << s.name;
    EXPECT_GT(s.pieces, s.words / 2) << s.name;
    EXPECT_FALSE(s.license.empty());
    dropped += s.dropped_heldout;
  }
  EXPECT_GT(dropped, 0);  // some train texts do repeat a dev/test text, and are dropped
  auto report = parse_json_file(out + ".json");
  EXPECT_EQ(report["texts"], r.texts);
  EXPECT_EQ(normalized_text("  A  Charming\tFILM \n"), "a charming film");
  std::filesystem::remove(out);
  std::filesystem::remove(out + ".json");
}

TEST(PretrainCli, BadCorporaAndOptionsGiveOneLineErrors) {
  SALIENT_REQUIRE_SHARED(tokenizer_dir());
  const std::string out = tmp_dir("cli"), empty = tmp_dir("empty.txt"), vocab = " --vocab " + tokenizer_dir();
  write_file_atomic(empty, "\n  \n");
  expect_one_line_error(run_salient("pretrain --corpus /nonexistent/c.txt" + vocab + " -o " + out), "--corpus: '/nonexistent/c.txt' not found");
  expect_one_line_error(run_salient("pretrain --corpus " + empty + vocab + " -o " + out), "no text");
  expect_one_line_error(run_salient("pretrain --corpus " + corpus_file() + vocab + " -o " + out + " --hidden 30 --heads 4"), "--hidden/--heads");
  expect_one_line_error(run_salient("pretrain --corpus " + corpus_file() + vocab + " -o " + out + " --mask-rate 1.5"), "--mask-rate");
  expect_one_line_error(run_salient("pretrain --corpus " + corpus_file() + vocab + " -o " + out + " --max-length 4"), "--max-length");
  expect_one_line_error(run_salient("corpus build -o " + out + "/c.txt --data-dir /nonexistent"), "--data-dir");
  // A tiny run through the CLI writes the model and its report.
  auto r = run_salient("pretrain --corpus " + corpus_file() + vocab + " -o " + out +
                       " --layers 1 --hidden 16 --heads 2 --intermediate 32 --max-length 16 --batch-size 8 --max-steps 5");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(file_exists(join_path(out, "pretrain.json")));
  EXPECT_EQ(nlohmann::json::parse(r.out)["steps"], 5);
  std::filesystem::remove_all(out);
  std::filesystem::remove(empty);
}
