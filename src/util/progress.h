#pragma once
// Progress reporting on stderr: a redrawn bar with rate and ETA on a terminal, plain log lines
// (at most one every `log_seconds`) otherwise, so CI logs stay readable.
#include <chrono>
#include <cstdint>
#include <string>

namespace salient {

class Progress {
 public:
  Progress(std::string label, int64_t total, std::string unit = "it", double log_seconds = 10.0);
  ~Progress();
  // Advances by n; `status` (e.g. "loss 0.41") is shown after the counts.
  void update(int64_t n = 1, const std::string& status = "");
  void finish(const std::string& status = "");
  static void set_enabled(bool on);  // --quiet turns it off
  static bool enabled();             // also for a trainer's per-epoch status lines

 private:
  void draw(bool final);
  std::string label_, unit_, status_;
  int64_t total_, done_ = 0;
  double log_seconds_;
  bool tty_, finished_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

std::string format_duration(double seconds);
// Seconds elapsed since t (steady clock): trainers' time limits and rates.
inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace salient
