#pragma once
// Process-wide runtime settings: the default device, thread count and which BLAS LibTorch ends up
// calling.
#include <c10/core/Device.h>

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
// "cpu", "cuda" or "cuda:N" as a device, checked against this build and machine: a CUDA device
// needs a CUDA LibTorch and a visible GPU with that index. Errors name `where` (an option, a
// variable).
c10::Device parse_device(const std::string& name, const std::string& where = "--device");
// Where models are loaded unless a caller says otherwise: set_default_device's, else
// $SALIENT_DEVICE's, else the CPU. Models and inputs move there once; results come back to the CPU.
c10::Device default_device();
void set_default_device(c10::Device device);

// Warns once on stderr when the reference BLAS is active.
void check_blas();

}  // namespace salient
