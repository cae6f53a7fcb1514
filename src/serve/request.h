#pragma once
// The requests of `salient serve` (docs/serve.md) read and checked without a model: what each
// endpoint accepts, and for what it refuses an ApiError with the HTTP status and a one-line
// message. LibTorch-free (salient_core), so fuzz/fuzz_request.cpp runs it on arbitrary bytes;
// serve/api.h then checks what needs the served models (model names, method parameters, layers).
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "salient/serve.h"  // ApiLimits

namespace salient::serve {

class ApiError : public std::runtime_error {
 public:
  // retry_after > 0: seconds after which the same request may succeed (503's Retry-After header).
  ApiError(int status, const std::string& message, int retry_after = 0)
      : std::runtime_error(message), status_(status), retry_after_(retry_after) {}
  int status() const { return status_; }
  int retry_after() const { return retry_after_; }

 private:
  int status_, retry_after_;
};

// An ApiError with status 400 (a request the endpoint cannot take).
[[noreturn]] void bad_request(const std::string& message);

// A POST body: JSON, and declared as JSON (415 otherwise; 400 when it does not parse).
nlohmann::json parse_json_body(const std::string& content_type, const std::string& body);

// What every text endpoint reads: {model?, text, text_pair?, windows?, stride?}. windows: a text
// longer than the model's positions read whole, as overlapping windows `stride` word pieces apart
// (0: half a window; LongInputs in salient.h); only /api/predict and /api/explain take it.
struct TextRequest {
  std::optional<std::string> model;  // none: the first served model
  std::string text;
  std::optional<std::string> text_pair;
  bool windows = false;
  int64_t stride = 0;
};
TextRequest parse_text_request(const nlohmann::json& body, const ApiLimits& limits);
// 400 for a request to `endpoint` that asks for windows (it reads one window of the model's length).
void refuse_windows(const TextRequest& request, const std::string& endpoint);

struct MethodRequest {
  std::string name;
  nlohmann::json params = nlohmann::json::object();
  std::string output;  // empty: the method's default
};
// POST /api/explain {model?, text, text_pair?, windows?, stride?, target?, methods: [{name, params?,
// output?}] or [names], faithfulness?, aopc_bins?}.
struct ExplainRequest {
  TextRequest text;
  std::vector<MethodRequest> methods;
  std::string target = "pred";  // "pred", a class index or a label name
  bool faithfulness = true;
  // Model::faithfulness's bins: ERASER's five by default, so that the numbers of one input cost
  // about as much as a cheap explanation; "deciles" as the benchmark's.
  std::string aopc_bins = "eraser";
};
ExplainRequest parse_explain_request(const nlohmann::json& body, const ApiLimits& limits);

// POST /api/attattr {model?, text, text_pair?, target?, layer?, m?}.
struct AttAttrRequest {
  TextRequest text;
  std::string target = "pred";
  std::optional<int64_t> layer;  // none: the last (its range depends on the model)
  int64_t m = 20;
};
AttAttrRequest parse_attattr_request(const nlohmann::json& body, const ApiLimits& limits);

// GET /api/examples?data=SPEC&offset=N&limit=N, each parameter as the query gave it (none: absent).
// The window is checked by check_examples_window.
struct ExamplesRequest {
  std::string data;
  int64_t offset = 0, limit = 20;
};
ExamplesRequest parse_examples_request(const std::optional<std::string>& data, const std::optional<std::string>& offset,
                                       const std::optional<std::string>& limit, const ApiLimits& limits);
void check_examples_window(int64_t offset, int64_t limit, const ApiLimits& limits);

}  // namespace salient::serve
