#pragma once
// Peak memory of one piece of work: a thread samples the bytes the process has allocated from
// malloc (glibc mallinfo2: heap in use + mmapped blocks, which holds every CPU tensor) every
// millisecond while the work runs. Neither the kernel's high-water mark (VmHWM: its reset through
// /proc/self/clear_refs does not work in every container) nor the resident set (freed heap
// memory stays resident and is reused) can isolate one method in a long-running process.
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "salient/runtime.h"

namespace salient {

// Bytes currently allocated through malloc (0 where mallinfo2 is unavailable).
int64_t allocated_bytes();

// retain_freed_memory(): the public salient/runtime.h.

// Memory this process can still take: the kernel's MemAvailable, lowered to the room left under a
// cgroup limit (v2 memory.max, v1 memory.limit_in_bytes) when the process runs in one, plus the
// freed memory malloc holds for reuse. -1 when neither can be read (then nothing is refused).
int64_t available_memory_bytes();

// total_memory_bytes, resident_bytes, release_large_blocks, trim_freed_memory: the public
// salient/runtime.h.

// Fails with "PATH: WHAT needs about X GiB of memory but only Y GiB is available" when `bytes`
// exceed available_memory_bytes(): a clear error instead of the kernel's OOM kill.
void require_memory(const std::string& path, uint64_t bytes, const std::string& what);

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
