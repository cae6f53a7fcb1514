#pragma once
// Datasets as the library reads them: one record type for every dataset (text, optional pair,
// label, optional word-level rationale), loaded from a spec (docs/datasets.md). Words are the
// whitespace-separated tokens of `text` (datasets that come pre-tokenized are joined with single
// spaces so word i of the rationale is word i of the text).
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

// Dispatch by a spec like "sst2:dev", "cola:train", "hatexplain:val", "eraser:test",
// "sst-trees:dev" relative to `data_dir`, or a file path (generic reader).
Dataset load_dataset(const std::string& spec, const std::string& data_dir);

// The directory the dataset specs resolve in when none is given: $SALIENT_SHARED/data, else
// ../shared/data relative to the repository root (found from the current directory upwards), else "".
std::string shared_data_dir();

}  // namespace salient
