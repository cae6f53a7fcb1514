#pragma once
// The explain and benchmark runs' method settings (salient/runs.h's MethodSettings) onto each
// method's options (runs.cpp), shared by run_explain and run_benchmark (studies.cpp).
#include <map>
#include <string>
#include <vector>

#include "explain/explainer.h"
#include "salient/runs.h"

namespace salient {

// A parameter given as text (MethodSettings::params) must be one that some of `methods` takes.
void check_params_taken(const std::map<std::string, std::string>& params, const std::vector<std::string>& methods);
// The options of one method: the settings' output, seed and batch, and each given parameter it
// declares, parsed by its declared type; ranges and choices checked before any work.
ExplainOptions method_options(const std::string& method, const MethodSettings& settings);

}  // namespace salient
