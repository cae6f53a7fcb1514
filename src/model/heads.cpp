#include "model/heads.h"

#include "util/error.h"

namespace salient {
namespace {

torch::Tensor head_dropout(const torch::Tensor& x, double p, bool training) {
  return (training && p > 0) ? torch::dropout(x, p, true) : x;
}

// The text families' head: a two-layer map of the first token: (dropout,) dense, activation,
// dropout, output layer (ModelFamily's head fields say which layers, activation and dropouts).
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
  using F = ModelFamily;
  const F& family = config.family();
  const double p = config.classifier_dropout_prob();
  auto w = [&](const std::string& layer, const char* what) -> const torch::Tensor& { return weight(layer + what); };
  if (config.pools_every_layer() && family.mix_replaces_dense)
    return std::make_unique<LinearHead>(w(family.head_output, ".weight"), w(family.head_output, ".bias"));
  if (family.head == F::Head::FinalNorm)
    return std::make_unique<VitHead>(w(family.head_dense, ".weight"), w(family.head_dense, ".bias"), config.layer_norm_eps,
                                     w(family.head_output, ".weight"), w(family.head_output, ".bias"));
  using Act = FirstTokenHead::Act;
  auto activation = [&] {
    switch (family.head_activation) {
      case F::HeadActivation::Tanh: return Act::Tanh;
      case F::HeadActivation::Gelu: return Act::Gelu;
      case F::HeadActivation::Relu: return Act::Relu;
      case F::HeadActivation::PoolerHiddenAct: break;
    }
    const Activation a = config.deberta.pooler_hidden_act;
    return a == Activation::GeluExact ? Act::Gelu : a == Activation::GeluTanh ? Act::GeluTanh : Act::Relu;
  };
  const double dense_dropout = family.dense_dropout == F::DenseDropout::Classifier ? p
                               : family.dense_dropout == F::DenseDropout::Pooler   ? config.deberta.pooler_dropout
                                                                                   : -1;
  return std::make_unique<FirstTokenHead>(w(family.head_dense, ".weight"), w(family.head_dense, ".bias"),
                                          w(family.head_output, ".weight"), w(family.head_output, ".bias"),
                                          activation(), dense_dropout, p);
}

}  // namespace salient
