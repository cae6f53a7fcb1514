#pragma once
// Internal to src/explain: the factories the registry lists, and small helpers the methods share.
#include <limits>
#include <memory>
#include <optional>
#include <random>

#include <torch/torch.h>

#include "explain/explainer.h"

namespace salient::explain {

// Each method's registry entry (name, family, summary, parameters, factory), defined next to its
// class; registry.inc lists them, one line each, in the order of salient explain --list.
#define SALIENT_EXPLAINER(id) ExplainerInfo id##_info();
#include "explain/registry.inc"
#undef SALIENT_EXPLAINER

// Parameter declarations for the registry entries.
constexpr double kInf = std::numeric_limits<double>::infinity();
ParamSpec int_param(std::string name, nlohmann::json def, double min, double max, std::string doc);
ParamSpec number_param(std::string name, double def, double min, double max, std::string doc);
ParamSpec choice_param(std::string name, std::string def, std::vector<std::string> choices, std::string doc);
ParamSpec string_param(std::string name, nlohmann::json def, std::string doc);
ParamSpec auto_int_param(std::string name, nlohmann::json def, double min, double max, std::string doc);  // or "auto"
ParamSpec path_param(std::string name, nlohmann::json def, std::string doc);  // a string naming a file (ParamSpec::path)
ParamSpec removal_param();      // --removal mask | delete
ParamSpec start_layer_param();  // --start-layer (rollouts)
// The start_layer parameter, checked against the model's number of layers.
int64_t start_layer(const ExplainOptions& o, size_t layers);

// Logits without the work the classifier never reads: the head sees only the last layer's [CLS]
// state, so the last layer runs for [CLS] alone (Transformer::first_token_layer, which never forms
// keys and values). Same values as Transformer::forward up to rounding; about 2x less work for a
// 2-layer model. Used by IG, saliency, gradient × input and all perturbation scoring.
torch::Tensor cls_logits(const Transformer& m, const torch::Tensor& ids, const torch::Tensor& types,
                         const torch::Tensor& mask, const torch::Tensor& inputs_embeds = {});
// The same from the embedding layer's output h [B, L, Hd] (HF's hidden_states[0]).
torch::Tensor cls_logits_from_embedding_output(const Transformer& m, torch::Tensor h, const torch::Tensor& mask);

// Attention rollout as Chefer et al.'s compute_rollout_attention: Â_l = map_l + I with rows
// renormalised, multiplied from layer `start` upwards; returns the [CLS] rows [B, L].
// Used by `rollout` (head-mean attention maps) and `transformer_attribution` (relevance maps).
torch::Tensor rollout(const std::vector<torch::Tensor>& maps, int64_t start);

// The explained output of each row: softmax probability or logit of targets[b]. [B]
torch::Tensor target_output(const torch::Tensor& logits, const torch::Tensor& targets, ModelOutput output);
torch::Tensor targets_tensor(const std::vector<int64_t>& targets);

// Method parameters from ExplainOptions::params, which Explainer::explain has checked against the
// method's declarations and completed with their defaults; the optional forms are for parameters
// declared without a default.
int64_t param_int(const ExplainOptions& o, const std::string& name);
double param_double(const ExplainOptions& o, const std::string& name);
std::string param_string(const ExplainOptions& o, const std::string& name);
std::optional<int64_t> optional_param_int(const ExplainOptions& o, const std::string& name);
std::optional<std::string> optional_param_string(const ExplainOptions& o, const std::string& name);

// A generator seeded from the run seed and the example's token ids, so an example gets the same
// random numbers whatever batch it is explained in.
std::mt19937_64 example_rng(uint64_t seed, const Encoding& enc);

// Scores of row b of a [B, L] tensor, cropped to `length`.
std::vector<double> row_scores(const torch::Tensor& t, int64_t b, int64_t length);

// The surrogate fits of lime and kernel_shap, given coalitions z (row 0: LIME's input itself;
// KernelSHAP's rows 0 and 1: the empty and the full coalition) and the model's values v on them.
// lime_fit: lime's weighted ridge (α = 1, intercept) with its exponential kernel on the cosine
// distance. kernel_shap_fit: Shapley-kernel weighted least squares under Σφ = v(1) − v(0), with the
// kernel weights (exact enumeration) or equal weights (rows sampled by the kernel).
std::vector<double> lime_fit(const std::vector<std::vector<int>>& z, const std::vector<double>& v, double kernel_width,
                             double* intercept);
std::vector<double> kernel_shap_fit(const std::vector<std::vector<int>>& z, const std::vector<double>& v, bool exact);

void check_inputs(const std::vector<const Encoding*>& inputs, const std::vector<int64_t>& targets, int64_t num_labels);

}  // namespace salient::explain
