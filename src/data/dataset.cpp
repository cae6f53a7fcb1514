// Dataset specs (load_dataset) and what every reader shares; the readers are one file each in
// src/data/readers/. Every malformed row fails with "path:LINE: what is wrong" (one line); see
// docs/datasets.md for the formats, label ids and rationale rules.
#include "data/dataset.h"

#include <algorithm>
#include <cmath>
#include <charconv>
#include <map>

#include <nlohmann/json.hpp>

#include "data/readers/reader_util.h"
#include "util/error.h"
#include "salient/error.h"
#include "util/io.h"

namespace salient {

using namespace data_detail;

bool Dataset::has_rationales() const {
  for (const auto& r : records)
    if (!r.rationale.empty()) return true;
  return false;
}

bool Dataset::has_targets() const {
  for (const auto& r : records)
    if (!r.target) return false;
  return !records.empty();
}

std::vector<std::string> split_whitespace(const std::string& s) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    size_t b = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > b) words.push_back(s.substr(b, i - b));
  }
  return words;
}

Dataset load_dataset(const std::string& spec, const std::string& data_dir_arg) {
  const char* valid =
      "sst2:{train,dev,test}, cola:{train,dev,ood}, hatexplain:{train,val,test}, "
      "eraser:{train,val,test}, sst-trees:{train,dev,test}, sst-trees-score:{train,dev,test}, or a .jsonl/.csv/.tsv file path";
  if (file_exists(spec)) {
    Dataset ds = read_generic(spec);
    ds.name = spec;
    return ds;
  }
  if (has_suffix(spec, ".jsonl") || has_suffix(spec, ".csv") || has_suffix(spec, ".tsv"))
    fail_not_found("{}: dataset file not found", spec);
  std::string data_dir = data_dir_arg;
  if (data_dir.empty()) data_dir = shared_data_dir();
  auto colon = spec.find(':');
  std::string name = colon == std::string::npos ? spec : spec.substr(0, colon);
  std::string split = colon == std::string::npos ? "" : spec.substr(colon + 1);
  auto in = [&](const std::string& dir) { return join_path(data_dir, dir); };
  auto pick = [&](const std::map<std::string, std::string>& files) -> std::string {
    auto it = files.find(split);
    if (it == files.end()) fail("unknown dataset spec '{}'; valid specs: {}", spec, valid);
    return it->second;
  };

  Dataset ds;
  if (name == "sst2") {
    ds = read_glue_tsv(in(pick({{"train", "sst2_glue/train.tsv"},
                                {"dev", "sst2_glue/dev.tsv"},
                                {"test", "sst2_glue/test-labeled.tsv"}})));
  } else if (name == "cola") {
    ds = read_cola_tsv(in(pick({{"train", "cola/raw/in_domain_train.tsv"},
                                {"dev", "cola/raw/in_domain_dev.tsv"},
                                {"ood", "cola/raw/out_of_domain_dev.tsv"}})));
  } else if (name == "hatexplain") {
    pick({{"train", ""}, {"val", ""}, {"test", ""}});  // validates the split
    std::string original = in("hatexplain/dataset.json");
    if (file_exists(original)) {
      // The original release (absent from shared/data) has rationales for every split.
      ds = read_hatexplain_original(original, in("hatexplain/post_id_divisions.json"), split);
    } else if (split == "train") {
      ds = read_hatexplain_csv(in("hatexplain/training_data.csv.gz"));
    } else {
      ds = read_hatexplain_jsonl(in(split == "val" ? "hatexplain/hatexplain_validation.jsonl"
                                                    : "hatexplain/hatexplain_test.jsonl"));
    }
  } else if (name == "eraser") {
    std::string file = pick({{"train", "train.jsonl"}, {"val", "val.jsonl"}, {"test", "test.jsonl"}});
    ds = read_eraser(in("eraser_movies/" + file), in("eraser_movies/docs"));
  } else if (name == "sst-trees") {
    std::string file = pick({{"train", "train.txt"}, {"dev", "dev.txt"}, {"test", "test.txt"}});
    ds = sst_trees_to_binary(read_sst_trees(in("sst_ptb_trees/" + file)), true);
  } else if (name == "sst-trees-score") {
    std::string file = pick({{"train", "train.txt"}, {"dev", "dev.txt"}, {"test", "test.txt"}});
    ds = sst_trees_to_scores(read_sst_trees(in("sst_ptb_trees/" + file)));
  } else {
    fail("unknown dataset spec '{}'; valid specs: {}", spec, valid);
  }
  ds.name = spec;
  return ds;
}

}  // namespace salient
