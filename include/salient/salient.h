#pragma once
// salient's public API: the one entry point the CLI, the Python bindings and the web viewer share.
// Load a model directory (any supported family, Hugging Face layout), tokenize, predict, explain by
// method name with parameters checked against the explainer registry, and evaluate on a dataset.
// Everything below is a thin layer over the library (src/): errors are salient::Error with a
// one-line message naming the argument or file. This header and the ones it includes need no
// header of src/ (scripts/check_includes.sh).
#include <cstdint>
#include <memory>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/types.h>

#include "salient/dataset.h"
#include "salient/encoding.h"
#include "salient/error.h"
#include "salient/explanation.h"
#include "salient/load_options.h"
#include "salient/methods.h"

namespace salient {

// The library's own types, for callers that also use src/'s headers.
struct Classifier;
struct ModelConfig;

// What a loaded model is: its family and shape and its labels (`salient info` shows more).
struct ModelInfo {
  std::string model_type;             // bert | roberta | electra | distilbert | vit
  int64_t layers = 0, heads = 0, hidden_size = 0;
  int64_t max_tokens = 0;             // the longest input it reads ([CLS] and [SEP] included)
  std::vector<std::string> labels;    // labels() (a base encoder's config names them too)
};

// Bytes of memory: the weights, held once per loaded model, and the most one request's tensors
// hold at once beyond them (Model::memory_estimate).
struct MemoryEstimate {
  int64_t weight_bytes = 0;
  int64_t request_bytes = 0;
  nlohmann::json to_json() const { return {{"weight_bytes", weight_bytes}, {"request_bytes", request_bytes}}; }
};

// One input: a text (and optionally its pair), as a person types it.
struct TextInput {
  std::string text;
  std::optional<std::string> text_pair;
};

// How an input longer than the model's positions is read: cut at the limit (the default;
// Prediction::truncated says so), or whole, as overlapping windows of the model's length `stride`
// word pieces apart (0: half a window; model/windows.h): the windows' logits are averaged into the
// input's, and token scores averaged where windows overlap. One text, not sentence pairs.
struct LongInputs {
  bool windows = false;
  int64_t stride = 0;
};

struct Prediction {
  int64_t label_id = -1;             // classification: the argmax
  std::string label;
  std::vector<double> logits, probs;
  std::optional<double> value;       // a regression model (one output): its value; no label
  bool truncated = false;            // the input was cut to the model's length limit
  int64_t windows = 0;               // read as this many windows (LongInputs::windows), else 0
  nlohmann::json to_json() const;    // the fields `salient predict` writes
};

// Self-Attention Attribution's settings (docs/attattr.md): layers (empty: all), integration points
// m and rule (riemann_left, the authors', ..., gausslegendre), memory bound per chunk of points.
struct AttAttrOptions {
  std::vector<int64_t> layers;
  int m = 20;
  std::string rule = "left";
  double max_batch_mb = 2048;
};

// What the encoder computes for a batch of inputs, as Hugging Face's output_hidden_states and
// output_attentions give it: CPU float32 tensors padded to the longest input (attention_mask: 1 for
// a token, 0 for padding).
struct ForwardOutputs {
  torch::Tensor input_ids, token_type_ids, attention_mask;  // [B, L] int64
  torch::Tensor logits;                                     // [B, C]; undefined for a base encoder
  std::vector<torch::Tensor> hidden_states;  // num_layers + 1 of [B, L, Hd]: embeddings, then each layer
  std::vector<torch::Tensor> attentions;     // num_layers of [B, H, L, L] (rows: queries)
};

class Model {
 public:
  // One-line error for a directory that is not a model (or is a ViT: see vision/vit.h). A checkpoint
  // without a classification head (a base encoder: HF BertModel, a sentence-transformers folder)
  // loads too: forward(), tokenize() and attentions() read it; what needs the head (predict,
  // explain, evaluate, attattr, faithfulness) is a one-line error saying to fine-tune it first.
  static Model load(const std::string& dir, const LoadOptions& options = {});
  explicit Model(Classifier classifier);
  bool has_task_head() const { return has_task_head_; }

  const Classifier& classifier() const { return *clf_; }
  const ModelConfig& config() const;
  std::vector<std::string> labels() const;
  ModelInfo info() const;
  nlohmann::json config_json() const;  // its config.json, Hugging Face's field names

