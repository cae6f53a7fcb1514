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

#include "eval/benchmark.h"
#include "eval/plausibility.h"
#include "expnet/expnet.h"
#include "salient/salient.h"
#include "smat/study.h"
#include "sst/evaluate.h"
#include "sst/train.h"
#include "util/io.h"
#include "util/memory.h"
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

// Keyword options onto a C++ options struct, one setter per name (the CLI flag's name with
// underscores). An unknown name is a TypeError listing the valid ones; a value of the wrong type a
// TypeError naming the option; a value out of range the library's ValueError.
template <class T>
using Setters = std::map<std::string, std::function<void(T&, const py::handle&)>>;

template <class T, class V>
std::function<void(T&, const py::handle&)> field(V T::*member) {
  return [member](T& o, const py::handle& v) { o.*member = v.cast<V>(); };
}

template <class T>
void apply_options(T& target, const Setters<T>& setters, const py::dict& options, const std::string& where) {
  for (const auto& kv : options) {
    const std::string name = py::str(kv.first);
    const auto it = setters.find(name);
    if (it == setters.end()) {
      std::string valid;
      for (const auto& s : setters) valid += (valid.empty() ? "" : ", ") + s.first;
      throw py::type_error(where + ": unknown option '" + name + "' (valid: " + valid + ")");
    }
    try {
      it->second(target, kv.second);
    } catch (const py::cast_error&) {
      throw py::type_error(where + ": option '" + name + "' has the wrong type (" +
                           std::string(py::str(kv.second.get_type().attr("__name__"))) + ")");
    }
  }
}

// `salient smat train | evaluate`'s options: the simulation setup, the student, the static
// explainers' settings.
struct SmatOptions {
  salient::smat::SimulationSetup setup;
  salient::smat::StudentOptions student;
  salient::smat::StaticExplainerOptions statics;
};

const Setters<SmatOptions>& smat_setters() {
  using O = SmatOptions;
  static const Setters<O> s = {
      {"teacher", [](O& o, const py::handle& v) { o.setup.teacher = v.cast<std::string>(); }},
      {"student_init", [](O& o, const py::handle& v) { o.setup.student_init = v.cast<std::string>(); }},
      {"student_dropout", [](O& o, const py::handle& v) { o.setup.student_dropout = v.cast<double>(); }},
      {"pool", [](O& o, const py::handle& v) { o.setup.pool = v.cast<std::string>(); }},
      {"test_pool", [](O& o, const py::handle& v) { o.setup.test_pool = v.cast<std::string>(); }},
      {"valid_pool", [](O& o, const py::handle& v) { o.setup.valid_pool = v.cast<std::string>(); }},
      {"data_dir", [](O& o, const py::handle& v) { o.setup.data_dir = v.cast<std::string>(); }},
      {"test_size", [](O& o, const py::handle& v) { o.setup.test_size = v.cast<int64_t>(); }},
      {"valid_size", [](O& o, const py::handle& v) { o.setup.valid_size = v.cast<int64_t>(); }},
      {"max_length", [](O& o, const py::handle& v) { o.setup.max_length = v.cast<int64_t>(); }},
      {"split_seed", [](O& o, const py::handle& v) { o.setup.split_seed = v.cast<uint64_t>(); }},
      {"normalizer",
       [](O& o, const py::handle& v) { o.student.normalizer = salient::smat::parse_normalizer(v.cast<std::string>(), "normalizer"); }},
      {"optimizer",
       [](O& o, const py::handle& v) { o.student.optimizer = salient::smat::parse_optimizer(v.cast<std::string>(), "optimizer"); }},
      {"early_stopping",
       [](O& o, const py::handle& v) {
         const std::string e = v.cast<std::string>();
         if (e != "loss" && e != "accuracy") throw salient::Error("early_stopping: must be loss or accuracy, got '" + e + "'");
         o.student.select_by_accuracy = e == "accuracy";
       }},
      {"beta", [](O& o, const py::handle& v) { o.student.beta = v.cast<double>(); }},
      {"lr", [](O& o, const py::handle& v) { o.student.lr = v.cast<double>(); }},
      {"clip", [](O& o, const py::handle& v) { o.student.clip_norm = v.cast<double>(); }},
      {"weight_decay", [](O& o, const py::handle& v) { o.student.weight_decay = v.cast<double>(); }},
      {"batch_size", [](O& o, const py::handle& v) { o.student.batch_size = v.cast<int64_t>(); }},
      {"patience", [](O& o, const py::handle& v) { o.student.patience = v.cast<int>(); }},
      {"max_epochs", [](O& o, const py::handle& v) { o.student.max_epochs = v.cast<int>(); }},
      {"meta_lr", [](O& o, const py::handle& v) { o.student.meta_lr = v.cast<double>(); }},
      {"ig_steps", [](O& o, const py::handle& v) { o.statics.ig_steps = v.cast<int64_t>(); }},
      {"gradient_layer", [](O& o, const py::handle& v) { o.statics.gradient_layer = v.cast<std::string>(); }},
      {"saliency_temperature", [](O& o, const py::handle& v) { o.statics.saliency_temperature = v.cast<double>(); }},
      {"grad_x_input_temperature", [](O& o, const py::handle& v) { o.statics.grad_x_input_temperature = v.cast<double>(); }},
      {"ig_temperature", [](O& o, const py::handle& v) { o.statics.ig_temperature = v.cast<double>(); }},
      {"registered_temperature", [](O& o, const py::handle& v) { o.statics.registered_temperature = v.cast<double>(); }},
  };
  return s;
}

