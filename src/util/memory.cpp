#include "util/memory.h"

#include <malloc.h>

#include <chrono>

namespace salient {

int64_t allocated_bytes() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
#else
  return 0;
#endif
}

PeakMemorySampler::PeakMemorySampler() : baseline_(allocated_bytes()) {
  peak_ = baseline_;
  thread_ = std::thread([this] { run(); });
}

PeakMemorySampler::~PeakMemorySampler() { stop(); }

void PeakMemorySampler::run() {
  while (running_.load(std::memory_order_relaxed)) {
    const int64_t now = allocated_bytes();
    int64_t seen = peak_.load();
    while (now > seen && !peak_.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

double PeakMemorySampler::stop() {
  if (running_.exchange(false) && thread_.joinable()) thread_.join();
  const int64_t now = allocated_bytes();
  int64_t peak = peak_.load();
  if (now > peak) peak = now;
  return static_cast<double>(peak - baseline_) / (1024.0 * 1024.0);
}

}  // namespace salient
