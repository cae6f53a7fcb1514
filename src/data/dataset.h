#pragma once
// One record type for every dataset: text, optional pair, label, optional word-level rationale.
// Words are the whitespace-separated tokens of `text` (datasets that come pre-tokenized are joined
// with single spaces so word i of the rationale is word i of the text).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace salient {

struct Record {
  std::string id;
  std::string text;
  std::optional<std::string> text_pair;
  int64_t label = -1;  // -1: unlabelled
  // One value per whitespace word of `text` in [0, 1] (e.g. fraction of annotators); empty = none.
  std::vector<float> rationale;
  // Per-annotator binary masks when the source has them (HateXplain).
  std::vector<std::vector<int>> annotator_rationales;
  // A regression target (sst-trees-score, a data file's "target"); none for classification data.
  std::optional<double> target;
};

struct Dataset {
  std::string name;
  std::vector<std::string> label_names;  // index = label id
  std::vector<Record> records;
  bool has_rationales() const;
  bool has_targets() const;  // every record has a regression target (and there is one)
};

// The most classes a dataset or a model's head may have. Integer labels are class ids, so the
// count follows the largest label: without a bound, one label of 10^9 would build 10^9 names.
constexpr int64_t kMaxLabels = 1'000'000;

std::vector<std::string> split_whitespace(const std::string& s);

// GLUE-style TSV with header (SST-2: sentence\tlabel; test: index\tsentence). CRLF tolerated.
Dataset read_glue_tsv(const std::string& path, const std::string& text_column = "sentence",
                      const std::string& label_column = "label");
// CoLA raw TSV: no header, columns source, label, original mark, sentence.
Dataset read_cola_tsv(const std::string& path);

// SST PTB trees: one binarised tree per line; every node has a 0..4 label.
struct SstNode {
  int label = 2;
  int begin = 0, end = 0;   // leaf span [begin, end)
  int left = -1, right = -1;  // children node indices; -1 for leaves
};
struct SstTree {
  std::vector<std::string> words;  // leaves, -LRB-/-RRB- kept as in the file
  std::vector<SstNode> nodes;      // nodes[root] is the whole sentence
  int root = 0;
};
std::vector<SstTree> read_sst_trees(const std::string& path);
// Binary SST-2 view of trees (drops neutral roots). Rationale rule: see docs/datasets.md.
Dataset sst_trees_to_binary(const std::vector<SstTree>& trees, bool with_rationales = true);
std::vector<float> sst_tree_rationale(const SstTree& tree);
// Every sentence (neutral ones too) with its sentiment as a number: the root's 0..4 label / 4, in
// [0, 1] (the `sst-trees-score` specs); no labels, no rationales.
Dataset sst_trees_to_scores(const std::vector<SstTree>& trees);

// HateXplain HF JSONL export (id, annotators.label, rationales, post_tokens).
// Gold rationale: mean of the annotators' masks, >= 0.5 (normal posts: all zeros).
Dataset read_hatexplain_jsonl(const std::string& path);
// Original dataset.json layout ({post_id: {annotators: [{label: "normal", ...}], rationales, post_tokens}})
// filtered by post_id_divisions.json split ("train", "val", "test"); divisions may be "".
Dataset read_hatexplain_original(const std::string& dataset_json, const std::string& divisions_json,
                                 const std::string& split);
// HateXplain training_data.csv(.gz) (text, majority_label, ...), no rationales.
Dataset read_hatexplain_csv(const std::string& path);

// ERASER: <split>.jsonl + docs/<docid>; evidence spans become word rationale masks.
Dataset read_eraser(const std::string& jsonl_path, const std::string& docs_dir);

// Generic: CSV with header or JSONL; fields text, optional text_pair, label (int or name),
// optional rationale (list of 0/1 per word). Label names mapped through `label_names` when given.
Dataset read_generic(const std::string& path, std::vector<std::string> label_names = {});

// Dispatch by a spec like "sst2:dev", "cola:train", "hatexplain:val", "eraser:test",
// "sst-trees:dev" relative to `data_dir`, or a file path (generic reader).
Dataset load_dataset(const std::string& spec, const std::string& data_dir);

}  // namespace salient
