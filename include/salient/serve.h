#pragma once
// `salient serve` (docs/serve.md): the web viewer and its JSON API over HTTP, as one call. The
// server is its own library, salient::salient_serve (it links cpp-httplib); the rest of salient
// does not need it.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace salient::serve {

// What one request may ask for (each refusal is a 4xx answer naming the limit).
struct ApiLimits {
  size_t max_text_bytes = 20000;  // text + text_pair
  int64_t max_methods = 8;        // per /api/explain request
  double max_seconds = 120;       // per request: methods not started by then are refused
  int64_t max_examples = 200;     // per /api/examples request
  int64_t max_attattr_steps = 64; // integration points m of /api/attattr
  int64_t max_batch_tokens = 4096; // token positions of one internal pass (memory; results do not depend on it)
  int64_t max_queue = 16;          // requests waiting for memory at once; more get 503
  double max_wait_seconds = 30;    // how long a request waits for memory before 503
};

struct ServerOptions {
  std::vector<std::string> models, datasets;  // model directories (the first is the default); dataset specs
  std::string data_dir;                       // "": the shared data
  // Folders learned explainers' artifacts are read from (ExpNet, SMaT, SST); a request naming any
  // other path is refused. Empty: none is read.
  std::vector<std::string> artifacts;
  std::string host = "127.0.0.1";             // loopback unless told otherwise
  int port = 8080;                            // 0: any free port (passed to on_listening)
  int threads = 4;                            // requests served at once
  size_t max_body_bytes = 1 << 16;
  // Resident memory the server may reach, models included: requests whose estimated memory does
  // not fit beside those in flight wait (--max-queue, --max-wait) or get 503. 0: a sixth of the
  // machine's memory (its cgroup limit where lower).
  int64_t max_memory_bytes = 0;
  // Freed memory malloc may keep for reuse between requests; beyond it is handed back.
  int64_t max_retained_bytes = 256 << 20;
  ApiLimits limits;
  void validate() const;  // one-line errors naming the CLI flag
};

// Loads the models, binds, calls `on_listening(port)` and serves until SIGINT or SIGTERM (then
// returns after the requests in flight end).
void run_server(const ServerOptions& options, const std::function<void(int port)>& on_listening);

}  // namespace salient::serve
