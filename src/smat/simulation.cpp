#include "smat/simulation.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>

#include "eval/classification.h"
#include "explain/explainer.h"
#include "train/trainer.h"
#include "util/error.h"
#include "util/progress.h"
#include "util/tensor_values.h"
#include "vision/vit.h"

namespace salient::smat {

namespace {

const std::vector<std::pair<TeacherExplainer, std::string>>& explainer_table() {
  static const std::vector<std::pair<TeacherExplainer, std::string>> table = {
      {TeacherExplainer::None, "none"},
      {TeacherExplainer::Saliency, "saliency"},
      {TeacherExplainer::GradXInput, "grad_x_input"},
      {TeacherExplainer::IntegratedGradients, "ig"},
      {TeacherExplainer::AttentionAll, "attention_all"},
      {TeacherExplainer::AttentionLast, "attention_last"},
      {TeacherExplainer::Smat, "smat"}};
  return table;
}

// Softmax over the first `length` entries of scores / temperature.
torch::Tensor token_distribution(const std::vector<double>& scores, double temperature) {
  torch::Tensor s = torch::tensor(scores, torch::kFloat64) / temperature;
  return torch::softmax(s, 0).to(torch::kFloat32);
}

// Static explainer's heads: every layer (attention_all) or the last one (attention_last).
torch::Tensor uniform_mix(const torch::Tensor& head_scores, int64_t heads_per_layer, bool last_layer_only) {
  torch::Tensor s = last_layer_only ? head_scores.slice(0, head_scores.size(0) - heads_per_layer) : head_scores;
  return torch::softmax(s.to(torch::kFloat64).mean(0), 0).to(torch::kFloat32);
}

// The registry method's scores of every example for the teacher's own label (its prediction).
std::vector<Explanation> explain_teacher_labels(const Classifier& teacher, const std::vector<SimulationExample>& examples,
                                                const std::string& method, const ExplainOptions& options) {
  std::vector<const Encoding*> inputs;
  std::vector<int64_t> targets;
  for (const auto& ex : examples) {
    inputs.push_back(&ex.encoding);
    targets.push_back(ex.teacher_label);
  }
  return make_explainer(method)->explain(teacher, inputs, targets, options);
}

bool is_gradient_explainer(TeacherExplainer e) {
  return e == TeacherExplainer::Saliency || e == TeacherExplainer::GradXInput || e == TeacherExplainer::IntegratedGradients;
}

// A gradient teacher explainer's registry method and softmax temperature (checked > 0).
std::pair<std::string, double> gradient_method(TeacherExplainer e, const StaticExplainerOptions& o) {
  const std::string method = e == TeacherExplainer::Saliency ? "saliency" : e == TeacherExplainer::GradXInput ? "grad_x_input" : "ig";
  const double temperature = e == TeacherExplainer::Saliency     ? o.saliency_temperature
                             : e == TeacherExplainer::GradXInput ? o.grad_x_input_temperature
                                                                 : o.ig_temperature;
  if (!(temperature > 0)) fail("smat: the {} temperature must be > 0, got {}", method, temperature);
  return {method, temperature};
}

std::vector<int64_t> student_layers(const Transformer& student, TeacherExplainer e) {
  if (e == TeacherExplainer::AttentionLast) return {student.num_layers() - 1};
  return {};
}

}  // namespace

std::string registered_method(const std::string& name) {
  const std::string prefix = "registered:";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

TeacherExplainer parse_teacher_explainer(const std::string& name, const std::string& where) {
  for (const auto& [e, n] : explainer_table())
    if (n == name) return e;
  if (name == "registered:") fail("{}: 'registered:' needs a method name", where);
  const std::vector<std::string> registered = explainer_names();
  if (std::find(registered.begin(), registered.end(), registered_method(name)) != registered.end())
    return TeacherExplainer::Registered;
  fail("{}: unknown explainer '{}' (valid: {}, or a registered method: {})", where, name,
       fmt::join(teacher_explainer_names(), ", "), fmt::join(registered, ", "));
}

std::string teacher_explainer_name(TeacherExplainer e) {
  for (const auto& [x, n] : explainer_table())
    if (x == e) return n;
  return "registered";
}

std::vector<std::string> teacher_explainer_names() {
  std::vector<std::string> out;
  for (const auto& entry : explainer_table()) out.push_back(entry.second);
  return out;
}

bool is_attention_explainer(TeacherExplainer e) {
  return e == TeacherExplainer::AttentionAll || e == TeacherExplainer::AttentionLast || e == TeacherExplainer::Smat;
}

double default_beta(TeacherExplainer e) {
  if (e == TeacherExplainer::None) return 0;
  return is_attention_explainer(e) ? 5.0 : 0.2;
}

double default_beta(const std::string& name) {
  const TeacherExplainer e = parse_teacher_explainer(name, "explainer");
  if (e != TeacherExplainer::Registered) return default_beta(e);
  return explainer_info(registered_method(name)).family == "attention" ? 5.0 : 0.2;
}

std::vector<SimulationExample> annotate(const Classifier& teacher, const std::vector<Encoding>& encodings,
                                        int64_t batch_size) {
  if (batch_size < 1) fail("smat: batch size must be ≥ 1, got {}", batch_size);
  std::vector<SimulationExample> out(encodings.size());
  torch::NoGradGuard no_grad;
  for (size_t b = 0; b < encodings.size(); b += static_cast<size_t>(batch_size)) {
    const size_t e = std::min(encodings.size(), b + static_cast<size_t>(batch_size));
    std::vector<const Encoding*> part;
    for (size_t i = b; i < e; ++i) part.push_back(&encodings[i]);
    Batch batch = make_batch(part, teacher.tokenizer.pad_id(), teacher.model.device());
    HeadScores hs = head_scores(teacher.model, batch);
    torch::Tensor logits = hs.logits.to(torch::kCPU, torch::kFloat64);
    torch::Tensor labels = logits.argmax(-1);
    const bool regression = teacher.model.config().num_labels == 1;
    torch::Tensor scores = hs.scores.to(torch::kCPU, torch::kFloat32);
    for (size_t i = b; i < e; ++i) {
      SimulationExample& ex = out[i];
      ex.encoding = encodings[i];
      ex.teacher_label = labels[static_cast<int64_t>(i - b)].item<int64_t>();
      if (regression) ex.teacher_value = logits[static_cast<int64_t>(i - b)][0].item<double>();
      ex.head_scores = scores[static_cast<int64_t>(i - b)].slice(1, 0, static_cast<int64_t>(encodings[i].ids.size())).clone();
    }
  }
  return out;
}

std::vector<SimulationExample> annotate_images(const Transformer& teacher, const torch::Tensor& images, int64_t batch_size) {
  if (batch_size < 1) fail("smat: batch size must be ≥ 1, got {}", batch_size);
  if (!teacher.config().is_vision()) fail("smat: annotate_images needs a vision transformer teacher");
  const int64_t N = images.size(0), L = teacher.config().max_tokens();
  std::vector<SimulationExample> out(static_cast<size_t>(N));
  torch::NoGradGuard no_grad;
  const bool regression = teacher.config().num_labels == 1;
  for (int64_t b = 0; b < N; b += batch_size) {
    const int64_t e = std::min(N, b + batch_size);
    Batch batch;
    batch.pixel_values = vision::pixel_values(teacher, images.slice(0, b, e)).to(teacher.device());
    batch.attention_mask = torch::ones({e - b, L}, torch::TensorOptions(torch::kLong).device(teacher.device()));
    const HeadScores hs = head_scores(teacher, batch);
    const torch::Tensor logits = hs.logits.to(torch::kCPU, torch::kFloat64);
    const torch::Tensor labels = logits.argmax(-1), scores = hs.scores.to(torch::kCPU, torch::kFloat32);
    const torch::Tensor pixels = batch.pixel_values.to(torch::kCPU);
    for (int64_t i = b; i < e; ++i) {
      SimulationExample& ex = out[static_cast<size_t>(i)];
      ex.image = images[i].to(torch::kCPU, torch::kFloat32).clone();
      ex.pixels = pixels[i - b].clone();
      ex.teacher_label = labels[i - b].item<int64_t>();
      if (regression) ex.teacher_value = logits[i - b][0].item<double>();
      ex.head_scores = scores[i - b].clone();
    }
  }
  return out;
}

std::vector<SimulationExample> with_image_explanations(const Transformer& teacher, std::vector<SimulationExample> out,
                                                       TeacherExplainer explainer, const StaticExplainerOptions& o) {
  if (explainer == TeacherExplainer::Registered)
    fail("smat: registered explainers explain text; an image teacher takes {}", fmt::join(teacher_explainer_names(), ", "));
  for (auto& ex : out) {
    if (!ex.image.defined()) fail("smat: with_image_explanations needs image examples (annotate_images)");
    ex.explanation = torch::Tensor();
  }
  if (explainer == TeacherExplainer::AttentionAll || explainer == TeacherExplainer::AttentionLast) {
    for (auto& ex : out)
      ex.explanation = uniform_mix(ex.head_scores, teacher.num_heads(), explainer == TeacherExplainer::AttentionLast);
    return out;
  }
  if (!is_gradient_explainer(explainer)) return out;  // none, smat: no static explanation
  const auto [method, temperature] = gradient_method(explainer, o);
  if (o.internal_batch < 1) fail("smat: internal batch must be ≥ 1, got {}", o.internal_batch);
  for (size_t b = 0; b < out.size(); b += static_cast<size_t>(o.internal_batch)) {
    const size_t e = std::min(out.size(), b + static_cast<size_t>(o.internal_batch));
    std::vector<torch::Tensor> images;
    std::vector<int64_t> targets;
    for (size_t i = b; i < e; ++i) {
      images.push_back(out[i].image);
      targets.push_back(out[i].teacher_label);
    }
    // The authors' gradient explainers differentiate the logit; IG from the black image.
    const torch::Tensor scores = vision::patch_gradient_scores(teacher, torch::stack(images), method, targets, o.ig_steps,
                                                               /*of_logit=*/true)
                                     .to(torch::kFloat64);
    for (size_t i = b; i < e; ++i) {
      // [CLS] is not an input patch: minus infinity before the softmax gives it exactly 0.
      torch::Tensor logits = torch::cat({torch::full({1}, -INFINITY, torch::kFloat64), scores[static_cast<int64_t>(i - b)] / temperature});
      out[i].explanation = torch::softmax(logits, 0).to(torch::kFloat32);
    }
  }
  return out;
}

std::vector<SimulationExample> with_explanations(const Classifier& teacher, std::vector<SimulationExample> out,
                                                 TeacherExplainer explainer, const StaticExplainerOptions& o) {
  if (o.gradient_layer != "embeddings" && o.gradient_layer != "word_embeddings")
    fail("--gradient-layer: must be embeddings or word_embeddings, got '{}'", o.gradient_layer);
  if (!out.empty() && out[0].image.defined()) return with_image_explanations(teacher.model, std::move(out), explainer, o);
  if (explainer == TeacherExplainer::Registered) fail("smat: a registered explainer is chosen by its name");
  for (auto& ex : out) ex.explanation = torch::Tensor();
  if (explainer == TeacherExplainer::AttentionAll || explainer == TeacherExplainer::AttentionLast) {
    for (auto& ex : out)
      ex.explanation = uniform_mix(ex.head_scores, teacher.model.num_heads(), explainer == TeacherExplainer::AttentionLast);
  } else if (is_gradient_explainer(explainer)) {
    const auto [method, temperature] = gradient_method(explainer, o);
    ExplainOptions eo;
    eo.output = ModelOutput::Logit;  // the authors' gradient explainers differentiate the logit
    eo.internal_batch = o.internal_batch;
    eo.max_batch_tokens = o.max_batch_tokens;
    eo.params = {{"layer", o.gradient_layer}};
    if (explainer == TeacherExplainer::IntegratedGradients) {
      eo.params["steps"] = o.ig_steps;
      eo.params["baseline"] = "zeros";
    }
    const std::vector<Explanation> expl = explain_teacher_labels(teacher, out, method, eo);
    for (size_t i = 0; i < out.size(); ++i) out[i].explanation = token_distribution(expl[i].scores, temperature);
  }
  return out;
}

std::vector<SimulationExample> with_explanations(const Classifier& teacher, std::vector<SimulationExample> out,
                                                 const std::string& name, const StaticExplainerOptions& o) {
  const TeacherExplainer kind = parse_teacher_explainer(name, "explainer");
  if (kind != TeacherExplainer::Registered || (!out.empty() && out[0].image.defined()))
    return with_explanations(teacher, std::move(out), kind, o);
  if (!(o.registered_temperature > 0))
    fail("--registered-temperature: must be > 0, got {}", o.registered_temperature);
  const std::string method = registered_method(name);
  auto it = o.registered.find(method);
  ExplainOptions eo = it == o.registered.end() ? ExplainOptions{} : it->second;
  eo.internal_batch = o.internal_batch;
  eo.max_batch_tokens = o.max_batch_tokens;
  const std::vector<Explanation> expl = explain_teacher_labels(teacher, out, method, eo);
  for (size_t i = 0; i < out.size(); ++i) {
    // softmax(s / max|s| / T) = softmax(s / (max|s|·T)); all-zero scores give the uniform one at any T.
    double largest = 0;
    for (double v : expl[i].scores) largest = std::max(largest, std::abs(v));
    out[i].explanation = token_distribution(expl[i].scores, (largest > 0 ? largest : 1.0) * o.registered_temperature);
  }
  return out;
}

SimulationBatch make_simulation_batch(const std::vector<SimulationExample>& examples, const std::vector<size_t>& indices,
                                      int64_t pad_id, torch::Device device) {
  const int64_t B = static_cast<int64_t>(indices.size());
  const bool images = examples.at(indices.at(0)).pixels.defined();
  int64_t length = 0;
  for (size_t i : indices) length = std::max<int64_t>(length, examples.at(i).head_scores.size(1));
  SimulationBatch out;
  if (images) {
    std::vector<torch::Tensor> pixels;
    for (size_t i : indices) {
      if (!examples[i].pixels.defined()) fail("smat: a batch mixes image and text examples");
      pixels.push_back(examples[i].pixels);
    }
    out.batch.pixel_values = torch::stack(pixels).to(device);
    out.batch.attention_mask = torch::ones({B, length}, torch::TensorOptions(torch::kLong).device(device));
    out.batch.lengths.assign(static_cast<size_t>(B), length);
  } else {
    std::vector<const Encoding*> encs;
    for (size_t i : indices) encs.push_back(&examples[i].encoding);
    out.batch = make_batch(encs, pad_id, device);
  }
  const int64_t heads = examples.at(indices.at(0)).head_scores.size(0);
  torch::Tensor labels = torch::empty({B}, torch::kInt64);
  const bool regression = examples.at(indices.at(0)).teacher_value.has_value();
  torch::Tensor values = regression ? torch::empty({B}, torch::kFloat32) : torch::Tensor();
  torch::Tensor scores = torch::zeros({B, heads, length});
  const bool with_explanation = examples[indices[0]].explanation.defined();
  torch::Tensor explanation = with_explanation ? torch::zeros({B, length}) : torch::Tensor();
  for (int64_t r = 0; r < B; ++r) {
    const SimulationExample& ex = examples[indices[r]];
    const int64_t len = ex.head_scores.size(1);
    labels[r] = ex.teacher_label;
    if (regression) {
      if (!ex.teacher_value) fail("smat: a batch mixes regression and classification examples");
      values[r] = *ex.teacher_value;
    }
    scores[r].slice(1, 0, len).copy_(ex.head_scores);
    if (with_explanation) explanation[r].slice(0, 0, len).copy_(ex.explanation);
  }
  out.teacher_labels = labels.to(device);
  if (regression) out.teacher_values = values.to(device);
  out.teacher_scores.scores = scores.to(device);
  out.teacher_scores.real = out.batch.attention_mask.gt(0);
  if (with_explanation) out.teacher_explanation = explanation.to(device);
  return out;
}

void StudentOptions::validate() const {
  if (!(lr > 0) || !std::isfinite(lr)) fail("--lr: must be > 0, got {}", lr);
  if (!(meta_lr >= 0) || !std::isfinite(meta_lr)) fail("--meta-lr: must be > 0 (0: the paper's), got {}", meta_lr);
  if (!(clip_norm >= 0) || !std::isfinite(clip_norm)) fail("--clip: must be ≥ 0, got {}", clip_norm);
  if (!(weight_decay >= 0) || !std::isfinite(weight_decay)) fail("--weight-decay: must be ≥ 0, got {}", weight_decay);
  if (batch_size < 1) fail("--batch-size: must be ≥ 1, got {}", batch_size);
  if (patience < 0) fail("--patience: must be ≥ 1 (0: the paper's), got {}", patience);
  if (max_epochs < 1) fail("--max-epochs: must be ≥ 1, got {}", max_epochs);
  if (!std::isfinite(beta) || (beta < 0 && beta != -1)) fail("--beta: must be ≥ 0, got {}", beta);
}

namespace {
bool regression_or_image(const std::vector<SimulationExample>& examples) {
  if (examples.empty()) fail("smat: no examples");
  return examples[0].teacher_value.has_value() || examples[0].image.defined();
}
}  // namespace

int student_patience(const StudentOptions& o, const std::vector<SimulationExample>& examples) {
  return o.patience > 0 ? o.patience : regression_or_image(examples) ? 5 : 10;
}

double meta_learning_rate(const StudentOptions& o, const std::vector<SimulationExample>& examples) {
  if (o.meta_lr > 0) return o.meta_lr;
  if (examples.empty()) fail("smat: no examples");
  return examples[0].teacher_value.has_value() ? 2e-4 : 5e-4;
}

nlohmann::json StudentRun::to_json() const {
  auto vec = [](const torch::Tensor& t) { return t.defined() ? nlohmann::json(tensor_values(t)) : nlohmann::json(nullptr); };
  return {{"simulability", simulability},
          {"valid_loss", valid_loss},
          {"valid_simulability", valid_simulability},
          {"best_epoch", best_epoch},
          {"epochs", epochs},
          {"steps", steps},
          {"meta_steps", meta_steps},
          {"seconds", seconds},
          {"student_step_seconds", student_step_seconds},
          {"meta_step_seconds", meta_step_seconds},
          {"teacher_coefficient_logits", vec(teacher_coefficient_logits)},
          {"student_coefficient_logits", vec(student_coefficient_logits)},
          {"history", history}};
}

torch::Tensor uniform_coefficient_logits(int64_t count) { return torch::full({count}, 1.0 / static_cast<double>(count)); }

std::pair<double, double> simulation_loss_and_accuracy(const Transformer& model, int64_t pad_id,
                                                       const std::vector<SimulationExample>& examples,
                                                       int64_t batch_size) {
  if (examples.empty()) fail("smat: an empty evaluation set");
  torch::NoGradGuard no_grad;
  double loss = 0;
  int64_t correct = 0;
  std::vector<double> student_values, teacher_values;
  for (size_t b = 0; b < examples.size(); b += batch_size) {
    std::vector<size_t> idx(std::min(examples.size() - b, static_cast<size_t>(batch_size)));
    std::iota(idx.begin(), idx.end(), b);
    SimulationBatch sb = make_simulation_batch(examples, idx, pad_id, model.device());
    torch::Tensor logits = batch_logits(model, sb.batch);
    if (sb.teacher_values.defined()) {
      const std::vector<double> out = tensor_values(logits.select(1, 0)), target = tensor_values(sb.teacher_values);
      for (size_t i = 0; i < out.size(); ++i) loss += (out[i] - target[i]) * (out[i] - target[i]);
      student_values.insert(student_values.end(), out.begin(), out.end());
      teacher_values.insert(teacher_values.end(), target.begin(), target.end());
      continue;
    }
    loss += torch::cross_entropy_loss(logits, sb.teacher_labels, {}, at::Reduction::Sum).item<double>();
    correct += logits.argmax(-1).eq(sb.teacher_labels).sum().item<int64_t>();
  }
  const double n = static_cast<double>(examples.size());
  if (!teacher_values.empty()) return {loss / n, pearson(teacher_values, student_values)};
  return {loss / n, static_cast<double>(correct) / n};
}

StudentRun run_student(const Transformer& student_init, int64_t pad_id, const std::vector<SimulationExample>& train,
                       const std::vector<SimulationExample>& valid, const std::vector<SimulationExample>& test,
                       const StudentOptions& o, const torch::Tensor& teacher_coefficients_in, bool meta_train,
                       Transformer* kept_student) {
  o.validate();
  // The family of a registered method decides its default β (default_beta(name)): the caller says.
  if (o.explainer == TeacherExplainer::Registered && o.beta < 0)
    fail("smat: a registered explainer needs its β (default_beta(name): 5 attention family, 0.2 other)");
  if (train.empty()) fail("smat: no student training examples");
  if (valid.empty()) fail("smat: no validation examples");
  if (test.empty()) fail("smat: no test examples");
  const bool smat = o.explainer == TeacherExplainer::Smat;
  if (smat && !teacher_coefficients_in.defined()) fail("smat: explainer 'smat' needs the teacher's coefficients");
  if (meta_train && !smat) fail("smat: meta-training needs explainer 'smat', got '{}'", teacher_explainer_name(o.explainer));
  if (smat && teacher_coefficients_in.numel() != train[0].head_scores.size(0))
    fail("smat: {} teacher coefficients for {} teacher heads", teacher_coefficients_in.numel(), train[0].head_scores.size(0));
  if (!smat && o.explainer != TeacherExplainer::None && !train[0].explanation.defined())
    fail("smat: the training examples carry no '{}' explanations (annotate with that explainer)",
         teacher_explainer_name(o.explainer));
  // No explainer: simulation only, whatever β says.
  const double beta = o.explainer == TeacherExplainer::None ? 0.0 : o.beta < 0 ? default_beta(o.explainer) : o.beta;
  // β = 0 leaves the teacher's coefficients out of the student's loss: nothing to meta-learn.
  if (meta_train && !(beta > 0)) fail("--beta: SMaT meta-training needs β > 0, got {}", beta);
  // The student learns what the teacher outputs: one value for a regression teacher, classes otherwise.
  const bool regression = train[0].teacher_value.has_value();
  if (regression != (student_init.config().num_labels == 1))
    fail("smat: the student has {} outputs but the teacher is a {} model", student_init.config().num_labels,
         regression ? "regression (one-output)" : "classification");
  const int patience = student_patience(o, train);
  const auto start = std::chrono::steady_clock::now();

  torch::manual_seed(o.seed);
  Student s{student_init.clone(), {}, student_layers(student_init, o.explainer)};
  const int64_t student_heads = s.layers.empty() ? s.model.num_layers() * s.model.num_heads() : s.model.num_heads();
  s.model.set_requires_grad(true);
  s.coefficient_logits = uniform_coefficient_logits(student_heads).to(s.model.device()).requires_grad_(true);
  const std::vector<torch::Tensor> params = student_parameters(s);
  StudentOptimizer optimizer({o.optimizer, o.lr, o.weight_decay, o.clip_norm}, params);

  torch::Tensor teacher_coefficients;
  std::unique_ptr<torch::optim::AdamW> meta_optimizer;
  if (smat) {
    teacher_coefficients = teacher_coefficients_in.detach().clone().to(s.model.device(), torch::kFloat32);
    if (meta_train) {
      teacher_coefficients.requires_grad_(true);
      meta_optimizer = make_adamw({{"teacher.coefficients", teacher_coefficients}}, meta_learning_rate(o, train), 0.0);
    }
  }
  const torch::Tensor no_coefficients;
  const torch::Tensor& teacher_for_loss = (smat && beta > 0) ? teacher_coefficients : no_coefficients;

  StudentRun run;
  double best = std::numeric_limits<double>::infinity();
  std::map<std::string, torch::Tensor> best_weights;
  torch::Tensor best_teacher, best_student;
  int since_best = 0;
  double student_seconds = 0, meta_seconds = 0;
  size_t valid_cursor = 0;
  std::vector<size_t> valid_order(valid.size());
  std::iota(valid_order.begin(), valid_order.end(), 0);
  std::mt19937_64 valid_rng(o.seed ^ 0x51a7ULL);
  std::shuffle(valid_order.begin(), valid_order.end(), valid_rng);
  const int64_t batches_per_epoch = (static_cast<int64_t>(train.size()) + o.batch_size - 1) / o.batch_size;
  Progress bar(fmt::format("student {}{}", teacher_explainer_name(o.explainer), meta_train ? " (meta)" : ""),
               static_cast<int64_t>(o.max_epochs) * batches_per_epoch, "step");
  for (int epoch = 1; epoch <= o.max_epochs; ++epoch) {
    std::mt19937_64 rng(o.seed * 1000003ULL + static_cast<uint64_t>(epoch));
    std::vector<size_t> order(train.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    double train_loss = 0;
    s.model.train();
    for (size_t b = 0; b < order.size(); b += static_cast<size_t>(o.batch_size)) {
      std::vector<size_t> idx(order.begin() + b, order.begin() + std::min(order.size(), b + static_cast<size_t>(o.batch_size)));
      SimulationBatch sb = make_simulation_batch(train, idx, pad_id, s.model.device());
      auto t0 = std::chrono::steady_clock::now();
      torch::Tensor loss = student_loss(s, sb, teacher_for_loss.defined() ? teacher_for_loss.detach() : teacher_for_loss,
                                        o.normalizer, beta);
      optimizer.step(params, torch::autograd::grad({loss}, params, {}, false, false, /*allow_unused=*/true));
      student_seconds += seconds_since(t0);
      train_loss += loss.item<double>() * static_cast<double>(idx.size());
      ++run.steps;
      if (meta_train) {
        // The authors' order: the student steps first, then the explainer is updated through a
        // pilot step of the updated student on the same batch, scored on a validation batch.
        auto t1 = std::chrono::steady_clock::now();
        std::vector<size_t> vidx;
        for (int64_t k = 0; k < o.batch_size; ++k) {
          vidx.push_back(valid_order[valid_cursor]);
          if (++valid_cursor == valid_order.size()) {
            valid_cursor = 0;
            std::shuffle(valid_order.begin(), valid_order.end(), valid_rng);
          }
        }
        SimulationBatch vb = make_simulation_batch(valid, vidx, pad_id, s.model.device());
        meta_optimizer->zero_grad();
        torch::Tensor m = meta_loss(s, sb, vb, teacher_coefficients, o.normalizer, beta, optimizer);
        torch::Tensor g = torch::autograd::grad({m}, {teacher_coefficients}, {}, false, false, true)[0];
        if (g.defined()) {
          g = g.detach();
          // optax.clip_by_global_norm(clip) of the authors' metaoptimizer (one tensor: its own norm).
          if (o.clip_norm > 0) {
            const torch::Tensor norm = g.norm();
            g = torch::where(norm < o.clip_norm, g, g * (o.clip_norm / norm));
          }
          teacher_coefficients.mutable_grad() = g;
        }
        meta_optimizer->step();
        meta_seconds += seconds_since(t1);
        ++run.meta_steps;
      }
      bar.update(1, fmt::format("epoch {} loss {:.3f}", epoch, loss.item<double>()));
    }
    s.model.eval();
    const auto [valid_loss, valid_accuracy] = simulation_loss_and_accuracy(s.model, pad_id, valid);
    run.history.push_back({{"epoch", epoch},
                           {"train_loss", train_loss / static_cast<double>(train.size())},
                           {"valid_loss", valid_loss},
                           {"valid_simulability", valid_accuracy}});
    run.epochs = epoch;
    // Lower is better: the loss, or minus the accuracy (the authors' code selects by accuracy).
    const double criterion = o.select_by_accuracy ? -valid_accuracy : valid_loss;
    if (criterion < best) {
      best = criterion;
      run.valid_loss = valid_loss;
      run.valid_simulability = valid_accuracy;
      run.best_epoch = epoch;
      since_best = 0;
      best_weights.clear();
      for (const auto& [name, t] : s.model.weights()) best_weights[name] = t.detach().clone();
      best_student = s.coefficient_logits.detach().clone();
      if (smat) best_teacher = teacher_coefficients.detach().clone();
    } else if (++since_best > patience) {
      break;
    }
  }
  bar.finish(fmt::format("best epoch {}", run.best_epoch));
  if (run.best_epoch == 0)
    fail("smat: the student's validation {} was never a number (the run diverged; try a smaller --lr)",
         o.select_by_accuracy ? "simulability" : "loss");
  Transformer best_model = s.model.clone();
  best_model.set_weights(std::move(best_weights));
  best_model.set_requires_grad(false);
  best_model.eval();
  run.simulability = simulation_loss_and_accuracy(best_model, pad_id, test).second;
  if (kept_student) *kept_student = best_model;
  run.student_coefficient_logits = best_student.cpu();
  if (smat) run.teacher_coefficient_logits = best_teacher.cpu();
  run.seconds = seconds_since(start);
  run.student_step_seconds = student_seconds / static_cast<double>(std::max<int64_t>(run.steps, 1));
  run.meta_step_seconds = meta_seconds / static_cast<double>(std::max<int64_t>(run.meta_steps, 1));
  return run;
}

}  // namespace salient::smat