  // max_length 0: the model's limit.
  Encoding tokenize(const TextInput& input, int max_length = 0) const;
  // The tokens a call with these LongInputs reads: with windows, the whole text, untruncated (what
  // a windowed explanation's scores and faithfulness() cover); else tokenize(input).
  Encoding tokenize(const TextInput& input, const LongInputs& long_inputs) const;
  std::vector<Prediction> predict(const std::vector<Encoding>& inputs, int64_t batch_size = 32) const;
  std::vector<Prediction> predict(const std::vector<TextInput>& inputs, int64_t batch_size = 32,
                                  const LongInputs& long_inputs = {}) const;

  // One Explanation per input (to_json(): the schema, docs/explanation.schema.json). `method` is a
  // registered name (methods()); `params` its parameters by name (unknown names and out-of-range
  // values are errors); `target` "pred" or a label index or name; `output` "prob", "logit" or empty
  // (the method's default). max_batch_tokens bounds each internal forward pass to that many token
  // positions (rows × padded length), so memory; the results do not depend on it.
  std::vector<Explanation> explain(const std::vector<TextInput>& inputs, const std::string& method,
                                      const nlohmann::json& params = nlohmann::json::object(),
                                      const std::string& target = "pred", const std::string& output = "",
                                      int64_t batch_size = 8, uint64_t seed = 0, const LongInputs& long_inputs = {},
                                      int64_t max_batch_tokens = 4096) const;

  // Memory one explain call on one input of `tokens` word pieces needs, known before it runs
  // (explain/memory.h): the bytes its tensors hold at most at once, from the model's shape, the
  // method's passes and the token budget; the weights, held once, apart. An upper bound checked
  // against an exact count (bench/bench_memory.cpp, tests).
  MemoryEstimate memory_estimate(int64_t tokens, const std::string& method,
                                 const nlohmann::json& params = nlohmann::json::object(),
                                 int64_t max_batch_tokens = 4096) const;
  // The same for the other calls on one input of `tokens` word pieces, in bytes beyond the weights:
  // predict (one forward pass); attentions() (every layer's maps kept, and the nested vectors it
  // returns); faithfulness() (passes of perturbed inputs at the library's default limits);
  // attattr() with these options on every layer (the largest chunk of points, each layer's
  // attention, attribution and gradient kept, and the JSON).
  int64_t weight_bytes() const;  // the weights, held once whatever the requests
  // memory_estimate's request_bytes of every post-hoc method with its default parameters, by name.
  std::map<std::string, int64_t> memory_estimates(int64_t tokens, int64_t max_batch_tokens = 4096) const;
  int64_t predict_memory(int64_t tokens) const;
  int64_t attentions_memory(int64_t tokens) const;
  int64_t faithfulness_memory(int64_t tokens) const;
  int64_t attattr_memory(int64_t tokens, const AttAttrOptions& options = {}) const;

  // Faithfulness of token scores (one per token of tokenize(input)) for the class `target`:
  // comprehensiveness and sufficiency of the top k removable tokens (k <= 0: ceil(20%), ERASER),
  // their AOPCs and the deletion / insertion AUCs (eval/faithfulness.h), measured on the
  // probability ("prob", ERASER's) or the logit; removal by [MASK] ("mask") or deletion ("delete").
  // With windows (LongInputs), the scores cover tokenize(input, long_inputs), the whole text, and
  // every perturbed input is scored whole, as predict reads it (its windows' mean logits).
  // aopc_bins: "deciles" (AOPC over 10%, 20%, …, 100% of the tokens, the benchmark's, and the
  // curves at 5% steps: 43 distinct passes at most) or "eraser" (AOPC over ERASER's bins 1%, 5%,
  // 10%, 20%, 50%, no curves: 13 at most; the server's default, for one input at a time). Either
  // way AOPC is the mean over the bins that hold a token (k = ⌊f·n⌋ > 0: ERASER's 1% bin needs 100
  // removable tokens), null when none does.
  nlohmann::json faithfulness(const TextInput& input, const std::vector<double>& token_scores, int64_t target,
                              const std::string& output = "prob", int64_t k = 0, const std::string& removal = "mask",
                              const LongInputs& long_inputs = {}, const std::string& aopc_bins = "deciles") const;

