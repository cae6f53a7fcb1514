// `salient serve`: the web viewer and its JSON API (docs/serve.md).
#include "commands.h"
#include "salient/serve.h"

namespace salient::cli {

void add_serve_commands(CLI::App& app, std::vector<Command>& commands) {
  static serve::ServerOptions o;
  auto* cmd = app.add_subcommand("serve", "web viewer: predictions, explanations side by side, attention (docs/serve.md)");
  cmd->add_option("--model", o.models, "model directory to serve (repeatable; the first is the default)")->required();
  cmd->add_option("--data", o.datasets,
                  "dataset whose examples the page lists, e.g. hatexplain:test (repeatable; rationales shown when it has them)");
  add_data_dir(cmd, o.data_dir);
  cmd->add_option("--artifacts", o.artifacts,
                  "folder of learned explainers' artifacts (ExpNet, SMaT, SST) requests may name, by a path inside it "
                  "(repeatable; other paths are refused)");
  cmd->add_option("--host", o.host, "address to bind (127.0.0.1: this machine only; 0.0.0.0: every interface)");
  cmd->add_option("--port", o.port, "port (0: any free one, printed)");
  cmd->add_option("--threads", o.threads, "requests served at once");
  cmd->add_option("--max-body-bytes", o.max_body_bytes, "largest request body");
  cmd->add_option("--max-text-bytes", o.limits.max_text_bytes, "largest text (+ pair) to explain");
  cmd->add_option("--max-methods", o.limits.max_methods, "methods per explain request");
  cmd->add_option("--max-attattr-steps", o.limits.max_attattr_steps, "largest m (integration points) of an AttAttr request");
  cmd->add_option("--max-memory", o.max_memory_bytes,
                  "resident memory the server may reach, models included, e.g. 4GB (kB = 1000 bytes, KiB = 1024); "
                  "requests that would pass it wait or get 503 (default: a sixth of the machine's memory)")
      ->transform(CLI::AsSizeValue(true));
  cmd->add_option("--max-queue", o.limits.max_queue, "requests waiting for memory at once (more get 503)");
  cmd->add_option("--max-wait", o.limits.max_wait_seconds, "seconds a request waits for memory before 503");
  cmd->add_option("--max-retained", o.max_retained_bytes,
                  "freed memory kept for reuse between requests, e.g. 256MB; beyond it is handed back to the system")
      ->transform(CLI::AsSizeValue(true));
  cmd->add_option("--max-batch-tokens", o.limits.max_batch_tokens,
                  "token positions (rows × padded length) of one internal forward pass; bounds memory, not results");
  cmd->add_option("--max-seconds", o.limits.max_seconds,
                  "per request: methods not started within this time are refused (a running method finishes)");
  commands.push_back({cmd, [] {
#ifdef SALIENT_NO_SERVE
                        fail("serve: this salient was built without the HTTP server (cmake -DSALIENT_SERVE=OFF; "
                             "it needs cpp-httplib)");
#else
                        serve::run_server(o, [](int port) {
                          // Printed even with --quiet: scripts and tests read the port from it.
                          std::cout << fmt::format("salient serve: listening on http://{}:{}/ (Ctrl-C stops)", o.host, port)
                                    << std::endl;
                        });
#endif
                      }});
}

}  // namespace salient::cli
