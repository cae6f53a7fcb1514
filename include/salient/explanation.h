#pragma once
// One explanation of one input, typed: what every salient command that explains tokens writes as
// one JSON object (docs/explanation.schema.json, to_json()) and what Model::explain returns. The
// explainers (src/explain) fill method, target, scores, extras, params and output; the rest
// (tokens, words, labels) is filled from the input and the model.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace salient {

// What the explained model outputs: the target class's softmax probability, or its logit.
enum class ModelOutput { Probability, Logit };

struct Explanation {
  // What the explainer fills (in this order, so that explainers can brace-initialise the first four).
  std::string method;                                  // the registered explainer's name
  int64_t target = -1;                                 // the class explained
  std::vector<double> scores;                          // one per token
  nlohmann::json extras = nlohmann::json::object();    // method-specific values, e.g. IG's "delta"
  nlohmann::json params = nlohmann::json::object();    // its parameters as used, defaults included
  std::optional<ModelOutput> output;                   // unset for methods that read no model output
  // What the input and the model add.
  std::string target_label;                            // the target's label name
  std::vector<std::string> tokens;                     // the model's tokens, [CLS] and [SEP] included
  // The input text's whitespace words and one score per word (the sum of its pieces' scores);
  // unset when the input came without its text (salient benchmark's results.jsonl).
  std::optional<std::vector<std::string>> words;
  std::optional<std::vector<double>> word_scores;
  bool truncated = false;                              // the input was cut to the model's length
  nlohmann::json id;                                   // the input's id when it had one, else null

  // The schema's object, key for key what `salient explain` writes.
  nlohmann::json to_json() const;
  // Back from that object; a missing or mistyped field is a one-line salient::Error naming it.
  // Fields outside the explanation (benchmark's index, label, metrics) are ignored.
  static Explanation from_json(const nlohmann::json& j);
};

}  // namespace salient