  // The embeddings' and every layer's hidden states and attention probabilities (each optional) and
  // the logits (a model with a head), batched `batch_size` inputs at a time, results concatenated
  // (padded to the longest input overall).
  ForwardOutputs forward(const std::vector<Encoding>& inputs, bool hidden_states = true, bool attentions = true,
                         int64_t batch_size = 32) const;

  // The attention probabilities of every layer for one input: [layers][heads][L][L] (rows: query).
  std::vector<std::vector<std::vector<std::vector<double>>>> attentions(const TextInput& input) const;

  // Self-Attention Attribution of one input for `target` ("pred", a class index or a label name):
  // `salient attattr attribute`'s JSON (per layer [heads][L][L], completeness, head importance,
  // token and word flows).
  // `tree` (optional): also the attribution tree at `tau`, from the same attribution (the options
  // must then cover every layer).
  nlohmann::json attattr(const TextInput& input, const std::string& target = "pred", const AttAttrOptions& options = {},
                         nlohmann::json* tree = nullptr, double tau = 0.4) const;
  // Its attribution tree (`salient attattr tree`'s JSON): edges above tau·max per layer.
  nlohmann::json attattr_tree(const TextInput& input, const std::string& target = "pred", double tau = 0.4,
                              const AttAttrOptions& options = {}) const;
  // Head importance orderings (attattr, attention, Taylor, random; [layers][heads]) over the first
  // `limit` records of a labelled dataset spec, for the gold or the predicted class.
  nlohmann::json attattr_heads(const std::string& data, int64_t limit = 200, const std::string& target = "gold",
                               const AttAttrOptions& options = {}, const std::string& data_dir = "", uint64_t seed = 0) const;
  // Pruning curves of those orderings (`salient attattr prune`'s JSON): heads removed lowest score
  // first at `steps` + 1 fractions, accuracy on the whole `eval_data`; layer >= 0: also the top-k
  // heads of that layer. `head_scores`: attattr_heads' JSON, or null to compute it here from
  // `data`, `limit`, `target`, `options` and `seed`.
  nlohmann::json attattr_prune(const std::string& eval_data = "sst2:dev", const nlohmann::json& head_scores = nullptr,
                               int steps = 10, int64_t layer = -1, const std::string& data = "sst2:dev",
                               int64_t limit = 200, const std::string& target = "gold", const AttAttrOptions& options = {},
                               const std::string& data_dir = "", uint64_t seed = 0) const;

  // Accuracy, macro-F1 and MCC (classification) or Pearson and MSE (regression) on a dataset spec
  // (sst2:test, a CSV/JSONL file, ...; docs/datasets.md). data_dir empty: the shared data.
  nlohmann::json evaluate(const std::string& spec, const std::string& data_dir = "", int64_t batch_size = 64,
                          int64_t max_length = 0, const LongInputs& long_inputs = {}) const;
  nlohmann::json evaluate(const Dataset& data, int64_t batch_size = 64, int64_t max_length = 0,
                          const LongInputs& long_inputs = {}) const;

 private:
  void require_task_head() const;  // the one-line error for a base encoder
  std::shared_ptr<const Classifier> clf_;  // shared by copies: a Model's methods do not change it
  bool has_task_head_ = true;
};

// Every registered explainer: name, family, summary and parameters (ParamSpec).
const std::vector<ExplainerInfo>& methods();
// Checks a method call before running it, as Model::explain would: the name is registered, the
// parameters are ones it declares with valid values, `output` is "prob", "logit" or empty. Throws
// the same one-line salient::Error Model::explain would.
void check_method_call(const std::string& method, const nlohmann::json& params, const std::string& output = "");

// An attribution tree (Model::attattr_tree's JSON) drawn as a standalone SVG document.
std::string attattr_tree_svg(const nlohmann::json& tree);
// One of them as JSON, what GET /api/methods and salient.methods() show: name, family, summary,
// default_output ("" for methods that read no model output) and params [{name, type, default,
// min, max (null when unbounded), choices, doc, describe}].
nlohmann::json method_json(const ExplainerInfo& info);

}  // namespace salient
