// Dataset and IDX readers: counts and label distributions of the real files in shared/data (as
// stated in shared/data/MANIFEST.md), rationale alignment, and located errors on malformed rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <thread>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "data/dataset.h"
#include "dist/shards.h"
#include "data/idx.h"
#include "test_util.h"
#include "util/atomic_file.h"
#include "util/memory.h"
#include "util/error.h"
#include "util/sanitizer.h"
#include "util/io.h"

using salient::Dataset;
using salient::test::error_of;
using salient::test::shared_path;

namespace {

// A fresh directory under /tmp for hand-written (bad) files, removed when the test program exits.
struct TempDir {
  std::string path;
  TempDir() {
    char templ[] = "/tmp/salient_test_data_XXXXXX";
    const char* d = mkdtemp(templ);
    if (!d) throw std::runtime_error("mkdtemp failed");
    path = d;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

std::string temp_dir() {
  static TempDir dir;
  return dir.path;
}

std::string write_temp(const std::string& name, const std::string& content) {
  std::string path = salient::join_path(temp_dir(), name);
  salient::make_dirs(path.substr(0, path.find_last_of('/')));
  std::ofstream out(path, std::ios::binary);
  out << content;
  return path;
}

#define EXPECT_ERROR(expr, fragment)                                                  \
  do {                                                                                \
    std::string msg_ = error_of([&] { (void)(expr); });                               \
    EXPECT_NE(msg_.find(fragment), std::string::npos) << "message: " << msg_;         \
  } while (0)

std::map<int64_t, size_t> label_counts(const Dataset& ds) {
  std::map<int64_t, size_t> counts;
  for (const auto& r : ds.records) ++counts[r.label];
  return counts;
}

// Every record with a rationale has one value per whitespace word, all in [0, 1].
void expect_aligned(const Dataset& ds) {
  for (const auto& r : ds.records) {
    if (r.rationale.empty()) continue;
    ASSERT_EQ(salient::split_whitespace(r.text).size(), r.rationale.size()) << ds.name << " id " << r.id;
    for (float v : r.rationale) ASSERT_TRUE(v >= 0.0f && v <= 1.0f) << ds.name << " id " << r.id;
    for (const auto& m : r.annotator_rationales) ASSERT_EQ(m.size(), r.rationale.size());
  }
}

double rationale_sum(const Dataset& ds) {
  double s = 0;
  for (const auto& r : ds.records) s += std::accumulate(r.rationale.begin(), r.rationale.end(), 0.0);
  return s;
}

std::string data_dir() { return shared_path("data"); }

}  // namespace

TEST(Data, SplitWhitespace) {
  EXPECT_EQ(salient::split_whitespace("  a\tb \r\n c  "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(salient::split_whitespace(" \t ").empty());
  // Only ASCII whitespace separates words: a non-breaking space stays inside the word.
  EXPECT_EQ(salient::split_whitespace("8\xc2\xa0" "1/2 x").size(), 2u);
}

// ---- SST-2 (GLUE) ----

TEST(Data, Sst2Counts) {
  SALIENT_REQUIRE_SHARED(data_dir());
  Dataset train = salient::load_dataset("sst2:train", data_dir());
  ASSERT_EQ(train.records.size(), 67349u);
  EXPECT_EQ(label_counts(train)[1], 37569u);
  EXPECT_EQ(label_counts(train)[0], 29780u);
  EXPECT_EQ(train.label_names, (std::vector<std::string>{"negative", "positive"}));
  // The space before the tab is trimmed.
  EXPECT_EQ(train.records[0].text, "hide new secretions from the parental units");
  EXPECT_FALSE(train.has_rationales());

  Dataset dev = salient::load_dataset("sst2:dev", data_dir());
  ASSERT_EQ(dev.records.size(), 872u);
  EXPECT_EQ(label_counts(dev)[1], 444u);
  EXPECT_EQ(label_counts(dev)[0], 428u);
  EXPECT_EQ(dev.name, "sst2:dev");

  // test-labeled.tsv has CRLF line endings: no '\r' may leak into text.
  Dataset test = salient::load_dataset("sst2:test", data_dir());
  ASSERT_EQ(test.records.size(), 1821u);
  EXPECT_EQ(label_counts(test)[1], 904u);
  EXPECT_EQ(label_counts(test)[0], 917u);
  for (const auto& r : test.records) ASSERT_EQ(r.text.find('\r'), std::string::npos);
  EXPECT_EQ(test.records[0].text, "uneasy mishmash of styles and genres .");

  // GLUE's unlabelled test file: index column becomes the id, label -1.
  Dataset unlabelled = salient::read_glue_tsv(shared_path("data/sst2_glue/test.tsv"));
  ASSERT_EQ(unlabelled.records.size(), 1821u);
  EXPECT_EQ(unlabelled.records[1].id, "1");
  EXPECT_EQ(unlabelled.records[1].label, -1);
}

// ---- CoLA ----

TEST(Data, ColaCounts) {
  SALIENT_REQUIRE_SHARED(data_dir());
  Dataset train = salient::load_dataset("cola:train", data_dir());
  ASSERT_EQ(train.records.size(), 8551u);
  EXPECT_EQ(label_counts(train)[1], 6023u);
  EXPECT_EQ(label_counts(train)[0], 2528u);
  EXPECT_EQ(train.label_names, (std::vector<std::string>{"unacceptable", "acceptable"}));

  Dataset dev = salient::load_dataset("cola:dev", data_dir());
  ASSERT_EQ(dev.records.size(), 527u);
  EXPECT_EQ(label_counts(dev)[1], 365u);
  EXPECT_EQ(dev.records[0].text, "The sailors rode the breeze clear of the rocks.");

  // No trailing newline on the last line: the last row is still read.
  Dataset ood = salient::load_dataset("cola:ood", data_dir());
  ASSERT_EQ(ood.records.size(), 516u);
  EXPECT_EQ(label_counts(ood)[1], 354u);
  EXPECT_EQ(label_counts(ood)[0], 162u);
  EXPECT_EQ(ood.records.back().text, "John talked to Bill about himself.");
}

// ---- HateXplain ----

TEST(Data, HateXplainJsonl) {
  SALIENT_REQUIRE_SHARED(data_dir());
  Dataset val = salient::load_dataset("hatexplain:val", data_dir());
  ASSERT_EQ(val.records.size(), 1922u);
  EXPECT_EQ(val.label_names, (std::vector<std::string>{"hatespeech", "normal", "offensive"}));
  auto counts = label_counts(val);
  EXPECT_EQ(counts[1], 781u);
  EXPECT_EQ(counts[0], 593u);
  EXPECT_EQ(counts[2], 548u);
  EXPECT_TRUE(val.has_rationales());
  expect_aligned(val);
  size_t two_or_more_masks = 0;
  for (const auto& r : val.records) {
    ASSERT_FALSE(r.rationale.empty());
    if (r.annotator_rationales.size() >= 2) ++two_or_more_masks;
    // Normal posts have no masks, hence an all-zero gold rationale.
    if (r.annotator_rationales.empty()) {
      EXPECT_EQ(r.label, 1);
      EXPECT_EQ(std::accumulate(r.rationale.begin(), r.rationale.end(), 0.0f), 0.0f);
    }
    // Gold = mean of the masks >= 0.5.
    for (size_t w = 0; w < r.rationale.size() && !r.annotator_rationales.empty(); ++w) {
      int sum = 0;
      for (const auto& m : r.annotator_rationales) sum += m[w];
      ASSERT_EQ(r.rationale[w], 2 * sum >= static_cast<int>(r.annotator_rationales.size()) ? 1.0f : 0.0f);
    }
  }
  EXPECT_EQ(two_or_more_masks, 1141u);

  // Rows follow post_id_divisions["val"].
  nlohmann::json divisions = salient::parse_json_file(shared_path("data/hatexplain/post_id_divisions.json"));
  ASSERT_EQ(divisions["val"].size(), val.records.size());
  for (size_t i = 0; i < val.records.size(); ++i)
    ASSERT_EQ(val.records[i].id, divisions["val"][i].get<std::string>());
  EXPECT_EQ(val.records[0].text.substr(0, 24), "me getting books from th");

  Dataset test = salient::load_dataset("hatexplain:test", data_dir());
  ASSERT_EQ(test.records.size(), 1924u);
  counts = label_counts(test);
  EXPECT_EQ(counts[1], 782u);
  EXPECT_EQ(counts[0], 594u);
  EXPECT_EQ(counts[2], 548u);
  expect_aligned(test);
}

TEST(Data, HateXplainTrainCsv) {
  SALIENT_REQUIRE_SHARED(data_dir());
  Dataset train = salient::load_dataset("hatexplain:train", data_dir());
  ASSERT_EQ(train.records.size(), 15383u);
  auto counts = label_counts(train);
  EXPECT_EQ(counts[1], 6251u);
  EXPECT_EQ(counts[0], 4748u);
  EXPECT_EQ(counts[2], 4384u);
  EXPECT_FALSE(train.has_rationales());
  EXPECT_EQ(train.records[3].text, "no liberal congratulated hindu refugees post cab because they hate hindus");
  for (const auto& r : train.records) ASSERT_EQ(r.text.find('\r'), std::string::npos);
}

// The original dataset.json layout (absent from shared/data): a small synthetic copy.
TEST(Data, HateXplainOriginalLayout) {
  std::string dataset = write_temp("hx/dataset.json", R"({
    "p2": {"post_id": "p2", "annotators": [
        {"label": "hatespeech", "annotator_id": 1, "target": ["X"]},
        {"label": "offensive", "annotator_id": 2, "target": ["X"]},
        {"label": "hatespeech", "annotator_id": 3, "target": ["X"]}],
      "rationales": [[1, 0, 0, 1], [1, 1, 0, 0], [0, 0, 0, 1]],
      "post_tokens": ["you", "", "two words", "x"]},
    "p1": {"post_id": "p1", "annotators": [
        {"label": "normal", "annotator_id": 1, "target": ["None"]},
        {"label": "normal", "annotator_id": 2, "target": ["None"]},
        {"label": "offensive", "annotator_id": 3, "target": ["None"]}],
      "rationales": [], "post_tokens": ["hello", "world"]},
    "p3": {"post_id": "p3", "annotators": [
        {"label": "normal", "annotator_id": 1, "target": []},
        {"label": "offensive", "annotator_id": 2, "target": []},
        {"label": "hatespeech", "annotator_id": 3, "target": []}],
      "rationales": [], "post_tokens": ["undecided"]}
  })");
  std::string divisions = write_temp("hx/divisions.json", R"({"train": ["p1", "p2"], "val": ["p2"], "test": ["p3"]})");

  Dataset train = salient::read_hatexplain_original(dataset, divisions, "train");
  ASSERT_EQ(train.records.size(), 2u);
  EXPECT_EQ(train.records[0].id, "p1");  // order of the divisions list
  EXPECT_EQ(train.records[0].label, 1);
  EXPECT_EQ(train.records[0].rationale, (std::vector<float>{0, 0}));
  const auto& p2 = train.records[1];
  EXPECT_EQ(p2.label, 0);
  // The empty token is dropped with its mask entries; "two words" becomes two words that share
  // the token's mask value.
  EXPECT_EQ(p2.text, "you two words x");
  EXPECT_EQ(p2.annotator_rationales,
            (std::vector<std::vector<int>>{{1, 0, 0, 1}, {1, 0, 0, 0}, {0, 0, 0, 1}}));
  EXPECT_EQ(p2.rationale, (std::vector<float>{1, 0, 0, 1}));
  expect_aligned(train);

  // No divisions: every decided post in file order; the undecided p3 is skipped.
  Dataset all = salient::read_hatexplain_original(dataset, "", "");
  ASSERT_EQ(all.records.size(), 2u);
  EXPECT_EQ(all.records[0].id, "p2");
  // A split that lists an undecided post is an error, as is an unknown split.
  EXPECT_ERROR(salient::read_hatexplain_original(dataset, divisions, "test"), "no majority label");
  EXPECT_ERROR(salient::read_hatexplain_original(dataset, divisions, "dev"), "no split \"dev\"");
}

TEST(Data, HateXplainJsonlErrors) {
  const std::string good =
      R"({"id":"a","annotators":{"label":[0,0,2]},"rationales":[[1,0],[1,1]],"post_tokens":["x","y"]})";
  std::string p = write_temp("hx_bad_mask.jsonl",
                             good + "\n" +
                                 R"({"id":"b","annotators":{"label":[0,0,2]},"rationales":[[1,0,1]],"post_tokens":["x","y"]})" +
                                 "\n");
  EXPECT_ERROR(salient::read_hatexplain_jsonl(p), p + ":2: rationale mask has 3 values but the post has 2 tokens");
  p = write_temp("hx_bad_json.jsonl", good + "\n\n{\"id\": \n");
  EXPECT_ERROR(salient::read_hatexplain_jsonl(p), p + ":3: invalid JSON");
  p = write_temp("hx_no_majority.jsonl",
                 R"({"id":"c","annotators":{"label":[0,1,2]},"rationales":[],"post_tokens":["x"]})");
  EXPECT_ERROR(salient::read_hatexplain_jsonl(p), p + ":1: post c has no majority label");
  p = write_temp("hx_bad_label.jsonl",
                 R"({"id":"d","annotators":{"label":[0,3,3]},"rationales":[],"post_tokens":["x"]})");
  EXPECT_ERROR(salient::read_hatexplain_jsonl(p), p + ":1: annotator label 3 out of range");
  p = write_temp("hx_missing.jsonl", R"({"id":"e","annotators":{"label":[1,1,1]},"rationales":[]})");
  EXPECT_ERROR(salient::read_hatexplain_jsonl(p), p + ":1: missing field \"post_tokens\"");
}

// ---- CSV quoting (RFC 4180) ----

TEST(Data, CsvQuoting) {
  std::string p = write_temp("quoted.csv",
                             "text,majority_label,labels\r\n"
                             "\"hello, world\",1,\"1, 1, 2\"\r\n"
                             "\"she said \"\"hi\"\"\",0,x\r\n"
                             "\"two\nlines\",2,\"a\r\nb\"\r\n"
                             "plain text,1,\r\n"
                             "last,0,y");  // no final newline
  Dataset ds = salient::read_hatexplain_csv(p);
  ASSERT_EQ(ds.records.size(), 5u);
  EXPECT_EQ(ds.records[0].text, "hello, world");
  EXPECT_EQ(ds.records[1].text, "she said \"hi\"");
  EXPECT_EQ(ds.records[2].text, "two\nlines");
  EXPECT_EQ(ds.records[2].label, 2);
  EXPECT_EQ(ds.records[3].text, "plain text");
  EXPECT_EQ(ds.records[4].label, 0);

  // Line numbers count the newlines inside quoted fields: the bad row starts on line 5.
  p = write_temp("quoted_bad.csv", "text,majority_label\n\"a\nb\",1\n\"c\",0\nd,7\n");
  EXPECT_ERROR(salient::read_hatexplain_csv(p), p + ":5: label 7 out of range 0..2");
  p = write_temp("unclosed.csv", "text,majority_label\nok,1\n\"never closed,1\nmore\n");
  EXPECT_ERROR(salient::read_hatexplain_csv(p), p + ":3: quoted field is not closed");
  p = write_temp("after_quote.csv", "text,majority_label\n\"a\"b,1\n");
  EXPECT_ERROR(salient::read_hatexplain_csv(p), p + ":2: unexpected character after closing quote");
  p = write_temp("columns.csv", "text,majority_label\na,1,extra\n");
  EXPECT_ERROR(salient::read_hatexplain_csv(p), p + ":2: expected 2 comma-separated columns, got 3");
}

// ---- ERASER ----

TEST(Data, EraserCounts) {
  SALIENT_REQUIRE_SHARED(data_dir());
  struct Split {
    const char* spec;
    size_t count, pos;
    double marked;  // tokens covered by at least one evidence span (union over spans)
  };
  for (const Split& s : {Split{"eraser:train", 1600, 800, 106877}, Split{"eraser:val", 200, 100, 9953},
                         Split{"eraser:test", 199, 99, 47928}}) {
    Dataset ds = salient::load_dataset(s.spec, data_dir());
    ASSERT_EQ(ds.records.size(), s.count) << s.spec;
    EXPECT_EQ(label_counts(ds)[1], s.pos) << s.spec;
    EXPECT_EQ(label_counts(ds)[0], s.count - s.pos) << s.spec;
    EXPECT_EQ(ds.label_names, (std::vector<std::string>{"NEG", "POS"}));
    expect_aligned(ds);
    EXPECT_EQ(rationale_sum(ds), s.marked) << s.spec;
  }
  Dataset val = salient::load_dataset("eraser:val", data_dir());
  EXPECT_EQ(val.records[0].id, "negR_800.txt");
  // Evidence "definitely the cinematic equivalent of a sleeper car" = tokens [692, 700).
  auto words = salient::split_whitespace(val.records[0].text);
  EXPECT_EQ(words[692], "definitely");
  EXPECT_EQ(val.records[0].rationale[691], 0.0f);
  EXPECT_EQ(val.records[0].rationale[692], 1.0f);
  EXPECT_EQ(val.records[0].rationale[699], 1.0f);
}

TEST(Data, EraserErrors) {
  std::string docs = salient::join_path(temp_dir(), "eraser_docs");
  write_temp("eraser_docs/d1.txt", "a good film .\nreally good !\n");
  auto line = [](const std::string& id, const std::string& cls, int start, int end, const std::string& text) {
    return fmt::format(R"({{"annotation_id": "{}", "classification": "{}", "evidences": [[{{"docid": "{}", )"
                       R"("start_token": {}, "end_token": {}, "text": "{}"}}]]}})",
                       id, cls, id, start, end, text);
  };
  std::string ok = line("d1.txt", "POS", 1, 2, "good") + "\n";
  std::string p = write_temp("eraser_ok.jsonl", ok);
  Dataset ds = salient::read_eraser(p, docs);
  ASSERT_EQ(ds.records.size(), 1u);
  EXPECT_EQ(ds.records[0].text, "a good film . really good !");
  EXPECT_EQ(ds.records[0].rationale, (std::vector<float>{0, 1, 0, 0, 0, 0, 0}));

  p = write_temp("eraser_mismatch.jsonl", ok + line("d1.txt", "POS", 4, 6, "really bad") + "\n");
  EXPECT_ERROR(salient::read_eraser(p, docs), p + ":2: evidence text 'really bad' does not match");
  p = write_temp("eraser_missing_doc.jsonl", ok + ok + line("nope.txt", "NEG", 0, 1, "a") + "\n");
  EXPECT_ERROR(salient::read_eraser(p, docs), p + ":3: missing document");
  p = write_temp("eraser_label.jsonl", line("d1.txt", "NEUTRAL", 0, 1, "a") + "\n");
  EXPECT_ERROR(salient::read_eraser(p, docs), p + ":1: classification 'NEUTRAL' is not NEG or POS");
  p = write_temp("eraser_range.jsonl", line("d1.txt", "POS", 5, 9, "x") + "\n");
  EXPECT_ERROR(salient::read_eraser(p, docs), p + ":1: evidence tokens [5, 9) outside document");
}

// ---- SST trees ----

TEST(Data, SstTreesCounts) {
  SALIENT_REQUIRE_SHARED(data_dir());
  struct Split {
    const char* name;
    size_t trees, nodes, non_neutral, pos;
  };
  for (const Split& s : {Split{"train", 8544, 318582, 6920, 3610}, Split{"dev", 1101, 41447, 872, 444},
                         Split{"test", 2210, 82600, 1821, 909}}) {
    auto trees = salient::read_sst_trees(shared_path(std::string("data/sst_ptb_trees/") + s.name + ".txt"));
    ASSERT_EQ(trees.size(), s.trees) << s.name;
    size_t nodes = 0;
    for (const auto& t : trees) nodes += t.nodes.size();
    EXPECT_EQ(nodes, s.nodes) << s.name;
    Dataset ds = salient::load_dataset(std::string("sst-trees:") + s.name, data_dir());
    ASSERT_EQ(ds.records.size(), s.non_neutral) << s.name;
    EXPECT_EQ(label_counts(ds)[1], s.pos) << s.name;
    EXPECT_TRUE(ds.has_rationales());
    expect_aligned(ds);
    for (const auto& r : ds.records) {
      // Every non-neutral root agrees with itself, so at least one word is marked.
      ASSERT_GT(std::accumulate(r.rationale.begin(), r.rationale.end(), 0.0f), 0.0f) << s.name << " " << r.id;
    }
  }
  // First train tree: the quirky leaf "R  ock" is kept in words and split into two text words.
  auto train = salient::read_sst_trees(shared_path("data/sst_ptb_trees/train.txt"));
  EXPECT_EQ(train[0].words[1], "R  ock");
  EXPECT_EQ(train[0].nodes[train[0].root].label, 3);
}

TEST(Data, SstTreesMatchGlueDev) {
  SALIENT_REQUIRE_SHARED(data_dir());
  Dataset trees = salient::load_dataset("sst-trees:dev", data_dir());
  Dataset glue = salient::load_dataset("sst2:dev", data_dir());
  std::map<std::string, int64_t> glue_label;
  for (const auto& r : glue.records) glue_label[r.text] = r.label;
  size_t matched = 0;
  for (const auto& r : trees.records) {
    std::string lower = r.text;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    auto it = glue_label.find(lower);
    if (it != glue_label.end()) {
      ++matched;
      EXPECT_EQ(it->second, r.label) << r.text;
    }
  }
  // After -LRB-/-RRB- and \/ unescaping, every dev sentence is a GLUE SST-2 dev sentence (lowercased).
  EXPECT_EQ(matched, 872u);
  // Measured with this rule: 3796 of the 17046 dev words are rationale words (4467 before the
  // descent stopped at opposed constituents).
  EXPECT_EQ(rationale_sum(trees), 3796.0);
}

TEST(Data, SstRationaleRuleHandMadeTree) {
  // Positive sentence. "good" (3) is a minimal positive phrase; "not bad" is positive (3) only as a
  // phrase (its children are 2 and 0), so it is minimal, but "bad" (0) opposes the sentence and is
  // not marked; "the film" and "but" are not marked.
  // Root: (3 (3 (2 (2 the) (2 film)) (3 (2 is) (3 good))) (3 (2 but) (3 (2 not) (0 bad))))
  std::string p = write_temp("tree.txt",
                             "(3 (3 (2 (2 the) (2 film)) (3 (2 is) (3 good))) (3 (2 but) (3 (2 not) (0 bad))))\n"
                             "(1 (2 (2 a) (4 great)) (1 (2 -LRB-) (2 (2 1\\/2) (2 -RRB-))))\n"
                             "(2 (2 neutral) (3 fine))\n");
  auto trees = salient::read_sst_trees(p);
  ASSERT_EQ(trees.size(), 3u);
  EXPECT_EQ(salient::sst_tree_rationale(trees[0]), (std::vector<float>{0, 0, 0, 1, 0, 1, 0}));
  // Negative sentence with no negative word: the smallest negative phrase is "( 1/2 )";
  // "great" disagrees and is not marked.
  EXPECT_EQ(salient::sst_tree_rationale(trees[1]), (std::vector<float>{0, 0, 1, 1, 1}));
  EXPECT_EQ(salient::sst_tree_rationale(trees[2]), (std::vector<float>{0, 0}));  // neutral root
  // The descent stops at a constituent of the opposite polarity: "good" in a positive sentence's
  // negative "(not good)", and "bad" in a negative sentence's positive "(not (bad))", are not marked.
  std::string q = write_temp("tree2.txt",
                             "(3 (3 fine) (1 (2 not) (3 good)))\n"
                             "(1 (1 boring) (3 (2 not) (1 bad)))\n");
  auto opposed = salient::read_sst_trees(q);
  EXPECT_EQ(salient::sst_tree_rationale(opposed[0]), (std::vector<float>{1, 0, 0}));
  EXPECT_EQ(salient::sst_tree_rationale(opposed[1]), (std::vector<float>{1, 0, 0}));
  // A minimal phrase made only of opposed parts is marked whole (its polarity is their composition).
  std::string c = write_temp("tree3.txt", "(3 (2 you) (3 (1 (2 hard) (1 hearted)) (1 (1 not) (3 moved))))\n");
  EXPECT_EQ(salient::sst_tree_rationale(salient::read_sst_trees(c)[0]), (std::vector<float>{0, 1, 1, 1, 1}));

  Dataset ds = salient::sst_trees_to_binary(trees);
  ASSERT_EQ(ds.records.size(), 2u);  // neutral root dropped
  EXPECT_EQ(ds.records[0].label, 1);
  EXPECT_EQ(ds.records[0].text, "the film is good but not bad");
  EXPECT_EQ(ds.records[1].label, 0);
  EXPECT_EQ(ds.records[1].text, "a great ( 1/2 )");
  EXPECT_EQ(ds.records[1].id, "1");
  EXPECT_EQ(trees[1].words[2], "-LRB-");  // trees keep the file's tokens

  // Node structure: pre-order, root first, spans over leaves.
  const auto& t = trees[0];
  EXPECT_EQ(t.root, 0);
  EXPECT_EQ(t.nodes[t.root].begin, 0);
  EXPECT_EQ(t.nodes[t.root].end, 7);
  EXPECT_EQ(t.nodes.size(), 13u);

  Dataset no_rationale = salient::sst_trees_to_binary(trees, false);
  EXPECT_FALSE(no_rationale.has_rationales());
}

TEST(Data, SstTreeErrors) {
  std::string p = write_temp("tree_unbalanced.txt", "(3 (2 a) (3 b))\n(3 (2 a) (3 b)\n");
  EXPECT_ERROR(salient::read_sst_trees(p), p + ":2: unbalanced parentheses");
  p = write_temp("tree_label.txt", "(3 (2 a) (3 b))\n\n(5 (2 a) (3 b))\n");
  EXPECT_ERROR(salient::read_sst_trees(p), p + ":3: sentiment label '5' is not 0..4");
  p = write_temp("tree_label2.txt", "(x (2 a) (3 b))\n");
  EXPECT_ERROR(salient::read_sst_trees(p), p + ":1: sentiment label 'x' is not 0..4");
  p = write_temp("tree_extra.txt", "(3 (2 a) (3 b)))\n");
  EXPECT_ERROR(salient::read_sst_trees(p), p + ":1: unexpected text after the end of the tree");
  p = write_temp("tree_three.txt", "(3 (2 a) (3 b) (2 c))\n");
  EXPECT_ERROR(salient::read_sst_trees(p), p + ":1: phrase node has more than two children");
  p = write_temp("tree_empty_leaf.txt", "(3 (2 ) (3 b))\n");
  EXPECT_ERROR(salient::read_sst_trees(p), p + ":1: empty leaf");
  // Nesting is bounded (the parser recurses): 200,000 levels would overflow the stack.
  std::string deep;
  for (int i = 0; i < 200000; ++i) deep += "(3 ";
  p = write_temp("tree_deep.txt", deep + "\n");
  EXPECT_ERROR(salient::read_sst_trees(p), p + ":1: tree nested deeper than 1000 levels");
  // 1000 levels parse: a right-branching chain whose left children are leaves.
  std::string chain;
  for (int i = 0; i < 999; ++i) chain += "(3 (2 a) ";
  chain += "(3 b)" + std::string(999, ')');
  p = write_temp("tree_chain.txt", chain + "\n");
  EXPECT_EQ(salient::read_sst_trees(p).at(0).words.size(), 1000u);
}

// ---- GLUE / CoLA malformed rows ----

TEST(Data, TsvErrors) {
  std::string p = write_temp("glue_cols.tsv", "sentence\tlabel\ngood \t1\nbad\t0\textra\n");
  EXPECT_ERROR(salient::read_glue_tsv(p), p + ":3: expected 2 tab-separated columns, got 3");
  p = write_temp("glue_label.tsv", "sentence\tlabel\r\ngood\t1\r\nbad\tneg\r\n");
  EXPECT_ERROR(salient::read_glue_tsv(p), p + ":3: label 'neg' is not an integer");
  p = write_temp("glue_range.tsv", "sentence\tlabel\ngood\t2\n");
  EXPECT_ERROR(salient::read_glue_tsv(p), p + ":2: label 2 out of range 0..1");
  p = write_temp("glue_header.tsv", "text\tlabel\ngood\t1\n");
  EXPECT_ERROR(salient::read_glue_tsv(p), p + ":1: header has no \"sentence\" column");
  p = write_temp("cola_cols.tsv", "src\t1\t\tFine.\nsrc\t0\t*\n");
  EXPECT_ERROR(salient::read_cola_tsv(p), p + ":2: expected 4 tab-separated columns, got 3");
  p = write_temp("cola_label.tsv", "src\t1\t\tFine.\nsrc\t1.5\t\tHm.");
  EXPECT_ERROR(salient::read_cola_tsv(p), p + ":2: label '1.5' is not an integer");
  EXPECT_ERROR(salient::read_cola_tsv("/nonexistent/cola.tsv"), "/nonexistent/cola.tsv: cannot open");
}

// ---- generic reader and dispatch ----

TEST(Data, GenericJsonl) {
  std::string p = write_temp("generic.jsonl",
                             R"({"text": "a b c", "label": "pos", "rationale": [0, 1, 1]})"
                             "\n"
                             R"({"text": "d e", "text_pair": "q", "label": "neg", "id": "x7"})"
                             "\n"
                             R"({"text": "f", "label": "pos"})"
                             "\n");
  Dataset ds = salient::read_generic(p);
  ASSERT_EQ(ds.records.size(), 3u);
  EXPECT_EQ(ds.label_names, (std::vector<std::string>{"pos", "neg"}));  // order of first appearance
  EXPECT_EQ(ds.records[0].label, 0);
  EXPECT_EQ(ds.records[1].label, 1);
  EXPECT_EQ(ds.records[1].text_pair.value_or(""), "q");
  EXPECT_EQ(ds.records[1].id, "x7");
  EXPECT_EQ(ds.records[0].rationale, (std::vector<float>{0, 1, 1}));
  EXPECT_TRUE(ds.has_rationales());

  Dataset named = salient::read_generic(p, {"neg", "pos"});
  EXPECT_EQ(named.records[0].label, 1);
  EXPECT_EQ(named.records[1].label, 0);

  std::string q = write_temp("generic_int.jsonl", "{\"text\": \"a\", \"label\": 2}\n{\"text\": \"b\", \"label\": 0}\n");
  Dataset ints = salient::read_generic(q);
  EXPECT_EQ(ints.label_names, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(ints.records[0].label, 2);
  EXPECT_ERROR(salient::read_generic(q, {"neg", "pos"}), q + ":1: label 2 out of range 0..1");
  // Integer labels are class ids: the largest allowed one names kMaxLabels classes, one more is an
  // error (the fuzzer's 2 GB allocation was a label of 10^8 making 10^8 names).
  q = write_temp("generic_big.jsonl", "{\"text\": \"a\", \"label\": 999999}\n");
  EXPECT_EQ(salient::read_generic(q).label_names.size(), static_cast<size_t>(salient::kMaxLabels));
  q = write_temp("generic_huge.jsonl", "{\"text\": \"a\", \"label\": 0}\n{\"text\": \"b\", \"label\": 100000000}\n");
  EXPECT_ERROR(salient::read_generic(q), q + ":2: label 100000000 is too large (integer labels are class ids below 1000000)");
  q = write_temp("generic_u64.jsonl", "{\"text\": \"a\", \"label\": 18446744073709551615}\n");
  EXPECT_ERROR(salient::read_generic(q), q + ":1: label 18446744073709551615 is too large");
  q = write_temp("generic_huge.csv", "text,label\na,1000000\n");
  EXPECT_ERROR(salient::read_generic(q), q + ":2: label 1000000 is too large");
  q = write_temp("generic_u64.csv", "text,label\na,99999999999999999999\nb,0\n");  // beyond int64: not a name
  EXPECT_ERROR(salient::read_generic(q), q + ":2: label 99999999999999999999 is too large");
  q = write_temp("generic_i64.csv", "text,label\na,-99999999999999999999\n");
  EXPECT_ERROR(salient::read_generic(q), q + ":2: label -99999999999999999999 is negative");

  p = write_temp("generic_bad_rat.jsonl", "{\"text\": \"a b\", \"label\": 0}\n{\"text\": \"a b\", \"rationale\": [1]}\n");
  EXPECT_ERROR(salient::read_generic(p), p + ":2: rationale has 1 values but the text has 2 words");
  p = write_temp("generic_unknown.jsonl", "{\"text\": \"a\", \"label\": \"maybe\"}\n");
  EXPECT_ERROR(salient::read_generic(p, {"neg", "pos"}), p + ":1: unknown label 'maybe'");
  p = write_temp("generic_mixed.jsonl", "{\"text\": \"a\", \"label\": 1}\n{\"text\": \"b\", \"label\": \"pos\"}\n");
  EXPECT_ERROR(salient::read_generic(p), p + ":2: label 'pos' is a name");
  p = write_temp("generic_notext.jsonl", "{\"label\": 1}\n");
  EXPECT_ERROR(salient::read_generic(p), p + ":1: missing field \"text\"");
  EXPECT_ERROR(salient::read_generic(write_temp("x.txt", "a")), "unsupported file type");
}

TEST(Data, GenericCsvTsv) {
  std::string p = write_temp("generic.csv", "id,text,text_pair,label\nr1,\"x, y\",,good\nr2,z,w,bad\nr3,u,,\n");
  Dataset ds = salient::read_generic(p, {"bad", "good"});
  ASSERT_EQ(ds.records.size(), 3u);
  EXPECT_EQ(ds.records[0].text, "x, y");
  EXPECT_FALSE(ds.records[0].text_pair.has_value());
  EXPECT_EQ(ds.records[1].text_pair.value_or(""), "w");
  EXPECT_EQ(ds.records[0].label, 1);
  EXPECT_EQ(ds.records[2].label, -1);  // empty label: unlabelled
  EXPECT_EQ(ds.records[1].id, "r2");

  p = write_temp("generic.tsv", "text\tlabel\n\"quoted\" stays\t1\nb\t0\n");
  ds = salient::read_generic(p);
  EXPECT_EQ(ds.records[0].text, "\"quoted\" stays");  // TSV has no quoting
  EXPECT_EQ(ds.records[0].label, 1);
  // A UTF-8 byte-order mark before the header is skipped.
  p = write_temp("bom.csv", "\xEF\xBB\xBFtext,label\nhi,1\n");
  EXPECT_EQ(salient::read_generic(p).records.at(0).text, "hi");
  p = write_temp("generic_cols.tsv", "text\tlabel\na\t1\nb\n");
  EXPECT_ERROR(salient::read_generic(p), p + ":3: expected 2 tab-separated columns, got 1");
}

TEST(Data, LoadDatasetDispatch) {
  std::string p = write_temp("spec.jsonl", "{\"text\": \"a\", \"label\": 0}\n");
  Dataset ds = salient::load_dataset(p, data_dir());
  EXPECT_EQ(ds.records.size(), 1u);
  EXPECT_EQ(ds.name, p);
  std::string msg = error_of([&] { salient::load_dataset("sst2:validation", data_dir()); });
  EXPECT_NE(msg.find("unknown dataset spec 'sst2:validation'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sst-trees:{train,dev,test}"), std::string::npos) << msg;
  EXPECT_ERROR(salient::load_dataset("imdb", data_dir()), "valid specs: sst2:{train,dev,test}");
  EXPECT_ERROR(salient::load_dataset("/nonexistent/x.jsonl", data_dir()), "/nonexistent/x.jsonl: dataset file not found");
  EXPECT_ERROR(salient::load_dataset("sst2:dev", "/nonexistent"), "/nonexistent/sst2_glue/dev.tsv: cannot open");
}

// sst-trees-score: every sentence (neutral ones too) with its root label / 4; the binary view's
// sentences and texts are among them; a file's "target" field is a number or an error.
TEST(Data, SstScoresAndGenericTargets) {
  const Dataset scores = salient::load_dataset("sst-trees-score:test", data_dir());
  ASSERT_EQ(scores.records.size(), 2210u);  // every test tree (docs/datasets.md)
  EXPECT_TRUE(scores.has_targets());
  EXPECT_FALSE(scores.has_rationales());
  std::map<double, int> counts;
  for (const auto& r : scores.records) {
    ASSERT_TRUE(r.target.has_value());
    counts[*r.target]++;
    EXPECT_EQ(r.label, -1);
  }
  EXPECT_EQ(counts.size(), 5u);
  for (const auto& [v, n] : counts) EXPECT_TRUE(v == 0 || v == 0.25 || v == 0.5 || v == 0.75 || v == 1.0) << v;
  // The binary view drops the neutral (0.5) sentences and keeps the others' polarity and text.
  const Dataset binary = salient::load_dataset("sst-trees:test", data_dir());
  EXPECT_EQ(binary.records.size(), 2210u - static_cast<size_t>(counts[0.5]));
  size_t b = 0;
  for (const auto& r : scores.records) {
    if (*r.target == 0.5) continue;
    ASSERT_LT(b, binary.records.size());
    EXPECT_EQ(r.text, binary.records[b].text);
    EXPECT_EQ(*r.target > 0.5 ? 1 : 0, binary.records[b].label);
    ++b;
  }
  std::string p = write_temp("targets.jsonl", "{\"text\": \"a\", \"target\": 0.25}\n{\"text\": \"b\", \"target\": -3}\n");
  const Dataset generic = salient::load_dataset(p, data_dir());
  EXPECT_TRUE(generic.has_targets());
  EXPECT_EQ(*generic.records[1].target, -3.0);
  p = write_temp("bad_target.jsonl", "{\"text\": \"a\", \"target\": \"high\"}\n");
  EXPECT_ERROR(salient::load_dataset(p, data_dir()), "field \"target\" must be a finite number");
}

// ---- IDX ----

TEST(Idx, MnistT10k) {
  SALIENT_REQUIRE_SHARED(data_dir());
  auto images = salient::read_idx_images(shared_path("data/mnist/t10k-images-idx3-ubyte.gz"));
  EXPECT_EQ(images.count, 10000);
  EXPECT_EQ(images.rows, 28);
  EXPECT_EQ(images.cols, 28);
  ASSERT_EQ(images.pixels.size(), 10000u * 28 * 28);
  EXPECT_GT(*std::max_element(images.pixels.begin(), images.pixels.end()), 200);

  auto labels = salient::read_idx_labels(shared_path("data/mnist/t10k-labels-idx1-ubyte.gz"));
  ASSERT_EQ(labels.size(), 10000u);
  std::vector<size_t> counts(10, 0);
  for (uint8_t l : labels) ++counts.at(l);
  EXPECT_EQ(counts, (std::vector<size_t>{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}));

  auto train_labels = salient::read_idx_labels(shared_path("data/mnist/train-labels-idx1-ubyte.gz"));
  EXPECT_EQ(train_labels.size(), 60000u);
}

TEST(Idx, Errors) {
  // Plain (uncompressed) files: 2 images of 2x2 promised, 6 pixel bytes given.
  std::string header = std::string("\x00\x00\x08\x03", 4) + std::string("\x00\x00\x00\x02", 4) +
                       std::string("\x00\x00\x00\x02", 4) + std::string("\x00\x00\x00\x02", 4);
  std::string p = write_temp("trunc-images", header + std::string(6, '\x01'));
  EXPECT_ERROR(salient::read_idx_images(p), p + ": truncated IDX file (22 bytes, header promises 24)");
  p = write_temp("ok-images", header + std::string(8, '\x01'));
  EXPECT_EQ(salient::read_idx_images(p).pixels.size(), 8u);
  p = write_temp("long-images", header + std::string(9, '\x01'));
  EXPECT_ERROR(salient::read_idx_images(p), "1 unexpected trailing bytes");
  p = write_temp("short-header", std::string("\x00\x00\x08\x03\x00", 5));
  EXPECT_ERROR(salient::read_idx_images(p), p + ": truncated IDX header");
  // Labels file given where images are expected.
  p = write_temp("labels-as-images", std::string("\x00\x00\x08\x01\x00\x00\x00\x01\x05", 9) + std::string(8, '\0'));
  EXPECT_ERROR(salient::read_idx_images(p), "IDX magic 0x00000801 is not 0x00000803");
  p = write_temp("trunc-labels", std::string("\x00\x00\x08\x01\x00\x00\x00\x05\x01\x02", 10));
  EXPECT_ERROR(salient::read_idx_labels(p), p + ": truncated IDX file (10 bytes, header promises 13)");

  // A gzip file cut short fails too (either zlib's error or the size check).
  std::string gz = salient::join_path(temp_dir(), "full.gz");
  gzFile f = gzopen(gz.c_str(), "wb");
  std::string labels = std::string("\x00\x00\x08\x01\x00\x00\x03\xe8", 8) + std::string(1000, '\x07');
  gzwrite(f, labels.data(), static_cast<unsigned>(labels.size()));
  gzclose(f);
  EXPECT_EQ(salient::read_idx_labels(gz).size(), 1000u);
  std::string bytes = salient::read_file(gz);
  p = write_temp("cut.gz", bytes.substr(0, bytes.size() / 2));
  EXPECT_ERROR(salient::read_idx_labels(p), p + ": ");
  EXPECT_ERROR(salient::read_idx_labels("/nonexistent/labels.gz"), "/nonexistent/labels.gz: cannot open");
}

TEST(Idx, FashionMnist) {
  std::string dir = salient::fashion_mnist_dir();
  if (!salient::dir_exists(dir))
    GTEST_SKIP() << dir << " not found (apt-get install dataset-fashion-mnist)";
  auto train = salient::read_idx_images(salient::join_path(dir, "train-images-idx3-ubyte.gz"));
  EXPECT_EQ(train.count, 60000);
  EXPECT_EQ(train.rows, 28);
  EXPECT_EQ(train.cols, 28);
  auto train_labels = salient::read_idx_labels(salient::join_path(dir, "train-labels-idx1-ubyte.gz"));
  ASSERT_EQ(train_labels.size(), 60000u);
  auto test_labels = salient::read_idx_labels(salient::join_path(dir, "t10k-labels-idx1-ubyte.gz"));
  ASSERT_EQ(test_labels.size(), 10000u);
  std::vector<size_t> counts(10, 0);
  for (uint8_t l : test_labels) ++counts.at(l);
  EXPECT_EQ(counts, std::vector<size_t>(10, 1000));  // balanced classes
  EXPECT_EQ(salient::read_idx_images(salient::join_path(dir, "t10k-images-idx3-ubyte.gz")).count, 10000);
}

TEST(Memory, SamplerSeesLiveAndFreedAllocations) {
  // Held until stop(): read at stop, no timing involved.
  {
    salient::PeakMemorySampler sampler;
    std::vector<char> held(64 << 20, 1);
    const double mib = sampler.stop();
    EXPECT_GE(mib, 63.0);
    EXPECT_LT(mib, 80.0);
  }
  // Allocated and freed inside the window: seen by the 1 ms sampling thread.
  {
    salient::PeakMemorySampler sampler;
    {
      std::vector<char> transient(32 << 20, 1);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const double mib = sampler.stop();
    EXPECT_GE(mib, 31.0);
  }
  salient::PeakMemorySampler idle;
  EXPECT_LT(idle.stop(), 1.0);
}

// retain_freed_memory (util/memory.h): a large block freed by one tensor serves the next without
// going back to the kernel, so filling the next one takes no page faults (glibc's default unmaps
// it: a fault per 4 KiB page, 16,384 for these 64 MiB). The setting is process-wide and stays on.
TEST(Memory, RetainFreedMemoryReusesLargeBlocksWithoutPageFaults) {
  ::setenv("SALIENT_RETAIN_MEMORY", "yes", 1);
  EXPECT_ERROR(salient::retain_freed_memory(), "SALIENT_RETAIN_MEMORY: 'yes' is not 0");
  ::setenv("SALIENT_RETAIN_MEMORY", "0", 1);
  EXPECT_FALSE(salient::retain_freed_memory());
  ::unsetenv("SALIENT_RETAIN_MEMORY");
#if defined(__GLIBC__) && !SALIENT_ASAN
  ASSERT_TRUE(salient::retain_freed_memory());
  auto faults_to_fill = [] {
    struct rusage before {}, after {};
    ::getrusage(RUSAGE_SELF, &before);
    { std::vector<char> block(64 << 20, 1); }
    ::getrusage(RUSAGE_SELF, &after);
    return after.ru_minflt - before.ru_minflt;
  };
  faults_to_fill();                   // the heap grows once
  EXPECT_LT(faults_to_fill(), 1000);  // then the freed block is reused
#endif
}

// Sharded runs (src/dist/shards.h): chunks are contiguous batches in input order, every item in
// exactly one; the costliest go first to the least loaded rank, so the loads come out balanced.
TEST(Shards, PlanKeepsChunksContiguousAndBalancesCost) {
  const std::vector<double> costs = {9, 1, 1, 1, 4, 4, 1, 1, 2, 2, 7};
  const salient::dist::ShardPlan plan = salient::dist::plan_shards(costs, 2, 2);
  ASSERT_EQ(plan.chunks.size(), 6u);
  size_t next = 0;
  for (const auto& [b, e] : plan.chunks) {
    EXPECT_EQ(b, next);
    EXPECT_LE(e - b, 2u);
    next = e;
  }
  EXPECT_EQ(next, costs.size());
  // Chunk costs 10, 2, 8, 2, 4, 7 → LPT: 10→0, 8→1, 7→1, 4→0, 2→0, 2→1: loads 16 and 17.
  EXPECT_EQ(plan.owner, (std::vector<int>{0, 0, 1, 1, 0, 1}));
  EXPECT_DOUBLE_EQ(plan.load[0], 16);
  EXPECT_DOUBLE_EQ(plan.load[1], 17);
  // The chunks do not depend on the number of ranks (a resumed run may use another -np).
  EXPECT_EQ(salient::dist::plan_shards(costs, 2, 3).chunks, plan.chunks);
  EXPECT_EQ(salient::dist::plan_shards(costs, 2, 1).owner, std::vector<int>(6, 0));
  EXPECT_THROW(salient::dist::plan_shards(costs, 0, 2), salient::Error);
  EXPECT_DOUBLE_EQ(salient::dist::explain_cost("perturbation", 10), 100);
  EXPECT_DOUBLE_EQ(salient::dist::explain_cost("gradient", 10), 10);
}

// A killed run leaves write_file_atomic's temporary (temporary_path: NAME.salient-tmp.<host>.<pid>);
// the resumed run removes it, in subfolders too, but never one whose writer still runs, another
// host's, or a file that only looks alike.
TEST(AtomicFile, AResumedRunRemovesTheTemporariesAKilledRunLeft) {
  namespace fs = std::filesystem;
  const std::string dir = salient::join_path(temp_dir(), "stale_temporaries");
  fs::remove_all(dir);
  fs::create_directories(dir + "/units");
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);  // reaped: no process has this pid now
  const std::string mine = salient::temporary_path(dir + "/run.json");
  const std::string suffix = mine.substr(mine.rfind(".salient-tmp."));  // .salient-tmp.<host>.<this pid>
  const std::string marker = suffix.substr(0, suffix.rfind('.') + 1);
  const std::string dead = dir + "/run.json" + marker + std::to_string(child);
  const std::string dead_deeper = dir + "/units/u1.json" + marker + std::to_string(child);
  const std::string live = dir + "/other.json" + suffix;
  const std::string other_host = dir + "/x.json.salient-tmp.some-other-host." + std::to_string(child);
  for (const std::string& f : {dead, dead_deeper, live, other_host, dir + "/run.json", dir + "/notes.tmp.123"})
    std::ofstream(f) << "x";
  salient::remove_stale_temporaries(dir);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_FALSE(fs::exists(dead_deeper));
  EXPECT_TRUE(fs::exists(live));        // a writer that still runs keeps its temporary
  EXPECT_TRUE(fs::exists(other_host));  // on a shared disk, another host's writer may still run
  EXPECT_TRUE(fs::exists(dir + "/run.json"));
  EXPECT_TRUE(fs::exists(dir + "/notes.tmp.123"));  // not a temporary's name
  salient::remove_stale_temporaries(dir + "/missing");  // no folder: nothing to do
  fs::remove_all(dir);
}

// A checkpoint is swapped in whole: whatever point a crash interrupts, the directory a resume
// reads is one complete set of files, the old one or the new one.
TEST(StagedDir, ACheckpointIsReplacedWholeOrNotAtAll) {
  namespace fs = std::filesystem;
  const std::string dir = salient::join_path(temp_dir(), "staged_ckpt");
  fs::remove_all(dir);
  auto write_set = [&](const std::string& step, bool with_extra) {
    salient::StagedDir staged(dir);
    salient::write_file_atomic(salient::join_path(staged.path(), "weights"), "w" + step);
    if (with_extra) salient::write_file_atomic(salient::join_path(staged.path(), "extra"), "x");
    salient::write_file_atomic(salient::join_path(staged.path(), "state.json"), step);
    staged.commit();
  };
  write_set("1", true);
  EXPECT_EQ(salient::read_file(dir + "/weights"), "w1");
  write_set("2", false);  // the new set replaces the old one, files it lacks included
  EXPECT_EQ(salient::read_file(dir + "/weights"), "w2");
  EXPECT_FALSE(fs::exists(dir + "/extra"));
  EXPECT_FALSE(fs::exists(dir + ".new") || fs::exists(dir + ".old"));

  // Killed while writing the next set: the staging directory is dropped, the set stays.
  fs::create_directories(dir + ".new");
  salient::write_file_atomic(dir + ".new/weights", "w3");
  salient::recover_dir(dir);
  EXPECT_EQ(salient::read_file(dir + "/weights"), "w2");
  EXPECT_FALSE(fs::exists(dir + ".new"));
  // Killed between the two renames of a commit: the previous set comes back.
  fs::create_directories(dir + ".new");
  salient::write_file_atomic(dir + ".new/weights", "w3");
  fs::rename(dir, dir + ".old");
  salient::recover_dir(dir);
  EXPECT_EQ(salient::read_file(dir + "/weights"), "w2");
  EXPECT_EQ(salient::read_file(dir + "/state.json"), "2");
  EXPECT_FALSE(fs::exists(dir + ".new") || fs::exists(dir + ".old"));
  // Killed after them, before the old set was removed: the new set stands.
  write_set("4", false);
  fs::create_directories(dir + ".old");
  salient::recover_dir(dir);
  EXPECT_EQ(salient::read_file(dir + "/state.json"), "4");
  EXPECT_FALSE(fs::exists(dir + ".old"));
  fs::remove_all(dir);
}
