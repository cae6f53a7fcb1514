#pragma once
// The pre-training corpus salient can assemble here without a model hub: the text (never the
// labels) of every task's *train* split in the shared data, optionally followed by the English of
// two Debian dictionaries (GCIDE, WordNet glosses; pretrain/dictionaries.h), one text per line,
// with every text of a dev or test split removed (after normalisation) and exact duplicates dropped.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "text/tokenizer.h"

namespace salient::pretrain {

struct CorpusSourceStats {
  std::string name, spec, license;
  int64_t texts = 0, words = 0, pieces = 0;  // kept
  int64_t dropped_heldout = 0, dropped_duplicate = 0;
};
struct CorpusReport {
  std::vector<CorpusSourceStats> sources;
  int64_t texts = 0, words = 0, pieces = 0;
  nlohmann::json to_json() const;
};

// Lowercase (ASCII), whitespace runs collapsed, trimmed: the key of the held-out filter.
std::string normalized_text(const std::string& text);
// Every text (and text pair) of the tasks' dev and test splits, normalised.
std::vector<std::string> heldout_texts(const std::string& data_dir);
// Dictionary sources after the task texts; "" leaves one out (the default: task texts only).
struct CorpusOptions {
  std::string gcide;    // gcide.dict.dz (or an uncompressed dictd .dict)
  std::string wordnet;  // directory with WordNet's data.noun, data.verb, data.adj, data.adv
};
// Writes the corpus to out_path and its report to out_path + ".json" (both atomically). Word
// pieces are counted with `tokenizer`.
CorpusReport build_task_corpus(const std::string& data_dir, const Tokenizer& tokenizer, const std::string& out_path,
                               const CorpusOptions& options = {});

}  // namespace salient::pretrain
