// The papers' training and study entry points: ExpNet, SMaT and SST (include/salient/studies.h).
#include "bindings.h"
#include "salient/studies.h"

namespace salient_python {

void bind_papers(py::module_& m) {
  // ExpNet (docs/expnet.md): `salient expnet train` and `expnet evaluate --expnet`.
  m.def(
      "expnet_train",
      [](const std::vector<std::string>& tasks, const std::string& out, const std::string& data_dir, int64_t max_train,
         uint64_t seed, const std::string& features, const std::string& layers, const std::string& scale,
         const std::string& head_pool, const std::vector<int64_t>& hidden, const std::string& activation, double dropout,
         const std::string& loss, double alpha, double gamma, bool filter_correct, double lr, int64_t batch_size,
         int epochs, int patience) {
        const json options = {{"data_dir", data_dir}, {"max_train", max_train}, {"seed", seed}, {"features", features},
                              {"layers", layers}, {"scale", scale}, {"head_pool", head_pool}, {"hidden", hidden},
                              {"activation", activation}, {"dropout", dropout}, {"loss", loss}, {"alpha", alpha},
                              {"gamma", gamma}, {"filter_correct", filter_correct}, {"lr", lr},
                              {"batch_size", batch_size}, {"epochs", epochs}, {"patience", patience}};
        return computed([&] { return salient::expnet_train(tasks, out, options); });
      },
      py::arg("tasks"), py::arg("out"), py::arg("data_dir"), py::arg("max_train"), py::arg("seed"), py::arg("features"),
      py::arg("layers"), py::arg("scale"), py::arg("head_pool"), py::arg("hidden"), py::arg("activation"),
      py::arg("dropout"), py::arg("loss"), py::arg("alpha"), py::arg("gamma"), py::arg("filter_correct"), py::arg("lr"),
      py::arg("batch_size"), py::arg("epochs"), py::arg("patience"));
  m.def(
      "expnet_evaluate",
      [](const std::string& expnet, const std::string& model, const std::string& data, const std::string& data_dir,
         int64_t max_test, double threshold) {
        return computed([&] { return salient::expnet_evaluate(expnet, model, data, data_dir, max_test, threshold); });
      },
      py::arg("expnet"), py::arg("model"), py::arg("data"), py::arg("data_dir"), py::arg("max_test"), py::arg("threshold"));

  // Learning to Scaffold (docs/smat.md): `salient smat train` and `smat evaluate`.
  m.def(
      "smat_train",
      [](const py::dict& options, int64_t size, uint64_t seed, const std::string& out) {
        const json o = to_json(options, "smat");
        return computed([&] { return salient::smat_train(o, size, seed, out); });
      },
      py::arg("options"), py::arg("size"), py::arg("seed"), py::arg("out"));
  m.def(
      "smat_evaluate",
      [](const py::dict& options, const std::string& explainer, const std::string& smat_file, int64_t size, uint64_t seed) {
        const json o = to_json(options, "smat");
        return computed([&] { return salient::smat_evaluate(o, explainer, smat_file, size, seed); });
      },
      py::arg("options"), py::arg("explainer"), py::arg("smat"), py::arg("size"), py::arg("seed"));

  // The study, the plausibility table, the pool split and the report (`salient smat study |
  // plausibility | split | report`): markdown or the split's report.
  m.def(
      "smat_study",
      [](const std::string& out, const py::dict& options) {
        const json o = to_json(options, "smat.study");
        ComputeScope release;
        return salient::smat_study(out, o);
      },
      py::arg("out"), py::arg("options"));
  m.def(
      "smat_plausibility",
      [](const std::string& teacher, const std::string& data, const std::string& out, const py::dict& options) {
        const json o = to_json(options, "smat.plausibility");
        ComputeScope release;
        return salient::smat_plausibility(teacher, data, out, o);
      },
      py::arg("teacher"), py::arg("data"), py::arg("out"), py::arg("options"));
  m.def(
      "smat_split",
      [](const std::string& out, const py::dict& options) {
        const json o = to_json(options, "smat.split");
        return computed([&] { return salient::smat_split(out, o); });
      },
      py::arg("out"), py::arg("options"));
  m.def(
      "smat_report",
      [](const std::string& study) {
        ComputeScope release;
        return salient::smat_report(study);
      },
      py::arg("study"));
  // ExpNet's leave-one-task-out run (`salient expnet evaluate --task ...`): the JSON report.
  m.def(
      "expnet_cross_task",
      [](const std::vector<std::string>& tasks, const std::string& out, const py::dict& options) {
        const json o = to_json(options, "expnet.evaluate");
        return computed([&] { return salient::expnet_cross_task(tasks, out, o); });
      },
      py::arg("tasks"), py::arg("out"), py::arg("options"));

  // Sufficient Subset Training (docs/sst.md): `salient sst train` and `sst evaluate` (CPU).
  m.def(
      "sst_train",
      [](const std::string& train, const std::string& dev, const std::string& out, const py::dict& options) {
        const json o = to_json(options, "sst.train");
        return computed([&] { return salient::sst_train(train, dev, out, o); });
      },
      py::arg("train"), py::arg("dev"), py::arg("out"), py::arg("options"));
  m.def(
      "sst_evaluate",
      [](const std::string& data, const std::string& out, const py::dict& options) {
        const json o = to_json(options, "sst.evaluate");
        return computed([&] { return salient::sst_evaluate(data, out, o); });
      },
      py::arg("data"), py::arg("out"), py::arg("options"));
  m.def("option_names", [](const std::string& command) { return salient::option_names(command); });
}

}  // namespace salient_python
