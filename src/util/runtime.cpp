#include "util/runtime.h"

#include <dlfcn.h>
#include <torch/torch.h>

#include <cstdlib>
#include <iostream>
#include <thread>

namespace salient {

BlasInfo blas_info() {
  BlasInfo info;
  void* sym = dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info dl{};
  if (sym && dladdr(sym, &dl) && dl.dli_fname) {
    char buf[4096];
    info.library = realpath(dl.dli_fname, buf) ? buf : dl.dli_fname;
  }
  using ConfigFn = char* (*)();
  if (auto fn = reinterpret_cast<ConfigFn>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) {
    info.is_openblas = true;
    info.config = fn();
  }
  info.is_reference = !info.is_openblas && info.library.find("/blas/") != std::string::npos;
  return info;
}

int default_threads() {
  if (const char* env = std::getenv("SALIENT_THREADS"); env && std::atoi(env) > 0) return std::atoi(env);
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

int set_threads(int n) {
  if (n <= 0) n = default_threads();
  torch::set_num_threads(n);
  return n;
}

int current_threads() { return torch::get_num_threads(); }

void check_blas() {
  static bool done = false;
  if (done) return;
  done = true;
  BlasInfo b = blas_info();
  if (b.is_reference)
    std::cerr << "salient: warning: the reference BLAS (" << b.library
              << ") is active and is ~50x slower; install libopenblas0-openmp\n";
}

}  // namespace salient