SmatOptions smat_options(const py::dict& options) {
  SmatOptions o;
  apply_options(o, smat_setters(), options, "smat");
  if (o.setup.data_dir.empty()) o.setup.data_dir = salient::shared_data_dir();
  return o;
}

const Setters<salient::sst::SstTrainOptions>& sst_train_setters() {
  using O = salient::sst::SstTrainOptions;
  static const Setters<O> s = {
      {"data_dir", field(&O::data_dir)},
      {"arch", field(&O::arch)},
      {"hidden", field(&O::hidden)},
      {"init", field(&O::init_model)},
      {"vocab", field(&O::vocab)},
      {"hidden_size", field(&O::hidden_size)},
      {"layers", field(&O::num_layers)},
      {"heads", field(&O::num_heads)},
      {"intermediate_size", field(&O::intermediate_size)},
      {"max_length", field(&O::max_length)},
      {"dropout", field(&O::dropout)},
      {"masking",
       [](O& o, const py::handle& v) { o.objective.kind = salient::sst::parse_mask_kind(v.cast<std::string>(), "masking"); }},
      {"lambda_", [](O& o, const py::handle& v) { o.objective.lambda = v.cast<double>(); }},
      {"xi", [](O& o, const py::handle& v) { o.objective.xi = v.cast<double>(); }},
      {"tau", [](O& o, const py::handle& v) { o.objective.tau = v.cast<double>(); }},
      {"straight_through", [](O& o, const py::handle& v) { o.objective.straight_through = v.cast<bool>(); }},
      {"epsilon", [](O& o, const py::handle& v) { o.objective.fill.epsilon = v.cast<double>(); }},
      {"pgd_step", [](O& o, const py::handle& v) { o.objective.fill.step = v.cast<double>(); }},
      {"pgd_steps", [](O& o, const py::handle& v) { o.objective.fill.steps = v.cast<int>(); }},
      {"noise", [](O& o, const py::handle& v) { o.objective.fill.noise = salient::sst::parse_noise_fill(v.cast<std::string>(), "noise"); }},
      {"epochs", field(&O::epochs)},
      {"patience", field(&O::patience)},
      {"batch_size", field(&O::batch_size)},
      {"lr", field(&O::lr)},
      {"weight_decay", field(&O::weight_decay)},
      {"limit", field(&O::limit)},
      {"seed", field(&O::seed)},
      {"max_minutes", field(&O::max_minutes)},
      {"resume", field(&O::resume)},
  };
  return s;
}

