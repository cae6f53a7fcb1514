// Simulability (SMaT, Fernandes et al. 2022): a dataset-level metric. Per method, students of the
// model's architecture learn the model's labels guided by the method's explanations, against
// students without (smat/study.h); every registry method goes through the study's generic path
// ("registered:M"), so a new explainer is scored without any change here.
#include <cmath>

#include "eval/benchmark.h"
#include "eval/metric.h"
#include "salient/distributed.h"
#include "smat/study.h"
#include "util/error.h"
#include "util/io.h"

namespace salient {
namespace {

std::string run_simulability_study(const BenchmarkOptions& a) {
  if (!(a.simulability.temperature > 0) || !std::isfinite(a.simulability.temperature))
    fail("--sim-temperature: must be > 0, got {}", a.simulability.temperature);
  const double beta = a.simulability.student.beta;  // -1: the paper's default for the method's family
  if (!std::isfinite(beta) || (beta < 0 && beta != -1)) fail("--sim-beta: must be ≥ 0, got {}", beta);
  smat::StudyOptions so;
  so.setup.teacher = a.model_dir;
  so.setup.pool = a.data_spec;
  so.setup.data_dir = a.data_dir.empty() ? shared_data_dir() : a.data_dir;
  so.setup.student_init = a.simulability.student_init;
  so.setup.test_size = a.simulability.test_size;
  so.setup.valid_size = a.simulability.valid_size;
  so.setup.max_length = a.simulability.max_length;
  so.out_dir = join_path(a.out_dir, "simulability");
  so.sizes = a.simulability.sizes;
  so.seeds = a.simulability.seeds;
  so.student = a.simulability.student;
  so.explainers = {"none"};
  for (const auto& m : a.methods) so.explainers.push_back("registered:" + m);
  so.static_explainers.internal_batch = a.internal_batch;
  so.static_explainers.max_batch_tokens = a.max_batch_tokens;
  so.static_explainers.registered_temperature = a.simulability.temperature;
  so.static_explainers.registered = a.method_options;
  smat::run_study(so);  // under mpirun the student runs are shared out and rank 0 writes the report
  if (!dist::is_root()) return "";
  return "Simulability (" + so.out_dir + "):\n\n" + read_file(join_path(so.out_dir, "report.md"));
}

}  // namespace

MetricFamily simulability_metric() {
  MetricFamily f;
  f.name = "simulation";
  f.metrics = {
      {"simulability", f.name, true,
       "SMaT: agreement with the model of students trained with the method's explanations, against students without "
       "(trains students: see --sim-* options)"},
  };
  f.options = {"--sim-sizes", "--sim-seeds", "--sim-test-size", "--sim-valid-size", "--sim-max-length",
               "--sim-student-init", "--sim-optimizer", "--sim-lr", "--sim-max-epochs", "--sim-patience",
               "--sim-early-stopping", "--sim-temperature", "--sim-beta"};
  f.run_study = run_simulability_study;
  return f;
}

}  // namespace salient
