#pragma once
// A tensor's values as a std::vector<double> (copied to the CPU, row-major), for JSON and reports.
#include <torch/torch.h>

#include <vector>

#include <nlohmann/json.hpp>

namespace salient {

inline std::vector<double> tensor_values(const torch::Tensor& t) {
  torch::Tensor c = t.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

// A tensor of any rank as nested JSON arrays (a 0-d tensor: a number).
inline nlohmann::json tensor_json(const torch::Tensor& t) {
  if (t.dim() == 0) return t.detach().to(torch::kCPU, torch::kFloat64).item<double>();
  if (t.dim() == 1) return tensor_values(t);
  nlohmann::json a = nlohmann::json::array();
  for (int64_t i = 0; i < t.size(0); ++i) a.push_back(tensor_json(t[i]));
  return a;
}

}  // namespace salient