const Setters<salient::sst::SstEvalOptions>& sst_eval_setters() {
  using O = salient::sst::SstEvalOptions;
  static const Setters<O> s = {
      {"model", field(&O::sst_model)},
      {"standard", field(&O::standard_model)},
      {"data_dir", field(&O::data_dir)},
      {"methods", field(&O::methods)},
      {"limit", field(&O::limit)},
      {"accuracy_limit", field(&O::accuracy_limit)},
      {"time_limit", [](O& o, const py::handle& v) { o.search.time_limit = v.cast<double>(); }},
      {"samples", field(&O::samples)},
      {"ranking", [](O& o, const py::handle& v) { o.search.ranking = v.cast<std::string>(); }},
      {"ig_steps", [](O& o, const py::handle& v) { o.search.ig_steps = v.cast<int64_t>(); }},
      {"precision", [](O& o, const py::handle& v) { o.search.precision = v.cast<double>(); }},
      {"beam", [](O& o, const py::handle& v) { o.search.beam = v.cast<int>(); }},
      {"max_length", field(&O::max_length)},
      {"views", field(&O::views)},
      {"seed", field(&O::seed)},
      {"epsilon", [](O& o, const py::handle& v) { o.fill.epsilon = v.cast<double>(); }},
      {"pgd_step", [](O& o, const py::handle& v) { o.fill.step = v.cast<double>(); }},
      {"pgd_steps", [](O& o, const py::handle& v) { o.fill.steps = v.cast<int>(); }},
      {"noise", [](O& o, const py::handle& v) { o.fill.noise = salient::sst::parse_noise_fill(v.cast<std::string>(), "noise"); }},
      {"sis_criterion", [](O& o, const py::handle& v) { o.search.sis_criterion = v.cast<std::string>(); }},
      {"sis_threshold", [](O& o, const py::handle& v) { o.search.sis_threshold = v.cast<double>(); }},
  };
  return s;
}

py::list option_names(const std::vector<std::string>& names) {
  py::list out;
  for (const auto& n : names) out.append(n);
  return out;
}

