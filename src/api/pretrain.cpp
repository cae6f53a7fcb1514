// The public entry points of salient/pretrain.h over src/pretrain.
#include "salient/pretrain.h"

#include <algorithm>

#include "data/dataset.h"
#include "pretrain/corpus.h"
#include "pretrain/dictionaries.h"
#include "pretrain/mlm.h"
#include "salient/error.h"
#include "util/io.h"

namespace salient {

nlohmann::json pretrain_encoder(pretrain::PretrainOptions o, const std::vector<std::string>& given) {
  if (!o.init_dir.empty()) {
    ModelConfig c;
    try {
      c = load_model_config(o.init_dir);
    } catch (const Error& e) {
      fail("--init: {}", e.what());
    }
    const auto is_given = [&](std::string flag) {
      flag = flag.substr(2);  // "--max-length" → "max_length"
      std::replace(flag.begin(), flag.end(), '-', '_');
      return std::find(given.begin(), given.end(), flag) != given.end();
    };
    for (const auto& f : pretrain::kEncoderShapeFields)
      if (!is_given(f.flag)) o.*f.option = c.*f.config;
    if (!is_given("--dropout")) o.dropout = c.hidden_dropout_prob;
  }
  return pretrain::pretrain_mlm(o).to_json();
}

nlohmann::json build_corpus(const CorpusBuildOptions& a) {
  const std::string data_dir = a.data_dir.empty() ? shared_data_dir() : a.data_dir;
  if (data_dir.empty() || !dir_exists(data_dir)) fail("--data-dir: '{}' is not a directory", data_dir);
  // Resolved before the (slow) task texts are read, so a missing dictionary fails at once.
  const pretrain::CorpusOptions opts{pretrain::resolve_gcide(a.gcide), pretrain::resolve_wordnet(a.wordnet)};
  const std::string vocab = a.vocab.empty() ? join_path(data_dir, "bert_base_uncased_tokenizer") : a.vocab;
  return pretrain::build_task_corpus(data_dir, Tokenizer::from_path(vocab), a.out, opts).to_json();
}

}  // namespace salient
