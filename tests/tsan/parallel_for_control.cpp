// Controls for scripts/tsan.sh, built the way salient is (clang, -fsanitize=thread,
// -fopenmp=libomp, Debian's LibTorch) and run under the same runtime (libomp + Archer). Built with
// -DRACE, chunks of an at::parallel_for add to one shared variable: ThreadSanitizer must report it,
// or the setup cannot see races in parallel loops at all. Without it, each chunk writes its own
// slots and the caller reads them after the loop: no report, or the setup would flag every loop.
#include <ATen/Parallel.h>

#include <cstdio>
#include <vector>

int main() {
  at::set_num_threads(2);
  const int64_t n = 1 << 12;
  std::vector<long> slot(n, 0);
  long shared_sum = 0;
  for (int rep = 0; rep < 3; ++rep)
    at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
#ifdef RACE
        shared_sum += i;
#else
        slot[i] += i;
#endif
      }
    });
  long total = shared_sum;
  for (long v : slot) total += v;
  std::printf("threads %d total %ld\n", at::get_num_threads(), total);
  return 0;
}
