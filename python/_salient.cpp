// The Python extension module salient._salient: conversions between Python and the public C++ API
// (include/salient/salient.h) and nothing else. The pure-Python package python/salient wraps it in
// the Captum/ferret-style API (NumPy arrays, objects with to_dict()); docs/python.md.
//
// The GIL is released around every C++ call that computes; salient::Error becomes ValueError, and
// salient::NotFoundError (a missing file or directory) FileNotFoundError, with the same one-line
// message the CLI prints.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>

#include "salient/metrics.h"
#include "salient/runtime.h"
#include "salient/salient.h"
#include "salient/studies.h"
#include "salient/version.h"
#include "salient/vision.h"

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

// Around every computing call: the GIL released, and autograd on whatever the caller's grad mode
// (Python's torch.no_grad() switches it off for this thread in the libtorch salient shares with
// torch, and the gradient methods and training need it).
struct ComputeScope {
  py::gil_scoped_release release;
  torch::AutoGradMode grad_on{true};
};

// A copy of a CPU float32 or int64 tensor as a NumPy array of the same shape.
py::array to_numpy(const torch::Tensor& t) {
  const torch::Tensor c = t.contiguous();
  std::vector<py::ssize_t> shape(c.sizes().begin(), c.sizes().end());
  if (c.scalar_type() == torch::kInt64) {
    py::array_t<int64_t> a(shape);
    std::copy_n(c.data_ptr<int64_t>(), c.numel(), a.mutable_data());
    return std::move(a);
  }
  const torch::Tensor f = c.to(torch::kFloat32);
  py::array_t<float> a(shape);
  std::copy_n(f.data_ptr<float>(), f.numel(), a.mutable_data());
  return std::move(a);
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
    } catch (const salient::OptionError& e) {  // an unknown option, or a value of the wrong type
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const salient::Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  // Intra-op threads, as the CLI's --threads (0: SALIENT_THREADS or every core); the package sets
  // the default at import so that a call costs what the same call costs in the CLI.
  m.attr("__version__") = salient::kVersion;

  m.def("set_threads", [](int n) { return salient::set_threads(n); }, py::arg("n") = 0);
  m.def("threads", [] { return salient::current_threads(); });
  m.def("openblas_core", [] { return salient::openblas_core(); });
  m.def("better_openblas_core", [] { return salient::better_openblas_core(); });
  // Process-wide malloc setting (util/memory.h); not applied at import, since it is the host's process.
  m.def("retain_freed_memory", [] { return salient::retain_freed_memory(); });

  py::class_<salient::Model>(m, "Model")
      .def_static(
          "load", [](const std::string& dir) { return salient::Model::load(dir); }, py::arg("path"),
          py::call_guard<ComputeScope>())
      .def_property_readonly("labels", &salient::Model::labels)
      .def_property_readonly("has_task_head", &salient::Model::has_task_head)
      .def(
          "forward",
          [](const salient::Model& self, const py::handle& texts, bool hidden_states, bool attentions, int max_length,
             int64_t batch_size) {
            const auto inputs = to_inputs(texts);
            salient::ForwardOutputs o;
            {
              ComputeScope release;
              std::vector<salient::Encoding> encs;
              for (const auto& in : inputs) encs.push_back(self.tokenize(in, max_length));
              o = self.forward(encs, hidden_states, attentions, batch_size);
            }
            py::dict d;
            d["input_ids"] = to_numpy(o.input_ids);
            d["token_type_ids"] = to_numpy(o.token_type_ids);
            d["attention_mask"] = to_numpy(o.attention_mask);
            d["logits"] = o.logits.defined() ? py::object(to_numpy(o.logits)) : py::object(py::none());
            py::list hs, at;
            for (const auto& t : o.hidden_states) hs.append(to_numpy(t));
            for (const auto& t : o.attentions) at.append(to_numpy(t));
            d["hidden_states"] = py::tuple(hs);
            d["attentions"] = py::tuple(at);
            return d;
          },
          py::arg("texts"), py::arg("output_hidden_states") = true, py::arg("output_attentions") = true,
          py::arg("max_length") = 0, py::arg("batch_size") = 32)
      .def_property_readonly("config", [](const salient::Model& self) { return to_python(self.config_json()); })
      .def(
          "tokenize",
          [](const salient::Model& self, const py::handle& texts, int max_length) {
            const auto inputs = to_inputs(texts);
            std::vector<salient::Encoding> encs;
            {
              ComputeScope release;
              for (const auto& in : inputs) encs.push_back(self.tokenize(in, max_length));
            }
            py::list out;
            for (const auto& e : encs) out.append(encoding_dict(e));
            return out;
          },
          py::arg("texts"), py::arg("max_length") = 0)
      .def(
          "predict",
          [](const salient::Model& self, const py::handle& texts, int64_t batch_size, bool windows, int64_t stride) {
            const auto inputs = to_inputs(texts);
            std::vector<salient::Prediction> preds;
            {
              ComputeScope release;
              preds = self.predict(inputs, batch_size, {windows, stride});
            }
            py::list out;
            for (const auto& p : preds) out.append(to_python(p.to_json()));
            return out;
          },
          py::arg("texts"), py::arg("batch_size") = 32, py::arg("windows") = false, py::arg("stride") = 0)
      .def(
          "explain",
          [](const salient::Model& self, const py::handle& texts, const std::string& method, const py::dict& params,
             const std::string& target, const std::string& output, int64_t batch_size, uint64_t seed, bool windows,
             int64_t stride, int64_t max_batch_tokens) {
            const auto inputs = to_inputs(texts);
            const json p = to_json(params, "params");
            std::vector<salient::Explanation> ex;
            {
              ComputeScope release;
              ex = self.explain(inputs, method, p, target, output, batch_size, seed, {windows, stride}, max_batch_tokens);
            }
            py::list out;
            for (const auto& e : ex) out.append(to_python(e.to_json()));
            return out;
          },
          py::arg("texts"), py::arg("method"), py::arg("params") = py::dict(), py::arg("target") = "pred",
          py::arg("output") = "", py::arg("batch_size") = 8, py::arg("seed") = 0, py::arg("windows") = false,
          py::arg("stride") = 0, py::arg("max_batch_tokens") = 4096)
      .def(
          "memory_estimate",
          [](const salient::Model& self, int64_t tokens, const std::string& method, const py::dict& params,
             int64_t max_batch_tokens) {
            return to_python(self.memory_estimate(tokens, method, to_json(params, "params"), max_batch_tokens).to_json());
          },
          py::arg("tokens"), py::arg("method"), py::arg("params") = py::dict(), py::arg("max_batch_tokens") = 4096)
      .def(
          "faithfulness",
          [](const salient::Model& self, const py::handle& text, const std::vector<double>& token_scores, int64_t target,
             const std::string& output, int64_t k, const std::string& removal, bool windows, int64_t stride,
             const std::string& aopc_bins) {
            const salient::TextInput in = to_input(text, 0);
            json r;
            {
              ComputeScope release;
              r = self.faithfulness(in, token_scores, target, output, k, removal, salient::LongInputs{windows, stride},
                                    aopc_bins);
            }
            return to_python(r);
          },
          py::arg("text"), py::arg("token_scores"), py::arg("target"), py::arg("output") = "prob", py::arg("k") = 0,
          py::arg("removal") = "mask", py::arg("windows") = false, py::arg("stride") = 0, py::arg("aopc_bins") = "deciles")
      .def(
          "attattr",
          [](const salient::Model& self, const py::handle& text, const std::string& target,
             const std::vector<int64_t>& layers, int m, const std::string& rule, double max_batch_mb) {
            const salient::TextInput in = to_input(text, 0);
            json r;
            {
              ComputeScope release;
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
              ComputeScope release;
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
              ComputeScope release;
              r = self.attattr_heads(data, limit, target, {{}, m, rule, 2048.0}, data_dir, seed);
            }
            return to_python(r);
          },
          py::arg("data"), py::arg("limit") = 200, py::arg("target") = "gold", py::arg("m") = 20, py::arg("rule") = "left",
          py::arg("data_dir") = "", py::arg("seed") = 0)
      .def(
          "attattr_prune",
          [](const salient::Model& self, const std::string& eval_data, const py::handle& head_scores, int steps,
             int64_t layer, const std::string& data, int64_t limit, const std::string& target, int m,
             const std::string& rule, const std::string& data_dir, uint64_t seed) {
            const json scores = to_json(head_scores, "heads");
            json r;
            {
              ComputeScope release;
              r = self.attattr_prune(eval_data, scores, steps, layer, data, limit, target, {{}, m, rule, 2048.0}, data_dir,
                                     seed);
            }
            return to_python(r);
          },
          py::arg("eval_data"), py::arg("heads"), py::arg("steps") = 10, py::arg("layer") = -1, py::arg("data") = "sst2:dev",
          py::arg("limit") = 200, py::arg("target") = "gold", py::arg("m") = 20, py::arg("rule") = "left",
          py::arg("data_dir") = "", py::arg("seed") = 0)
      .def(
          "evaluate",
          [](const salient::Model& self, const std::string& data, const std::string& data_dir, int64_t batch_size,
             int64_t max_length) {
            json r;
            {
              ComputeScope release;
              r = self.evaluate(data, data_dir, batch_size, max_length);
            }
            return to_python(r);
          },
          py::arg("data"), py::arg("data_dir") = "", py::arg("batch_size") = 64, py::arg("max_length") = 0);

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
        json r;
        {
          ComputeScope release;
          r = salient::expnet_train(tasks, out, options);
        }
        return to_python(r);
      },
      py::arg("tasks"), py::arg("out"), py::arg("data_dir"), py::arg("max_train"), py::arg("seed"), py::arg("features"),
      py::arg("layers"), py::arg("scale"), py::arg("head_pool"), py::arg("hidden"), py::arg("activation"),
      py::arg("dropout"), py::arg("loss"), py::arg("alpha"), py::arg("gamma"), py::arg("filter_correct"), py::arg("lr"),
      py::arg("batch_size"), py::arg("epochs"), py::arg("patience"));
  m.def(
      "expnet_evaluate",
      [](const std::string& expnet, const std::string& model, const std::string& data, const std::string& data_dir,
         int64_t max_test, double threshold) {
        json r;
        {
          ComputeScope release;
          r = salient::expnet_evaluate(expnet, model, data, data_dir, max_test, threshold);
        }
        return to_python(r);
      },
      py::arg("expnet"), py::arg("model"), py::arg("data"), py::arg("data_dir"), py::arg("max_test"), py::arg("threshold"));

  // Learning to Scaffold (docs/smat.md): `salient smat train` and `smat evaluate`.
  m.def(
      "smat_train",
      [](const py::dict& options, int64_t size, uint64_t seed, const std::string& out) {
        const json o = to_json(options, "smat");
        json r;
        {
          ComputeScope release;
          r = salient::smat_train(o, size, seed, out);
        }
        return to_python(r);
      },
      py::arg("options"), py::arg("size"), py::arg("seed"), py::arg("out"));
  m.def(
      "smat_evaluate",
      [](const py::dict& options, const std::string& explainer, const std::string& smat_file, int64_t size, uint64_t seed) {
        const json o = to_json(options, "smat");
        json r;
        {
          ComputeScope release;
          r = salient::smat_evaluate(o, explainer, smat_file, size, seed);
        }
        return to_python(r);
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
        json r;
        {
          ComputeScope release;
          r = salient::smat_split(out, o);
        }
        return to_python(r);
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
        json r;
        {
          ComputeScope release;
          r = salient::expnet_cross_task(tasks, out, o);
        }
        return to_python(r);
      },
      py::arg("tasks"), py::arg("out"), py::arg("options"));

  // Sufficient Subset Training (docs/sst.md): `salient sst train` and `sst evaluate` (CPU).
  m.def(
      "sst_train",
      [](const std::string& train, const std::string& dev, const std::string& out, const py::dict& options) {
        const json o = to_json(options, "sst.train");
        json r;
        {
          ComputeScope release;
          r = salient::sst_train(train, dev, out, o);
        }
        return to_python(r);
      },
      py::arg("train"), py::arg("dev"), py::arg("out"), py::arg("options"));
  m.def(
      "sst_evaluate",
      [](const std::string& data, const std::string& out, const py::dict& options) {
        const json o = to_json(options, "sst.evaluate");
        json rows;
        {
          ComputeScope release;
          rows = salient::sst_evaluate(data, out, o);
        }
        return to_python(rows);
      },
      py::arg("data"), py::arg("out"), py::arg("options"));
  m.def("option_names", [](const std::string& command) { return salient::option_names(command); });

  // The vision transformer (docs/vit.md): `salient vit train | evaluate | explain`.
  {
    const salient::vision::VitTrainOptions d;
    m.def(
        "vit_train",
        [](const std::string& data, const std::string& dev, const std::string& out, const std::string& data_dir,
           int64_t patch_size, int64_t hidden, int64_t layers, int64_t heads, int64_t intermediate, double dropout,
           double attention_dropout, int epochs, int64_t batch_size, double lr, double weight_decay, double warmup,
           double clip, double max_minutes, int64_t max_train_examples, uint64_t seed, bool resume, int stop_after_epoch) {
          salient::vision::VitTrainOptions o;
          o.train_data = data;
          o.dev_data = dev;
          o.output_dir = out;
          o.data_dir = data_dir;
          o.patch_size = patch_size;
          o.hidden_size = hidden;
          o.num_layers = layers;
          o.num_heads = heads;
          o.intermediate_size = intermediate;
          o.dropout = dropout;
          o.attention_dropout = attention_dropout;
          o.epochs = epochs;
          o.batch_size = batch_size;
          o.lr = lr;
          o.weight_decay = weight_decay;
          o.warmup_ratio = warmup;
          o.clip_norm = clip;
          o.max_minutes = max_minutes;
          o.max_train_examples = max_train_examples;
          o.seed = seed;
          o.resume = resume;
          o.stop_after_epoch = stop_after_epoch;
          json r;
          {
            ComputeScope release;
            r = salient::vit_train(o);
          }
          return to_python(r);
        },
        py::arg("data"), py::arg("dev"), py::arg("out"), py::arg("data_dir") = "", py::arg("patch_size") = d.patch_size,
        py::arg("hidden") = d.hidden_size, py::arg("layers") = d.num_layers, py::arg("heads") = d.num_heads,
        py::arg("intermediate") = d.intermediate_size, py::arg("dropout") = d.dropout,
        py::arg("attention_dropout") = d.attention_dropout, py::arg("epochs") = d.epochs,
        py::arg("batch_size") = d.batch_size, py::arg("lr") = d.lr, py::arg("weight_decay") = d.weight_decay,
        py::arg("warmup") = d.warmup_ratio, py::arg("clip") = d.clip_norm, py::arg("max_minutes") = d.max_minutes,
        py::arg("max_train_examples") = d.max_train_examples, py::arg("seed") = d.seed, py::arg("resume") = d.resume,
        py::arg("stop_after_epoch") = d.stop_after_epoch);
  }
  m.def(
      "vit_evaluate",
      [](const std::string& model, const std::string& data, const std::string& data_dir, int64_t limit) {
        json r;
        {
          ComputeScope release;
          r = salient::vit_evaluate(model, data, data_dir, limit);
        }
        return to_python(r);
      },
      py::arg("model"), py::arg("data"), py::arg("data_dir") = "", py::arg("limit") = 0);
  {
    const salient::VitExplainOptions d;
    m.def(
        "vit_explain",
        [](const std::string& model, const std::string& data, const std::string& method, const std::string& smat,
           const std::string& data_dir, const std::string& png_dir, int64_t limit, int64_t steps, int scale) {
          salient::VitExplainOptions o;
          o.method = method;
          o.smat_file = smat;
          o.data_dir = data_dir;
          o.png_dir = png_dir;
          o.limit = limit;
          o.steps = steps;
          o.scale = scale;
          std::vector<json> images;
          {
            ComputeScope release;
            images = salient::vit_explain(model, data, o);
          }
          py::list out;
          for (const auto& j : images) out.append(to_python(j));
          return out;
        },
        py::arg("model"), py::arg("data"), py::arg("method") = d.method, py::arg("smat") = d.smat_file,
        py::arg("data_dir") = "", py::arg("png_dir") = "", py::arg("limit") = d.limit, py::arg("steps") = d.steps,
        py::arg("scale") = d.scale);
  }

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
