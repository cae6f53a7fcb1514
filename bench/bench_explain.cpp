// Time per example of every explainer on the same model in one run: the reference-bert fixture
// model (always) and any model directories given as arguments, on SST-2 dev sentences (or the
// fixture's cases when the shared data is missing). Default method settings (IG: 50 steps,
// trapezoid, internal batch 64; LIME: 1000 samples; KernelSHAP: exact up to 10 tokens, else
// 2d + 2048 samples).
//   bench_explain [--threads N] [--examples N] [--batch B] [--methods a,b] [MODEL_DIR ...]
#include <cstdio>
#include <fstream>
#include <string>

#include "bench_common.h"
#include "data/dataset.h"
#include "explain/explainer.h"
#include "util/error.h"
#include "util/io.h"
#include "util/memory.h"
#include "util/runtime.h"

using namespace salient;

namespace {

void bench_model(const std::string& dir, const std::vector<std::string>& texts, int64_t batch,
                 const std::vector<std::string>& methods) {
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
  std::printf("| method | ms / example | peak MiB |\n|---|---|---|\n");
  for (const auto& name : methods) {
    auto ex = make_explainer(name);
    ExplainOptions o;
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
    const double sec = bench::time_median(run_all, 3, 0);
    std::printf("| %s | %.2f | %.1f |\n", name.c_str(), 1000.0 * sec / double(encs.size()), peak_mib);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    int threads = 0;
    int64_t examples = 32, batch = 8;
    std::vector<std::string> dirs, methods = explainer_names();
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--threads" && i + 1 < argc) threads = std::stoi(argv[++i]);
      else if (a == "--examples" && i + 1 < argc) examples = std::stoll(argv[++i]);
      else if (a == "--batch" && i + 1 < argc) batch = std::stoll(argv[++i]);
      else if (a == "--methods" && i + 1 < argc) methods = split_list(argv[++i]);
      else dirs.push_back(a);
    }
    set_threads(threads);
    return_freed_memory_promptly();
    std::printf("threads %d\n", current_threads());
    const std::string shared = shared_dir();
    if (shared.empty()) throw salient::Error("shared directory not found (set SALIENT_SHARED)");
    dirs.insert(dirs.begin(), join_path(shared, "fixtures/reference-bert/model"));
    std::vector<std::string> texts;
    Dataset d = load_dataset("sst2:dev", join_path(shared, "data"));
    for (size_t i = 0; i < d.records.size() && static_cast<int64_t>(texts.size()) < examples; ++i)
      texts.push_back(d.records[i].text);
    for (const auto& dir : dirs) bench_model(dir, texts, batch, methods);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_explain: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
