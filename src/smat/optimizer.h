#pragma once
// The student's optimiser as a plain function of (parameters, gradients), so that SMaT's pilot step
// applies exactly the rule of the real step and stays differentiable (Fernandes et al. 2022, §3:
// the pilot is one more update "with the same optimiser"). The rule: clip the gradients' global
// norm, then SGD with L2 decay (the paper's students) or AdamW (decoupled decay; salient's option
// for students trained from scratch, which plain SGD at the paper's rate does not move).
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace salient::smat {

enum class OptimizerKind { Sgd, AdamW };
OptimizerKind parse_optimizer(const std::string& name, const std::string& where);  // sgd|adamw
std::string optimizer_name(OptimizerKind k);

struct OptimizerRule {
  OptimizerKind kind = OptimizerKind::Sgd;
  double lr = 5e-3, weight_decay = 0.01, clip_norm = 5.0;  // clip 0: off
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;          // AdamW only
};

class StudentOptimizer {
 public:
  StudentOptimizer(OptimizerRule rule, const std::vector<torch::Tensor>& params);
  // The updated parameters for `grads` (undefined = the parameter is not read: left as it is),
  // as differentiable functions of params and grads; the optimiser's state is not advanced.
  std::vector<torch::Tensor> updated(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& grads) const;
  // A real step: params (leaves) are overwritten in place with their update, the state advances.
  void step(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& grads);
  const OptimizerRule& rule() const { return rule_; }

 private:
  // Shared by both: the update and, for AdamW, the new moments.
  std::vector<torch::Tensor> apply(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& grads,
                                   std::vector<torch::Tensor>* m_out, std::vector<torch::Tensor>* v_out) const;
  OptimizerRule rule_;
  std::vector<torch::Tensor> m_, v_;  // AdamW moments (zeros at the start)
  int64_t steps_ = 0;
};

}  // namespace salient::smat
