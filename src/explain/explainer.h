#pragma once
// One interface for every post-hoc explainer: explain a batch of encoded inputs for target
// classes → one score per token ([CLS]/[SEP] included) plus method extras. Methods are created
// by name from a registry (registry.cpp lists them explicitly: static-initialiser registration
// would be dropped by the linker from a static library).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/faithfulness.h"
#include "model/classifier.h"

namespace salient {

// What the explained model outputs: softmax probability of the target (default) or its logit.
enum class ModelOutput { Probability, Logit };
ModelOutput parse_model_output(const std::string& name);  // "prob" | "logit"

struct ExplainOptions {
  // The explained model output; unset = the method's own default (Explainer::default_output()).
  std::optional<ModelOutput> output;
  uint64_t seed = 0;
  // Upper bound on rows per internal forward pass (IG points, perturbations...); bounds memory.
  int64_t internal_batch = 64;
  nlohmann::json params = nlohmann::json::object();  // method-specific (steps, rule, baseline, samples...)
};

struct Explanation {
  std::string method;
  int64_t target = -1;
  std::vector<double> scores;  // one per token of the encoding
  nlohmann::json extras = nlohmann::json::object();  // e.g. IG "delta"
};

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
  // targets[i] is the class explained for inputs[i] (callers resolve "predicted" beforehand).
  virtual std::vector<Explanation> explain(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                           const std::vector<int64_t>& targets, const ExplainOptions& options) = 0;
};

struct ExplainerInfo {
  std::string name, summary;
  std::function<std::unique_ptr<Explainer>()> make;
};

const std::vector<ExplainerInfo>& explainer_registry();
std::unique_ptr<Explainer> make_explainer(const std::string& name);  // error lists valid names
std::vector<std::string> explainer_names();

// Predicted class of each input (batched forward).
std::vector<int64_t> predicted_classes(const Classifier& clf, const std::vector<const Encoding*>& inputs);

// Word-level scores through the tokenizer alignment: sum (or max) over the pieces of each
// whitespace word of `text`; special tokens are dropped.
std::vector<double> word_scores(const std::string& text, const Encoding& enc, const std::vector<double>& token_scores,
                                bool use_max = false);

// Model output for the target class of each sequence (TokenSequence from eval/faithfulness.h),
// evaluated in padded batches of at most `batch_size` rows, without gradients. Used by the
// perturbation methods (occlusion, LIME, KernelSHAP) and to bind the faithfulness metrics.
std::vector<double> score_sequences(const Classifier& clf, const std::vector<TokenSequence>& seqs,
                                    const std::vector<int64_t>& targets, ModelOutput output, int64_t batch_size);
TokenSequence to_sequence(const Encoding& enc);

// Positions a method may perturb / score as features: every non-special token.
std::vector<bool> removable_positions(const Classifier& clf, const Encoding& enc);

}  // namespace salient
