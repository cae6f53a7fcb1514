#include "sst/data.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "util/error.h"
#include "util/io.h"

namespace salient::sst {

FeatureBatch SstData::batch(const std::vector<int64_t>& rows) const {
  FeatureBatch b;
  if (modality == "image") {
    b.values = images.index_select(0, torch::tensor(rows, torch::kInt64));
    b.features = torch::ones(b.values.sizes(), torch::kBool);
    return b;
  }
  std::vector<const Encoding*> encs;
  for (int64_t r : rows) encs.push_back(&encodings.at(r));
  Batch t = make_batch(encs, pad_id);
  b.values = t.input_ids;
  b.token_type_ids = t.token_type_ids;
  b.attention_mask = t.attention_mask;
  b.features = torch::zeros(t.input_ids.sizes(), torch::kBool);
  auto f = b.features.accessor<bool, 2>();
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& flags = is_feature.at(rows[i]);
    for (size_t j = 0; j < flags.size(); ++j) f[i][j] = flags[j];
  }
  return b;
}

FeatureBatch SstData::batch(int64_t begin, int64_t end) const {
  std::vector<int64_t> rows(end - begin);
  std::iota(rows.begin(), rows.end(), begin);
  return batch(rows);
}

SstData select_rows(const SstData& d, const std::vector<int64_t>& rows) {
  SstData out;
  out.spec = d.spec;
  out.modality = d.modality;
  out.label_names = d.label_names;
  out.image_shape = d.image_shape;
  out.pad_id = d.pad_id;
  const torch::Tensor index = torch::tensor(rows, torch::kInt64);
  out.labels = d.labels.index_select(0, index);
  if (d.images.defined()) out.images = d.images.index_select(0, index);
  if (d.modality != "text") return out;
  for (int64_t r : rows) {
    out.encodings.push_back(d.encodings.at(r));
    out.texts.push_back(d.texts.at(r));
    out.ids.push_back(d.ids.at(r));
    out.is_feature.push_back(d.is_feature.at(r));
  }
  return out;
}

std::vector<int64_t> sample_first_order(int64_t n, int64_t count, uint64_t seed) {
  std::vector<int64_t> drawn(n);
  std::iota(drawn.begin(), drawn.end(), 0);
  std::shuffle(drawn.begin(), drawn.end(), std::mt19937_64(seed * 6364136223846793005ULL + 1442695040888963407ULL));
  const auto k = std::min(n, std::max<int64_t>(count, 0));
  std::sort(drawn.begin(), drawn.begin() + k);  // the sample, then the others, each in the data's order
  std::sort(drawn.begin() + k, drawn.end());
  return drawn;
}

SstData load_image_data(const std::string& spec, const std::string& data_dir, int64_t limit) {
  ImageData images = load_image_dataset(spec, data_dir, limit);
  SstData d;
  d.spec = spec;
  d.modality = "image";
  d.label_names = std::move(images.label_names);
  d.images = images.images;
  d.labels = images.labels;
  d.image_shape = std::move(images.image_shape);
  return d;
}

SstData load_text_data(const std::string& spec, const std::string& data_dir, const Classifier& clf, int64_t max_length,
                       int64_t limit, bool windows) {
  Dataset ds = load_dataset(spec, data_dir);
  SstData d;
  d.spec = spec;
  d.modality = "text";
  d.label_names = ds.label_names;
  d.pad_id = clf.tokenizer.pad_id();
  std::vector<int64_t> labels;
  for (const Record& r : ds.records) {
    if (limit > 0 && static_cast<int64_t>(d.encodings.size()) >= limit) break;
    if (r.label < 0) fail("--data: '{}': example '{}' has no label", spec, r.id);
    if (windows && r.text_pair) fail("--windows: '{}': example '{}' is a sentence pair; windows read one text", spec, r.id);
    Encoding e = windows ? clf.tokenizer.encode(r.text, std::nullopt, 0) : clf.encode(r.text, r.text_pair, static_cast<int>(max_length));
    std::vector<bool> flags(e.ids.size());
    for (size_t j = 0; j < e.ids.size(); ++j) flags[j] = !clf.tokenizer.is_structural(e.ids[j]);
    d.is_feature.push_back(std::move(flags));
    d.encodings.push_back(std::move(e));
    d.texts.push_back(r.text);
    d.ids.push_back(r.id);
    labels.push_back(r.label);
  }
  if (labels.empty()) fail("--data: '{}' has no examples", spec);
  d.labels = torch::tensor(labels, torch::kInt64);
  return d;
}

SstData load_sst_data(const std::string& spec, const std::string& data_dir, const SstModel& model, int64_t max_length,
                      int64_t limit, bool windows) {
  if (is_image_spec(spec)) {
    if (model.modality() != "image") fail("--data: '{}' is an image dataset, the model is a text model", spec);
    SstData d = load_image_data(spec, data_dir, limit);
    const auto shape = model.image_shape();
    if (shape != d.image_shape) fail("--data: '{}' has {}x{}x{} images, the model takes {}x{}x{}", spec, d.image_shape[0],
                                     d.image_shape[1], d.image_shape[2], shape[0], shape[1], shape[2]);
    return d;
  }
  if (model.modality() != "text") fail("--data: '{}' is a text dataset, the model is an image model", spec);
  return load_text_data(spec, data_dir, text_classifier(model), max_length, limit, windows);
}

}  // namespace salient::sst
