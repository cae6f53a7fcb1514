#include "util/memory.h"

#include <malloc.h>
#include <unistd.h>

#include "util/sanitizer.h"
#if SALIENT_ASAN
// The sanitizer runtime's own count (clang's <sanitizer/allocator_interface.h>; GCC ships no header).
extern "C" size_t __sanitizer_get_current_allocated_bytes(void);
#endif
// Whether glibc's malloc is the one in use (not the sanitizer's), and whether it has mallinfo2 (2.33+).
#if defined(__GLIBC__) && !SALIENT_ASAN
#define SALIENT_GLIBC_MALLOC
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)
#define SALIENT_MALLINFO2
#endif
#endif

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "util/error.h"

namespace salient {

namespace {

// The first number in a file (-1 when it cannot be read, or reads "max": no limit).
int64_t read_number(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word)) return -1;
  try {
    size_t used = 0;
    const long long v = std::stoll(word, &used);
    return used == word.size() && v >= 0 ? v : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

// A /proc/meminfo field ("MemAvailable:", "MemTotal:") in bytes; -1 when it cannot be read.
int64_t meminfo_bytes(const std::string& field) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    int64_t kib = 0;
    if (fields >> key >> kib && key == field) return kib * 1024;
  }
  return -1;
}

}  // namespace

int64_t allocated_bytes() {
#if SALIENT_ASAN
  // Under AddressSanitizer malloc is its allocator, which glibc's statistics do not see.
  return static_cast<int64_t>(__sanitizer_get_current_allocated_bytes());
#elif defined(SALIENT_MALLINFO2)
  const struct mallinfo2 m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
#else
  return 0;
#endif
}

bool retain_freed_memory() {
  const char* env = std::getenv("SALIENT_RETAIN_MEMORY");
  const std::string value = env ? env : "1";
  if (value != "0" && value != "1") fail("SALIENT_RETAIN_MEMORY: '{}' is not 0 (glibc's defaults) or 1 (retain)", value);
  if (value == "0") return false;
#ifdef SALIENT_GLIBC_MALLOC
  // Both are needed: without mmap, freed blocks still leave through the trimmed heap top.
  return mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, -1) == 1;
#else
  return false;  // another allocator (or the sanitizer's) manages its own reuse
#endif
}

int64_t available_memory_bytes() {
  int64_t available = meminfo_bytes("MemAvailable:");
  // cgroup v2, then v1 (whose "no limit" is a huge number, beyond any MemAvailable).
  for (const auto& [limit_file, usage_file] :
       {std::pair<const char*, const char*>{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
        {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"}}) {
    const int64_t limit = read_number(limit_file), usage = read_number(usage_file);
    if (limit < 0 || usage < 0) continue;
    const int64_t room = limit > usage ? limit - usage : 0;
    if (available < 0 || room < available) available = room;
    break;
  }
#ifdef SALIENT_MALLINFO2
  // Freed memory that malloc keeps (all of it after retain_freed_memory) serves new tensors too.
  if (available >= 0) available += static_cast<int64_t>(mallinfo2().fordblks);
#endif
  return available;
}

int64_t total_memory_bytes() {
  int64_t total = meminfo_bytes("MemTotal:");
  for (const char* limit_file : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    const int64_t limit = read_number(limit_file);
    if (limit < 0) continue;
    if (total < 0 || limit < total) total = limit;
    break;
  }
  return total;
}

int64_t resident_bytes() {
  std::ifstream in("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return -1;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

bool release_large_blocks(int64_t bytes) {
#ifdef SALIENT_GLIBC_MALLOC
  return mallopt(M_MMAP_MAX, 1 << 16) == 1 && mallopt(M_MMAP_THRESHOLD, static_cast<int>(bytes)) == 1;
#else
  (void)bytes;
  return false;
#endif
}

int64_t trim_freed_memory(int64_t keep_bytes) {
#ifdef SALIENT_MALLINFO2
  const int64_t held = static_cast<int64_t>(mallinfo2().fordblks);
  if (held > keep_bytes) malloc_trim(0);
  return held;
#else
  (void)keep_bytes;
  return 0;
#endif
}

void require_memory(const std::string& path, uint64_t bytes, const std::string& what) {
  const int64_t available = available_memory_bytes();
  if (available < 0 || bytes <= static_cast<uint64_t>(available)) return;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  fail("{}: {} needs about {:.2f} GiB of memory but only {:.2f} GiB is available", path, what, bytes / kGiB,
       available / kGiB);
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
