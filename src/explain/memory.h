#pragma once
// Memory known before a request runs (issue #88): the most bytes the tensors of one pass or one
// explain call hold at once, from the model's shape, the input's length and the batch limits. The
// counts come from what the encoder keeps alive (memory.cpp) and are checked as upper bounds
// against an exact count of tensor bytes (util/tensor_memory.h) in tests and bench/bench_memory.
#include <cstdint>
#include <map>
#include <string>

#include "explain/explainer.h"
#include "model/config.h"
#include "salient/methods.h"

namespace salient {

class Transformer;

// The length one pass reads for an input of `tokens` word pieces: at least 1, at most the model's
// positions (longer inputs are read in windows of that length).
int64_t pass_length(const ModelConfig& c, int64_t tokens);

// Bytes of the model's weights (held once, whatever the requests).
int64_t weight_bytes(const Transformer& model);

// One pass of `rows` rows of `tokens` token positions.
int64_t pass_bytes(const ModelConfig& c, Footprint::Pass pass, int64_t rows, int64_t tokens);

// One explain call of a method with footprint `f` and (completed) parameters `params` on one
// input of `tokens` word pieces (longer inputs are read in windows of the model's length, one at a
// time), the prediction pass included.
// `inputs` > 1: one call on that many inputs of at most `tokens` word pieces (they share passes).
int64_t explain_bytes(const ModelConfig& c, const Footprint& f, const nlohmann::json& params, int64_t tokens,
                      const BatchLimits& limits, int64_t inputs = 1);

// explain_bytes of every post-hoc method with its default parameters (the learned ones need an
// artifact named per call), by name: what `salient info` and the server's /api/models report.
std::map<std::string, int64_t> explain_bytes_per_method(const ModelConfig& c, int64_t tokens, const BatchLimits& limits);

}  // namespace salient
