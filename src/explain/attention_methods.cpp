// Attention-family explainers: raw attention, mean attention (SMaT's static explainers), rollout,
// attention GradCAM, GAE and AttCAT. Definitions follow the reference code named in
// docs/explainers.md; every method reads the attention probabilities actually used by the model
// (after the padding mask), so padded keys get exactly 0 and results are padding-invariant.
#include <algorithm>
#include <limits>
#include <optional>

#include "explain/methods.h"
#include "util/error.h"

namespace salient::explain {
namespace {

// One forward over a chunk of inputs with attentions (and hidden states) kept; gradients of the
// summed explained output w.r.t. them when asked.
struct AttentionPass {
  Batch batch;
  std::vector<torch::Tensor> attn;         // per layer [B, H, L, L]
  std::vector<torch::Tensor> attn_grad;    // same shapes (when with_grad)
  std::vector<torch::Tensor> hidden;       // each layer's input (the embedding output for layer 0): [B, L, Hd]
  std::vector<torch::Tensor> hidden_grad;  // their gradients
};

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

// Base: explains chunks of internal_batch inputs; subclasses map one pass to [B, L] scores.
class AttentionExplainer : public Explainer {
 public:
  AttentionExplainer(std::string name, bool with_grad, bool with_hidden)
      : name_(std::move(name)), with_grad_(with_grad), with_hidden_(with_hidden) {}
  std::string name() const override { return name_; }
  // Gradient-weighted methods explain the target logit by default, as their authors' code.
  ModelOutput default_output() const override { return with_grad_ ? ModelOutput::Logit : ModelOutput::Probability; }
  bool uses_model_output() const override { return with_grad_; }
  std::vector<Explanation> compute(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                   const std::vector<int64_t>& targets, const ExplainOptions& o) override {
    check_inputs(inputs, targets, clf.model.config().num_labels);
    std::vector<Explanation> out;
    const size_t chunk = static_cast<size_t>(std::max<int64_t>(o.internal_batch, 1));
    for (size_t s = 0; s < inputs.size(); s += chunk) {
      const size_t e = std::min(inputs.size(), s + chunk);
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

 protected:
  virtual torch::Tensor compute(const AttentionPass& p, const ExplainOptions& o) const = 0;
  // [B, L] 1/0 mask of real tokens, in the attention dtype.
  static torch::Tensor real_tokens(const AttentionPass& p) {
    return p.batch.attention_mask.to(p.attn[0].scalar_type());
  }
  // Mean of [B, Lq, Lk] maps over the real query rows → [B, Lk].
  static torch::Tensor mean_over_real_rows(const AttentionPass& p, const torch::Tensor& maps) {
    torch::Tensor q = real_tokens(p);
    return (maps * q.unsqueeze(2)).sum(1) / q.sum(1, true);
  }
  // The [CLS] row of [B, L, L] maps with its [CLS]→[CLS] entry set to 0, as the authors' code
  // does before returning it (`cam[:, 0, 0] = 0`): the class token attends to itself most, and
  // left in it would set every colour scale.
  static torch::Tensor cls_row_without_self(const torch::Tensor& maps) {
    torch::Tensor row = maps.select(1, 0).clone();
    row.select(1, 0).zero_();
    return row;
  }

 private:
  std::string name_;
  bool with_grad_, with_hidden_;
};

// Last layer, [CLS] query row, mean over heads, [CLS]→[CLS] zeroed (Chefer et al.'s
// generate_attn_last_layer).
class RawAttention : public AttentionExplainer {
 public:
  RawAttention() : AttentionExplainer("raw_attention", false, false) {}
  torch::Tensor compute(const AttentionPass& p, const ExplainOptions&) const override {
    return cls_row_without_self(p.attn.back().mean(1));
  }
};

// Attention received by each token: mean over heads, over the real query rows, and over all
// layers (or the last one). SMaT's static attention explainers with uniform head coefficients.
class MeanAttention : public AttentionExplainer {
 public:
  explicit MeanAttention(bool last_only)
      : AttentionExplainer(last_only ? "attention_mean_last" : "attention_mean", false, false), last_only_(last_only) {}
  torch::Tensor compute(const AttentionPass& p, const ExplainOptions&) const override {
    torch::Tensor total = torch::zeros_like(real_tokens(p));
    const size_t first = last_only_ ? p.attn.size() - 1 : 0;
    for (size_t l = first; l < p.attn.size(); ++l) total += mean_over_real_rows(p, p.attn[l].mean(1));
    return total / double(p.attn.size() - first);
  }

 private:
  bool last_only_;
};


int64_t start_layer(const ExplainOptions& o, size_t layers) {
  const int64_t s = param_int(o, "start_layer");
  if (s < 0 || s >= static_cast<int64_t>(layers)) fail("--start-layer: {} out of range for {} layers", s, layers);
  return s;
}

class Rollout : public AttentionExplainer {
 public:
  Rollout() : AttentionExplainer("rollout", false, false) {}
  torch::Tensor compute(const AttentionPass& p, const ExplainOptions& o) const override {
    std::vector<torch::Tensor> maps;
    for (const auto& a : p.attn) maps.push_back(a.mean(1));
    torch::Tensor scores = rollout(maps, start_layer(o, maps.size()));
    scores.select(1, 0).zero_();  // [CLS]→[CLS], as generate_rollout's `rollout[:, 0, 0] = 0`
    return scores;
  }
};

// Attention GradCAM (Chefer et al.'s generate_attn_gradcam): last layer; per head, the gradient
// of the output w.r.t. A averaged over the (real) query × key entries weights that head's A;
// mean over heads, positive part, min–max normalised over the (real) map, [CLS] row with
// [CLS]→[CLS] zeroed.
class AttentionGradCam : public AttentionExplainer {
 public:
  AttentionGradCam() : AttentionExplainer("attention_gradcam", true, false) {}
  torch::Tensor compute(const AttentionPass& p, const ExplainOptions&) const override {
    const torch::Tensor& a = p.attn.back();
    const torch::Tensor& g = p.attn_grad.back();
    torch::Tensor q = real_tokens(p);
    torch::Tensor pair = q.unsqueeze(2) * q.unsqueeze(1);  // [B, L, L]
    // Means and extremes over the real L×L block only, so padding changes nothing.
    torch::Tensor w = (g * pair.unsqueeze(1)).sum({2, 3}, true) / pair.sum({1, 2}).view({-1, 1, 1, 1});
    torch::Tensor cam = (a * w).mean(1).clamp_min(0);  // [B, L, L]
    const double inf = std::numeric_limits<double>::infinity();
    torch::Tensor lo = cam.masked_fill(pair == 0, inf).amin({1, 2}, true);
    torch::Tensor hi = cam.masked_fill(pair == 0, -inf).amax({1, 2}, true);
    // A constant map (the reference would divide by 0) gives zeros.
    torch::Tensor range = hi - lo;
    cam = torch::where(range > 0, (cam - lo) / range.clamp_min(std::numeric_limits<double>::min()),
                       torch::zeros_like(cam));
    return cls_row_without_self(cam);
  }
};

// CAM over the last attention map as ExpNet's "CAM" baseline is most plausibly defined: Mask-LRP's
// generate_gradcam (LinxinS97/Mask-LRP, the code whose nine attention/LRP explainers match
// ExpNet's list): the gradient of the output w.r.t. the last layer's attention, averaged over heads
// and (real) query rows, positive part, the [CLS] column set to 0. It weighs nothing by A itself;
// attention_gradcam is the variant that does.
class AttentionCam : public AttentionExplainer {
 public:
  AttentionCam() : AttentionExplainer("cam", true, false) {}
  torch::Tensor compute(const AttentionPass& p, const ExplainOptions&) const override {
    const torch::Tensor& g = p.attn_grad.back();  // [B, H, L, L]
    torch::Tensor q = real_tokens(p);             // [B, L]
    torch::Tensor rows = q.view({q.size(0), 1, -1, 1});
    torch::Tensor score = ((g * rows).sum(2) / rows.sum(2)).mean(1).clamp_min(0) * q;  // [B, L]
    score.select(1, 0).zero_();
    return score;
  }
};

// GAE (Chefer et al. 2021b, Transformer-MM-Explainability): R = I; per layer
// R ← R + mean_h((∇A ⊙ A)⁺) · R; scores = [CLS] row of R with [CLS]→[CLS] zeroed.
class Gae : public AttentionExplainer {
 public:
  Gae() : AttentionExplainer("gae", true, false) {}
  torch::Tensor compute(const AttentionPass& p, const ExplainOptions&) const override {
    const int64_t B = p.attn[0].size(0), L = p.attn[0].size(-1);
    torch::Tensor r = torch::eye(L, p.attn[0].options()).unsqueeze(0).repeat({B, 1, 1});
    for (size_t l = 0; l < p.attn.size(); ++l) {
      torch::Tensor cam = (p.attn_grad[l] * p.attn[l]).clamp_min(0).mean(1);
      r = r + torch::bmm(cam, r);
    }
    // [CLS]→[CLS] zeroed, as the authors' text code (VisualBERT generate_ours, LXMERT R_t_t[0, 0]).
    return cls_row_without_self(r);
  }
};

// AttCAT (Qiang et al., NeurIPS 2022) as their code computes it (generate_TransCAM in
// qiangyao1988/AttCAT; LinxinS97/Mask-LRP's AttCAT is the same): for each block b, its *input*
// hidden state h_b (the embedding output for block 0) and ∂F/∂h_b give CAT_b = Σ_d (∂F/∂h_b ⊙ h_b);
// it is weighted by the attention each token receives in block b, averaged over heads and (real)
// query rows; AttCAT = Σ_b, signed.
class AttCat : public AttentionExplainer {
 public:
  AttCat() : AttentionExplainer("attcat", true, true) {}
  torch::Tensor compute(const AttentionPass& p, const ExplainOptions&) const override {
    torch::Tensor total;
    for (size_t l = 0; l < p.attn.size(); ++l) {
      torch::Tensor cat = (p.hidden_grad[l] * p.hidden[l]).sum(-1);    // [B, L]
      torch::Tensor received = mean_over_real_rows(p, p.attn[l].mean(1));  // [B, L]
      torch::Tensor s = received * cat;
      total = total.defined() ? total + s : s;
    }
    return total;
  }
};

}  // namespace

ExplainerInfo raw_attention_info() {
  return {"raw_attention", "attention", "last layer, [CLS] row, mean over heads", {},
          [] { return std::unique_ptr<Explainer>(new RawAttention()); }};
}
ExplainerInfo attention_mean_info() {
  return {"attention_mean", "attention", "attention to each token, mean over all layers, heads and queries (SMaT)", {},
          [] { return std::unique_ptr<Explainer>(new MeanAttention(false)); }};
}
ExplainerInfo attention_mean_last_info() {
  return {"attention_mean_last", "attention", "as attention_mean over the last layer only (SMaT)", {},
          [] { return std::unique_ptr<Explainer>(new MeanAttention(true)); }};
}
ExplainerInfo rollout_info() {
  return {"rollout", "attention", "attention rollout with the residual identity (Abnar & Zuidema 2020)",
          {start_layer_param()}, [] { return std::unique_ptr<Explainer>(new Rollout()); }};
}
ExplainerInfo attention_gradcam_info() {
  return {"attention_gradcam", "attention", "GradCAM on the last layer's attention (Chefer et al. 2021 code)", {},
          [] { return std::unique_ptr<Explainer>(new AttentionGradCam()); }};
}
ExplainerInfo cam_info() {
  return {"cam", "attention",
          "last layer: attention gradient, mean over heads and queries, positive part (Mask-LRP's generate_gradcam)", {},
          [] { return std::unique_ptr<Explainer>(new AttentionCam()); }};
}
ExplainerInfo gae_info() {
  return {"gae", "attention", "generic attention explainability (Chefer et al. 2021b)", {},
          [] { return std::unique_ptr<Explainer>(new Gae()); }};
}
ExplainerInfo attcat_info() {
  return {"attcat", "attention", "attentive class activation tokens (Qiang et al. 2022)", {},
          [] { return std::unique_ptr<Explainer>(new AttCat()); }};
}

// Rollout (Abnar & Zuidema 2020, as Chefer et al.'s compute_rollout_attention): Â_l = mean_h A_l + I,
// rows renormalised; joint = Â_N ⋯ Â_start; scores = [CLS] row. Parameter start_layer (default 0).
torch::Tensor rollout(const std::vector<torch::Tensor>& maps, int64_t start) {
  const int64_t L = maps[0].size(-1);
  torch::Tensor eye = torch::eye(L, maps[0].options()).unsqueeze(0);
  torch::Tensor joint;
  for (size_t l = start; l < maps.size(); ++l) {
    torch::Tensor a = maps[l] + eye;
    a = a / a.sum(-1, true);
    joint = joint.defined() ? torch::bmm(a, joint) : a;
  }
  return joint.select(1, 0);
}

}  // namespace salient::explain
