#include "smat/optimizer.h"

#include <cmath>

#include "util/error.h"

namespace salient::smat {

OptimizerKind parse_optimizer(const std::string& name, const std::string& where) {
  if (name == "sgd") return OptimizerKind::Sgd;
  if (name == "adamw") return OptimizerKind::AdamW;
  fail("{}: unknown optimizer '{}' (valid: sgd, adamw)", where, name);
}

std::string optimizer_name(OptimizerKind k) { return k == OptimizerKind::Sgd ? "sgd" : "adamw"; }

StudentOptimizer::StudentOptimizer(OptimizerRule rule, const std::vector<torch::Tensor>& params) : rule_(rule) {
  if (rule_.kind == OptimizerKind::AdamW)
    for (const auto& p : params) {
      m_.push_back(torch::zeros_like(p).detach());
      v_.push_back(torch::zeros_like(p).detach());
    }
}

std::vector<torch::Tensor> StudentOptimizer::apply(const std::vector<torch::Tensor>& params,
                                                   const std::vector<torch::Tensor>& grads, std::vector<torch::Tensor>* m_out,
                                                   std::vector<torch::Tensor>* v_out) const {
  if (params.size() != grads.size()) fail("smat optimizer: {} parameters, {} gradients", params.size(), grads.size());
  // Global-norm clipping as torch::nn::utils::clip_grad_norm_: scale by c / (‖g‖ + 1e-6) when below 1.
  torch::Tensor scale;
  if (rule_.clip_norm > 0) {
    torch::Tensor squares;
    for (const auto& g : grads)
      if (g.defined()) squares = squares.defined() ? squares + g.pow(2).sum() : g.pow(2).sum();
    if (squares.defined()) scale = torch::clamp_max(rule_.clip_norm / (squares.sqrt() + 1e-6), 1.0);
  }
  const double t = static_cast<double>(steps_ + 1);
  std::vector<torch::Tensor> out(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const torch::Tensor& p = params[i];
    if (!grads[i].defined()) {
      out[i] = p;
      if (m_out) m_out->push_back(m_.empty() ? torch::Tensor() : m_[i]);
      if (v_out) v_out->push_back(v_.empty() ? torch::Tensor() : v_[i]);
      continue;
    }
    const torch::Tensor g = scale.defined() ? grads[i] * scale : grads[i];
    if (rule_.kind == OptimizerKind::Sgd) {
      out[i] = p - rule_.lr * (g + rule_.weight_decay * p);
    } else {
      torch::Tensor m = rule_.beta1 * m_[i] + (1 - rule_.beta1) * g;
      torch::Tensor v = rule_.beta2 * v_[i] + (1 - rule_.beta2) * g * g;
      const double c1 = 1 - std::pow(rule_.beta1, t), c2 = 1 - std::pow(rule_.beta2, t);
      // clamp_min keeps the pilot's second derivative finite where a gradient entry is exactly 0
      // (d√v/dv = ∞ there); it changes √v̂ only below 1e-15, far under eps.
      torch::Tensor denom = (v / c2).clamp_min(1e-30).sqrt() + rule_.eps;
      out[i] = p * (1 - rule_.lr * rule_.weight_decay) - rule_.lr * (m / c1) / denom;
      if (m_out) m_out->push_back(m);
      if (v_out) v_out->push_back(v);
    }
  }
  return out;
}

std::vector<torch::Tensor> StudentOptimizer::updated(const std::vector<torch::Tensor>& params,
                                                     const std::vector<torch::Tensor>& grads) const {
  return apply(params, grads, nullptr, nullptr);
}

void StudentOptimizer::step(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& grads) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> detached(grads.size());
  for (size_t i = 0; i < grads.size(); ++i)
    if (grads[i].defined()) detached[i] = grads[i].detach();
  std::vector<torch::Tensor> m, v;
  std::vector<torch::Tensor> next = apply(params, detached, &m, &v);
  for (size_t i = 0; i < params.size(); ++i)
    if (detached[i].defined()) params[i].detach().copy_(next[i]);
  if (rule_.kind == OptimizerKind::AdamW) {
    for (size_t i = 0; i < params.size(); ++i)
      if (m[i].defined()) {
        m_[i] = m[i].detach();
        v_[i] = v[i].detach();
      }
  }
  ++steps_;
}

}  // namespace salient::smat
