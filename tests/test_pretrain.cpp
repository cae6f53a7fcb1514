// Pre-training: masking statistics (token level and whole words), the MLM head against a direct
// computation with the tied embeddings, a tiny run that lowers held-out MLM loss, exact resume, the
// BertForMaskedLM layout, fine-tuning from the result, the corpus's held-out filter, the GCIDE and
// WordNet parsers on excerpts of the Debian files (tests/data), CLI errors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_set>

#include <zlib.h>

#include "data/dataset.h"
#include "model/checkpoint.h"
#include "pretrain/corpus.h"
#include "pretrain/dictionaries.h"
#include "pretrain/mlm.h"
#include "test_util.h"
#include "train/trainer.h"

using namespace salient;
using namespace salient::pretrain;
using salient::test::error_of;
using salient::test::expect_one_line_error;
using salient::test::run_salient;
using salient::test::shared_path;

namespace {

std::string tokenizer_dir() { return shared_path("data/bert_base_uncased_tokenizer"); }
const Tokenizer& bert_tokenizer() {
  static Tokenizer t = Tokenizer::from_dir(tokenizer_dir());
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
    if (!is_head_weight(name)) want.insert(find_model_family("bert")->hf_weight_name(name));
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
  EXPECT_NE(test::error_of([&] { pretrain_mlm(other); }).find("other settings (hidden)"), std::string::npos);

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

TEST(Pretrain, InitContinuesASavedEncoderOnItsHeldoutSlice) {
  SALIENT_REQUIRE_SHARED(tokenizer_dir());
  const std::string a = tmp_dir("init-a"), c = tmp_dir("init-c"), c2 = tmp_dir("init-c2"), d = tmp_dir("init-d"),
                    z = tmp_dir("init-z"), bad = tmp_dir("init-bad"), corpus = tmp_dir("init-corpus.txt");
  std::string text;
  for (const auto& l : sst2_lines(3000)) text += l + "\n";
  write_file_atomic(corpus, text);
  PretrainOptions oa = tiny_options(a);
  oa.corpus = {corpus};
  oa.max_steps = 40;
  const PretrainResult ra = pretrain_mlm(oa);
  // A run continuing `from` into `out`: the same corpus, its own seed and length.
  auto continuation = [&](const std::string& out, const std::string& from, uint64_t seed, int64_t steps) {
    PretrainOptions o = tiny_options(out);
    o.corpus = {corpus};
    o.init_dir = from;
    o.seed = seed;
    o.max_steps = steps;
    return o;
  };
  // Another seed (other batches and masks), the first run's held-out slice and evaluation masks.
  const PretrainOptions oc = continuation(c, a, 6, 40);
  const PretrainResult rc = pretrain_mlm(oc);
  EXPECT_EQ(rc.heldout_fingerprint, ra.heldout_fingerprint);
  EXPECT_DOUBLE_EQ(rc.history.front().loss, ra.history.back().loss);  // step 0 is the saved encoder
  EXPECT_LT(rc.history.back().loss, rc.history.front().loss - 0.05);
  const nlohmann::json settings = parse_json_file(join_path(c, "pretrain.json")).at("settings");
  EXPECT_EQ(settings.at("init"), a);
  EXPECT_EQ(settings.at("split_seed"), 5);
  // Interrupted and resumed, the continuation takes the same steps.
  PretrainOptions oc2 = oc;
  oc2.output_dir = c2;
  oc2.stop_after_steps = 15;
  pretrain_mlm(oc2);
  oc2.stop_after_steps = 0;
  oc2.resume = true;
  const PretrainResult rc2 = pretrain_mlm(oc2);
  EXPECT_DOUBLE_EQ(rc2.history.back().loss, rc.history.back().loss);
  MlmModel mc = load_mlm_model(c), mc2 = load_mlm_model(c2);
  for (const auto& [name, t] : mc.model.weights())
    if (!is_head_weight(name)) EXPECT_TRUE(torch::equal(t, mc2.model.weights().at(name))) << name;
  // A continuation of a continuation keeps the first run's split, and starts where the second ended.
  const PretrainResult rd = pretrain_mlm(continuation(d, c, 7, 1));
  EXPECT_DOUBLE_EQ(rd.history.front().loss, rc.history.back().loss);
  // The encoder's own weights and head are where it starts: with a vanishing rate nothing moves.
  PretrainOptions oz = continuation(z, a, 8, 1);
  oz.lr = 1e-30;
  pretrain_mlm(oz);
  MlmModel ma = load_mlm_model(a), mz = load_mlm_model(z);
  for (const auto& [name, t] : ma.model.weights())
    if (!is_head_weight(name)) EXPECT_TRUE(torch::allclose(t, mz.model.weights().at(name), 0, 1e-20)) << name;
  for (size_t i = 0; i < ma.head.named().size(); ++i)
    EXPECT_TRUE(torch::allclose(ma.head.named()[i].second, mz.head.named()[i].second, 0, 1e-20)) << ma.head.named()[i].first;
  // Refused, one line each: another shape, the encoder's own seed, --init as --out, and a corpus
  // that now packs into another split under the same path.
  auto error_with = [&](auto&& change) {
    PretrainOptions o = continuation(bad, a, 9, 80);
    change(o);
    return test::error_of([&] { pretrain_mlm(o); });
  };
  EXPECT_NE(error_with([](PretrainOptions& o) { o.layers = 3; }).find("has --layers 2, but the options say 3"), std::string::npos);
  EXPECT_NE(error_with([](PretrainOptions& o) { o.seed = 5; }).find("--seed: 5 is the seed"), std::string::npos);
  EXPECT_NE(error_with([&](PretrainOptions& o) { o.output_dir = a; }).find("is also --out"), std::string::npos);
  EXPECT_NE(error_with([](PretrainOptions& o) { o.masking.whole_word = true; }).find("(whole_word)"), std::string::npos);
  write_file_atomic(corpus, text + "one more line of text that shifts every packed sequence after it\n");
  EXPECT_NE(error_with([](PretrainOptions&) {}).find("packs into another split"), std::string::npos);
  for (const auto& dir : {a, c, c2, d, z, bad, corpus}) std::filesystem::remove_all(dir);
}

namespace {

std::string test_data(const std::string& rel) { return std::string(SALIENT_TEST_DATA) + "/" + rel; }

bool contains(const std::vector<std::string>& texts, const std::string& t) {
  return std::find(texts.begin(), texts.end(), t) != texts.end();
}

// A gzip file written with zlib, as dictzip's .dict.dz is one.
void write_gzip(const std::string& path, const std::string& data) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(gzwrite(f, data.data(), static_cast<unsigned>(data.size())), static_cast<int>(data.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

// A dev/test text the dictionary parsers keep verbatim (no GCIDE markup characters, 3+ words).
std::string heldout_sentence(const std::string& spec) {
  for (const auto& r : load_dataset(spec, shared_path("data")).records)
    if (split_whitespace(r.text).size() >= 4 && r.text.find_first_of("[]{}()\\*`|<>-\"0123456789") == std::string::npos)
      return r.text;
  ADD_FAILURE() << "no plain sentence in " << spec;
  return "";
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

TEST(Corpus, GcideDefinitionsAndQuotationsWithoutMarkup) {
  // The first 110 lines of Debian's gcide.dict.dz (dictd's 00-database entries, GCIDE's license)
  // and ten entries, unchanged.
  const auto texts = read_gcide(test_data("gcide_excerpt.dict.gz"));
  // A sense without its number, its [Obs.] label or the headword line and etymology above it.
  EXPECT_TRUE(contains(texts, "To cast or drive out; to banish; to expel; to reject."));
  // A quotation without its author; an inline quotation kept with its sense.
  EXPECT_TRUE(contains(texts, "Enforced the kingdom to aband."));
  EXPECT_TRUE(contains(texts, "He abandoned himself . . . to his favorite vice."));
  EXPECT_TRUE(contains(texts, "Forsaken, deserted. \"Your abandoned streams.\""));
  // Character codes ([ae]) become letters, {braces} go; a run-in derived word (-- Stra*te"gic*al*ly) is cut.
  EXPECT_TRUE(contains(texts, "A genus of small beetles of many species. They and their larvae feed on aphids or plant "
                              "lice, and hence are of great benefit to man. Also called ladybirds and ladybugs."));
  EXPECT_TRUE(contains(texts, "Of or pertaining to strategy; effected by artifice."));
  // A pronunciation on the line after the headword, and an etymology over two lines, dropped.
  EXPECT_TRUE(contains(texts, "The scaly covering of the toes, as in birds."));
  // "Usage:" paragraphs are prose: kept without the label.
  int usage = 0;
  for (const auto& t : texts) {
    usage += t.rfind("These adjectives agree", 0) == 0 || t.rfind("Abandoned, Profligate, Reprobate.", 0) == 0;
    for (const char* markup : {"[", "]", "{", "}", "\\", "*", "`", "Webster", "WordNet", "PJC", "Syn:", "Usage:", "--Shak",
                               "--Spenser", "OF. abandoner", "imp. & p. p.", "(-d", "Contracted from"})
      EXPECT_EQ(t.find(markup), std::string::npos) << markup << " in: " << t;
    // Not the dictd header entries nor GCIDE's license text; no synonym list; no stray headword.
    for (const char* other : {"00-database", "GNU General Public License", "Collaborative International", "forego; cede",
                              "applejack"})
      EXPECT_EQ(t.find(other), std::string::npos) << other << " in: " << t;
    EXPECT_GE(split_whitespace(t).size(), static_cast<size_t>(kMinDictionaryWords)) << t;
    EXPECT_EQ(t.find("  "), std::string::npos) << t;
  }
  EXPECT_EQ(usage, 1);
  EXPECT_EQ(texts.size(), 23u);
  // The uncompressed dictd text gives the same.
  const std::string plain = tmp_dir("gcide.dict");
  write_file_atomic(plain, read_gzip_file(test_data("gcide_excerpt.dict.gz")));
  EXPECT_EQ(read_gcide(plain), texts);
  std::filesystem::remove(plain);
}

TEST(Corpus, WordnetGlossesWithoutTheLicenseHeader) {
  // The first 33 lines of each Debian WordNet 3.0 data file: its 29-line license header, 4 synsets.
  const auto glosses = read_wordnet(test_data("wordnet"));
  ASSERT_EQ(glosses.size(), 16u);
  EXPECT_EQ(glosses[0], "that which is perceived or known or inferred to have its own distinct existence (living or nonliving)");
  EXPECT_EQ(glosses[4], "draw air into, and expel out of, the lungs; \"I can breathe better when the air is clean\"; \"The patient is respiring\"");
  EXPECT_EQ(glosses.back(), "before the Christian era; used following dates before the supposed year Christ was born; \"in 200 BC\"");
  for (const auto& g : glosses) {
    for (const char* other : {"Princeton", "LICENSEE", "WARRANTIES", "|", "00001740"})
      EXPECT_EQ(g.find(other), std::string::npos) << other << " in: " << g;
    EXPECT_NE(g.back(), ' ') << g;
  }
  // Lines that start with two spaces are the header, whatever they say; a short gloss is dropped.
  EXPECT_EQ(wordnet_glosses("  1 This software | is licensed to you\n00000001 03 n 01 x 0 000 | a b c d  \n"
                            "00000002 03 n 01 y 0 000 | too short\n"),
            std::vector<std::string>{"a b c d"});
}

TEST(Corpus, MissingOrInvalidDictionariesAreOneLineErrors) {
  EXPECT_NE(error_of([] { read_gcide("/nonexistent/gcide.dict.dz"); }).find("/nonexistent/gcide.dict.dz"), std::string::npos);
  const std::string empty_dir = tmp_dir("no_wordnet");
  std::filesystem::create_directories(empty_dir);
  const std::string msg = error_of([&] { read_wordnet(empty_dir); });
  EXPECT_NE(msg.find(empty_dir + "/data.noun"), std::string::npos) << msg;
  EXPECT_NE(msg.find("wordnet-base"), std::string::npos) << msg;
  // A file that is not GCIDE (no headword lines) and WordNet files without glosses are errors too.
  EXPECT_NE(error_of([] { read_gcide(test_data("wordnet/data.adv")); }).find("no GCIDE definitions"), std::string::npos);
  for (const char* name : {"data.noun", "data.verb", "data.adj", "data.adv"}) write_file_atomic(join_path(empty_dir, name), "  1 header only\n");
  EXPECT_NE(error_of([&] { read_wordnet(empty_dir); }).find("no WordNet glosses"), std::string::npos);
  std::filesystem::remove_all(empty_dir);

  EXPECT_EQ(resolve_gcide("none"), "");
  EXPECT_EQ(resolve_wordnet("none"), "");
  EXPECT_EQ(resolve_gcide(test_data("gcide_excerpt.dict.gz")), test_data("gcide_excerpt.dict.gz"));
  EXPECT_EQ(resolve_wordnet(test_data("wordnet")), test_data("wordnet"));
  EXPECT_NE(error_of([] { resolve_gcide("/nonexistent/g.dict.dz"); }).find("--gcide: '/nonexistent/g.dict.dz'"), std::string::npos);
  EXPECT_NE(error_of([] { resolve_gcide(""); }).find("--gcide"), std::string::npos);
  EXPECT_NE(error_of([] { resolve_gcide(test_data("wordnet")); }).find("is not a file"), std::string::npos);
  EXPECT_NE(error_of([] { resolve_wordnet("Auto"); }).find("--wordnet: 'Auto'"), std::string::npos);
  EXPECT_NE(error_of([] { resolve_wordnet(test_data("wordnet/data.adv")); }).find("is not a directory"), std::string::npos);
  // auto: the Debian path when installed (scripts/setup.sh installs both), else an error naming it and the package.
  if (file_exists(kDebianGcide))
    EXPECT_EQ(resolve_gcide("auto"), kDebianGcide);
  else
    EXPECT_NE(error_of([] { resolve_gcide("auto"); }).find("/usr/share/dictd/gcide.dict.dz not found (install the Debian package dict-gcide"),
              std::string::npos);
  if (file_exists(join_path(kDebianWordnet, "data.noun")))
    EXPECT_EQ(resolve_wordnet("auto"), kDebianWordnet);
  else
    EXPECT_NE(error_of([] { resolve_wordnet("auto"); }).find("/usr/share/wordnet/data.noun not found (install the Debian package wordnet-base"),
              std::string::npos);
}

TEST(Corpus, TrainTextsAndDictionariesNeverADevOrTestText) {
  SALIENT_REQUIRE_SHARED(shared_path("data"));
  // The dictionary excerpts plus, in each, a dev/test sentence in capitals with extra spaces (the
  // filter compares normalised text), and a gloss that repeats a GCIDE definition (a duplicate).
  const std::string dev = heldout_sentence("sst2:dev"), test = heldout_sentence("cola:dev");
  const std::string gcide = tmp_dir("gcide.dict.dz"), wordnet = tmp_dir("wordnet");
  write_gzip(gcide, read_gzip_file(test_data("gcide_excerpt.dict.gz")) + "Heldout \\Held\"out\\, n.\n   1. " + upper(dev) +
                        "\n      [1913 Webster]\n");
  std::filesystem::create_directories(wordnet);
  for (const char* name : {"data.noun", "data.verb", "data.adj"})
    std::filesystem::copy_file(test_data(std::string("wordnet/") + name), join_path(wordnet, name));
  write_file_atomic(join_path(wordnet, "data.adv"),
                    read_file(test_data("wordnet/data.adv")) + "00009999 02 r 01 x 0 000 |   " + upper(test) +
                        "  \n00009998 02 r 01 y 0 000 | The scaly covering of the toes, as in birds.  \n");
  ASSERT_TRUE(contains(read_gcide(gcide), upper(dev)));  // the parser keeps it: only the filter can drop it
  const std::string out = tmp_dir("tasks.txt");
  CorpusReport r = build_task_corpus(shared_path("data"), bert_tokenizer(), out, {gcide, wordnet});
  // Independently of the builder's own filter: every dev/test text of every task, normalised.
  std::unordered_set<std::string> heldout;
  for (const char* spec : {"sst2:dev", "sst2:test", "sst-trees:dev", "sst-trees:test", "cola:dev", "cola:ood",
                           "hatexplain:val", "hatexplain:test", "eraser:val", "eraser:test"})
    for (const auto& rec : load_dataset(spec, shared_path("data")).records) heldout.insert(normalized_text(rec.text));
  ASSERT_TRUE(heldout.count(normalized_text(upper(dev))) && heldout.count(normalized_text(upper(test))));
  std::ifstream in(out);
  std::string line;
  int64_t lines = 0, leaked = 0, dictionary_lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    leaked += heldout.count(normalized_text(line));
    dictionary_lines += line == "To cast or drive out; to banish; to expel; to reject." || line == "a separate and self-contained entity";
  }
  EXPECT_EQ(leaked, 0);
  EXPECT_EQ(dictionary_lines, 2);
  EXPECT_EQ(lines, r.texts);
  ASSERT_EQ(r.sources.size(), 7u);
  int64_t dropped = 0;
  for (const auto& s : r.sources) {
    EXPECT_GT(s.texts, 0) << s.name;
    EXPECT_GT(s.pieces, s.words / 2) << s.name;
    EXPECT_FALSE(s.license.empty());
    dropped += s.dropped_heldout;
  }
  EXPECT_GT(dropped, 0);  // some train texts do repeat a dev/test text, and are dropped
  const auto& g = r.sources[5];
  const auto& w = r.sources[6];
  EXPECT_EQ(g.spec, gcide);
  EXPECT_NE(g.license.find("GPL"), std::string::npos);
  EXPECT_EQ(g.dropped_heldout, 1);
  EXPECT_EQ(g.texts + g.dropped_heldout + g.dropped_duplicate, 24);  // the excerpt's 23 and the held-out one
  EXPECT_EQ(w.spec, wordnet);
  EXPECT_NE(w.license.find("WordNet 3.0"), std::string::npos);
  EXPECT_EQ(w.dropped_heldout, 1);
  EXPECT_GE(w.dropped_duplicate, 1);
  EXPECT_EQ(w.texts + w.dropped_heldout + w.dropped_duplicate, 18);
  auto report = parse_json_file(out + ".json");
  EXPECT_EQ(report["texts"], r.texts);
  EXPECT_EQ(report["sources"][6]["dropped_heldout"], 1);
  EXPECT_EQ(normalized_text("  A  Charming\tFILM \n"), "a charming film");
  // Without dictionaries: the task sources only.
  EXPECT_EQ(build_task_corpus(shared_path("data"), bert_tokenizer(), out).sources.size(), 5u);
  std::filesystem::remove(out);
  std::filesystem::remove(out + ".json");
  std::filesystem::remove(gcide);
  std::filesystem::remove_all(wordnet);
}

TEST(PretrainCli, BadCorporaAndOptionsGiveOneLineErrors) {
  SALIENT_REQUIRE_SHARED(tokenizer_dir());
  const std::string out = tmp_dir("cli"), empty = tmp_dir("empty.txt"), vocab = " --vocab " + tokenizer_dir();
  write_file_atomic(empty, "\n  \n");
  expect_one_line_error(run_salient("pretrain --corpus /nonexistent/c.txt" + vocab + " -o " + out), "--corpus: '/nonexistent/c.txt' not found");
  expect_one_line_error(run_salient("pretrain --corpus " + empty + vocab + " -o " + out), "no text");
  expect_one_line_error(run_salient("pretrain --corpus " + corpus_file() + vocab + " -o " + out + " --hidden 30 --heads 4"), "--hidden/--heads");
  expect_one_line_error(run_salient("pretrain --corpus " + corpus_file() + vocab + " -o " + out + " --mask-rate 1.5"), "--mask-rate");
  expect_one_line_error(run_salient("pretrain --corpus " + corpus_file() + vocab + " -o " + out + " --warmup -0.1"), "--warmup: must be in [0, 1)");
  expect_one_line_error(run_salient("pretrain --corpus " + corpus_file() + vocab + " -o " + out + " --max-length 4"), "--max-length");
  expect_one_line_error(run_salient("corpus build -o " + out + "/c.txt --data-dir /nonexistent"), "--data-dir");
  expect_one_line_error(run_salient("corpus build -o " + out + "/c.txt --gcide /nonexistent/g.dict.dz"), "--gcide: '/nonexistent/g.dict.dz'");
  expect_one_line_error(run_salient("corpus build -o " + out + "/c.txt --gcide none --wordnet nope"), "--wordnet: 'nope'");
  expect_one_line_error(run_salient("corpus build -o " + out + "/c.txt --gcide none --wordnet ''"), "--wordnet");
  // A tiny run through the CLI writes the model and its report.
  auto r = run_salient("pretrain --corpus " + corpus_file() + vocab + " -o " + out +
                       " --layers 1 --hidden 16 --heads 2 --intermediate 32 --max-length 16 --batch-size 8 --max-steps 5");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(file_exists(join_path(out, "pretrain.json")));
  EXPECT_EQ(nlohmann::json::parse(r.out)["steps"], 5);
  // --init takes the encoder's shape for the flags not given; a given one that differs, a missing
  // directory and another held-out split are one-line errors.
  const std::string cont = tmp_dir("cli-init"), small = " --batch-size 8 --max-steps 2 --seed 1 --init " + out;
  auto rc = run_salient("pretrain --corpus " + corpus_file() + vocab + " -o " + cont + small);
  ASSERT_EQ(rc.code, 0) << rc.err;
  EXPECT_EQ(parse_json_file(join_path(cont, "config.json"))["hidden_size"], 16);
  expect_one_line_error(run_salient("pretrain --corpus " + corpus_file() + vocab + " -o " + cont + "2" + small + " --heads 4"),
                        "--init: " + out + " has --heads 2, but the options say 4");
  expect_one_line_error(run_salient("pretrain --corpus " + corpus_file() + vocab + " -o " + cont + "2 --init /nonexistent/m"),
                        "--init: /nonexistent/m: model directory not found");
  expect_one_line_error(run_salient("pretrain --corpus " + corpus_file() + vocab + " -o " + cont + "2" + small + " --heldout 0.2"),
                        "records another held-out split or masking (heldout_share)");
  std::filesystem::remove_all(cont);
  std::filesystem::remove_all(out);
  std::filesystem::remove(empty);
}
