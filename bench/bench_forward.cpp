// Forward latency and throughput of the transformer engine at lengths 32/128/512 and batch 1/32,
// for a BERT-base-shaped model (random weights) and any trained models given as arguments, with
// achieved GFLOP/s against the measured matmul peak.
//   bench_forward [--threads N] [--quick] [--only-base-128] [MODEL_DIR ...]
#include <cstdio>
#include <string>

#include "bench_common.h"
#include "model/checkpoint.h"
#include "util/memory.h"
#include "util/runtime.h"

using namespace salient;

namespace {

// Multiply-adds × 2 of a BERT forward (encoder + pooler/classifier ignored: < 0.1%).
double forward_flops(const ModelConfig& c, int64_t batch, int64_t len) {
  const double H = c.hidden_size, I = c.intermediate_size, L = len;
  double per_layer = 2 * L * (4 * H * H + 2 * H * I) + 2 * 2 * L * L * H;
  return batch * c.num_hidden_layers * per_layer;
}

void bench_model(const std::string& name, const Transformer& model, bool quick, double peak, bool only_128 = false) {
  torch::NoGradGuard ng;
  for (int64_t len : {32, 128, 512}) {
    if (len > model.config().max_tokens() || (only_128 && len != 128)) continue;
    for (int64_t batch : {1, 32}) {
      if (only_128 && batch != 1) continue;
      auto ids = torch::randint(1000, 2000, {batch, len}, torch::kLong);
      double flops = forward_flops(model.config(), batch, len);
      int reps = flops > 2e10 ? 3 : 10;  // median of at least 3, after a warm-up run
      if (quick && flops > 2e11) continue;
      double s = bench::time_median([&] { (void)model.logits(ids); }, reps, 1);
      double gf = flops / s / 1e9;
      std::printf("| %s | %lld | %lld | %.4f | %.1f | %.1f | %.0f%% |\n", name.c_str(), (long long)len, (long long)batch,
                  s, batch / s, gf, 100 * gf / peak);
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  salient::reexec_with_better_blas(argv);  // the kernels the salient binary runs (util/runtime.h)
  if (bench::help_requested(argc, argv,
                            "bench_forward [--threads N] [--quick] [--only-base-128] [MODEL_DIR ...]\n"
                            "Forward latency and throughput against the measured sgemm peak (see the file header).\n"))
    return 0;
  int threads = 0;
  bool quick = false, only_base_128 = false;
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (a == "--quick") quick = true;
    else if (a == "--only-base-128") only_base_128 = true;  // for bench/blas_variants.sh
    else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "bench_forward: unknown option '%s' (see --help)\n", a.c_str());
      return 2;
    } else dirs.push_back(a);
  }
  retain_freed_memory();  // as the CLI does (SALIENT_RETAIN_MEMORY=0: glibc's defaults)
  threads = set_threads(threads);
  BlasInfo blas = blas_info();
  double peak = bench::matmul_peak_gflops(only_base_128 ? 768 : 1536);
  std::printf("threads %d, BLAS %s, measured sgemm peak %.1f GFLOP/s\n\n", threads, blas.library.c_str(), peak);
  std::printf("| model | length | batch | latency s | sequences/s | GFLOP/s | of peak |\n|---|---|---|---|---|---|---|\n");
  nlohmann::json cfg = {{"model_type", "bert"}, {"hidden_size", 768}, {"num_hidden_layers", 12},
                        {"num_attention_heads", 12}, {"intermediate_size", 3072}, {"vocab_size", 30522},
                        {"max_position_embeddings", 512}};
  Transformer base(ModelConfig::from_json(cfg, "bert-base shape"), 0);
  bench_model("bert-base (random)", base, quick, peak, only_base_128);
  for (const auto& d : dirs) bench_model(d, load_model(d), quick, peak);
  return 0;
}
