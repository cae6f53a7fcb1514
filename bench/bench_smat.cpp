// SMaT's cost (issue #18, item 7): one student step (simulation loss + β·KL of the explanations,
// gradient, optimiser update) against one meta step (a differentiable pilot step of the student,
// the validation loss of the stepped student, its gradient back through the pilot step to the
// teacher's head coefficients, AdamW on them). Theory puts a meta step near 3 student steps (a
// forward-backward, a second backward through it, and one more forward). Both are timed in the same
// run on a random model of the study's shape (or another, by flags) and a random batch.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_common.h"
#include "smat/meta.h"
#include "util/memory.h"
#include "util/runtime.h"

using namespace salient;
using namespace salient::smat;

int main(int argc, char** argv) {
  salient::reexec_with_better_blas(argv);  // the kernels the salient binary runs (util/runtime.h)
  if (bench::help_requested(argc, argv,
                            "bench_smat [--threads N] [--reps N] [--batch N] [--length N] [--layers N] [--heads N] [--hidden N]\n"
                            "Median seconds of a SMaT student step and meta step (SGD and AdamW students) and their ratio.\n"))
    return 0;
  int threads = 0, reps = 15;
  int64_t batch = 32, length = 40, layers = 2, heads = 4, hidden = 128;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* flag) -> long {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_smat: %s needs a value\n", flag);
        std::exit(2);
      }
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 1) {
        std::fprintf(stderr, "bench_smat: %s must be an integer ≥ 1, got '%s'\n", flag, argv[i]);
        std::exit(2);
      }
      return v;
    };
    if (a == "--threads") threads = static_cast<int>(value("--threads"));
    else if (a == "--reps") reps = static_cast<int>(value("--reps"));
    else if (a == "--batch") batch = value("--batch");
    else if (a == "--length") length = value("--length");
    else if (a == "--layers") layers = value("--layers");
    else if (a == "--heads") heads = value("--heads");
    else if (a == "--hidden") hidden = value("--hidden");
    else {
      std::fprintf(stderr, "bench_smat: unknown option '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  retain_freed_memory();  // as the CLI does (SALIENT_RETAIN_MEMORY=0: glibc's defaults)
  threads = set_threads(threads);
  nlohmann::json cfg = {{"model_type", "bert"},          {"vocab_size", 30522},          {"hidden_size", hidden},
                        {"num_hidden_layers", layers},   {"num_attention_heads", heads}, {"intermediate_size", 4 * hidden},
                        {"max_position_embeddings", 128}};
  const ModelConfig config = ModelConfig::from_json(cfg, "bench shape");
  Transformer teacher(config, 1);
  torch::manual_seed(2);
  auto random_batch = [&] {
    SimulationBatch b;
    b.batch.input_ids = torch::randint(1000, 30000, {batch, length}, torch::kLong);
    b.batch.input_ids.select(1, 0).fill_(101);
    b.batch.token_type_ids = torch::zeros({batch, length}, torch::kLong);
    b.batch.attention_mask = torch::ones({batch, length}, torch::kLong);
    torch::NoGradGuard ng;
    b.teacher_labels = teacher.logits(b.batch.input_ids, b.batch.token_type_ids, b.batch.attention_mask).argmax(-1);
    b.teacher_scores = head_scores(teacher, b.batch);
    return b;
  };
  const SimulationBatch train = random_batch(), valid = random_batch();
  const int64_t n = layers * heads;
  std::printf("threads %d; bert %lld layers × %lld heads, hidden %lld, vocab 30522; batch %lld × %lld tokens; median of %d\n\n",
              threads, static_cast<long long>(layers), static_cast<long long>(heads), static_cast<long long>(hidden),
              static_cast<long long>(batch), static_cast<long long>(length), reps);
  std::printf("| student optimiser | student step ms | meta step ms | meta / student |\n|---|---|---|---|\n");
  for (OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::AdamW}) {
    Student s{Transformer(config, 3), torch::full({n}, 1.0 / static_cast<double>(n)).requires_grad_(true), {}};
    s.model.set_requires_grad(true);
    s.model.train();
    const std::vector<torch::Tensor> params = student_parameters(s);
    StudentOptimizer optimizer({kind, kind == OptimizerKind::Sgd ? 5e-3 : 3e-4, 0.01, 5.0}, params);
    torch::Tensor coefficients = torch::full({n}, 1.0 / static_cast<double>(n)).requires_grad_(true);
    torch::optim::AdamW meta(std::vector<torch::Tensor>{coefficients}, torch::optim::AdamWOptions(5e-4));
    const double student = bench::time_median(
        [&] {
          torch::Tensor loss = student_loss(s, train, coefficients.detach(), Normalizer::Sparsemax, 5.0);
          optimizer.step(params, torch::autograd::grad({loss}, params, {}, false, false, true));
        },
        reps);
    const double meta_step = bench::time_median(
        [&] {
          meta.zero_grad();
          torch::Tensor m = meta_loss(s, train, valid, coefficients, Normalizer::Sparsemax, 5.0, optimizer);
          coefficients.mutable_grad() = torch::autograd::grad({m}, {coefficients})[0];
          meta.step();
        },
        reps);
    std::printf("| %s | %.1f | %.1f | %.2f |\n", optimizer_name(kind).c_str(), 1e3 * student, 1e3 * meta_step,
                meta_step / student);
  }
  return 0;
}
