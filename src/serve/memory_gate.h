#pragma once
// The server's memory budget for the requests in flight (issue #88): each request says in advance
// how many bytes it needs (Model::memory_estimate) and runs only once they fit beside the others';
// the rest wait in a bounded first-come queue for a bounded time. A request the queue cannot take,
// or that waited too long, is refused with 503 and a Retry-After; one larger than the whole budget
// with 413 (waiting would not help). Nothing is ever started that would take the server past its
// budget, so a burst costs latency, never an out-of-memory kill of every request in flight.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

namespace salient::serve {

class MemoryGate {
 public:
  // capacity: bytes the requests in flight may hold together; max_waiting: requests queued at
  // once; max_wait_seconds: how long one waits before it is refused.
  MemoryGate(int64_t capacity, int64_t max_waiting, double max_wait_seconds);

  // Returns the bytes to the budget when it goes out of scope.
  class Admission {
   public:
    Admission(Admission&& other) noexcept : gate_(other.gate_), bytes_(other.bytes_) { other.gate_ = nullptr; }
    Admission(const Admission&) = delete;
    Admission& operator=(const Admission&) = delete;
    Admission& operator=(Admission&&) = delete;
    ~Admission();

   private:
    friend class MemoryGate;
    Admission(MemoryGate* gate, int64_t bytes) : gate_(gate), bytes_(bytes) {}
    MemoryGate* gate_;
    int64_t bytes_;
  };

  // Waits until `bytes` fit (in arrival order), or throws ApiError (503 with retry_after, or 413)
  // naming `what` and the server's flag.
  Admission admit(int64_t bytes, const std::string& what);

  int64_t capacity() const { return capacity_; }
  int64_t in_use() const;
  int64_t waiting() const;

 private:
  void release(int64_t bytes);

  const int64_t capacity_, max_waiting_;
  const double max_wait_seconds_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int64_t in_use_ = 0;
  uint64_t next_ticket_ = 0;
  std::deque<uint64_t> queue_;  // tickets of the waiting requests, first come first
};

// "1.2 GB": bytes for messages.
std::string byte_text(int64_t bytes);

}  // namespace salient::serve
