#include "explain/memory.h"

#include <algorithm>

#include "model/transformer.h"

namespace salient {

namespace {

// What one row keeps, in multiples of two tensor sizes (float32): an attention map over every
// head (heads × L²) and a layer's linear activations (L × (hidden + intermediate)). Fitted to an
// exact count of tensor bytes on MiniLM-L6 at 16-510 tokens (bench/bench_memory.cpp), a forward
// pass holds 2.6 maps and 3 activations; keeping the attentions adds about 0.8 maps per layer; a
// backward pass keeps 1.2 maps and 2.2 activations per layer, Chefer et al.'s methods 2.2 maps.
// The multiples below are those rounded up (LRP's from the fixture model), so that the estimate
// bounds the count (MemoryEstimate.BoundsWhatEveryMethodHolds; docs/PERFORMANCE.md).
struct RowCost {
  double maps, activations;
};

RowCost row_cost(const ModelConfig& c, Footprint::Pass pass) {
  const double layers = static_cast<double>(c.num_hidden_layers);
  // DeBERTa's disentangled attention adds its content-to-position and position-to-content scores.
  const double forward_maps = c.is_deberta() ? 5.25 : 3.25;
  switch (pass) {
    case Footprint::Pass::forward: return {forward_maps, 4.0};
    case Footprint::Pass::attentions: return {forward_maps + layers, 4.0 + layers * 0.25};
    case Footprint::Pass::gradient: return {forward_maps - 2.25 + layers * 1.25, 1.0 + layers * 2.4};
    case Footprint::Pass::attention_gradients: return {forward_maps - 2.25 + layers * 2.25, 1.0 + layers * 2.4};
    case Footprint::Pass::relevance: return {forward_maps - 2.25 + layers * 4.0, 1.0 + layers * 3.0};
  }
  return {forward_maps, 4.0};
}

// Besides the rows: the logits, masks, ids and the allocator's rounding.
constexpr int64_t kFixedBytes = 4 << 20;

}  // namespace

int64_t pass_length(const ModelConfig& c, int64_t tokens) { return std::min(std::max<int64_t>(tokens, 1), c.max_tokens()); }

int64_t weight_bytes(const Transformer& model) {
  int64_t bytes = 0;
  for (const torch::Tensor& p : model.parameters()) bytes += static_cast<int64_t>(p.nbytes());
  return bytes;
}

int64_t pass_bytes(const ModelConfig& c, Footprint::Pass pass, int64_t rows, int64_t tokens) {
  const double L = static_cast<double>(std::max<int64_t>(tokens, 1));
  const double map = static_cast<double>(c.num_attention_heads) * L * L * 4.0;
  const double activation = L * static_cast<double>(c.hidden_size + c.intermediate_size) * 4.0;
  const RowCost r = row_cost(c, pass);
  return kFixedBytes + static_cast<int64_t>(static_cast<double>(rows) * (r.maps * map + r.activations * activation));
}

// The most rows the method makes for one input with these parameters; 0: no bound but the budget.
static int64_t rows_bound(const Footprint& f, const nlohmann::json& params, int64_t tokens) {
  if (f.rows_bound.empty()) return 0;
  if (f.rows_bound == "tokens") return tokens;
  const auto it = params.find(f.rows_bound);
  // The unperturbed input or the baseline may share a pass with them: one row more.
  return it != params.end() && it->is_number_integer() ? it->get<int64_t>() + 1 : 0;
}

int64_t explain_bytes(const ModelConfig& c, const Footprint& f, const nlohmann::json& params, int64_t tokens,
                      const BatchLimits& limits, int64_t inputs) {
  const int64_t L = pass_length(c, tokens);
  BatchLimits passes = limits;
  if (f.token_cap > 0) passes.tokens = std::min(passes.tokens, f.token_cap);
  // Passes on every thread at once hold as many rows as they do together (IG's fused path, which
  // DeBERTa and heads reading every layer do not take).
  if (f.thread_passes && !c.pools_every_layer() && !c.is_deberta())
    passes.tokens = std::min(limits.tokens, passes.tokens * std::max<int64_t>(at::get_num_threads(), 1));
  // Perturbations of one input fill a pass; otherwise the inputs themselves share it.
  int64_t rows = f.fills_budget ? rows_per_pass(passes, L) : std::min(std::max<int64_t>(inputs, 1), rows_per_pass(passes, L));
  if (const int64_t bound = rows_bound(f, params, L); bound > 0) rows = std::min(rows, bound);
  // The prediction pass (one row, forward) ends before the method's passes start.
  return std::max(pass_bytes(c, f.pass, rows, L), pass_bytes(c, Footprint::Pass::forward, 1, L));
}

std::map<std::string, int64_t> explain_bytes_per_method(const ModelConfig& c, int64_t tokens, const BatchLimits& limits) {
  std::map<std::string, int64_t> out;
  const bool lrp_runs = c.lrp_refusal().empty();  // no estimate for a method the model refuses
  for (const ExplainerInfo& info : explainer_registry())
    if (info.family != "learned" && (info.family != "lrp" || lrp_runs))
      out[info.name] = explain_bytes(c, info.footprint, with_declared_params(info, ExplainOptions()).params, tokens, limits);
  return out;
}

}  // namespace salient
