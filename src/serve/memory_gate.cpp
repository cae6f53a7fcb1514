#include "serve/memory_gate.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "serve/request.h"

namespace salient::serve {

std::string byte_text(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1e9) return fmt::format("{:.1f} GB", b / 1e9);
  return fmt::format("{:.0f} MB", std::ceil(b / 1e6));
}

MemoryGate::MemoryGate(int64_t capacity, int64_t max_waiting, double max_wait_seconds)
    : capacity_(capacity), max_waiting_(max_waiting), max_wait_seconds_(max_wait_seconds) {}

MemoryGate::Admission::~Admission() {
  if (gate_) gate_->release(bytes_);
}

void MemoryGate::release(int64_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    in_use_ -= bytes;
  }
  changed_.notify_all();
}

int64_t MemoryGate::in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_use_;
}

int64_t MemoryGate::waiting() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(queue_.size());
}

MemoryGate::Admission MemoryGate::admit(int64_t bytes, const std::string& what) {
  bytes = std::max<int64_t>(bytes, 0);
  if (bytes > capacity_)
    throw ApiError(413, fmt::format("{}: needs about {} of memory, more than the server's budget for requests of {} "
                                    "(--max-memory); shorten the input or lower --max-batch-tokens",
                                    what, byte_text(bytes), byte_text(capacity_)));
  std::unique_lock<std::mutex> lock(mutex_);
  if (queue_.empty() && in_use_ + bytes <= capacity_) {
    in_use_ += bytes;
    return Admission(this, bytes);
  }
  // The retry hint: about as long as the longest a request may wait here.
  const int retry_after = static_cast<int>(std::max(1.0, std::ceil(max_wait_seconds_)));
  if (static_cast<int64_t>(queue_.size()) >= max_waiting_)
    throw ApiError(503,
                   fmt::format("{}: the server is busy ({} of memory in use, {} requests waiting; --max-memory, --max-queue)",
                               what, byte_text(in_use_), queue_.size()),
                   retry_after);
  const uint64_t ticket = next_ticket_++;
  queue_.push_back(ticket);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(max_wait_seconds_);
  const bool fits = changed_.wait_until(lock, deadline, [&] { return queue_.front() == ticket && in_use_ + bytes <= capacity_; });
  queue_.erase(std::find(queue_.begin(), queue_.end(), ticket));
  if (fits) in_use_ += bytes;
  lock.unlock();
  changed_.notify_all();  // the next in line may fit now, or be first
  if (!fits)
    throw ApiError(503,
                   fmt::format("{}: the server is busy (waited {:.0f} s for {} of memory; --max-memory, --max-wait)", what,
                               max_wait_seconds_, byte_text(bytes)),
                   retry_after);
  return Admission(this, bytes);
}

}  // namespace salient::serve
