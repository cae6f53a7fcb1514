// GPU timings on a BERT-base-shaped model (random weights, seeded): forward latency and
// throughput at lengths 32/128/512 and batch 1/32 with achieved TFLOP/s against a measured matmul
// peak, Self-Attention Attribution over all 12 layers at 128 tokens (m = 20, the paper's left
// rule), IG with 50 steps, and the peak GPU memory of each workload; in float32 and in TF32
// (the matrix units' float32 mode), with the completeness error of each so that TF32 is used only
// where it stays below float32's. bench/gpu_eager.py does the same work in PyTorch eager on the same
// model (--save-model) and compares.
//   bench_gpu [--device cuda[:N]] [--repeats N] [--quick] [--save-model DIR] [--json FILE]
// Built only with SALIENT_CUDA=ON (it reads the CUDA caching allocator's statistics).
#include <ATen/Context.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/cuda.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "attattr/attribution.h"
#include "bench_common.h"
#include "explain/explainer.h"
#include "model/checkpoint.h"
#include "model/classifier.h"
#include "util/error.h"
#include "util/io.h"
#include "util/runtime.h"

using namespace salient;

namespace {

int g_repeats = 10;
torch::Device g_device(torch::kCUDA, 0);

// Median seconds of g_repeats synchronised calls after 3 warm-up calls.
double gpu_time(const std::function<void()>& fn, int repeats = 0) {
  if (repeats <= 0) repeats = g_repeats;
  return bench::time_median(
      [&] {
        fn();
        torch::cuda::synchronize();
      },
      repeats, 3);
}

void reset_peak() {
  torch::cuda::synchronize();
  c10::cuda::CUDACachingAllocator::emptyCache();
  c10::cuda::CUDACachingAllocator::resetPeakStats(g_device.index());
}
// Peak bytes allocated since reset_peak (index 0: the aggregate over pool kinds).
double peak_mib() {
  torch::cuda::synchronize();
  return static_cast<double>(c10::cuda::CUDACachingAllocator::getDeviceStats(g_device.index()).allocated_bytes[0].peak) /
         1048576.0;
}

// "highest" = true float32 matmuls; "high" = TF32 on the matrix units.
void set_precision(const std::string& p) { at::globalContext().setFloat32MatmulPrecision(p); }

double matmul_tflops(int64_t n = 8192) {
  torch::NoGradGuard ng;
  auto opts = torch::TensorOptions().device(g_device);
  auto a = torch::randn({n, n}, opts), b = torch::randn({n, n}, opts);
  const double s = gpu_time([&] { (void)torch::mm(a, b); }, 10);
  return 2.0 * n * n * n / s / 1e12;
}

// Multiply-adds × 2 of one full layer at length L (projections, feed-forward, both attention products).
double layer_flops(const ModelConfig& c, int64_t len) {
  const double H = c.hidden_size, I = c.intermediate_size, L = len;
  return 2 * L * (4 * H * H + 2 * H * I) + 2 * 2 * L * L * H;
}

torch::Tensor token_ids(int64_t batch, int64_t length) {
  auto ids = torch::empty({batch, length}, torch::kLong);
  auto a = ids.accessor<int64_t, 2>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < length; ++t) a[b][t] = t == 0 ? 101 : t == length - 1 ? 102 : 1000 + (t * 7919 + b * 104729) % 20000;
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "bench_gpu [--device cuda[:N]] [--repeats N] [--quick] [--save-model DIR] [--json FILE]\n";
  if (bench::help_requested(argc, argv, usage)) return 0;
  std::string device = "cuda", save_dir, json_path;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--device" && i + 1 < argc) device = argv[++i];
    else if (a == "--repeats" && i + 1 < argc) g_repeats = std::atoi(argv[++i]);
    else if (a == "--quick") quick = true;
    else if (a == "--save-model" && i + 1 < argc) save_dir = argv[++i];
    else if (a == "--json" && i + 1 < argc) json_path = argv[++i];
    else {
      std::fprintf(stderr, "bench_gpu: unknown option '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  try {
    g_device = parse_device(device);
    if (!g_device.is_cuda()) fail("--device: bench_gpu measures a CUDA device (got '{}')", device);
    if (!g_device.has_index()) g_device = torch::Device(torch::kCUDA, 0);
    nlohmann::json cfg = {{"model_type", "bert"}, {"hidden_size", 768}, {"num_hidden_layers", 12},
                          {"num_attention_heads", 12}, {"intermediate_size", 3072}, {"vocab_size", 30522},
                          {"max_position_embeddings", 512}, {"num_labels", 2}, {"id2label", {{"0", "neg"}, {"1", "pos"}}}};
    Classifier clf;
    clf.model = Transformer(ModelConfig::from_json(cfg, "<bench>"), 1);
    clf.model.eval();
    if (!save_dir.empty()) save_model(clf.model, save_dir);
    clf.model.to(g_device, torch::kFloat32);
    clf.tokenizer = Tokenizer::from_dir(join_path(shared_dir(), "data/bert_base_uncased_tokenizer"));
    const ModelConfig& c = clf.model.config();
    nlohmann::json out;
    out["device"] = g_device.str();
    out["torch"] = TORCH_VERSION;

    for (const std::string precision : {"highest", "high"}) {
      set_precision(precision);
      const std::string mode = precision == "highest" ? "fp32" : "tf32";
      const double peak = matmul_tflops();
      out[mode]["matmul_peak_tflops"] = peak;
      std::printf("\n## %s (8192³ matmul: %.1f TFLOP/s)\n\n", mode.c_str(), peak);

      // Forward.
      std::printf("| length | batch | latency ms | sequences/s | TFLOP/s | of peak | peak MiB |\n|---|---|---|---|---|---|---|\n");
      for (int64_t L : {32, 128, 512}) {
        for (int64_t B : {1, 32}) {
          if (quick && L == 512) continue;
          torch::NoGradGuard ng;
          torch::Tensor ids = token_ids(B, L).to(g_device), types = torch::zeros_like(ids), mask = torch::ones_like(ids);
          reset_peak();
          const double s = gpu_time([&] { (void)clf.model.logits(ids, types, mask); });
          const double mib = peak_mib();
          const double tflops = B * c.num_hidden_layers * layer_flops(c, L) / s / 1e12;
          std::printf("| %lld | %lld | %.3f | %.0f | %.1f | %.0f%% | %.0f |\n", (long long)L, (long long)B, s * 1e3,
                      B / s, tflops, 100 * tflops / peak, mib);
          std::fflush(stdout);
          out[mode]["forward"].push_back({{"length", L}, {"batch", B}, {"seconds", s}, {"tflops", tflops}, {"peak_mib", mib}});
        }
      }

      // Self-Attention Attribution: every layer, 128 tokens, m = 20 (left rule, the authors').
      {
        const int64_t L = 128;
        torch::Tensor ids = token_ids(1, L), types = torch::zeros_like(ids);
        for (double bound : {2048.0, 64.0}) {
          attattr::AttributionOptions o;
          o.m = 20;
          o.max_batch_mb = bound;
          attattr::AttributionResult r;
          reset_peak();
          const double s = gpu_time([&] { r = attattr::attribute(clf.model, ids, types, -1, o); }, std::max(3, g_repeats / 2));
          const double mib = peak_mib();
          double worst_gap = 0, worst_rel = 0;
          std::vector<double> sums;
          for (const auto& la : r.layers) {
            worst_gap = std::max(worst_gap, std::abs(la.completeness_gap()));
            worst_rel = std::max(worst_rel, std::abs(la.completeness_gap()) / std::max(1e-12, std::abs(la.f_full - la.f_zero)));
            sums.push_back(la.attribution_sum);
          }
          std::printf("\nAttAttr, 12 layers, %lld tokens, m = 20, chunk bound %.0f MiB: %.4f s (%.4f s per layer), "
                      "peak %.0f MiB, worst |completeness gap| %.3g (%.3g of F(A) - F(0))\n",
                      (long long)L, bound, s, s / c.num_hidden_layers, mib, worst_gap, worst_rel);
          std::fflush(stdout);
          out[mode]["attattr"].push_back({{"length", L}, {"m", 20}, {"max_batch_mb", bound}, {"seconds", s},
                                          {"peak_mib", mib}, {"worst_gap", worst_gap}, {"attribution_sums", sums},
                                          {"target", r.target}});
        }
      }

      // IG, 50 steps, one example of 128 tokens: Captum's riemann_trapezoid points, [PAD]
      // baseline, the probability of class 1 (what gpu_eager.py computes).
      {
        const int64_t L = 128;
        torch::Tensor ids = token_ids(1, L);
        std::vector<int64_t> idv(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + L), types(L, 0);
        Encoding enc = clf.encode_ids(idv, types, "bench");
        auto ig = make_explainer("ig");
        for (int64_t internal_batch : {64, 16}) {
          ExplainOptions o;
          o.params["steps"] = 50;
          o.params["rule"] = "riemann_trapezoid";
          o.params["baseline"] = "pad";
          o.output = ModelOutput::Probability;
          o.internal_batch = internal_batch;
          std::vector<Explanation> e;
          reset_peak();
          const double s = gpu_time([&] { e = ig->explain(clf, {&enc}, {1}, o); }, std::max(3, g_repeats / 2));
          const double mib = peak_mib();
          double sum = 0;
          for (double v : e[0].scores) sum += v;
          std::printf("IG, %lld tokens, 50 steps, internal batch %lld: %.4f s, peak %.0f MiB, sum %.6g\n", (long long)L,
                      (long long)internal_batch, s, mib, sum);
          out[mode]["ig"].push_back({{"length", L}, {"steps", 50}, {"internal_batch", internal_batch}, {"seconds", s},
                                     {"peak_mib", mib}, {"score_sum", sum}, {"extras", e[0].extras}});
        }
      }
    }
    set_precision("highest");
    if (!json_path.empty()) write_file_atomic(json_path, out.dump(2) + "\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
