#pragma once
// Process-wide runtime settings: thread count and which BLAS LibTorch ends up calling.
#include <string>

namespace salient {

struct BlasInfo {
  std::string library;  // resolved path of the shared object providing sgemm_
  std::string config;   // openblas_get_config() when available
  bool is_openblas = false;
  bool is_reference = false;  // Debian's reference BLAS: ~35-60x slower
};

BlasInfo blas_info();
// Sets LibTorch intra-op threads (and OpenMP's, which the OpenMP OpenBLAS uses). n <= 0: default
// = number of cores ($SALIENT_THREADS overrides).
int set_threads(int n);
int default_threads();
int current_threads();
// Warns once on stderr when the reference BLAS is active.
void check_blas();

}  // namespace salient
