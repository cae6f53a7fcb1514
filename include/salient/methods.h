#pragma once
// The explainer registry as the public API shows it: each method's name, family, summary and the
// parameters it declares (salient::methods(), `salient explain --list`, GET /api/methods).
#include <cstdint>
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
  // String: the allowed values (empty: any). Int: names allowed besides numbers (ig's steps "auto").
  std::vector<std::string> choices;
  std::string doc;
  // A file or directory read from the machine that runs the method (a learned explainer's
  // artifact): `salient serve` takes it only under the folders given with --artifacts.
  bool path = false;

  // Whether `value` is one of a number parameter's names for a value the method works out ("auto").
  bool names(const std::string& value) const;
  std::string flag() const;
  std::string type_name() const;  // int | number | string
  // "--steps (int ≥ 2, default 50): integration points" — for --list and docs.
  std::string describe() const;
};

// What the method's internal passes hold in memory, for estimates made before it runs
// (Model::memory_estimate; the bytes of each kind of pass: src/explain/memory.cpp).
struct Footprint {
  enum class Pass {
    forward,              // one layer's activations at a time, no gradient
    attentions,           // and every layer's attention probabilities (or hidden states), kept
    gradient,             // every layer's activations, kept for a backward pass
    attention_gradients,  // and every layer's attention probabilities with their gradients
    relevance,            // and their relevances (LRP)
  };
  Pass pass = Pass::forward;
  // Rows of one pass: the input alone, or as many as the token budget lets in (perturbed inputs,
  // IG's points), at most `token_cap` token positions where the method caps them itself (0: none).
  bool fills_budget = false;
  int64_t token_cap = 0;
  // What bounds the rows in all, when fewer than the budget: "tokens" (one row per token), the
  // name of an int parameter (samples, steps), or "" (nothing).
  std::string rows_bound;
  // Every intra-op thread runs a pass of its own at once (IG's fused path: a CPU BERT whose head
  // reads the first token), each within token_cap and all together within the token budget.
  bool thread_passes = false;
};

struct ExplainerInfo {
  std::string name;
  std::string family;  // baseline | gradient | perturbation | attention | lrp | learned
  std::string summary;
  std::vector<ParamSpec> params;
  std::function<std::unique_ptr<Explainer>()> make;
  Footprint footprint;
};

}  // namespace salient
