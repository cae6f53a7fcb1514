#pragma once
// The JSON API behind `salient serve` (docs/serve.md), without HTTP: each endpoint is a function
// from a request body to a response body over the public API (include/salient/salient.h), so it is
// tested directly and the server (salient/serve.h, server.cpp) only routes. The request is read and checked by
// serve/request.h; what needs the models (names, method parameters, layers) is checked here. A bad
// request throws ApiError with the HTTP status and a one-line message.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "salient/salient.h"
#include "serve/memory_gate.h"
#include "serve/request.h"

namespace salient::serve {

struct ServedModel {
  std::string name, path;
  std::shared_ptr<const Model> model;
};

class Api {
 public:
  // `models`: directories (the name is the last path component; a repeated name gets a suffix);
  // `datasets`: dataset specs whose examples the page may list (nothing else is read from disk).
  Api(const std::vector<std::string>& model_dirs, const std::vector<std::string>& datasets, const std::string& data_dir,
      ApiLimits limits = {});

  // GET /api/models: each model's shape, and its memory: weights, and one request on its longest
  // input per method; the server's budget and what is in use.
  nlohmann::json models() const;
  nlohmann::json methods() const;   // GET /api/methods: the registry with parameters, and the metrics
  nlohmann::json datasets() const;  // GET /api/datasets
  // GET /api/examples?data=SPEC&offset=N&limit=N: texts, labels and word rationales.
  nlohmann::json examples(const std::string& data, int64_t offset, int64_t limit) const;
  // POST /api/predict {model?, text, text_pair?, windows?, stride?}: label, probabilities, tokens
  // (with windows: the whole text's, and how many windows read it).
  nlohmann::json predict(const nlohmann::json& body) const;
  // POST /api/explain {model?, text, text_pair?, windows?, stride?, target?, methods: [{name,
  // params?, output?}] or [names], faithfulness?: true}: the prediction and one explanation per
  // method in the explanation schema, each with its faithfulness for this input and its seconds.
  // With windows the text is read whole (Model::explain's LongInputs): scores over all its tokens,
  // extras.windows each window's start and length, faithfulness scored on the whole text.
  nlohmann::json explain(const nlohmann::json& body) const;
  // POST /api/attention {model?, text, text_pair?}: tokens and [layers][heads][L][L] probabilities.
  nlohmann::json attention(const nlohmann::json& body) const;
  // POST /api/attattr {model?, text, text_pair?, target?, layer?, m?}: Self-Attention Attribution
  // of one layer (default the last): its heads' [L][L] matrices and completeness, every head's
  // importance, and the attribution tree with its SVG drawing.
  nlohmann::json attattr(const nlohmann::json& body) const;

  const ApiLimits& limits() const { return limits_; }

  // From now on every request that runs a model first waits for its estimated memory to fit in
  // `request_bytes` beside the requests in flight (serve/memory_gate.h); 0: no budget (the default).
  void set_memory_budget(int64_t request_bytes);

  // Parameters naming a file (ParamSpec::path: learned explainers' artifacts) are read only under
  // these folders (salient serve --artifacts DIR, repeatable): a relative path is taken inside
  // them, any other is refused with one answer (403) whether or not it exists. None (the
  // default): every such parameter is refused.
  void set_artifact_folders(const std::vector<std::string>& dirs);

  // Memory one request needs, estimated before it runs (Model::memory_estimate and the JSON it
  // answers with), for a parsed request on `tokens` word pieces.
  int64_t explain_bytes(const ServedModel& sm, const ExplainRequest& request, int64_t tokens) const;
  int64_t attention_bytes(const ServedModel& sm, int64_t tokens) const;
  int64_t attattr_bytes(const ServedModel& sm, const AttAttrRequest& request, int64_t tokens) const;

 private:
  const ServedModel& model_of(const TextRequest& request) const;
  // `value` of path parameter `param` resolved under the artifact folders, or a 403.
  std::string artifact_path(const std::string& param, const nlohmann::json& value) const;
  // Waits for `bytes` (or throws 503 / 413); the returned admission gives them back.
  std::optional<MemoryGate::Admission> admit(int64_t bytes, const std::string& what) const;

  std::vector<ServedModel> models_;
  std::map<std::string, Dataset> datasets_;
  std::vector<std::string> dataset_order_;
  ApiLimits limits_;
  std::unique_ptr<MemoryGate> gate_;
  std::vector<std::filesystem::path> artifact_folders_;  // canonical
};

}  // namespace salient::serve
