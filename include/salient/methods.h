#pragma once
// The explainer registry as the public API shows it: each method's name, family, summary and the
// parameters it declares (salient::methods(), `salient explain --list`, GET /api/methods).
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace salient {

class Explainer;

// One parameter a method takes.
struct ParamSpec {
  enum class Type { Int, Number, String };
  std::string name;
  Type type = Type::String;
  // The value used when none is given; null when the method derives it from the input (the doc
  // says how, e.g. kernel_shap's sample budget 2d + 2048) or needs it given (expnet's artifact).
  nlohmann::json default_value;
  double min = -std::numeric_limits<double>::infinity(), max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;  // allowed strings; empty = any
  std::string doc;

  std::string flag() const;
  std::string type_name() const;  // int | number | string
  // "--steps (int ≥ 2, default 50): integration points" — for --list and docs.
  std::string describe() const;
};

struct ExplainerInfo {
  std::string name;
  std::string family;  // baseline | gradient | perturbation | attention | lrp | learned
  std::string summary;
  std::vector<ParamSpec> params;
  std::function<std::unique_ptr<Explainer>()> make;
};

}  // namespace salient
