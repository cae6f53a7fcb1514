// The cost of averaging a gradient across ranks with salient's engine (dist::allreduce_sum, Open
// MPI): median milliseconds for N float32 values. Run under mpirun (bench/allreduce.sh, which also
// measures PyTorch's c10d Gloo on the same buffer for the choice in docs/distributed.md).
//   mpirun -np 2 build/bench/bench_allreduce [FLOATS] [ITERATIONS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "salient/distributed.h"

int main(int argc, char** argv) {
  salient::dist::init(&argc, &argv);
  const size_t floats = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 11000000;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 20;
  std::vector<float> buffer(floats, 1.0f + static_cast<float>(salient::dist::rank()));
  std::vector<double> ms;
  for (int i = -3; i < iterations; ++i) {  // three warm-up rounds
    salient::dist::barrier();
    const auto t0 = std::chrono::steady_clock::now();
    salient::dist::allreduce_sum(buffer.data(), buffer.size());
    const double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (i >= 0) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  if (salient::dist::is_root())
    std::printf("{\"engine\": \"%s\", \"ranks\": %d, \"floats\": %zu, \"mb\": %.1f, \"median_ms\": %.2f, \"min_ms\": %.2f}\n",
                salient::dist::engine().c_str(), salient::dist::size(), floats, floats * 4.0 / 1e6, ms[ms.size() / 2],
                ms.front());
  salient::dist::finalize();
  return 0;
}
