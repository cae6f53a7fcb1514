// Time per example of every explainer on the same model in one run: the reference-bert fixture
// model (always) and any model directories given as arguments, on SST-2 dev sentences (or the
// fixture's cases when the shared data is missing). Each method's registry defaults (IG: 50 steps,
// Gauss–Legendre, internal batch 64; LIME: word features, 5,000 samples; KernelSHAP: exact up to
// 10 tokens, else 2d + 2048 samples).
//   bench_explain [--threads N] [--examples N] [--batch B] [--methods a,b] [--ig-impl fused|autograd|plain]
//                 [--repeats N] [MODEL_DIR ...]
//   bench_explain --bert-base-ig [--threads N] [--length L] [--steps S]
//     IG on a BERT-base-shaped model (random weights) against its FLOP floor at the measured
//     sgemm peak: S points × (forward + input-gradient backward), last layer for [CLS] only.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "bench_common.h"
#include "data/dataset.h"
#include "explain/explainer.h"
#include "text/tokenizer.h"
#include "util/error.h"
#include "util/io.h"
#include "util/memory.h"
#include "util/memory.h"
#include "util/runtime.h"

using namespace salient;

namespace {

void bench_model(const std::string& dir, const std::vector<std::string>& texts, int64_t batch,
                 const std::vector<std::string>& methods, const std::string& ig_impl, int repeats) {
  Classifier clf = load_classifier(dir);
  std::vector<Encoding> encs;
  double mean_len = 0;
  for (const auto& t : texts) {
    encs.push_back(clf.encode(t));
    mean_len += double(encs.back().ids.size()) / double(texts.size());
  }
  const auto& c = clf.model.config();
  std::printf("\n%s: hidden %lld, %lld layers, %lld heads; %zu examples, mean %.1f tokens, batch %lld\n", dir.c_str(),
              (long long)c.hidden_size, (long long)c.num_hidden_layers, (long long)c.num_attention_heads, encs.size(),
              mean_len, (long long)batch);
  std::printf("| method | ms / example (median of %d) | min | peak MiB |\n|---|---|---|---|\n", repeats);
  for (const auto& name : methods) {
    auto ex = make_explainer(name);
    ExplainOptions o;
    if (name == "ig" && !ig_impl.empty()) o.params["impl"] = ig_impl;
    auto run_all = [&] {
      for (size_t s = 0; s < encs.size(); s += batch) {
        std::vector<const Encoding*> chunk;
        for (size_t i = s; i < std::min(encs.size(), s + static_cast<size_t>(batch)); ++i) chunk.push_back(&encs[i]);
        std::vector<int64_t> targets = predicted_classes(clf, chunk);
        (void)ex->explain(clf, chunk, targets, o);
      }
    };
    // One untimed run measures the memory the method adds (and warms up), then the timed runs.
    PeakMemorySampler sampler;
    run_all();
    const double peak_mib = sampler.stop();
    std::vector<double> secs;
    for (int r = 0; r < repeats; ++r) secs.push_back(bench::time_median(run_all, 1, 0));
    std::sort(secs.begin(), secs.end());
    const double per = 1000.0 / double(encs.size());
    std::printf("| %s | %.2f | %.2f | %.1f |\n", name.c_str(), per * secs[secs.size() / 2], per * secs.front(), peak_mib);
    std::fflush(stdout);
  }
}

// Multiply-adds of one IG row (one interpolation point) through the encoder: forward plus the
// backward that computes input gradients only (each matmul's input gradient costs what its
// forward did; both operands of Q·Kᵀ and A·V need gradients). The last layer runs for [CLS]
// only (keys and values for every token). Pooler and classifier are negligible and left out.
double ig_row_macs(const ModelConfig& c, int64_t L) {
  const double h = c.hidden_size, I = c.intermediate_size, n = c.num_hidden_layers, l = L;
  const double full_fwd = 4 * l * h * h + 2 * l * h * I + 2 * l * l * h;
  const double full_bwd = 4 * l * h * h + 2 * l * h * I + 4 * l * l * h;
  const double last_fwd = 2 * l * h * h + 2 * h * h + 2 * h * I + 2 * l * h;
  const double last_bwd = 2 * l * h * h + 2 * h * h + 2 * h * I + 4 * l * h;
  return (n - 1) * (full_fwd + full_bwd) + last_fwd + last_bwd;
}

void bench_bert_base_ig(int64_t length, int64_t steps, const std::string& ig_impl) {
  nlohmann::json cfg = {{"model_type", "bert"}, {"hidden_size", 768}, {"num_hidden_layers", 12},
                        {"num_attention_heads", 12}, {"intermediate_size", 3072}, {"vocab_size", 30522},
                        {"max_position_embeddings", 512}, {"num_labels", 2}};
  Classifier clf;
  clf.model = Transformer(ModelConfig::from_json(cfg, "<bench>"), 1);
  clf.model.eval();
  clf.tokenizer = Tokenizer::from_dir(join_path(shared_dir(), "data/bert_base_uncased_tokenizer"));
  std::vector<int64_t> ids(length), types(length, 0);
  for (int64_t t = 0; t < length; ++t) ids[t] = 1000 + (t * 7919) % 20000;
  ids.front() = 101;
  ids.back() = 102;
  Encoding enc = clf.encode_ids(ids, types, "bench");
  auto ig = make_explainer("ig");
  std::printf("\nBERT-base shape (random weights), %lld tokens, IG %lld steps (%s)\n", (long long)length,
              (long long)steps, ig_impl.empty() ? "default" : ig_impl.c_str());
  // The machine's speed drifts by 10-20% within minutes: the peak is measured right before and
  // after each timing (the median of 3 runs after a warm-up) and the floor uses their mean.
  std::printf("| --internal-batch (rows/pass) | time s | sgemm peak before / after GFLOP/s | FLOP floor s | time / floor |\n"
              "|---|---|---|---|---|\n");
  for (int64_t ib : {64, 8}) {  // 64 = the default, capped at 2048 / length rows per pass (16 at 128)
    ExplainOptions o;
    o.params["steps"] = steps;
    if (!ig_impl.empty()) o.params["impl"] = ig_impl;
    o.internal_batch = ib;
    const double before = bench::matmul_peak_gflops();
    const double sec = bench::time_median([&] { (void)ig->explain(clf, {&enc}, {0}, o); }, 3, 1);
    const double after = bench::matmul_peak_gflops();
    const double floor_s = 2.0 * steps * ig_row_macs(clf.model.config(), length) / ((before + after) / 2 * 1e9);
    std::printf("| %lld | %.2f | %.1f / %.1f | %.2f | %.2f |\n", (long long)ib, sec, before, after, floor_s,
                sec / floor_s);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  salient::reexec_with_better_blas(argv);  // the kernels the salient binary runs (util/runtime.h)
  if (bench::help_requested(argc, argv,
                            "bench_explain [--threads N] [--examples N] [--batch B] [--methods a,b] "
                            "[--ig-impl fused|autograd|plain] [--repeats N] [MODEL_DIR ...]\n"
                            "bench_explain --bert-base-ig [--threads N] [--length L] [--steps S]\n"
                            "Time per example of every explainer (see the file header).\n"))
    return 0;
  try {
    int threads = 0;
    int64_t examples = 32, batch = 8;
    std::vector<std::string> dirs, methods = post_hoc_explainer_names();
    bool bert_base_ig = false;
    int64_t length = 128, steps = 50;
    std::string ig_impl;  // --ig-impl fused|autograd|plain: IG's implementation, for A/B runs
    int repeats = 3;      // timed passes per method
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--threads" && i + 1 < argc) threads = std::stoi(argv[++i]);
      else if (a == "--bert-base-ig") bert_base_ig = true;
      else if (a == "--length" && i + 1 < argc) length = std::stoll(argv[++i]);
      else if (a == "--steps" && i + 1 < argc) steps = std::stoll(argv[++i]);
      else if (a == "--examples" && i + 1 < argc) examples = std::stoll(argv[++i]);
      else if (a == "--batch" && i + 1 < argc) batch = std::stoll(argv[++i]);
      else if (a == "--methods" && i + 1 < argc) methods = split_list(argv[++i]);
      else if (a == "--ig-impl" && i + 1 < argc) ig_impl = argv[++i];
      else if (a == "--repeats" && i + 1 < argc) repeats = std::max(1, std::stoi(argv[++i]));
      else if (!a.empty() && a[0] == '-') throw salient::Error("unknown option '" + a + "' (see --help)");
      else dirs.push_back(a);
    }
    retain_freed_memory();  // as the CLI does (SALIENT_RETAIN_MEMORY=0: glibc's defaults)
    set_threads(threads);
    std::printf("threads %d\n", current_threads());
    if (bert_base_ig) {
      bench_bert_base_ig(length, steps, ig_impl);
      return 0;
    }
    const std::string shared = shared_dir();
    if (shared.empty()) throw salient::Error("shared directory not found (set SALIENT_SHARED)");
    dirs.insert(dirs.begin(), join_path(shared, "fixtures/reference-bert/model"));
    std::vector<std::string> texts;
    Dataset d = load_dataset("sst2:dev", join_path(shared, "data"));
    for (size_t i = 0; i < d.records.size() && static_cast<int64_t>(texts.size()) < examples; ++i)
      texts.push_back(d.records[i].text);
    for (const auto& dir : dirs) bench_model(dir, texts, batch, methods, ig_impl, repeats);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_explain: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
