// The Python extension module salient._salient: conversions between Python and the public C++ API
// (include/salient/salient.h) and nothing else. The pure-Python package python/salient wraps it in
// the Captum/ferret-style API (NumPy arrays, objects with to_dict()); docs/python.md.
//
// The GIL is released around every C++ call that computes; salient::Error becomes ValueError, and
// salient::NotFoundError (a missing file or directory) FileNotFoundError, with the same one-line
// message the CLI prints.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "eval/benchmark.h"
#include "eval/plausibility.h"
#include "salient/salient.h"
#include "util/not_found.h"
#include "util/runtime.h"

namespace py = pybind11;
using nlohmann::json;

namespace {

py::object to_python(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return py::none();
    case json::value_t::boolean: return py::bool_(j.get<bool>());
    case json::value_t::number_integer: return py::int_(j.get<int64_t>());
    case json::value_t::number_unsigned: return py::int_(j.get<uint64_t>());
    case json::value_t::number_float: return py::float_(j.get<double>());
    case json::value_t::string: return py::str(j.get_ref<const std::string&>());
    case json::value_t::array: {
      py::list out;
      for (const auto& v : j) out.append(to_python(v));
      return std::move(out);
    }
    case json::value_t::object: {
      py::dict out;
      for (auto it = j.begin(); it != j.end(); ++it) out[py::str(it.key())] = to_python(it.value());
      return std::move(out);
    }
    default: return py::none();  // binary and discarded values never occur in salient's JSON
  }
}

// Parameter values as a caller writes them: numbers, strings, booleans, lists and dicts of them.
// `where` names the argument in the error, as the C++ side names flags.
json to_json(const py::handle& o, const std::string& where) {
  if (o.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(o)) return o.cast<bool>();
  if (py::isinstance<py::int_>(o)) return o.cast<int64_t>();
  if (py::isinstance<py::float_>(o)) return o.cast<double>();
  if (py::isinstance<py::str>(o)) return o.cast<std::string>();
  if (py::isinstance<py::dict>(o)) {
    json out = json::object();
    for (const auto& kv : o.cast<py::dict>()) {
      if (!py::isinstance<py::str>(kv.first)) throw py::type_error(where + ": keys must be strings");
      const std::string key = kv.first.cast<std::string>();
      out[key] = to_json(kv.second, where + "." + key);
    }
    return out;
  }
  if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
    json out = json::array();
    for (const auto& v : o) out.push_back(to_json(v, where));
    return out;
  }
  // NumPy scalars and anything else with __float__ / __int__ (e.g. numpy.int64(50)).
  if (py::hasattr(o, "__index__")) return o.attr("__index__")().cast<int64_t>();
  if (py::hasattr(o, "__float__")) return o.attr("__float__")().cast<double>();
  throw py::type_error(where + ": unsupported value of type " + std::string(py::str(o.get_type().attr("__name__"))));
}

// A text, or a (text, text_pair) tuple.
salient::TextInput to_input(const py::handle& o, size_t index) {
  if (py::isinstance<py::str>(o)) return {o.cast<std::string>(), std::nullopt};
  if (py::isinstance<py::tuple>(o) && py::len(o) == 2) {
    py::tuple t = o.cast<py::tuple>();
    return {t[0].cast<std::string>(), t[1].is_none() ? std::nullopt : std::optional<std::string>(t[1].cast<std::string>())};
  }
  throw py::type_error("texts[" + std::to_string(index) + "]: expected a str or a (text, text_pair) tuple");
}

std::vector<salient::TextInput> to_inputs(const py::handle& texts) {
  if (py::isinstance<py::str>(texts) || py::isinstance<py::tuple>(texts)) return {to_input(texts, 0)};
  std::vector<salient::TextInput> out;
  size_t i = 0;
  for (const auto& t : texts) out.push_back(to_input(t, i++));
  return out;
}

py::dict encoding_dict(const salient::Encoding& e) {
  py::dict d;
  d["ids"] = e.ids;
  d["tokens"] = e.tokens;
  d["type_ids"] = e.type_ids;
  d["offsets"] = e.offsets;
  d["word_ids"] = e.word_ids;
  d["truncated"] = e.truncated;
  return d;
}

}  // namespace

