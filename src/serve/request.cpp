#include "serve/request.h"

#include <fmt/format.h>

#include "salient/dataset.h"
#include "salient/error.h"

namespace salient::serve {

void bad_request(const std::string& message) { throw ApiError(400, message); }

namespace {

void check_object(const nlohmann::json& body) {
  if (!body.is_object()) bad_request("body: expected a JSON object");
}

const nlohmann::json& field(const nlohmann::json& body, const char* name) {
  if (!body.contains(name)) bad_request(fmt::format("body: missing field \"{}\"", name));
  return body.at(name);
}

std::string string_field(const nlohmann::json& body, const char* name) {
  const nlohmann::json& v = field(body, name);
  if (!v.is_string()) bad_request(fmt::format("body: field \"{}\" must be a string", name));
  return v.get<std::string>();
}

bool given(const nlohmann::json& body, const char* name) { return body.contains(name) && !body.at(name).is_null(); }

std::string target_of(const nlohmann::json& body) {
  if (!given(body, "target")) return "pred";
  const nlohmann::json& t = body.at("target");
  if (t.is_number_unsigned()) return std::to_string(t.get<uint64_t>());
  if (t.is_number_integer()) return std::to_string(t.get<int64_t>());
  if (t.is_string()) return t.get<std::string>();
  bad_request("body: field \"target\" must be \"pred\", a class index or a label name");
}

bool bool_field(const nlohmann::json& body, const char* name, bool fallback) {
  if (!given(body, name)) return fallback;
  if (!body.at(name).is_boolean()) bad_request(fmt::format("body: field \"{}\" must be true or false", name));
  return body.at(name).get<bool>();
}

int64_t int_field(const nlohmann::json& body, const char* name, int64_t fallback) {
  if (!given(body, name)) return fallback;
  const nlohmann::json& v = body.at(name);
  // An unsigned value above INT64_MAX is not an int64: refused, not wrapped.
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)))
    bad_request(fmt::format("body: field \"{}\" must be an integer", name));
  return v.get<int64_t>();
}

int64_t int_param(const char* name, const std::optional<std::string>& value, int64_t fallback) {
  if (!value) return fallback;
  try {
    size_t used = 0;
    const long long x = std::stoll(*value, &used);
    if (used != value->size()) throw std::invalid_argument(*value);
    return x;
  } catch (const std::exception&) {
    throw ApiError(400, fmt::format("{}: expected an integer, got '{}'", name, one_line(*value)));
  }
}

}  // namespace

nlohmann::json parse_json_body(const std::string& content_type, const std::string& body) {
  if (content_type.rfind("application/json", 0) != 0)
    throw ApiError(415, fmt::format("Content-Type: expected application/json, got '{}'",
                                    content_type.empty() ? "none" : one_line(content_type)));
  try {
    return nlohmann::json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    throw ApiError(400, fmt::format("body: invalid JSON ({})", one_line(e.what())));  // it quotes the bytes read
  }
}

TextRequest parse_text_request(const nlohmann::json& body, const ApiLimits& limits) {
  check_object(body);
  TextRequest r;
  if (given(body, "model")) {
    if (!body.at("model").is_string()) bad_request("body: field \"model\" must be a string");
    r.model = body.at("model").get<std::string>();
  }
  r.text = string_field(body, "text");
  if (given(body, "text_pair")) r.text_pair = string_field(body, "text_pair");
  const size_t bytes = r.text.size() + (r.text_pair ? r.text_pair->size() : 0);
  if (split_whitespace(r.text).empty()) bad_request("text: empty (type a sentence)");
  if (bytes > limits.max_text_bytes)
    throw ApiError(413, fmt::format("text: {} bytes, more than the server's limit of {} (--max-text-bytes)", bytes,
                                    limits.max_text_bytes));
  r.windows = bool_field(body, "windows", false);
  if (given(body, "stride")) {
    r.stride = int_field(body, "stride", 0);
    if (!r.windows) bad_request("stride: only with \"windows\": true");
    if (r.stride < 0) bad_request(fmt::format("stride: must be >= 0 (0: half a window), got {}", r.stride));
  }
  if (r.windows && r.text_pair) bad_request("text_pair: windows read one text, not a sentence pair");
  return r;
}

void refuse_windows(const TextRequest& request, const std::string& endpoint) {
  if (request.windows)
    bad_request(fmt::format("windows: {} reads one window of the model's length (no \"windows\" here)", endpoint));
}

ExplainRequest parse_explain_request(const nlohmann::json& body, const ApiLimits& limits) {
  ExplainRequest r;
  r.text = parse_text_request(body, limits);
  const nlohmann::json& methods = field(body, "methods");
  if (!methods.is_array() || methods.empty()) bad_request("body: field \"methods\" must be a non-empty list");
  if (static_cast<int64_t>(methods.size()) > limits.max_methods)
    bad_request(fmt::format("methods: {} asked, at most {} per request", methods.size(), limits.max_methods));
  r.target = target_of(body);
  r.faithfulness = bool_field(body, "faithfulness", true);
  if (given(body, "aopc_bins")) {
    r.aopc_bins = string_field(body, "aopc_bins");
    if (r.aopc_bins != "eraser" && r.aopc_bins != "deciles")
      bad_request(fmt::format("aopc_bins: unknown value '{}' (expected eraser or deciles)", one_line(r.aopc_bins)));
  }
  for (size_t i = 0; i < methods.size(); ++i) {
    const nlohmann::json& m = methods[i];
    MethodRequest a;
    if (m.is_string()) {
      a.name = m.get<std::string>();
    } else if (m.is_object()) {
      a.name = string_field(m, "name");
      if (given(m, "params")) {
        if (!m.at("params").is_object()) bad_request(fmt::format("methods[{}]: \"params\" must be an object", i));
        a.params = m.at("params");
      }
      if (given(m, "output")) a.output = string_field(m, "output");
    } else {
      bad_request(fmt::format("methods[{}]: expected a method name or {{\"name\", \"params\"}}", i));
    }
    r.methods.push_back(std::move(a));
  }
  return r;
}

AttAttrRequest parse_attattr_request(const nlohmann::json& body, const ApiLimits& limits) {
  AttAttrRequest r;
  r.text = parse_text_request(body, limits);
  r.target = target_of(body);
  if (given(body, "layer")) r.layer = int_field(body, "layer", 0);
  r.m = int_field(body, "m", 20);
  if (r.m < 1 || r.m > limits.max_attattr_steps)
    bad_request(fmt::format("m: must be in 1..{} (--max-attattr-steps), got {}", limits.max_attattr_steps, r.m));
  return r;
}

ExamplesRequest parse_examples_request(const std::optional<std::string>& data, const std::optional<std::string>& offset,
                                       const std::optional<std::string>& limit, const ApiLimits& limits) {
  if (!data) throw ApiError(400, "data: missing query parameter (a dataset spec from /api/datasets)");
  ExamplesRequest r;
  r.data = *data;
  r.offset = int_param("offset", offset, 0);
  r.limit = int_param("limit", limit, 20);
  check_examples_window(r.offset, r.limit, limits);
  return r;
}

void check_examples_window(int64_t offset, int64_t limit, const ApiLimits& limits) {
  if (offset < 0) bad_request(fmt::format("offset: must be >= 0, got {}", offset));
  if (limit < 1 || limit > limits.max_examples)
    bad_request(fmt::format("limit: must be in 1..{}, got {}", limits.max_examples, limit));
}

}  // namespace salient::serve
