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

// OpenBLAS's name for the kernels it chose ("Prescott", "SkylakeX", ...; "" for another BLAS).
std::string openblas_core();
// The OpenBLAS kernels this CPU can run by the features it reports: "SkylakeX" (AVX-512),
// "Haswell" (AVX2 + FMA), "" otherwise. OpenBLAS 0.3.21 (Debian 12) falls back to its generic
// Prescott kernels on CPUs newer than its tables (family 6 model 207 here), 3-4x slower sgemm.
std::string openblas_core_for_cpu();
// The kernels to ask OpenBLAS for (through $OPENBLAS_CORETYPE, read when the library loads): the
// CPU's when OpenBLAS runs others; "" when they are the same, on another BLAS, or when the user
// set the variable.
std::string better_openblas_core();
// Called first in main(): when better_openblas_core() names kernels, sets $OPENBLAS_CORETYPE and
// executes this program again with the same arguments (the library is already initialised). A
// failed exec leaves everything as it was.
void reexec_with_better_blas(char** argv);

}  // namespace salient