PYBIND11_MODULE(_salient, m) {
  m.doc() = "salient's C++ core (conversions only; use the salient package)";

  // Registered first, so the more specific translation wins (pybind11 tries the latest first).
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const salient::NotFoundError& e) {
      PyErr_SetString(PyExc_FileNotFoundError, e.what());
    } catch (const salient::Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  // Intra-op threads, as the CLI's --threads (0: SALIENT_THREADS or every core); the package sets
  // the default at import so that a call costs what the same call costs in the CLI.
  m.def("set_threads", [](int n) { return salient::set_threads(n); }, py::arg("n") = 0);
  m.def("threads", [] { return salient::current_threads(); });

  py::class_<salient::Model>(m, "Model")
      .def_static(
          "load", [](const std::string& dir) { return salient::Model::load(dir); }, py::arg("path"),
          py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("labels", &salient::Model::labels)
      .def_property_readonly("config", [](const salient::Model& self) { return to_python(self.config().to_json()); })
      .def(
          "tokenize",
          [](const salient::Model& self, const py::handle& texts, int max_length) {
            const auto inputs = to_inputs(texts);
            std::vector<salient::Encoding> encs;
            {
              py::gil_scoped_release release;
              for (const auto& in : inputs) encs.push_back(self.tokenize(in, max_length));
            }
            py::list out;
            for (const auto& e : encs) out.append(encoding_dict(e));
            return out;
          },
          py::arg("texts"), py::arg("max_length") = 0)
      .def(
          "predict",
          [](const salient::Model& self, const py::handle& texts, int64_t batch_size) {
            const auto inputs = to_inputs(texts);
            std::vector<salient::Prediction> preds;
            {
              py::gil_scoped_release release;
              preds = self.predict(inputs, batch_size);
            }
            py::list out;
            for (const auto& p : preds) out.append(to_python(p.to_json()));
            return out;
          },
          py::arg("texts"), py::arg("batch_size") = 32)
      .def(
          "explain",
          [](const salient::Model& self, const py::handle& texts, const std::string& method, const py::dict& params,
             const std::string& target, const std::string& output, int64_t batch_size, uint64_t seed) {
            const auto inputs = to_inputs(texts);
            const json p = to_json(params, "params");
            std::vector<json> ex;
            {
              py::gil_scoped_release release;
              ex = self.explain(inputs, method, p, target, output, batch_size, seed);
            }
            py::list out;
            for (const auto& j : ex) out.append(to_python(j));
            return out;
          },
          py::arg("texts"), py::arg("method"), py::arg("params") = py::dict(), py::arg("target") = "pred",
          py::arg("output") = "", py::arg("batch_size") = 8, py::arg("seed") = 0)
      .def(
          "faithfulness",
          [](const salient::Model& self, const py::handle& text, const std::vector<double>& token_scores, int64_t target,
             const std::string& output, int64_t k, const std::string& removal) {
            const salient::TextInput in = to_input(text, 0);
            json r;
            {
              py::gil_scoped_release release;
              r = self.faithfulness(in, token_scores, target, output, k, removal);
            }
            return to_python(r);
          },
          py::arg("text"), py::arg("token_scores"), py::arg("target"), py::arg("output") = "prob", py::arg("k") = 0,
          py::arg("removal") = "mask")
      .def(
          "attattr",
          [](const salient::Model& self, const py::handle& text, const std::string& target,
             const std::vector<int64_t>& layers, int m, const std::string& rule, double max_batch_mb) {
            const salient::TextInput in = to_input(text, 0);
            json r;
            {
              py::gil_scoped_release release;
              r = self.attattr(in, target, {layers, m, rule, max_batch_mb});
            }
            return to_python(r);
          },
          py::arg("text"), py::arg("target") = "pred", py::arg("layers") = std::vector<int64_t>{}, py::arg("m") = 20,
          py::arg("rule") = "left", py::arg("max_batch_mb") = 2048.0)
      .def(
          "attattr_tree",
          [](const salient::Model& self, const py::handle& text, const std::string& target, double tau, int m,
             const std::string& rule) {
            const salient::TextInput in = to_input(text, 0);
            json r;
            {
              py::gil_scoped_release release;
              r = self.attattr_tree(in, target, tau, {{}, m, rule, 2048.0});
            }
            return to_python(r);
          },
          py::arg("text"), py::arg("target") = "pred", py::arg("tau") = 0.4, py::arg("m") = 20, py::arg("rule") = "left")
      .def(
          "attattr_heads",
          [](const salient::Model& self, const std::string& data, int64_t limit, const std::string& target, int m,
             const std::string& rule, const std::string& data_dir, uint64_t seed) {
            json r;
            {
              py::gil_scoped_release release;
              r = self.attattr_heads(data, limit, target, {{}, m, rule, 2048.0}, data_dir, seed);
            }
            return to_python(r);
          },
          py::arg("data"), py::arg("limit") = 200, py::arg("target") = "gold", py::arg("m") = 20, py::arg("rule") = "left",
          py::arg("data_dir") = "", py::arg("seed") = 0)
      .def(
          "evaluate",
          [](const salient::Model& self, const std::string& data, const std::string& data_dir, int64_t batch_size,
             int64_t max_length) {
            json r;
            {
              py::gil_scoped_release release;
              r = self.evaluate(data, data_dir, batch_size, max_length);
            }
            return to_python(r);
          },
          py::arg("data"), py::arg("data_dir") = "", py::arg("batch_size") = 64, py::arg("max_length") = 0);

  m.def("methods", [] {
    py::list out;
    for (const auto& info : salient::methods()) out.append(to_python(salient::method_json(info)));
    return out;
  });

  // Plausibility of scores against a 0/1 rationale of the same length (eval/plausibility.h): AUROC,
  // AUPRC, and F1 and IoU of the top-|rationale| items.
  m.def(
      "plausibility",
      [](const std::vector<double>& scores, const std::vector<int>& gold) {
        if (scores.size() != gold.size())
          throw salient::Error(fmt::format("rationale: {} values for {} scores", gold.size(), scores.size()));
        const int64_t k = std::count(gold.begin(), gold.end(), 1);
        py::dict d;
        d["auroc"] = salient::auroc(scores, gold);
        d["auprc"] = salient::auprc(scores, gold);
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
         const std::string& data_dir, int64_t limit, int64_t batch_size, int64_t bootstrap, uint64_t seed) {
        salient::BenchmarkOptions o;
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
        for (const auto& kv : method_params) {
          const std::string name = kv.first.cast<std::string>();
          salient::ExplainOptions eo;
          eo.params = to_json(kv.second, "method_params." + name);
          o.method_options[name] = eo;
        }
        py::gil_scoped_release release;
        return salient::run_benchmark(o);
      },
      py::arg("model"), py::arg("data"), py::arg("methods"), py::arg("metrics"), py::arg("out"),
      py::arg("method_params") = py::dict(), py::arg("data_dir") = "", py::arg("limit") = 100, py::arg("batch_size") = 8,
      py::arg("bootstrap") = 1000, py::arg("seed") = 0);
}
