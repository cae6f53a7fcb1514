#include "salient/serve.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>

#include <httplib.h>

#include "serve_assets.h"
#include "salient/error.h"
#include "serve/api.h"
#include "salient/runtime.h"

namespace salient::serve {

namespace {

// The self-pipe of the SIGINT/SIGTERM handler (one server per process).
int g_stop_pipe[2] = {-1, -1};

void send_json(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  // Replacing bytes that are not UTF-8 (none should be left: messages go through one_line) keeps a
  // reply from throwing while it is sent.
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message, int retry_after = 0) {
  if (retry_after > 0) res.set_header("Retry-After", std::to_string(retry_after));
  send_json(res, status, {{"error", one_line(message)}});
}

// Freed memory malloc may keep between requests (ServerOptions::max_retained_bytes).
int64_t g_retained_cap = -1;

// Runs an endpoint; every failure becomes a JSON error with a 4xx status (503 when the server is
// busy) and the server goes on.
void answer(httplib::Response& res, const std::function<nlohmann::json()>& endpoint) {
  struct Trim {
    ~Trim() {
      if (g_retained_cap >= 0) trim_freed_memory(g_retained_cap);
    }
  } trim;
  try {
    send_json(res, 200, endpoint());
  } catch (const ApiError& e) {
    send_error(res, e.status(), e.what(), e.retry_after());
  } catch (const Error& e) {  // the library's one-line messages: something in the request is wrong
    send_error(res, 400, e.what());
  } catch (const std::exception& e) {
    send_error(res, 500, std::string("internal error: ") + e.what());
  }
}

nlohmann::json json_body(const httplib::Request& req) {
  return parse_json_body(req.get_header_value("Content-Type"), req.body);
}

std::optional<std::string> query_param(const httplib::Request& req, const char* name) {
  if (!req.has_param(name)) return std::nullopt;
  return req.get_param_value(name);
}

}  // namespace

void ServerOptions::validate() const {
  if (models.empty()) fail("--model: give at least one model directory");
  if (port < 0 || port > 65535) fail("--port: must be in 0..65535, got {}", port);
  if (threads < 1 || threads > 256) fail("--threads: must be in 1..256, got {}", threads);
  if (max_body_bytes < 1024) fail("--max-body-bytes: must be >= 1024, got {}", max_body_bytes);
  if (limits.max_text_bytes < 1) fail("--max-text-bytes: must be >= 1, got {}", limits.max_text_bytes);
  if (!(limits.max_seconds > 0)) fail("--max-seconds: must be > 0, got {}", limits.max_seconds);
  if (limits.max_methods < 1) fail("--max-methods: must be >= 1, got {}", limits.max_methods);
  if (limits.max_attattr_steps < 1) fail("--max-attattr-steps: must be >= 1, got {}", limits.max_attattr_steps);
  if (limits.max_batch_tokens < 1) fail("--max-batch-tokens: must be >= 1, got {}", limits.max_batch_tokens);
  if (limits.max_queue < 0) fail("--max-queue: must be >= 0, got {}", limits.max_queue);
  if (!(limits.max_wait_seconds >= 0)) fail("--max-wait: must be >= 0, got {}", limits.max_wait_seconds);
  if (max_memory_bytes < 0) fail("--max-memory: must be positive, got {}", max_memory_bytes);
  if (max_retained_bytes < 0) fail("--max-retained: must be >= 0, got {}", max_retained_bytes);
  if (host.empty()) fail("--host: empty");
}

void run_server(const ServerOptions& o, const std::function<void(int port)>& on_listening) {
  o.validate();
  Api api(o.models, o.datasets, o.data_dir, o.limits);
  api.set_artifact_folders(o.artifacts);
  // Tensors of 1 MiB or more are returned to the system when freed, so resident memory follows the
  // requests in flight (their estimates count tensors); smaller blocks are trimmed after requests.
  release_large_blocks(1 << 20);
  // The requests' budget: what --max-memory leaves beside the process as it is now, models loaded,
  // less a tenth for what the estimates do not count (malloc's arenas, reply text, stacks).
  const int64_t total = o.max_memory_bytes > 0 ? o.max_memory_bytes : total_memory_bytes() / 6;
  const int64_t idle = resident_bytes();
  if (total > 0 && idle > 0) {
    if (total - total / 10 <= idle)
      fail("--max-memory: {} leaves nothing for requests beside the {} the server takes with its models loaded "
           "(and a tenth kept in reserve)", byte_text(total), byte_text(idle));
    api.set_memory_budget(total - total / 10 - idle);
  } else if (o.max_memory_bytes > 0) {
    fail("--max-memory: this system does not report the process's resident memory (/proc/self/statm)");
  }

  g_retained_cap = o.max_retained_bytes;
  httplib::Server server;
  server.new_task_queue = [threads = o.threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  server.set_payload_max_length(o.max_body_bytes);
  server.set_read_timeout(30, 0);
  // Statuses httplib sets itself (404 no route, 413 too large, 400 unparsable request) get a message too.
  server.set_error_handler([&](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413)
      send_error(res, 413, fmt::format("body: larger than the server's limit of {} bytes (--max-body-bytes)", o.max_body_bytes));
    else if (res.status == 404)
      send_error(res, 404, fmt::format("{} {}: no such endpoint (docs/serve.md)", req.method, one_line(req.path)));
    else
      send_error(res, res.status, "bad request");
  });

  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(assets::kIndexHtml, "text/html; charset=utf-8");
  });
  server.Get("/app.js", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(assets::kAppJs, "application/javascript; charset=utf-8");
  });
  server.Get("/style.css", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(assets::kStyleCss, "text/css; charset=utf-8");
  });
  server.Get("/api/models", [&](const httplib::Request&, httplib::Response& res) { answer(res, [&] { return api.models(); }); });
  server.Get("/api/methods", [&](const httplib::Request&, httplib::Response& res) { answer(res, [&] { return api.methods(); }); });
  server.Get("/api/datasets", [&](const httplib::Request&, httplib::Response& res) { answer(res, [&] { return api.datasets(); }); });
  server.Get("/api/examples", [&](const httplib::Request& req, httplib::Response& res) {
    answer(res, [&] {
      const ExamplesRequest r = parse_examples_request(query_param(req, "data"), query_param(req, "offset"),
                                                       query_param(req, "limit"), api.limits());
      return api.examples(r.data, r.offset, r.limit);
    });
  });
  server.Post("/api/predict", [&](const httplib::Request& req, httplib::Response& res) {
    answer(res, [&] { return api.predict(json_body(req)); });
  });
  server.Post("/api/explain", [&](const httplib::Request& req, httplib::Response& res) {
    answer(res, [&] { return api.explain(json_body(req)); });
  });
  server.Post("/api/attention", [&](const httplib::Request& req, httplib::Response& res) {
    answer(res, [&] { return api.attention(json_body(req)); });
  });
  server.Post("/api/attattr", [&](const httplib::Request& req, httplib::Response& res) {
    answer(res, [&] { return api.attattr(json_body(req)); });
  });

  const int port = o.port == 0 ? server.bind_to_any_port(o.host) : (server.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port < 0) fail("--port: cannot listen on {}:{} (in use, or the host is not this machine's)", o.host, o.port);

  // SIGINT/SIGTERM: the handler only writes a byte to a pipe (async-signal-safe, whichever thread
  // the signal lands on: LibTorch's pools exist before we could block it there); a watcher thread
  // reads it and stops the server, and listen_after_bind returns once the requests in flight are
  // answered. When the server ends on its own the watcher is woken the same way.
  if (::pipe(g_stop_pipe) != 0) fail("serve: cannot create a pipe ({})", std::strerror(errno));
  struct sigaction action {};
  action.sa_handler = [](int) {
    const char byte = 1;
    [[maybe_unused]] ssize_t n = ::write(g_stop_pipe[1], &byte, 1);
  };
  sigemptyset(&action.sa_mask);
  struct sigaction old_int {}, old_term {};
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);
  std::thread watcher([&] {
    char byte = 0;
    while (::read(g_stop_pipe[0], &byte, 1) < 0 && errno == EINTR) {
    }
    server.stop();
  });
  on_listening(port);
  const bool ok = server.listen_after_bind();
  const char byte = 1;
  [[maybe_unused]] ssize_t n = ::write(g_stop_pipe[1], &byte, 1);
  watcher.join();
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  ::close(g_stop_pipe[0]);
  ::close(g_stop_pipe[1]);
  if (!ok) fail("serve: the server stopped with an error on {}:{}", o.host, port);
}

}  // namespace salient::serve
