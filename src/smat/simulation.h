#pragma once
// Simulability (Fernandes et al., NeurIPS 2022, §2–3): a student learns to predict a fixed
// teacher's labels from a few examples, optionally guided by the teacher's explanations; the
// explanation is as good as the simulation accuracy it buys on held-out inputs. This file holds
// the teacher's annotations (labels, per-head attention scores, static explanations), the student
// training run (SGD, clipping, early stopping on validation simulation loss) and, for SMaT, the
// meta-training of the teacher explainer's head coefficients inside that run.
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "explain/explainer.h"
#include "model/classifier.h"
#include "smat/meta.h"

namespace salient::smat {

// The teacher explainers of the study. Gradient ones come from the explainer registry (gradient of
// the predicted class's logit, as the authors' code), attention ones from head_explainer.h.
// Registered: any other method of the explainer registry (salient explain --list), scored by the
// simulability it buys like the paper's own (its scores made a distribution, see below). A name
// "registered:M" takes method M through that path even where M is also one of the paper's names
// (saliency, grad_x_input, ig, smat): what `salient benchmark --metrics simulability` runs.
enum class TeacherExplainer { None, Saliency, GradXInput, IntegratedGradients, AttentionAll, AttentionLast, Smat, Registered };
TeacherExplainer parse_teacher_explainer(const std::string& name, const std::string& where);
std::string teacher_explainer_name(TeacherExplainer e);  // none|saliency|grad_x_input|ig|attention_all|attention_last|smat
std::vector<std::string> teacher_explainer_names();      // the paper's seven
std::string registered_method(const std::string& name);  // the method of "registered:M" (else name)
bool is_attention_explainer(TeacherExplainer e);  // attention_all, attention_last, smat
// The paper's β: 5 for attention explainers, 0.2 for gradient explainers, 0 without one.
double default_beta(TeacherExplainer e);
// The same by name: a registered method of the attention family gets 5, any other 0.2.
double default_beta(const std::string& name);

struct StaticExplainerOptions {
  // Softmax temperatures of the gradient explainers' scores: the authors' code divides
  // gradient × input by 0.1 and IG by 0.5 and leaves the gradient norm as is.
  double saliency_temperature = 1.0, grad_x_input_temperature = 0.1, ig_temperature = 0.5;
  int64_t ig_steps = 10;  // the authors' n_steps; zero-embedding baseline like theirs
  // Text teachers: where saliency, grad_x_input and ig take the gradient (the registry's `layer`):
  // `embeddings`, the embedding layer's output (hidden_states[0]), as the authors' code; or
  // `word_embeddings`, salient's earlier site. IG stays the textbook one at either (docs/smat.md
  // says where the authors' IG code departs from it).
  std::string gradient_layer = "embeddings";
  int64_t internal_batch = 64;
  int64_t max_batch_tokens = BatchLimits().tokens;  // text teachers' passes (explain/explainer.h)
  // Registered methods: scores divided by their largest magnitude in the example, then softmax over
  // the tokens at this temperature (their scales differ by orders of magnitude across methods).
  double registered_temperature = 0.1;
  std::map<std::string, ExplainOptions> registered;  // per method (parameters, output); absent: its defaults
};

struct SimulationExample {
  Encoding encoding;  // text teachers
  // Image teachers (a ViT): the image [C·H·W] in [0, 1] and its pixel_values [C, H, W] as the
  // model's preprocessor gives them; tokens are [CLS] and the patches, none padding.
  torch::Tensor image, pixels;
  int64_t teacher_label = -1;  // the predicted class (a regression teacher: 0, its one output)
  std::optional<double> teacher_value;  // a regression teacher's output (then L_sim is the squared error)
  torch::Tensor head_scores;  // [heads of every layer (layer-major), length]: the teacher's s_h
  torch::Tensor explanation;  // [length] a static teacher explanation (a distribution); else undefined
};

// The teacher's prediction and per-head scores for every encoding.
std::vector<SimulationExample> annotate(const Classifier& teacher, const std::vector<Encoding>& encodings,
                                        int64_t batch_size = 64);
// The same for an image teacher (a ViT) from images [N, C·H·W] in [0, 1].
std::vector<SimulationExample> annotate_images(const Transformer& teacher, const torch::Tensor& images,
                                               int64_t batch_size = 256);
// `examples` with the teacher's static explanation of `explainer` (attention_all / attention_last:
// uniform coefficients over all / the last layer's heads, softmax over the tokens; gradient
// explainers: softmax over the tokens of score / temperature); none and smat: no static one.
std::vector<SimulationExample> with_explanations(const Classifier& teacher, std::vector<SimulationExample> examples,
                                                 TeacherExplainer explainer, const StaticExplainerOptions& options = {});
// Image examples (annotate_images): attention_all / attention_last as for text; saliency,
// grad_x_input and ig are vision::patch_gradient_scores of the teacher label's logit over the
// patches ([CLS] gets no mass), softmax at the same temperatures. with_explanations dispatches here
// for image examples; registered (text) methods are an error.
std::vector<SimulationExample> with_image_explanations(const Transformer& teacher, std::vector<SimulationExample> examples,
                                                       TeacherExplainer explainer, const StaticExplainerOptions& options = {});
// By name: the paper's explainers as above, any other registered method through its registry entry
// (target: the teacher's label; softmax over the tokens of score / max|score| / registered_temperature).
std::vector<SimulationExample> with_explanations(const Classifier& teacher, std::vector<SimulationExample> examples,
                                                 const std::string& explainer, const StaticExplainerOptions& options = {});

// Padded batch of examples[indices] on `device` (teacher explanations padded with zeros); image
// examples give pixel_values and an all-ones mask.
SimulationBatch make_simulation_batch(const std::vector<SimulationExample>& examples, const std::vector<size_t>& indices,
                                      int64_t pad_id, torch::Device device);

struct StudentOptions {
  TeacherExplainer explainer = TeacherExplainer::None;
  Normalizer normalizer = Normalizer::Sparsemax;
  double beta = -1;  // < 0: default_beta(explainer)
  // Student optimisation (the and the paper's settings): SGD, gradient clipping, decay.
  // AdamW is salient's option for students from scratch (smat/optimizer.h).
  OptimizerKind optimizer = OptimizerKind::Sgd;
  double lr = 5e-3, clip_norm = 5.0, weight_decay = 0.01;
  int64_t batch_size = 32;
  // Training stops once more than `patience` epochs passed without a better validation score (the
  // authors' `not_improved > patience`). 0: their value for the teacher's kind (student_patience).
  int patience = 0;
  // The validation score that keeps an epoch and stops training: the simulability (accuracy;
  // Pearson r for a regression teacher: the authors' code, default) or the simulation loss
  // (salient's earlier rule).
  bool select_by_accuracy = true;
  int max_epochs = 100;  // hard cap
  // The teacher's coefficients (meta-training only): Adam without weight decay, the gradient's
  // norm clipped to `clip_norm`, as the authors' metaoptimizer (optimizer_with_clip, decay 0).
  // 0: the paper's rate for the teacher's kind (meta_learning_rate).
  double meta_lr = 0;
  uint64_t seed = 0;     // batch order and dropout
  void validate() const;  // one-line errors naming the option
};

// The defaults the authors' configurations use by the teacher's kind (examples from annotate or
// annotate_images): patience 10 for text, 5 for image and regression; meta learning rate 5e-4,
// 2e-4 for regression. An option set above 0 is returned as it is.
int student_patience(const StudentOptions& o, const std::vector<SimulationExample>& examples);
double meta_learning_rate(const StudentOptions& o, const std::vector<SimulationExample>& examples);

struct StudentRun {
  double simulability = 0;  // on the test set: agreement with the teacher's labels (regression: Pearson r)
  double valid_loss = 0, valid_simulability = 0;  // on valid, at the kept epoch
  int best_epoch = 0, epochs = 0;
  int64_t steps = 0, meta_steps = 0;
  double seconds = 0, student_step_seconds = 0, meta_step_seconds = 0;  // means per step
  torch::Tensor teacher_coefficient_logits;  // SMaT meta-training: the coefficients of the best epoch
  torch::Tensor student_coefficient_logits;
  nlohmann::json history = nlohmann::json::array();  // per epoch: train loss, valid loss
  nlohmann::json to_json() const;
};

// Trains `student` (a copy is made; the argument is untouched) on `train` against the teacher's
// labels and, unless the explainer is None, its explanations. The student's own attention explainer
// reads every layer's heads (only the last layer's when the teacher's is attention_last).
// Explainer Smat: `teacher_coefficient_logits` [teacher heads] are the teacher's (fixed unless
// `meta_train`, which updates them each step through the pilot step on a cycled `valid` batch).
// Keeps the epoch with the best validation score (options.select_by_accuracy); simulability is
// measured on `test` with that epoch's student, which `kept_student` receives when given.
StudentRun run_student(const Transformer& student, int64_t pad_id, const std::vector<SimulationExample>& train,
                       const std::vector<SimulationExample>& valid, const std::vector<SimulationExample>& test,
                       const StudentOptions& options, const torch::Tensor& teacher_coefficient_logits = {},
                       bool meta_train = false, Transformer* kept_student = nullptr);

// Coefficient logits whose normalisation is uniform over `count` heads: the explainer then equals
// the static all-heads mean (the paper's initialisation; for `none`, 1/count itself).
torch::Tensor uniform_coefficient_logits(int64_t count);

// Mean simulation loss and simulability of `model` on examples (no dropout, no gradients):
// cross-entropy and accuracy against the teacher's labels, or for a regression teacher the squared
// error and Pearson's r against its outputs.
std::pair<double, double> simulation_loss_and_accuracy(const Transformer& model, int64_t pad_id,
                                                       const std::vector<SimulationExample>& examples,
                                                       int64_t batch_size = 64);

}  // namespace salient::smat
