#pragma once
// Nested JSON number lists (the fixtures' [layer][head][query][key] arrays) as float64 tensors.
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

namespace salient::test {

inline torch::Tensor json_to_tensor(const nlohmann::json& j) {
  std::vector<int64_t> shape;
  for (const nlohmann::json* p = &j; p->is_array(); p = &(*p)[0]) shape.push_back(static_cast<int64_t>(p->size()));
  std::vector<double> flat;
  std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& x) {
    if (x.is_array())
      for (const auto& e : x) walk(e);
    else
      flat.push_back(x.get<double>());
  };
  walk(j);
  return torch::tensor(flat, torch::kFloat64).view(shape);
}

}  // namespace salient::test
