#include "explain/attention/attention_explainer.h"

#include <algorithm>
#include <optional>

namespace salient::explain {

AttentionPass run_pass(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                       const std::vector<int64_t>& targets, ModelOutput output, bool with_grad, bool with_hidden) {
  AttentionPass p;
  p.batch = make_batch(inputs, clf.tokenizer.pad_id(), clf.model.device());
  ForwardRequest req;
  // Weights need not require grad: the graph hangs off the word embeddings.
  req.inputs_embeds = clf.model.word_embeddings(p.batch.input_ids).detach().requires_grad_(with_grad);
  req.token_type_ids = p.batch.token_type_ids;
  req.attention_mask = p.batch.attention_mask;
  req.want_attentions = true;
  req.want_hidden_states = with_hidden;
  std::optional<torch::NoGradGuard> no_grad;
  if (!with_grad) no_grad.emplace();
  ForwardResult r = clf.model.forward(req);
  const size_t n = r.attentions.size();
  for (const auto& a : r.attentions) p.attn.push_back(a.detach());
  // hidden_states[l] is layer l's input for l < n (hidden_states[n] is the encoder output).
  if (with_hidden)
    for (size_t l = 0; l < n; ++l) p.hidden.push_back(r.hidden_states[l].detach());
  if (with_grad) {
    torch::Tensor f = target_output(r.logits, targets_tensor(targets).to(r.logits.device()), output).sum();
    std::vector<torch::Tensor> wrt(r.attentions.begin(), r.attentions.end());
    if (with_hidden) wrt.insert(wrt.end(), r.hidden_states.begin(), r.hidden_states.begin() + n);
    // The last layer's output only reaches the classifier through [CLS]; allow unused paths.
    auto g = torch::autograd::grad({f}, wrt, {}, false, false, /*allow_unused=*/true);
    for (size_t i = 0; i < g.size(); ++i) {
      torch::Tensor gi = g[i].defined() ? g[i] : torch::zeros_like(wrt[i]);
      (i < n ? p.attn_grad : p.hidden_grad).push_back(gi.detach());
    }
  }
  return p;
}

std::vector<Explanation> AttentionExplainer::compute(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                                   const std::vector<int64_t>& targets, const ExplainOptions& o) {
  check_inputs(inputs, targets, clf.model.config().num_labels);
  std::vector<Explanation> out;
  for (const auto& [s, e] : passes_in_order(inputs, o.limits())) {
    std::vector<const Encoding*> part(inputs.begin() + s, inputs.begin() + e);
    std::vector<int64_t> part_targets(targets.begin() + s, targets.begin() + e);
    AttentionPass p = run_pass(clf, part, part_targets, output_of(o), with_grad_, with_hidden_);
    torch::NoGradGuard no_grad;
    torch::Tensor scores = compute(p, o);  // [B, L]
    for (size_t b = 0; b < part.size(); ++b)
      out.push_back({name_, part_targets[b], row_scores(scores, b, p.batch.lengths[b]), nlohmann::json::object()});
  }
  return out;
}

}  // namespace salient::explain
