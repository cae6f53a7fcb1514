#pragma once
// What the Python extension module's files share (python/_salient.cpp and python/bind_*.cpp, one
// file per area, compiled as one unity translation unit): the conversions between Python values and
// the public C++ API's types, the scope every computing call runs in, and each area's binder.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "salient/salient.h"

namespace salient_python {

namespace py = pybind11;
using nlohmann::json;

py::object to_python(const json& j);
// Parameter values as a caller writes them: numbers, strings, booleans, lists and dicts of them.
// `where` names the argument in the error, as the C++ side names flags.
json to_json(const py::handle& o, const std::string& where);
// A text, or a (text, text_pair) tuple; a list of them.
salient::TextInput to_input(const py::handle& o, size_t index);
std::vector<salient::TextInput> to_inputs(const py::handle& texts);
// A copy of a CPU float32 or int64 tensor as a NumPy array of the same shape.
py::array to_numpy(const torch::Tensor& t);
py::dict encoding_dict(const salient::Encoding& e);

// Around every computing call: the GIL released, and autograd on whatever the caller's grad mode
// (Python's torch.no_grad() switches it off for this thread in the libtorch salient shares with
// torch, and the gradient methods and training need it).
struct ComputeScope {
  py::gil_scoped_release release;
  torch::AutoGradMode grad_on{true};
};

// A computing call's JSON result, the call made inside a ComputeScope, converted with the GIL held.
template <class F>
py::object computed(F&& call) {
  json r;
  {
    ComputeScope release;
    r = call();
  }
  return to_python(r);
}

// The areas, one file each.
void bind_model(py::module_& m);       // bind_model.cpp: salient.Model (load, predict, explain, AttAttr, ...)
void bind_papers(py::module_& m);      // bind_papers.cpp: ExpNet, SMaT, SST
void bind_vision(py::module_& m);      // bind_vision.cpp: the vision transformer
void bind_evaluation(py::module_& m);  // bind_evaluation.cpp: the method and metric registries, the benchmark

}  // namespace salient_python
