#include "explain/gradient/embedding_gradients.h"

namespace salient::explain {

Prepared prepare(const Classifier& clf, const std::vector<const Encoding*>& inputs, const std::vector<int64_t>& targets) {
  check_inputs(inputs, targets, clf.model.config().num_labels);
  Prepared p;
  p.batch = make_batch(inputs, clf.tokenizer.pad_id(), clf.model.device());
  torch::NoGradGuard no_grad;
  p.embeds = clf.model.word_embeddings(p.batch.input_ids).detach();
  p.targets = targets_tensor(targets).to(clf.model.device());
  return p;
}

// ∂F/∂e and F for rows of word embeddings `embeds` (rows are independent).
std::pair<torch::Tensor, torch::Tensor> output_and_grad(const Classifier& clf, torch::Tensor embeds,
                                                        const torch::Tensor& types, const torch::Tensor& mask,
                                                        const torch::Tensor& targets, ModelOutput output) {
  embeds = embeds.detach().requires_grad_(true);
  torch::Tensor f = target_output(cls_logits(clf.model, {}, types, mask, embeds), targets, output);
  torch::Tensor g = torch::autograd::grad({f.sum()}, {embeds})[0];
  return {f.detach(), g};
}

std::vector<Explanation> EmbeddingGradientExplainer::compute(const Classifier& clf,
                                                           const std::vector<const Encoding*>& inputs,
                                                           const std::vector<int64_t>& targets,
                                                           const ExplainOptions& o) {
  Prepared p = prepare(clf, inputs, targets);
  std::vector<Explanation> out;
  const int64_t chunk = std::max<int64_t>(o.internal_batch, 1), B = p.embeds.size(0);
  for (int64_t s = 0; s < B; s += chunk) {
    const int64_t e = std::min(B, s + chunk);
    auto [f, g] = output_and_grad(clf, p.embeds.slice(0, s, e), p.batch.token_type_ids.slice(0, s, e),
                                  p.batch.attention_mask.slice(0, s, e), p.targets.slice(0, s, e), output_of(o));
    torch::Tensor scores = token_scores(g, p.embeds.slice(0, s, e));
    for (int64_t b = 0; b < e - s; ++b)
      out.push_back({name(), targets[s + b], row_scores(scores, b, p.batch.lengths[s + b]), nlohmann::json::object()});
  }
  return out;
}

}  // namespace salient::explain
