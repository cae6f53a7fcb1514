#pragma once
// Peak memory of one piece of work, measured from outside the allocator: a thread samples the
// process's resident set (VmRSS) every millisecond while the work runs. The kernel's own
// high-water mark (VmHWM, reset through /proc/self/clear_refs) is not resettable in every
// container, so it cannot isolate one method in a long-running process; sampling can.
#include <atomic>
#include <cstdint>
#include <thread>

namespace salient {

// Current resident set size in bytes (0 where /proc is unavailable).
int64_t resident_bytes();

// Makes freed large blocks go back to the OS at once (fixed mmap threshold), so that the resident
// set follows live memory and the next measurement does not start from a stale plateau.
void return_freed_memory_promptly();

class PeakMemorySampler {
 public:
  PeakMemorySampler();   // starts sampling
  ~PeakMemorySampler();  // stops
  // Highest resident set seen since construction, minus the resident set at construction, in MiB.
  double stop();

 private:
  void run();
  int64_t baseline_ = 0;
  std::atomic<int64_t> peak_{0};
  std::atomic<bool> running_{true};
  std::thread thread_;
};

}  // namespace salient