template <class T>
std::vector<std::string> names_of(const Setters<T>& setters) {
  std::vector<std::string> out;
  for (const auto& s : setters) out.push_back(s.first);
  return out;
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
      .def_property_readonly("config", [](const salient::Model& self) { return to_python(self.config().to_json()); })
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
             int64_t stride) {
            const auto inputs = to_inputs(texts);
            const json p = to_json(params, "params");
            std::vector<json> ex;
            {
              ComputeScope release;
              ex = self.explain(inputs, method, p, target, output, batch_size, seed, {windows, stride});
            }
            py::list out;
            for (const auto& j : ex) out.append(to_python(j));
            return out;
          },
          py::arg("texts"), py::arg("method"), py::arg("params") = py::dict(), py::arg("target") = "pred",
          py::arg("output") = "", py::arg("batch_size") = 8, py::arg("seed") = 0, py::arg("windows") = false,
          py::arg("stride") = 0)
      .def(
          "faithfulness",
          [](const salient::Model& self, const py::handle& text, const std::vector<double>& token_scores, int64_t target,
             const std::string& output, int64_t k, const std::string& removal) {
            const salient::TextInput in = to_input(text, 0);
            json r;
            {
              ComputeScope release;
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
        salient::ExpNetTrainOptions o;
        salient::FeatureOptions& f = o.model.features;
        f.layers = layers;
        f.scale = scale;
        f.head_pool = head_pool;
        salient::set_feature_list(f, features, "features");
        o.model.hidden = hidden;
        o.model.activation = activation;
        o.model.dropout = dropout;
        o.loss = loss;
        o.alpha = alpha;
        o.gamma = gamma;
        o.filter_correct = filter_correct;
        o.lr = lr;
        o.batch_size = batch_size;
        o.max_epochs = epochs;
        o.patience = patience;
        o.seed = seed;
        json r;
        {
          ComputeScope release;
          salient::ExpNetTrainResult result =
              salient::train_expnet_on_tasks(tasks, data_dir.empty() ? salient::shared_data_dir() : data_dir, max_train, o);
          result.model.save(out);
          r = salient::train_result_json(result, out);
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
          r = salient::evaluate_expnet(expnet, model, data, data_dir.empty() ? salient::shared_data_dir() : data_dir,
                                       max_test, threshold);
        }
        return to_python(r);
      },
      py::arg("expnet"), py::arg("model"), py::arg("data"), py::arg("data_dir"), py::arg("max_test"), py::arg("threshold"));

  // Learning to Scaffold (docs/smat.md): `salient smat train` and `smat evaluate`.
  m.def(
      "smat_train",
      [](const py::dict& options, int64_t size, uint64_t seed, const std::string& out) {
        const SmatOptions o = smat_options(options);
        json r;
        {
          ComputeScope release;
          r = salient::smat::train_smat_explainer(o.setup, o.student, size, seed, out);
        }
        return to_python(r);
      },
      py::arg("options"), py::arg("size"), py::arg("seed"), py::arg("out"));
  m.def(
      "smat_evaluate",
      [](const py::dict& options, const std::string& explainer, const std::string& smat_file, int64_t size, uint64_t seed) {
        const SmatOptions o = smat_options(options);
        json r;
        {
          ComputeScope release;
          r = salient::smat::evaluate_simulability(o.setup, o.student, o.statics, explainer, smat_file, size, seed);
        }
        return to_python(r);
      },
      py::arg("options"), py::arg("explainer"), py::arg("smat"), py::arg("size"), py::arg("seed"));

  // Sufficient Subset Training (docs/sst.md): `salient sst train` and `sst evaluate` (CPU).
  m.def(
      "sst_train",
      [](const std::string& train, const std::string& dev, const std::string& out, const py::dict& options) {
        salient::sst::SstTrainOptions o;
        o.train_data = train;
        o.dev_data = dev;
        o.output_dir = out;
        apply_options(o, sst_train_setters(), options, "sst.train");
        if (o.data_dir.empty()) o.data_dir = salient::shared_data_dir();
        json r;
        {
          ComputeScope release;
          const salient::sst::SstTrainResult result = salient::sst::train_sst(o);
          json history = json::array();
          for (const auto& e : result.history) history.push_back(e.to_json());
          r = {{"out", out}, {"best_epoch", result.best_epoch}, {"train_seconds", result.train_seconds}, {"history", history}};
        }
        return to_python(r);
      },
      py::arg("train"), py::arg("dev"), py::arg("out"), py::arg("options"));
  m.def(
      "sst_evaluate",
      [](const std::string& data, const std::string& out, const py::dict& options) {
        salient::sst::SstEvalOptions o;
        o.data = data;
        o.out_dir = out;
        apply_options(o, sst_eval_setters(), options, "sst.evaluate");
        if (o.data_dir.empty()) o.data_dir = salient::shared_data_dir();
        json rows = json::array();
        {
          ComputeScope release;
          for (const auto& row : salient::sst::evaluate_sst(o)) rows.push_back(row.to_json());
        }
        return to_python(rows);
      },
      py::arg("data"), py::arg("out"), py::arg("options"));
  m.def("option_names", [](const std::string& command) {
    if (command == "smat") return option_names(names_of(smat_setters()));
    if (command == "sst.train") return option_names(names_of(sst_train_setters()));
    if (command == "sst.evaluate") return option_names(names_of(sst_eval_setters()));
    throw salient::Error("option_names: unknown command '" + command + "'");
  });

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
         const std::string& data_dir, int64_t limit, int64_t batch_size, int64_t bootstrap, uint64_t seed, bool windows,
         int64_t stride) {
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
        o.windows = windows;
        o.stride = stride;
        for (const auto& kv : method_params) {
          const std::string name = kv.first.cast<std::string>();
          salient::ExplainOptions eo;
          eo.params = to_json(kv.second, "method_params." + name);
          o.method_options[name] = eo;
        }
        ComputeScope release;
        return salient::run_benchmark(o);
      },
      py::arg("model"), py::arg("data"), py::arg("methods"), py::arg("metrics"), py::arg("out"),
      py::arg("method_params") = py::dict(), py::arg("data_dir") = "", py::arg("limit") = 100, py::arg("batch_size") = 8,
      py::arg("bootstrap") = 1000, py::arg("seed") = 0, py::arg("windows") = false, py::arg("stride") = 0);
}
