// The Python extension module salient._salient: conversions between Python and the public C++ API
// (include/salient/salient.h) and nothing else. The pure-Python package python/salient wraps it in
// the Captum/ferret-style API (NumPy arrays, objects with to_dict()); docs/python.md. The bindings
// are split by area (bind_*.cpp; what they share: bindings.h), compiled as one unity translation
// unit (python/CMakeLists.txt).
//
// The GIL is released around every C++ call that computes; salient::Error becomes ValueError, and
// salient::NotFoundError (a missing file or directory) FileNotFoundError, with the same one-line
// message the CLI prints.
#include "bindings.h"
#include "salient/runtime.h"
#include "salient/studies.h"  // OptionError
#include "salient/version.h"

namespace py = pybind11;

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

  salient_python::bind_model(m);
  salient_python::bind_papers(m);
  salient_python::bind_vision(m);
  salient_python::bind_evaluation(m);
}
