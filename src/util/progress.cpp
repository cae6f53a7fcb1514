#include "util/progress.h"

#include <unistd.h>

#include <cstdio>
#include <fmt/format.h>

namespace salient {

namespace {
bool g_enabled = true;
}

void Progress::set_enabled(bool on) { g_enabled = on; }
bool Progress::enabled() { return g_enabled; }

std::string format_duration(double s) {
  if (s < 0 || s != s) return "?";
  int64_t t = static_cast<int64_t>(s + 0.5);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, (t % 3600) / 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

Progress::Progress(std::string label, int64_t total, std::string unit, double log_seconds)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total), log_seconds_(log_seconds),
      tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

Progress::~Progress() {
  if (!finished_ && done_ > 0 && tty_ && g_enabled) std::fputc('\n', stderr);
}

void Progress::update(int64_t n, const std::string& status) {
  done_ += n;
  if (!status.empty()) status_ = status;
  auto now = std::chrono::steady_clock::now();
  double since = std::chrono::duration<double>(now - last_draw_).count();
  if (since >= (tty_ ? 0.1 : log_seconds_)) {
    last_draw_ = now;
    draw(false);
  }
}

void Progress::finish(const std::string& status) {
  if (finished_) return;
  if (!status.empty()) status_ = status;
  draw(true);
  finished_ = true;
}

void Progress::draw(bool final) {
  if (!g_enabled) return;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = elapsed > 0 ? done_ / elapsed : 0;
  double eta = (rate > 0 && total_ > 0) ? (total_ - done_) / rate : -1;
  std::string counts = total_ > 0 ? fmt::format("{}/{}", done_, total_) : fmt::format("{}", done_);
  std::string timing = final ? fmt::format("{} elapsed", format_duration(elapsed))
                             : fmt::format("ETA {}", format_duration(eta));
  std::string line = fmt::format("{} {} {} | {:.1f} {}/s | {}{}{}", label_, counts, unit_, rate, unit_, timing,
                                 status_.empty() ? "" : " | ", status_);
  if (tty_) {
    int width = 24;
    int fill = total_ > 0 ? static_cast<int>(width * std::min<double>(1.0, double(done_) / total_)) : 0;
    std::string bar(fill, '#');
    bar.resize(width, '.');
    std::fprintf(stderr, "\r\033[K[%s] %s%s", bar.c_str(), line.c_str(), final ? "\n" : "");
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

}  // namespace salient
