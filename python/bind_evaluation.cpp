// The method and metric registries, per-input plausibility and the benchmark (include/salient/metrics.h,
// include/salient/studies.h).
#include <algorithm>

#include "bindings.h"
#include "salient/metrics.h"
#include "salient/studies.h"

namespace salient_python {

void bind_evaluation(py::module_& m) {
  m.def("methods", [] {
    py::list out;
    for (const auto& info : salient::methods()) out.append(to_python(salient::method_json(info)));
    return out;
  });

  // Plausibility of scores against a 0/1 rationale of the same length (eval/plausibility.h): AUROC,
  // AUPRC (average precision, and the trapezoid area ferret reports), and F1 and IoU of the top-|rationale| items.
  m.def(
      "plausibility",
      [](const std::vector<double>& scores, const std::vector<int>& gold) {
        if (scores.size() != gold.size())
          throw salient::Error(fmt::format("rationale: {} values for {} scores", gold.size(), scores.size()));
        const int64_t k = std::count(gold.begin(), gold.end(), 1);
        py::dict d;
        d["auroc"] = salient::auroc(scores, gold);
        d["auprc"] = salient::auprc(scores, gold);
        d["auprc_trapezoid"] = salient::auprc_trapezoid(scores, gold);
        d["f1"] = salient::token_prf_top_k(scores, gold, k).f1;
        d["iou"] = salient::token_iou_top_k(scores, gold, k);
        return d;
      },
      py::arg("scores"), py::arg("rationale"));

  m.def("metrics", [] {
    py::list out;
    for (const auto& info : salient::metric_registry()) {
      py::dict d;
      d["name"] = info.name;
      d["family"] = info.family;
      d["higher_is_better"] = info.higher_is_better;
      d["summary"] = info.summary;
      out.append(d);
    }
    return out;
  });

  // The benchmark writes its files into `out` (resumable) and returns the markdown table; the
  // package reads OUT/summary.json into a table.
  m.def(
      "benchmark",
      [](const std::string& model, const std::string& data, const std::vector<std::string>& methods,
         const std::vector<std::string>& metrics, const std::string& out, const py::dict& method_params,
         const std::string& data_dir, int64_t limit, int64_t batch_size, int64_t bootstrap, uint64_t seed, bool windows,
         int64_t stride, const std::string& removal, int64_t max_batch_tokens, bool positive_only, bool aopc_distinct) {
        salient::BenchmarkSpec o;
        o.metric_removal = removal;
        o.positive_only = positive_only;
        o.aopc_distinct = aopc_distinct;
        o.max_batch_tokens = max_batch_tokens;
        o.model_dir = model;
        o.data_spec = data;
        o.data_dir = data_dir;
        o.out_dir = out;
        o.methods = methods;
        o.metrics = metrics;
        o.limit = limit;
        o.batch_size = batch_size;
        o.bootstrap = bootstrap;
        o.seed = seed;
        o.windows = windows;
        o.stride = stride;
        for (const auto& kv : method_params) {
          const std::string name = kv.first.cast<std::string>();
          o.method_params[name] = to_json(kv.second, "method_params." + name);
        }
        ComputeScope release;
        return salient::run_benchmark(o);
      },
      py::arg("model"), py::arg("data"), py::arg("methods"), py::arg("metrics"), py::arg("out"),
      py::arg("method_params") = py::dict(), py::arg("data_dir") = "", py::arg("limit") = 100, py::arg("batch_size") = 8,
      py::arg("bootstrap") = 1000, py::arg("seed") = 0, py::arg("windows") = false, py::arg("stride") = 0,
      py::arg("removal") = "mask", py::arg("max_batch_tokens") = 4096, py::arg("positive_only") = false,
      py::arg("aopc_distinct") = false);
}

}  // namespace salient_python
