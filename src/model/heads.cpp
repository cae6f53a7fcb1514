#include "model/heads.h"

namespace salient {
namespace {

torch::Tensor head_dropout(const torch::Tensor& x, double p, bool training) {
  return (training && p > 0) ? torch::dropout(x, p, true) : x;
}

// BERT: pooled = tanh(W_p x + b_p) on the first token, then the classifier.
class PoolerClassifierHead : public TaskHead {
 public:
  PoolerClassifierHead(torch::Tensor pw, torch::Tensor pb, torch::Tensor cw, torch::Tensor cb, double p)
      : pw_(std::move(pw)), pb_(std::move(pb)), cw_(std::move(cw)), cb_(std::move(cb)), p_(p) {}
  torch::Tensor forward(const torch::Tensor& last_hidden, bool training) const override {
    torch::Tensor pooled = torch::tanh(torch::linear(last_hidden.select(1, 0), pw_, pb_));
    return torch::linear(head_dropout(pooled, p_, training), cw_, cb_);
  }

 private:
  torch::Tensor pw_, pb_, cw_, cb_;
  double p_;
};

// RoBERTa and ELECTRA: dense + activation + out_proj, dropout before each linear map.
class DenseOutProjHead : public TaskHead {
 public:
  DenseOutProjHead(torch::Tensor dw, torch::Tensor db, torch::Tensor ow, torch::Tensor ob, double p, bool gelu)
      : dw_(std::move(dw)), db_(std::move(db)), ow_(std::move(ow)), ob_(std::move(ob)), p_(p), gelu_(gelu) {}
  torch::Tensor forward(const torch::Tensor& last_hidden, bool training) const override {
    torch::Tensor x = torch::linear(head_dropout(last_hidden.select(1, 0), p_, training), dw_, db_);
    x = gelu_ ? torch::gelu(x) : torch::tanh(x);
    return torch::linear(head_dropout(x, p_, training), ow_, ob_);
  }

 private:
  torch::Tensor dw_, db_, ow_, ob_;
  double p_;
  bool gelu_;
};

// DistilBERT: pre_classifier + ReLU, dropout, classifier.
class PreClassifierHead : public TaskHead {
 public:
  PreClassifierHead(torch::Tensor pw, torch::Tensor pb, torch::Tensor cw, torch::Tensor cb, double p)
      : pw_(std::move(pw)), pb_(std::move(pb)), cw_(std::move(cw)), cb_(std::move(cb)), p_(p) {}
  torch::Tensor forward(const torch::Tensor& last_hidden, bool training) const override {
    torch::Tensor x = torch::relu(torch::linear(last_hidden.select(1, 0), pw_, pb_));
    return torch::linear(head_dropout(x, p_, training), cw_, cb_);
  }

 private:
  torch::Tensor pw_, pb_, cw_, cb_;
  double p_;
};

}  // namespace

std::unique_ptr<TaskHead> make_sequence_classification_head(
    const ModelConfig& config, const std::function<const torch::Tensor&(const std::string&)>& weight) {
  const double p = config.classifier_dropout_prob();
  const std::string& type = config.model_type;
  if (type == "bert")
    return std::make_unique<PoolerClassifierHead>(weight("pooler.dense.weight"), weight("pooler.dense.bias"),
                                                  weight("classifier.weight"), weight("classifier.bias"), p);
  if (type == "roberta" || type == "electra")
    return std::make_unique<DenseOutProjHead>(weight("classifier.dense.weight"), weight("classifier.dense.bias"),
                                              weight("classifier.out_proj.weight"), weight("classifier.out_proj.bias"),
                                              p, type == "electra");
  return std::make_unique<PreClassifierHead>(weight("pre_classifier.weight"), weight("pre_classifier.bias"),
                                             weight("classifier.weight"), weight("classifier.bias"), p);
}

}  // namespace salient
