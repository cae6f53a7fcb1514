#pragma once
// Process-wide runtime settings: the default device, thread count and which BLAS LibTorch ends up
// calling (threads, OpenBLAS's kernels and the device by name: the public salient/runtime.h).
#include <c10/core/Device.h>

#include <string>

#include "salient/runtime.h"

namespace salient {

struct BlasInfo {
  std::string library;  // resolved path of the shared object providing sgemm_
  std::string config;   // openblas_get_config() when available
  bool is_openblas = false;
  bool is_reference = false;  // Debian's reference BLAS: ~35-60x slower
};

BlasInfo blas_info();
// "cpu", "cuda" or "cuda:N" as a device, checked against this build and machine: a CUDA device
// needs a CUDA LibTorch and a visible GPU with that index. Errors name `where` (an option, a
// variable).
c10::Device parse_device(const std::string& name, const std::string& where = "--device");
// Where models are loaded unless a caller says otherwise: set_default_device's, else
// $SALIENT_DEVICE's, else the CPU. Models and inputs move there once; results come back to the CPU.
c10::Device default_device();
void set_default_device(c10::Device device);

// The OpenBLAS kernels this CPU can run by the features it reports: "SkylakeX" (AVX-512),
// "Haswell" (AVX2 + FMA), "" otherwise. OpenBLAS 0.3.21 (Debian 12) falls back to its generic
// Prescott kernels on CPUs newer than its tables (family 6 model 207 here), 3-4x slower sgemm.
std::string openblas_core_for_cpu();

}  // namespace salient
