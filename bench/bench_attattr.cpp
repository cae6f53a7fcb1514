// Self-Attention Attribution speed and accuracy: the fast path (layers below reused, layer l's
// Q/K/V once, m points batched, gradients w.r.t. the scaled attention only) against the
// straightforward method (m full forward+backward passes per layer) on the same model in the same
// run, the FLOP floor of the reuse method, and time + completeness error versus points per rule.
//   bench_attattr [--threads N] [--repeats N] [--quick] [--length L] [--skip-base] [--base-one-layer]
//                 [--full-straightforward] [MODEL_DIR ...]
// Every time is the median of --repeats runs (default 3) after one untimed warm-up run: a first,
// cold run of the fast path was measured 1.5x slower than the same call repeated.
#include <chrono>
#include <cstdio>
#include <string>

#include "attattr/attribution.h"
#include "bench_common.h"
#include "model/classifier.h"
#include "util/memory.h"
#include "util/runtime.h"

using namespace salient;
using namespace salient::attattr;

namespace {

int g_repeats = 3;
double g_cold_s = 0;  // the untimed warm-up run of the last now_s, reported where it tells something
double now_s(const std::function<void()>& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  g_cold_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return bench::time_median(fn, g_repeats, 0);
}

// Multiply-adds × 2 of one layer's forward at length L (attention products included).
double layer_flops(const ModelConfig& c, int64_t len) {
  const double H = c.hidden_size, I = c.intermediate_size, L = len;
  return 2 * L * (4 * H * H + 2 * H * I) + 2 * 2 * L * L * H;
}

// Floor of the reuse method: m points × (layers l..N−1) × (forward + input-gradient backward,
// which costs the same multiply-adds as the forward).
double floor_flops(const ModelConfig& c, int64_t len, int m, const std::vector<int64_t>& layers) {
  double f = 0;
  for (int64_t l : layers) f += m * double(c.num_hidden_layers - l) * 2 * layer_flops(c, len);
  return f;
}

double rel_err(const AttributionResult& a, const AttributionResult& b) {
  double num = 0, den = 0;
  for (size_t l = 0; l < a.layers.size(); ++l) {
    num = std::max(num, (a.layers[l].attribution - b.layers[l].attribution).abs().max().item<double>());
    den = std::max(den, b.layers[l].attribution.abs().max().item<double>());
  }
  return num / den;
}

double max_completeness(const AttributionResult& r) {
  double worst = 0;
  for (const auto& la : r.layers)
    worst = std::max(worst, std::abs(la.completeness_gap()) / std::max(std::abs(la.f_full - la.f_zero), 1e-12));
  return worst;
}

void bench_model(const std::string& name, const Transformer& model, const torch::Tensor& ids, bool quick, double peak,
                 bool full_straightforward, bool one_layer = false) {
  const auto& c = model.config();
  const int64_t N = model.num_layers(), len = ids.size(1);
  std::vector<int64_t> all;
  for (int64_t l = 0; l < N; ++l) all.push_back(l);
  torch::Tensor types = torch::zeros_like(ids);
  AttributionOptions o;  // left, m = 20: the exact (parity) mode

  std::printf("\n### %s, %lld tokens, m = 20, left rule\n\n", name.c_str(), (long long)len);
  std::printf("| what | layers | time s | FLOP floor TFLOP | floor time s | time / floor | rel. diff to straightforward |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  // One layer (layer 0: the most work) and all layers.
  for (bool every : {false, true}) {
    if (every && one_layer) {
      // Fast-path time per layer is proportional to the layers it runs (N − l): all layers ≈
      // t(layer 0) · Σ(N − l)/N. Straightforward: linear in l, from layers 0 and N − 1.
      AttributionOptions last = o;
      last.layers = {N - 1};
      AttributionResult s1, f1;
      double t_fast0 = 0;
      {
        AttributionOptions first = o;
        first.layers = {0};
        t_fast0 = now_s([&] { (void)attribute(model, ids, types, -1, first); });
      }
      double t1 = now_s([&] { s1 = attribute_straightforward(model, ids, types, -1, last); });
      f1 = attribute(model, ids, types, -1, last);
      const double fast_all = t_fast0 * (N + 1) / 2.0;
      std::printf("| fast, all layers EXTRAPOLATED = t0·(N+1)/2 (t0 re-measured %.2f s) | all | %.1f | %.2f | %.2f | %.2fx | |\n",
                  t_fast0, fast_all, floor_flops(c, len, o.m, all) / 1e12, floor_flops(c, len, o.m, all) / (peak * 1e9),
                  fast_all / (floor_flops(c, len, o.m, all) / (peak * 1e9)));
      std::printf("| straightforward, layer %lld measured | %lld | %.2f | | | | %.1e |\n", (long long)(N - 1), (long long)(N - 1), t1,
                  rel_err(f1, s1));
      std::fflush(stdout);
      break;
    }
    o.layers = every ? all : std::vector<int64_t>{0};
    AttributionResult fast;
    double t_fast = now_s([&] { fast = attribute(model, ids, types, -1, o); });
    double fl = floor_flops(c, len, o.m, o.layers);
    double floor_s = fl / (peak * 1e9);
    std::string label = every ? "all" : "0";
    std::printf("| fast (reuse + batched points; first, cold run %.2f s) | %s | %.2f | %.2f | %.2f | %.2fx | |\n", g_cold_s,
                label.c_str(), t_fast, fl / 1e12, floor_s, t_fast / floor_s);
    std::fflush(stdout);
    if (!every || full_straightforward) {
      AttributionResult slow;
      double t_slow = now_s([&] { slow = attribute_straightforward(model, ids, types, -1, o); });
      std::printf("| straightforward (m full fwd+bwd per layer; first, cold run %.2f s) | %s | %.2f | | | | %.1e |\n",
                  g_cold_s, label.c_str(), t_slow, rel_err(fast, slow));
      std::printf("| speed-up | %s | %.1fx | | | | |\n", label.c_str(), t_slow / t_fast);
    } else {
      // Straightforward time is linear in l (full forward always, backward down to l): measure the
      // first and last layers and extrapolate to all of them.
      AttributionOptions first = o, last = o;
      first.layers = {0};
      last.layers = {N - 1};
      AttributionResult s0, s1, f1;
      double t0 = now_s([&] { s0 = attribute_straightforward(model, ids, types, -1, first); });
      double t1 = now_s([&] { s1 = attribute_straightforward(model, ids, types, -1, last); });
      f1 = attribute(model, ids, types, -1, last);
      double est = N * (t0 + t1) / 2;
      std::printf("| straightforward, layer 0 / layer %lld measured | | %.2f / %.2f | | | | %.1e |\n", (long long)(N - 1), t0, t1,
                  rel_err(f1, s1));
      std::printf("| straightforward, all layers EXTRAPOLATED = N·(t0 + t%lld)/2 | all | %.1f | | | | |\n", (long long)(N - 1), est);
      std::printf("| speed-up (vs extrapolated) | all | %.1fx | | | | |\n", est / t_fast);
    }
    std::fflush(stdout);
  }

  if (one_layer) return;  // time-limited runs: the rule comparison is on the small models
  // Rules: time and completeness error versus points, one middle layer; error against a
  // Gauss–Legendre m = 64 reference of the same layer as well.
  const int64_t layer = N / 2;
  AttributionOptions ref_o;
  ref_o.layers = {layer};
  ref_o.rule = Rule::GaussLegendre;
  ref_o.m = 64;
  AttributionResult ref = attribute(model, ids, types, -1, ref_o);
  std::printf("\n#### %s: rules on layer %lld (F(A) − F(0) = %.4g; reference: gauss m = 64, completeness gap %.1e)\n\n",
              name.c_str(), (long long)layer, ref.layers[0].f_full - ref.layers[0].f_zero, max_completeness(ref));
  std::printf("| rule | m | time s | completeness |gap|/|ΔF| | max error vs reference / max|ref| |\n|---|---|---|---|---|\n");
  std::vector<int> ms = quick ? std::vector<int>{2, 5, 20} : std::vector<int>{2, 3, 5, 10, 20, 50};
  for (Rule rule : {Rule::Left, Rule::Right, Rule::Midpoint, Rule::Trapezoid, Rule::GaussLegendre}) {
    for (int m : ms) {
      AttributionOptions ro;
      ro.layers = {layer};
      ro.rule = rule;
      ro.m = m;
      AttributionResult r;
      double t = now_s([&] { r = attribute(model, ids, types, -1, ro); });
      std::printf("| %s | %d | %.3f | %.2e | %.2e |\n", rule_name(rule).c_str(), m, t, max_completeness(r), rel_err(r, ref));
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  salient::reexec_with_better_blas(argv);  // the kernels the salient binary runs (util/runtime.h)
  if (bench::help_requested(argc, argv,
                            "bench_attattr [--threads N] [--repeats N] [--quick] [--length L] [--skip-base] "
                            "[--base-one-layer] [--full-straightforward] [MODEL_DIR ...]\n"
                            "AttAttr fast path vs the straightforward method, FLOP floor, rules (see the file header).\n"))
    return 0;
  int threads = 2;
  bool quick = false, skip_base = false, full_straightforward = false, base_one_layer = false;
  int64_t length = 128;
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (a == "--repeats" && i + 1 < argc) g_repeats = std::atoi(argv[++i]);
    else if (a == "--length" && i + 1 < argc) length = std::atoll(argv[++i]);
    else if (a == "--quick") quick = true;
    else if (a == "--skip-base") skip_base = true;
    else if (a == "--full-straightforward") full_straightforward = true;
    else if (a == "--base-one-layer") base_one_layer = true;
    else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "bench_attattr: unknown option '%s' (see --help)\n", a.c_str());
      return 2;
    } else dirs.push_back(a);
  }
  if (g_repeats < 1) {
    std::fprintf(stderr, "bench_attattr: --repeats must be at least 1\n");
    return 2;
  }
  retain_freed_memory();  // as the CLI does (SALIENT_RETAIN_MEMORY=0: glibc's defaults)
  threads = set_threads(threads);
  double peak = bench::matmul_peak_gflops();
  std::printf("threads %d, BLAS %s, measured sgemm peak %.1f GFLOP/s\n", threads, blas_info().library.c_str(), peak);
  if (!skip_base) {
    nlohmann::json cfg = {{"model_type", "bert"}, {"hidden_size", 768}, {"num_hidden_layers", 12},
                          {"num_attention_heads", 12}, {"intermediate_size", 3072}, {"vocab_size", 30522},
                          {"max_position_embeddings", 512}, {"num_labels", 2}};
    Transformer base(ModelConfig::from_json(cfg, "<bench>"), 1);
    base.set_requires_grad(false);
    base.eval();
    auto ids = torch::randint(1000, 2000, {1, length}, torch::kLong);
    ids[0][0] = 101;
    ids[0][length - 1] = 102;
    bench_model("BERT-base shape (random weights)", base, ids, quick, peak, full_straightforward, base_one_layer);
  }
  for (const auto& dir : dirs) {
    Classifier clf = load_classifier(dir);
    clf.model.set_requires_grad(false);
    clf.model.eval();
    Encoding e = clf.encode("the movie is a charming and often affecting journey , but the ending is bleak and "
                            "desperate and the acting rarely rises above the material .");
    bench_model(dir + " (" + std::to_string(e.ids.size()) + " tokens, a real sentence)", clf.model,
                torch::tensor(e.ids, torch::kLong).unsqueeze(0), quick, peak, true);
  }
  return 0;
}
