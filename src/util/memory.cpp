#include "util/memory.h"

#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstring>

namespace salient {

int64_t resident_bytes() {
  // statm's second field is the resident page count; cheaper to parse than status.
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  long long size = 0, resident = 0;
  const int got = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  return got == 2 ? resident * 4096LL : 0;
}

void return_freed_memory_promptly() {
  // glibc raises its mmap threshold dynamically up to 32 MiB after frees, after which tensor
  // buffers are recycled inside the heap and never show up as freed. Pinning it keeps every block
  // of 256 KiB or more in its own mapping, returned to the OS on free.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
}

PeakMemorySampler::PeakMemorySampler() : baseline_(resident_bytes()) {
  peak_ = baseline_;
  thread_ = std::thread([this] { run(); });
}

PeakMemorySampler::~PeakMemorySampler() { stop(); }

void PeakMemorySampler::run() {
  while (running_.load(std::memory_order_relaxed)) {
    const int64_t now = resident_bytes();
    int64_t seen = peak_.load();
    while (now > seen && !peak_.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

double PeakMemorySampler::stop() {
  if (running_.exchange(false) && thread_.joinable()) thread_.join();
  const int64_t now = resident_bytes();
  int64_t peak = peak_.load();
  if (now > peak) peak = now;
  return static_cast<double>(peak - baseline_) / (1024.0 * 1024.0);
}

}  // namespace salient
