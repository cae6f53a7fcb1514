#pragma once
// A tensor's values as a std::vector<double> (copied to the CPU, row-major), for JSON and reports.
#include <torch/torch.h>

#include <vector>

namespace salient {

inline std::vector<double> tensor_values(const torch::Tensor& t) {
  torch::Tensor c = t.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

}  // namespace salient
