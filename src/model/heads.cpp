#include "model/heads.h"

#include "util/error.h"

namespace salient {
namespace {

torch::Tensor head_dropout(const torch::Tensor& x, double p, bool training) {
  return (training && p > 0) ? torch::dropout(x, p, true) : x;
}

// Every family's head is a two-layer map of the first token: dense, activation, dropout, output
// layer. RoBERTa and ELECTRA also apply dropout before the dense layer (their ClassificationHead),
// DeBERTa its pooler's own (ContextPooler); BERT's dense layer is its pooler (tanh), DistilBERT's
// its pre_classifier (ReLU), DeBERTa's its ContextPooler (pooler_hidden_act).
class FirstTokenHead : public TaskHead {
 public:
  enum class Act { Tanh, Gelu, GeluTanh, Relu };
  // p_first < 0: no dropout before the dense layer.
  FirstTokenHead(torch::Tensor dw, torch::Tensor db, torch::Tensor ow, torch::Tensor ob, Act act, double p_first,
                 double p)
      : dw_(std::move(dw)), db_(std::move(db)), ow_(std::move(ow)), ob_(std::move(ob)), act_(act), p_first_(p_first),
        p_(p) {}
  torch::Tensor forward(const torch::Tensor& last_hidden, bool training) const override {
    torch::Tensor x = last_hidden.select(1, 0);
    if (p_first_ >= 0) x = head_dropout(x, p_first_, training);
    x = torch::linear(x, dw_, db_);
    switch (act_) {
      case Act::Tanh: x = torch::tanh(x); break;
      case Act::Gelu: x = torch::gelu(x); break;
      case Act::GeluTanh: x = torch::gelu(x, "tanh"); break;
      case Act::Relu: x = torch::relu(x); break;
    }
    return torch::linear(head_dropout(x, p_, training), ow_, ob_);
  }

 private:
  torch::Tensor dw_, db_, ow_, ob_;
  Act act_;
  double p_first_, p_;
};

// ViTForImageClassification: the encoder's final LayerNorm (per token, so applying it to [CLS]
// alone is the same), then a linear classifier; no dropout.
class VitHead : public TaskHead {
 public:
  VitHead(torch::Tensor ln_w, torch::Tensor ln_b, double eps, torch::Tensor w, torch::Tensor b)
      : ln_w_(std::move(ln_w)), ln_b_(std::move(ln_b)), w_(std::move(w)), b_(std::move(b)), eps_(eps) {}
  torch::Tensor forward(const torch::Tensor& last_hidden, bool) const override {
    torch::Tensor x = torch::layer_norm(last_hidden.select(1, 0), {ln_w_.size(0)}, ln_w_, ln_b_, eps_);
    return torch::linear(x, w_, b_);
  }

 private:
  torch::Tensor ln_w_, ln_b_, w_, b_;
  double eps_;
};

// The classifier alone: BERT's and ViT's head on a scalar mix (the SMaT authors' models apply
// their classifier layer directly to the mix, without BERT's pooler or ViT's final LayerNorm).
class LinearHead : public TaskHead {
 public:
  LinearHead(torch::Tensor w, torch::Tensor b) : w_(std::move(w)), b_(std::move(b)) {}
  torch::Tensor forward(const torch::Tensor& pooled, bool) const override {
    return torch::linear(pooled.select(1, 0), w_, b_);
  }

 private:
  torch::Tensor w_, b_;
};

}  // namespace

torch::Tensor scalar_mix(const std::vector<torch::Tensor>& states, const torch::Tensor& coefficients,
                         const torch::Tensor& gamma, const torch::Tensor& attention_mask, bool first_token) {
  if (static_cast<int64_t>(states.size()) != coefficients.size(0))
    fail("scalar mix: {} states for {} coefficients", states.size(), coefficients.size(0));
  const torch::Tensor weights = torch::softmax(coefficients, 0);
  torch::Tensor mask, count;
  if (!first_token && attention_mask.defined()) {
    mask = attention_mask.to(states[0].scalar_type()).unsqueeze(-1);  // [B, L, 1]
    count = mask.sum(1);                                               // [B, 1]
  }
  torch::Tensor mixed;
  for (size_t l = 0; l < states.size(); ++l) {
    const torch::Tensor& h = states[l];
    torch::Tensor pooled = first_token ? h.select(1, 0) : mask.defined() ? (h * mask).sum(1) / count : h.mean(1);
    torch::Tensor term = weights[static_cast<int64_t>(l)] * pooled;
    mixed = mixed.defined() ? mixed + term : term;
  }
  return (gamma * mixed).unsqueeze(1);
}

std::unique_ptr<TaskHead> make_sequence_classification_head(
    const ModelConfig& config, const std::function<const torch::Tensor&(const std::string&)>& weight) {
  const double p = config.classifier_dropout_prob();
  const std::string type = config.family();
  using Act = FirstTokenHead::Act;
  if (config.pools_every_layer() && (type == "bert" || type == "vit"))
    return std::make_unique<LinearHead>(weight("classifier.weight"), weight("classifier.bias"));
  if (type == "vit")
    return std::make_unique<VitHead>(weight("layernorm.weight"), weight("layernorm.bias"), config.layer_norm_eps,
                                     weight("classifier.weight"), weight("classifier.bias"));
  if (type == "bert")
    return std::make_unique<FirstTokenHead>(weight("pooler.dense.weight"), weight("pooler.dense.bias"),
                                            weight("classifier.weight"), weight("classifier.bias"), Act::Tanh, -1, p);
  if (type == "roberta" || type == "electra")
    return std::make_unique<FirstTokenHead>(weight("classifier.dense.weight"), weight("classifier.dense.bias"),
                                            weight("classifier.out_proj.weight"), weight("classifier.out_proj.bias"),
                                            type == "electra" ? Act::Gelu : Act::Tanh, p, p);
  if (type == "deberta") {
    const Activation a = config.deberta.pooler_hidden_act;
    return std::make_unique<FirstTokenHead>(weight("pooler.dense.weight"), weight("pooler.dense.bias"),
                                            weight("classifier.weight"), weight("classifier.bias"),
                                            a == Activation::GeluExact ? Act::Gelu
                                            : a == Activation::GeluTanh ? Act::GeluTanh
                                                                        : Act::Relu,
                                            config.deberta.pooler_dropout, p);
  }
  return std::make_unique<FirstTokenHead>(weight("pre_classifier.weight"), weight("pre_classifier.bias"),
                                          weight("classifier.weight"), weight("classifier.bias"), Act::Relu, -1, p);
}

}  // namespace salient
