#include "model/heads.h"

namespace salient {
namespace {

torch::Tensor head_dropout(const torch::Tensor& x, double p, bool training) {
  return (training && p > 0) ? torch::dropout(x, p, true) : x;
}

// Every family's head is a two-layer map of the first token: dense, activation, dropout, output
// layer. RoBERTa and ELECTRA also apply dropout before the dense layer (their ClassificationHead);
// BERT's dense layer is its pooler (tanh), DistilBERT's its pre_classifier (ReLU).
class FirstTokenHead : public TaskHead {
 public:
  enum class Act { Tanh, Gelu, Relu };
  FirstTokenHead(torch::Tensor dw, torch::Tensor db, torch::Tensor ow, torch::Tensor ob, Act act, bool dropout_first,
                 double p)
      : dw_(std::move(dw)), db_(std::move(db)), ow_(std::move(ow)), ob_(std::move(ob)), act_(act),
        dropout_first_(dropout_first), p_(p) {}
  torch::Tensor forward(const torch::Tensor& last_hidden, bool training) const override {
    torch::Tensor x = last_hidden.select(1, 0);
    if (dropout_first_) x = head_dropout(x, p_, training);
    x = torch::linear(x, dw_, db_);
    x = act_ == Act::Tanh ? torch::tanh(x) : act_ == Act::Gelu ? torch::gelu(x) : torch::relu(x);
    return torch::linear(head_dropout(x, p_, training), ow_, ob_);
  }

 private:
  torch::Tensor dw_, db_, ow_, ob_;
  Act act_;
  bool dropout_first_;
  double p_;
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

}  // namespace

std::unique_ptr<TaskHead> make_sequence_classification_head(
    const ModelConfig& config, const std::function<const torch::Tensor&(const std::string&)>& weight) {
  const double p = config.classifier_dropout_prob();
  const std::string& type = config.model_type;
  using Act = FirstTokenHead::Act;
  if (type == "vit")
    return std::make_unique<VitHead>(weight("layernorm.weight"), weight("layernorm.bias"), config.layer_norm_eps,
                                     weight("classifier.weight"), weight("classifier.bias"));
  if (type == "bert")
    return std::make_unique<FirstTokenHead>(weight("pooler.dense.weight"), weight("pooler.dense.bias"),
                                            weight("classifier.weight"), weight("classifier.bias"), Act::Tanh, false, p);
  if (type == "roberta" || type == "electra")
    return std::make_unique<FirstTokenHead>(weight("classifier.dense.weight"), weight("classifier.dense.bias"),
                                            weight("classifier.out_proj.weight"), weight("classifier.out_proj.bias"),
                                            type == "electra" ? Act::Gelu : Act::Tanh, true, p);
  return std::make_unique<FirstTokenHead>(weight("pre_classifier.weight"), weight("pre_classifier.bias"),
                                          weight("classifier.weight"), weight("classifier.bias"), Act::Relu, false, p);
}

}  // namespace salient
