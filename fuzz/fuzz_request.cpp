// libFuzzer harness: the web viewer's request handling (serve/request.h), everything `salient
// serve` reads from a client before a model is involved. The first byte picks the endpoint; the
// rest is "Content-Type\nbody" for the POST endpoints or "data\noffset\nlimit" for /api/examples
// (an empty line: the parameter is absent). Besides crashes, a request that is accepted must be
// within the limits; a refused one must carry a 4xx status and a one-line message that the server
// can send as JSON.
#include <cstdint>
#include <string>

#include "serve/request.h"

namespace {

using namespace salient::serve;

std::string next_line(std::string& rest) {
  const size_t nl = rest.find('\n');
  std::string line = rest.substr(0, nl);
  rest = nl == std::string::npos ? "" : rest.substr(nl + 1);
  return line;
}

std::optional<std::string> param(std::string& rest) {
  std::string v = next_line(rest);
  if (v.empty()) return std::nullopt;
  return v;
}

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void check_text(const TextRequest& r, const ApiLimits& limits) {
  check(r.text.size() + (r.text_pair ? r.text_pair->size() : 0) <= limits.max_text_bytes);
  check(r.text.find_first_not_of(" \t\n\r\f\v") != std::string::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  ApiLimits limits;
  limits.max_text_bytes = 256;  // small, so that the fuzzer reaches both sides of it
  limits.max_methods = 3;
  limits.max_attattr_steps = 8;
  limits.max_examples = 50;
  const int endpoint = data[0] % 4;
  std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (endpoint == 3) {
      std::optional<std::string> d = param(rest), offset = param(rest), limit = param(rest);
      const ExamplesRequest r = parse_examples_request(d, offset, limit, limits);
      check(r.offset >= 0 && r.limit >= 1 && r.limit <= limits.max_examples);
      return 0;
    }
    const std::string content_type = next_line(rest);
    const nlohmann::json body = parse_json_body(content_type, rest);
    if (endpoint == 0) {
      check_text(parse_text_request(body, limits), limits);
    } else if (endpoint == 1) {
      const ExplainRequest r = parse_explain_request(body, limits);
      check_text(r.text, limits);
      check(!r.methods.empty() && static_cast<int64_t>(r.methods.size()) <= limits.max_methods);
      for (const MethodRequest& m : r.methods) check(m.params.is_object());
    } else {
      const AttAttrRequest r = parse_attattr_request(body, limits);
      check_text(r.text, limits);
      check(r.m >= 1 && r.m <= limits.max_attattr_steps);
    }
  } catch (const ApiError& e) {
    check(e.status() >= 400 && e.status() < 500);
    const std::string message = e.what();
    check(message.find('\n') == std::string::npos && message.find('\r') == std::string::npos);
    try {
      (void)nlohmann::json{{"error", message}}.dump();  // the server sends it as JSON: it must be UTF-8
    } catch (const nlohmann::json::exception&) {
      check(false);
    }
  }
  return 0;
}
