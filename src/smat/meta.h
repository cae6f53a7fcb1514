#pragma once
// SMaT's simulation objective and meta-gradient (Fernandes et al., NeurIPS 2022, §3):
//   student loss  L(θ, λ) = CE(student(x), teacher label) + β · KL(teacher expl_λ ‖ student expl)
//                 (a regression teacher: the squared error to its output instead of CE)
//   pilot step    θ' = update(θ, ∇θ L(θ, λ))          (the student's optimiser rule; differentiable in λ)
//   meta loss     CE(student_θ'(x_valid), teacher label on x_valid)   (no explanations)
// ∂(meta loss)/∂λ goes back through the pilot step (second order), which LibTorch's autograd gives.
#include <torch/torch.h>

#include "smat/head_explainer.h"
#include "smat/normalizers.h"
#include "smat/optimizer.h"

namespace salient::smat {

struct SimulationBatch {
  Batch batch;
  torch::Tensor teacher_labels;  // [B] the teacher's predictions
  torch::Tensor teacher_values;  // [B] a regression teacher's outputs (else undefined): L_sim is then the squared error
  HeadScores teacher_scores;     // the teacher's per-head scores (fixed: the teacher never changes)
  // A static teacher explanation [B, L] (zeros at padding); when defined it is used instead of the
  // coefficient mix of teacher_scores.
  torch::Tensor teacher_explanation;
};

struct Student {
  Transformer model;
  torch::Tensor coefficient_logits;  // [N] over the student's own heads, normalised like the teacher's
  std::vector<int64_t> layers;       // the heads its explainer reads (empty: all)
};

// L(θ, λ) on one batch; β = 0, or neither a static teacher explanation nor teacher coefficients:
// simulation only.
torch::Tensor student_loss(const Student& student, const SimulationBatch& train, const torch::Tensor& teacher_coefficient_logits,
                           Normalizer normalizer, double beta);
// The meta loss after one differentiable pilot step of the student (weights and coefficients, in
// that order for `optimizer`) by the optimiser's rule and state on `train`, evaluated on `valid`
// without explanations.
torch::Tensor meta_loss(const Student& student, const SimulationBatch& train, const SimulationBatch& valid,
                        const torch::Tensor& teacher_coefficient_logits, Normalizer normalizer, double beta,
                        const StudentOptimizer& optimizer);
// The student's trainable tensors in the order its optimiser keeps them: weights by name, then the
// explainer's coefficient logits.
std::vector<torch::Tensor> student_parameters(const Student& student);

}  // namespace salient::smat
