#include "smat/meta.h"

namespace salient::smat {

namespace {

torch::Tensor simulation_loss(const torch::Tensor& logits, const SimulationBatch& b) {
  if (b.teacher_values.defined())
    return torch::mse_loss(logits.select(1, 0), b.teacher_values.to(logits.device(), logits.scalar_type()));
  return torch::cross_entropy_loss(logits, b.teacher_labels.to(logits.device()));
}

torch::Tensor loss_with(const Transformer& model, const torch::Tensor& student_coefficients, const std::vector<int64_t>& layers,
                        const SimulationBatch& b, const torch::Tensor& teacher_coefficient_logits, Normalizer n, double beta) {
  if (beta == 0 || (!b.teacher_explanation.defined() && !teacher_coefficient_logits.defined()))
    return simulation_loss(batch_logits(model, b.batch), b);
  // One forward gives the student's logits and its head scores (one dropout draw for both terms).
  const HeadScores scores = head_scores(model, b.batch, layers);
  torch::Tensor loss = simulation_loss(scores.logits, b);
  torch::Tensor teacher = b.teacher_explanation.defined()
                              ? b.teacher_explanation.to(loss.device())
                              : head_explanation(normalize(teacher_coefficient_logits, n), b.teacher_scores);
  torch::Tensor student = head_explanation(normalize(student_coefficients, n), scores);
  // KL(teacher ‖ student) over the real tokens, mean over the batch (0·log 0 = 0).
  torch::Tensor kl = torch::xlogy(teacher, teacher) - teacher * torch::log(student.clamp_min(1e-30));
  return loss + beta * kl.sum(-1).mean();
}

}  // namespace

torch::Tensor student_loss(const Student& s, const SimulationBatch& train, const torch::Tensor& teacher_coefficient_logits,
                           Normalizer normalizer, double beta) {
  return loss_with(s.model, s.coefficient_logits, s.layers, train, teacher_coefficient_logits, normalizer, beta);
}

std::vector<torch::Tensor> student_parameters(const Student& s) {
  std::vector<torch::Tensor> params;
  for (const auto& kv : s.model.weights()) params.push_back(kv.second);
  params.push_back(s.coefficient_logits);
  return params;
}

torch::Tensor meta_loss(const Student& s, const SimulationBatch& train, const SimulationBatch& valid,
                        const torch::Tensor& teacher_coefficient_logits, Normalizer normalizer, double beta,
                        const StudentOptimizer& optimizer) {
  std::vector<std::string> names;
  for (const auto& kv : s.model.weights()) names.push_back(kv.first);
  const std::vector<torch::Tensor> params = student_parameters(s);
  torch::Tensor loss = student_loss(s, train, teacher_coefficient_logits, normalizer, beta);
  // create_graph: the pilot step stays a function of λ; allow_unused: weights the loss never reads
  // (e.g. the head of a layer the explainer skips) have no gradient.
  std::vector<torch::Tensor> grads = torch::autograd::grad({loss}, params, {}, /*retain_graph=*/true,
                                                           /*create_graph=*/true, /*allow_unused=*/true);
  const std::vector<torch::Tensor> next = optimizer.updated(params, grads);
  std::map<std::string, torch::Tensor> stepped;
  for (size_t i = 0; i < names.size(); ++i) stepped[names[i]] = next[i];
  // A plain copy shares the student's tensors until set_weights rebinds every one of them to the
  // stepped ones, so nothing is deep-copied and the student is left unchanged.
  Transformer pilot = s.model;
  pilot.set_weights(std::move(stepped));
  pilot.eval();  // the validation loss without dropout, as the authors' code
  return simulation_loss(batch_logits(pilot, valid.batch), valid);
}

}  // namespace salient::smat
