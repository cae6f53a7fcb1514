#pragma once
// Peak memory of one piece of work: a thread samples the bytes the process has allocated from
// malloc (glibc mallinfo2: heap in use + mmapped blocks, which holds every CPU tensor) every
// millisecond while the work runs. Neither the kernel's high-water mark (VmHWM: its reset through
// /proc/self/clear_refs does not work in every container) nor the resident set (freed heap
// memory stays resident and is reused) can isolate one method in a long-running process.
#include <atomic>
#include <cstdint>
#include <thread>

namespace salient {

// Bytes currently allocated through malloc (0 where mallinfo2 is unavailable).
int64_t allocated_bytes();

class PeakMemorySampler {
 public:
  PeakMemorySampler();   // starts sampling
  ~PeakMemorySampler();  // stops
  // Most bytes allocated at any sample since construction, minus those at construction, in MiB.
  double stop();

 private:
  void run();
  int64_t baseline_ = 0;
  std::atomic<int64_t> peak_{0};
  std::atomic<bool> running_{true};
  std::thread thread_;
};

}  // namespace salient
