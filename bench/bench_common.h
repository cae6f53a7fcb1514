#pragma once
// Timing helpers shared by the benchmarks: wall-clock medians and a measured matmul peak, so
// results are reported as ratios measured in the same run on the same machine.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

namespace salient::bench {

// Prints `usage` and returns true when --help or -h is among the arguments.
inline bool help_requested(int argc, char** argv, const char* usage) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(usage, stdout);
      return true;
    }
  return false;
}

// Median seconds of `reps` calls after `warmup` untimed calls.
inline double time_median(const std::function<void()>& fn, int reps, int warmup = 1) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto s = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Single-precision GEMM throughput (GFLOP/s) of the BLAS in use at the current thread count.
inline double matmul_peak_gflops(int64_t n = 1536) {
  torch::NoGradGuard ng;
  auto a = torch::randn({n, n}), b = torch::randn({n, n});
  double s = time_median([&] { (void)torch::mm(a, b); }, 5, 2);
  return 2.0 * n * n * n / s / 1e9;
}

}  // namespace salient::bench
