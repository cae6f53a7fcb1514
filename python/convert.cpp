// Conversions between Python values and the public C++ API's types (python/bindings.h).
#include <algorithm>

#include "bindings.h"

namespace salient_python {

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

salient::TextInput to_input(const py::handle& o, size_t index) {
  if (py::isinstance<py::str>(o)) return {o.cast<std::string>(), std::nullopt};
  if (py::isinstance<py::tuple>(o) && py::len(o) == 2) {
    py::tuple t = o.cast<py::tuple>();
    return {t[0].cast<std::string>(), t[1].is_none() ? std::nullopt : std::optional<std::string>(t[1].cast<std::string>())};
  }
  throw py::type_error("texts[" + std::to_string(index) + "]: expected a str or a (text, text_pair) tuple");
}

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

}  // namespace salient_python
