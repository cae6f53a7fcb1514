#include "util/tensor_memory.h"

#include <atomic>
#include <cstdlib>
#include <new>

#include <c10/core/CPUAllocator.h>

namespace salient::tensor_memory {

namespace {

constexpr size_t kAlignment = 64;  // LibTorch's CPU alignment; also room for the size header
std::atomic<int64_t> g_current{0}, g_peak{0};

void release(void* data) {
  if (!data) return;
  char* base = static_cast<char*>(data) - kAlignment;
  g_current.fetch_sub(static_cast<int64_t>(*reinterpret_cast<size_t*>(base)), std::memory_order_relaxed);
  std::free(base);
}

// Each block carries its size in the 64 bytes before the data, so the deleter needs no context
// beyond the pointer (raw_deleter works, as LibTorch's own allocator's does).
struct CountingAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t n) const override {
    void* base = nullptr;
    if (posix_memalign(&base, kAlignment, n + kAlignment) != 0) throw std::bad_alloc();
    *static_cast<size_t*>(base) = n;
    const int64_t now = g_current.fetch_add(static_cast<int64_t>(n), std::memory_order_relaxed) + static_cast<int64_t>(n);
    int64_t seen = g_peak.load(std::memory_order_relaxed);
    while (now > seen && !g_peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
    }
    void* data = static_cast<char*>(base) + kAlignment;
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
};

}  // namespace

void install() {
  static CountingAllocator allocator;
  static const bool installed = [] {
    c10::SetCPUAllocator(&allocator, /*priority=*/100);
    return true;
  }();
  (void)installed;
}

int64_t current() { return g_current.load(); }
int64_t peak() { return g_peak.load(); }
void reset_peak() { g_peak.store(g_current.load()); }

}  // namespace salient::tensor_memory
