#pragma once
// `salient serve`: an HTTP server (Debian's cpp-httplib) for the single-page viewer in web/ (built
// into the binary: it works offline) and the JSON API of serve/api.h (docs/serve.md).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "serve/api.h"

namespace salient::serve {

struct ServerOptions {
  std::vector<std::string> models, datasets;
  std::string data_dir;
  std::string host = "127.0.0.1";  // loopback unless told otherwise
  int port = 8080;                 // 0: any free port (printed)
  int threads = 4;                 // requests served at once
  size_t max_body_bytes = 1 << 16;
  ApiLimits limits;
  void validate() const;  // one-line errors naming the flag
};

// Loads the models, binds, calls `on_listening(port)` and serves until SIGINT or SIGTERM (then
// returns after the requests in flight end).
void run_server(const ServerOptions& options, const std::function<void(int port)>& on_listening);

}  // namespace salient::serve
