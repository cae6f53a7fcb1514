#include "explain/gradient/embedding_gradients.h"

namespace salient::explain {

ParamSpec gradient_layer_param() {
  return choice_param("layer", "word_embeddings", {"word_embeddings", "embeddings"},
                      "where the gradient is taken: the word embeddings, or the embedding layer's output "
                      "(after position/type embeddings and LayerNorm: HF's hidden_states[0])");
}

GradientLayer gradient_layer(const ExplainOptions& o) {
  return param_string(o, "layer") == "embeddings" ? GradientLayer::Embeddings : GradientLayer::WordEmbeddings;
}

torch::Tensor represent(const Classifier& clf, const torch::Tensor& ids, const torch::Tensor& types,
                        const torch::Tensor& mask, GradientLayer layer) {
  torch::NoGradGuard no_grad;
  return (layer == GradientLayer::Embeddings ? clf.model.embed(ids, types, mask) : clf.model.word_embeddings(ids)).detach();
}

Prepared prepare(const Classifier& clf, const std::vector<const Encoding*>& inputs, const std::vector<int64_t>& targets,
                 GradientLayer layer) {
  check_inputs(inputs, targets, clf.model.config().num_labels);
  Prepared p;
  p.batch = make_batch(inputs, clf.tokenizer.pad_id(), clf.model.device());
  p.layer = layer;
  p.embeds = represent(clf, p.batch.input_ids, p.batch.token_type_ids, p.batch.attention_mask, layer);
  p.targets = targets_tensor(targets).to(clf.model.device());
  return p;
}

torch::Tensor logits_at(const Classifier& clf, const torch::Tensor& embeds, const torch::Tensor& types,
                        const torch::Tensor& mask, GradientLayer layer) {
  return layer == GradientLayer::Embeddings ? cls_logits_from_embedding_output(clf.model, embeds, mask)
                                            : cls_logits(clf.model, {}, types, mask, embeds);
}

std::pair<torch::Tensor, torch::Tensor> output_and_grad(const Classifier& clf, torch::Tensor embeds,
                                                        const torch::Tensor& types, const torch::Tensor& mask,
                                                        const torch::Tensor& targets, ModelOutput output,
                                                        GradientLayer layer) {
  embeds = embeds.detach().requires_grad_(true);
  torch::Tensor f = target_output(logits_at(clf, embeds, types, mask, layer), targets, output);
  torch::Tensor g = torch::autograd::grad({f.sum()}, {embeds})[0];
  return {f.detach(), g};
}

std::vector<Explanation> EmbeddingGradientExplainer::compute(const Classifier& clf,
                                                           const std::vector<const Encoding*>& inputs,
                                                           const std::vector<int64_t>& targets,
                                                           const ExplainOptions& o) {
  Prepared p = prepare(clf, inputs, targets, gradient_layer(o));
  std::vector<Explanation> out;
  const int64_t chunk = rows_per_pass(o.limits(), p.embeds.size(1)), B = p.embeds.size(0);
  for (int64_t s = 0; s < B; s += chunk) {
    const int64_t e = std::min(B, s + chunk);
    auto [f, g] = output_and_grad(clf, p.embeds.slice(0, s, e), p.batch.token_type_ids.slice(0, s, e),
                                  p.batch.attention_mask.slice(0, s, e), p.targets.slice(0, s, e), output_of(o), p.layer);
    torch::Tensor scores = token_scores(g, p.embeds.slice(0, s, e));
    for (int64_t b = 0; b < e - s; ++b)
      out.push_back({name(), targets[s + b], row_scores(scores, b, p.batch.lengths[s + b]), nlohmann::json::object()});
  }
  return out;
}

}  // namespace salient::explain
