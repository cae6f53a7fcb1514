#pragma once
// One interface for every post-hoc explainer: explain a batch of encoded inputs for target
// classes → one score per token ([CLS]/[SEP] included) plus method extras. Methods are created
// by name from a registry (registry.inc lists them explicitly, read by explainer.cpp:
// static-initialiser registration would be dropped by the linker from a static library).
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/faithfulness.h"
#include "model/classifier.h"
#include "salient/explanation.h"
#include "salient/methods.h"

namespace salient {

// ModelOutput (the target's probability or logit) and Explanation are public: salient/explanation.h.
ModelOutput parse_model_output(const std::string& name);  // "prob" | "logit"
std::string model_output_name(ModelOutput output);         // the same names

// What one internal forward pass may hold: at most `rows` rows and `tokens` token positions (rows ×
// the padded length). Memory grows with both; with the length bounded by the model's positions the
// token budget bounds the attention's rows × heads × length² as well (docs/PERFORMANCE.md).
struct BatchLimits {
  int64_t rows = 64;
  int64_t tokens = 4096;
};
// Rows of padded length `length` one pass may hold: at least 1.
int64_t rows_per_pass(const BatchLimits& limits, int64_t length);
// Consecutive runs [begin, end) of `lengths` (in their order), each padded to its longest, that fit
// the limits: the inputs of one pass each.
std::vector<std::pair<size_t, size_t>> passes_in_order(const std::vector<int64_t>& lengths, const BatchLimits& limits);
// Indices of `inputs`, shortest first (stable): batches taken in this order pad little.
std::vector<size_t> shortest_first(const std::vector<const Encoding*>& inputs);
std::vector<std::pair<size_t, size_t>> passes_in_order(const std::vector<const Encoding*>& inputs,
                                                       const BatchLimits& limits);

struct ExplainOptions {
  // The explained model output; unset = the method's own default (Explainer::default_output()).
  std::optional<ModelOutput> output;
  uint64_t seed = 0;
  // Upper bounds on one internal forward pass (IG points, perturbations, inputs): rows, and token
  // positions (rows × padded length). They bound memory; results do not depend on them.
  int64_t internal_batch = 64;
  int64_t max_batch_tokens = BatchLimits().tokens;
  BatchLimits limits() const { return {internal_batch, max_batch_tokens}; }
  // Method parameters by name (steps, rule, samples...): each method declares the ones it takes
  // (ExplainerInfo::params); Explainer::explain rejects others and fills in the defaults.
  nlohmann::json params = nlohmann::json::object();
};

// A parameter's command-line flag: --name with '_' written '-'.
std::string param_flag(const std::string& name);

class Explainer {
 public:
  virtual ~Explainer() = default;
  virtual std::string name() const = 0;
  // What the method explains unless ExplainOptions::output says otherwise: the target's softmax
  // probability, or for the gradient-weighted attention methods its logit, as their authors' code
  // back-propagates (one_hot · logits in Chefer et al.'s, Mask-LRP's and AttCAT's code): their
  // identity terms and row renormalisations make the p(1 − p) factor of the probability change
  // their rankings.
  virtual ModelOutput default_output() const { return ModelOutput::Probability; }
  ModelOutput output_of(const ExplainOptions& o) const { return o.output.value_or(default_output()); }
  // False for methods that read no model output (attention maps, random scores, ExpNet).
  virtual bool uses_model_output() const { return true; }
  // targets[i] is the class explained for inputs[i] (callers resolve "predicted" beforehand).
  // options.params is checked against the parameters the method declares (an unknown name, a
  // wrong type, a value out of range or not among the choices is a one-line error naming the
  // flag) and completed with their defaults before the method runs.
  std::vector<Explanation> explain(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                   const std::vector<int64_t>& targets, const ExplainOptions& options);

 protected:
  virtual std::vector<Explanation> compute(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                           const std::vector<int64_t>& targets, const ExplainOptions& options) = 0;

 private:
  friend std::unique_ptr<Explainer> make_explainer(const std::string& name);
  const ExplainerInfo* info_ = nullptr;
};

// options.params checked against info's declarations and completed with the defaults.
ExplainOptions with_declared_params(const ExplainerInfo& info, const ExplainOptions& options);

const std::vector<ExplainerInfo>& explainer_registry();
std::unique_ptr<Explainer> make_explainer(const std::string& name);  // error lists valid names
const ExplainerInfo& explainer_info(const std::string& name);        // the same error
std::vector<std::string> explainer_names();
// The post-hoc ones (every family but "learned", whose methods need a trained artifact).
std::vector<std::string> post_hoc_explainer_names();

// Predicted class of each input (batched forward).
std::vector<int64_t> predicted_classes(const Classifier& clf, const std::vector<const Encoding*>& inputs);

// Word-level scores through the tokenizer alignment: per whitespace word of `text` (segment 0),
// the sum (or the max, starting from the first piece) of its pieces' scores; structural tokens are
// dropped, and a word without pieces (cut by truncation) gets 0. The one word aggregation of
// every command.
std::vector<double> word_scores(const std::string& text, const Encoding& enc, const std::vector<double>& token_scores,
                                bool use_max = false);

// An explainer's Explanation (method, target, scores, extras, params, output) completed for its
// input: target_label, tokens, and, when the input had text, words and word_scores (the max of
// each word's pieces with word_max); truncated when the input was cut; `id` copied when given.
Explanation complete_explanation(const Classifier& clf, const Encoding& enc, Explanation e,
                                 const std::optional<std::string>& text, bool word_max,
                                 const nlohmann::json& id = nullptr);
// The same in the explanation schema (docs/explanation.schema.json): complete_explanation's to_json().
nlohmann::json explanation_json(const Classifier& clf, const Encoding& enc, const Explanation& e,
                                const std::optional<std::string>& text, bool word_max,
                                const nlohmann::json& id = nullptr);

// Model output for the target class of each sequence (TokenSequence from eval/faithfulness.h),
// evaluated in padded batches within `limits`, without gradients. Used by the perturbation methods
// (occlusion, LIME, KernelSHAP) and to bind the faithfulness metrics.
std::vector<double> score_sequences(const Classifier& clf, const std::vector<TokenSequence>& seqs,
                                    const std::vector<int64_t>& targets, ModelOutput output, const BatchLimits& limits);
// Every class's logit of each sequence, the same batching (identical sequences computed once).
std::vector<std::vector<double>> sequence_logits(const Classifier& clf, const std::vector<TokenSequence>& seqs,
                                                 const BatchLimits& limits);
TokenSequence to_sequence(const Encoding& enc);

// Positions a method may perturb / score as features: every non-special token.
std::vector<bool> removable_positions(const Classifier& clf, const Encoding& enc);

}  // namespace salient
