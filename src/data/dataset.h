#pragma once
// The readers of every dataset format behind load_dataset (Record, Dataset and load_dataset itself
// are public: salient/dataset.h).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "salient/dataset.h"

namespace salient {

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


}  // namespace salient
