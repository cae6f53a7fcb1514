#include "model/classifier.h"

#include "util/error.h"
#include "util/io.h"

namespace salient {

Batch make_batch(const std::vector<const Encoding*>& encs, int64_t pad_id, torch::Device device) {
  Batch b;
  const int64_t B = static_cast<int64_t>(encs.size());
  int64_t L = 0;
  for (const auto* e : encs) L = std::max<int64_t>(L, static_cast<int64_t>(e->ids.size()));
  auto ids = torch::full({B, L}, pad_id, torch::kLong);
  auto types = torch::zeros({B, L}, torch::kLong);
  auto mask = torch::zeros({B, L}, torch::kLong);
  auto ids_a = ids.accessor<int64_t, 2>(), types_a = types.accessor<int64_t, 2>(), mask_a = mask.accessor<int64_t, 2>();
  for (int64_t i = 0; i < B; ++i) {
    const Encoding& e = *encs[i];
    for (size_t j = 0; j < e.ids.size(); ++j) {
      ids_a[i][j] = e.ids[j];
      types_a[i][j] = e.type_ids.empty() ? 0 : e.type_ids[j];
      mask_a[i][j] = 1;
    }
    b.lengths.push_back(static_cast<int64_t>(e.ids.size()));
  }
  b.input_ids = ids.to(device);
  b.token_type_ids = types.to(device);
  b.attention_mask = mask.to(device);
  return b;
}

ForwardRequest forward_request(const Batch& batch) {
  ForwardRequest req;
  req.input_ids = batch.input_ids;
  req.token_type_ids = batch.token_type_ids;
  req.attention_mask = batch.attention_mask;
  req.pixel_values = batch.pixel_values;
  return req;
}

torch::Tensor batch_logits(const Transformer& model, const Batch& batch) { return model.forward(forward_request(batch)).logits; }

Batch make_batch(const std::vector<Encoding>& encodings, int64_t pad_id, torch::Device device) {
  std::vector<const Encoding*> ptrs;
  for (const auto& e : encodings) ptrs.push_back(&e);
  return make_batch(ptrs, pad_id, device);
}

Encoding Classifier::encode(const std::string& text, const std::optional<std::string>& pair, int max_length) const {
  const int limit = static_cast<int>(model.config().max_tokens());
  if (max_length <= 0 || max_length > limit) max_length = limit;
  return tokenizer.encode(text, pair, max_length, Truncation::LongestFirst);
}

Encoding Classifier::encode_ids(const std::vector<int64_t>& ids, const std::vector<int64_t>& type_ids,
                                const std::string& where) const {
  const auto& c = model.config();
  if (ids.empty()) fail("{}: 'input_ids' is empty", where);
  if (static_cast<int64_t>(ids.size()) > c.max_tokens())
    fail("{}: {} input_ids but the model allows at most {}", where, ids.size(), c.max_tokens());
  Encoding e;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= c.vocab_size)
      fail("{}: input_ids[{}] = {} is outside the vocabulary (0..{})", where, i, ids[i], c.vocab_size - 1);
    int64_t t = type_ids.empty() ? 0 : type_ids[i];
    if (t < 0 || (c.type_vocab_size > 0 && t >= c.type_vocab_size) || (c.type_vocab_size == 0 && t != 0))
      fail("{}: token_type_ids[{}] = {} is out of range for this model", where, i, t);
    e.ids.push_back(ids[i]);
    e.type_ids.push_back(t);
    e.tokens.push_back(ids[i] < static_cast<int64_t>(tokenizer.vocab_size()) ? tokenizer.id_to_token(ids[i]) : "[?]");
    e.offsets.emplace_back(0, 0);
    e.word_ids.push_back(-1);
  }
  return e;
}

Classifier load_classifier(const std::string& dir, const LoadOptions& options, LoadReport* report) {
  const ModelFolder folder = resolve_model_folder(dir);
  if (load_model_config(folder).is_vision())
    fail("{}: a vision transformer (model_type vit) takes images, not text: use salient vit evaluate|explain", dir);
  Classifier c;
  c.dir = dir;
  c.model = load_model(folder, options, report);
  c.tokenizer = Tokenizer::from_folder(folder);
  if (static_cast<int64_t>(c.tokenizer.vocab_size()) > c.model.config().vocab_size)
    fail("{}: tokenizer has {} tokens but config.json vocab_size is {}", dir, c.tokenizer.vocab_size(),
         c.model.config().vocab_size);
  return c;
}

void save_classifier(const Classifier& c, const std::string& dir) {
  c.tokenizer.save(dir);
  save_model(c.model, dir);
}

}  // namespace salient
