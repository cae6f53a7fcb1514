#include "util/runtime.h"

#include <dlfcn.h>
#include <torch/torch.h>

#include <strings.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <thread>

#include "util/error.h"
#include "util/progress.h"

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

c10::Device parse_device(const std::string& name, const std::string& where) {
  if (name == "cpu") return c10::Device(c10::kCPU);
  if (name.rfind("cuda", 0) != 0 || (name.size() > 4 && name[4] != ':'))
    fail("{}: expected cpu, cuda or cuda:N, got '{}'", where, name);
  int index = 0;
  if (name.size() > 4) {
    const std::string n = name.substr(5);
    if (n.empty() || n.size() > 3 || n.find_first_not_of("0123456789") != std::string::npos)
      fail("{}: expected cpu, cuda or cuda:N, got '{}'", where, name);
    index = std::stoi(n);
  }
  if (!torch::cuda::is_available()) {
    if (!torch::hasCUDA())
      fail("{}: '{}' needs a CUDA build of salient (this LibTorch is CPU-only; see docs/gpu.md)", where, name);
    fail("{}: '{}' requested but no CUDA device is visible", where, name);
  }
  const auto count = static_cast<int>(torch::cuda::device_count());
  if (index >= count) fail("{}: '{}' requested but only {} CUDA device(s) are visible", where, name, count);
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

namespace {
std::optional<c10::Device>& chosen_device() {
  static std::optional<c10::Device> d;
  return d;
}
}  // namespace

c10::Device default_device() {
  auto& d = chosen_device();
  if (!d) {
    const char* env = std::getenv("SALIENT_DEVICE");
    d = env && *env ? parse_device(env, "$SALIENT_DEVICE") : c10::Device(c10::kCPU);
  }
  return *d;
}

void set_default_device(c10::Device device) { chosen_device() = device; }

void set_device(const std::string& name) { set_default_device(parse_device(name)); }
std::string device_name() { return default_device().str(); }
bool device_is_cpu() { return default_device().is_cpu(); }
void set_progress(bool enabled) { Progress::set_enabled(enabled); }

void check_blas() {
  static bool done = false;
  if (done) return;
  done = true;
  BlasInfo b = blas_info();
  if (b.is_reference)
    std::cerr << "salient: warning: the reference BLAS (" << b.library
              << ") is active and is ~50x slower; install libopenblas0-openmp\n";
}

std::string openblas_core() {
  using NameFn = char* (*)();
  auto fn = reinterpret_cast<NameFn>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* name = fn ? fn() : nullptr;
  return name ? name : "";
}

std::string openblas_core_for_cpu() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return "";
}

std::string better_openblas_core() {
  if (std::getenv("OPENBLAS_CORETYPE")) return "";  // the user's choice stands
  const std::string want = openblas_core_for_cpu(), have = openblas_core();
  // The same rule as the Python package (salient/__init__.py sets the variable before anything loads
  // OpenBLAS): the CPU's kernels whenever OpenBLAS runs others, so both compute alike.
  if (want.empty() || have.empty() || strcasecmp(have.c_str(), want.c_str()) == 0) return "";
  return want;
}

void reexec_with_better_blas(char** argv) {
  const std::string core = better_openblas_core();
  if (core.empty()) return;
  if (setenv("OPENBLAS_CORETYPE", core.c_str(), 1) != 0) return;
  // The binary's own path, not /proc/self/exe itself: the process's name (ps, top, pkill) is
  // taken from the path executed, and would otherwise read "exe".
  std::string self(4096, '\0');
  const ssize_t n = readlink("/proc/self/exe", self.data(), self.size() - 1);
  self.resize(n > 0 ? static_cast<size_t>(n) : 0);
  if (!self.empty()) execv(self.c_str(), argv);
  execv("/proc/self/exe", argv);  // no readable path, or the binary was replaced while running
  unsetenv("OPENBLAS_CORETYPE");  // exec failed: carry on with the kernels loaded
}

}  // namespace salient
