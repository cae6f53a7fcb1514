#include "explain/lrp/relevance.h"

#include <cmath>

#include "util/error.h"

namespace salient::explain {
namespace {

// The reference's safe_divide: a / b with b pushed away from 0 and 0 where b == 0.
torch::Tensor safe_divide(const torch::Tensor& a, const torch::Tensor& b) {
  torch::Tensor den = b.clamp_min(1e-9) + b.clamp_max(1e-9);
  den = den + (den == 0).to(den.scalar_type()) * 1e-9;
  return a / den * (b != 0).to(b.scalar_type());
}

// Linear y = x Wᵀ, rule α1β0: R_x = x⁺ ⊙ (S W⁺) + x⁻ ⊙ (S W⁻), S = R / (x⁺W⁺ᵀ + x⁻W⁻ᵀ).
torch::Tensor linear_relprop(const torch::Tensor& R, const torch::Tensor& x, const torch::Tensor& W) {
  torch::Tensor pw = W.clamp_min(0), nw = W.clamp_max(0), px = x.clamp_min(0), nx = x.clamp_max(0);
  torch::Tensor z = torch::matmul(px, pw.t()) + torch::matmul(nx, nw.t());
  torch::Tensor s = safe_divide(R, z);
  return px * torch::matmul(s, pw) + nx * torch::matmul(s, nw);
}

// Z = A @ B (batched): z-rule for both operands.
std::pair<torch::Tensor, torch::Tensor> matmul_relprop(const torch::Tensor& R, const torch::Tensor& A,
                                                       const torch::Tensor& B) {
  torch::Tensor s = safe_divide(R, torch::matmul(A, B));
  return {A * torch::matmul(s, B.transpose(-1, -2)), B * torch::matmul(A.transpose(-1, -2), s)};
}

// Z = X0 + X1: z-rule, then each branch scaled to its share |Σ a| / (|Σ a| + |Σ b|) of Σ R
// (sums per example).
std::pair<torch::Tensor, torch::Tensor> add_relprop(const torch::Tensor& R, const torch::Tensor& x0,
                                                    const torch::Tensor& x1) {
  torch::Tensor s = safe_divide(R, x0 + x1);
  torch::Tensor a = x0 * s, b = x1 * s;
  std::vector<int64_t> dims;
  for (int64_t d = 1; d < R.dim(); ++d) dims.push_back(d);
  std::vector<int64_t> keep(R.dim(), 1);
  keep[0] = R.size(0);
  torch::Tensor as = a.sum(dims).view(keep), bs = b.sum(dims).view(keep), rs = R.sum(dims).view(keep);
  torch::Tensor a_fact = safe_divide(as.abs(), as.abs() + bs.abs()) * rs;
  torch::Tensor b_fact = safe_divide(bs.abs(), as.abs() + bs.abs()) * rs;
  return {a * safe_divide(a_fact, as), b * safe_divide(b_fact, bs)};
}

struct LayerActs {
  torch::Tensor input, q, k, v, probs, ctx, attn_dense, h1, inter, gelu, ff_dense;
};

// Positional heads (Voita et al. 2019, as Mask-LRP selects them): a head whose most attended key
// is the next token (or the previous one) for more than `threshold` of the real query tokens.
// Decided per example from its own attention, so the result does not depend on the batch.
torch::Tensor positional_heads(const torch::Tensor& probs, const Batch& batch, double threshold) {
  const int64_t B = probs.size(0), H = probs.size(1), L = probs.size(2);
  torch::Tensor top = probs.argmax(-1);  // [B, H, L]
  torch::Tensor pos = torch::arange(L, top.options()).view({1, 1, L});
  torch::Tensor real = batch.attention_mask.to(top.device()).view({B, 1, L}).to(torch::kDouble);
  torch::Tensor n = real.sum(-1).clamp_min(1);  // [B, 1]
  torch::Tensor next = ((top == pos + 1).to(torch::kDouble) * real).sum(-1) / n;
  torch::Tensor prev = ((top == pos - 1).to(torch::kDouble) * real).sum(-1) / n;
  (void)H;
  return ((next > threshold) | (prev > threshold)).to(probs.scalar_type());  // [B, H]
}

}  // namespace

LrpResult lrp(const Classifier& clf, const Batch& batch, const std::vector<int64_t>& targets,
              const HeadSelection& select) {
  const Transformer& m = clf.model;
  const ModelConfig& c = m.config();
  const Transformer::PoolerClassifierWeights head = m.pooler_classifier("--method: LRP methods");
  torch::NoGradGuard no_grad;
  // In float64: the rules divide by pre-activations that can be near 0, which would amplify
  // float32 rounding (batched and single inputs would then differ by ~1e-4).
  auto f64 = [](const torch::Tensor& t) { return t.to(torch::kFloat64); };
  std::vector<Transformer::LayerWeights> lw;
  for (int64_t i = 0; i < m.num_layers(); ++i) {
    Transformer::LayerWeights l = m.layer(i);
    for (torch::Tensor* t : {&l.q_w, &l.q_b, &l.k_w, &l.k_b, &l.v_w, &l.v_b, &l.o_w, &l.o_b, &l.ln1_w, &l.ln1_b, &l.i_w,
                             &l.i_b, &l.out_w, &l.out_b, &l.ln2_w, &l.ln2_b})
      *t = f64(*t);
    lw.push_back(std::move(l));
  }
  const Transformer::EmbeddingWeights& E = m.embedding_weights();
  const int64_t B = batch.input_ids.size(0), L = batch.input_ids.size(1), H = m.num_heads(), D = c.head_dim(),
                Hd = c.hidden_size;
  auto heads = [&](const torch::Tensor& t) { return t.view({B, L, H, D}).transpose(1, 2); };
  auto merge = [&](const torch::Tensor& t) { return t.transpose(1, 2).reshape({B, L, Hd}); };
  torch::Tensor ext = m.extended_mask(batch.attention_mask, B, L).to(torch::kFloat64);
  // Embeddings summed and normalised in float64 too: the rules amplify float32 rounding here by
  // up to 1e-3 relative (measured against the reference, bench/reference_explainers.py).
  auto lookup = [&](const torch::Tensor& table, const torch::Tensor& ids) {
    return torch::embedding(table, ids).to(torch::kFloat64);  // gather in float32, exact widening
  };
  torch::Tensor positions = torch::arange(L, batch.input_ids.options()).unsqueeze(0).expand({B, L});
  torch::Tensor h = lookup(E.word, batch.input_ids) + lookup(E.position, positions) +
                    lookup(E.token_type, batch.token_type_ids);
  h = torch::layer_norm(h, {Hd}, f64(E.ln_w), f64(E.ln_b), c.layer_norm_eps);
  std::vector<LayerActs> acts;
  for (int64_t i = 0; i < m.num_layers(); ++i) {
    LayerActs a;
    a.input = h;
    a.q = heads(torch::linear(h, lw[i].q_w, lw[i].q_b));
    a.k = heads(torch::linear(h, lw[i].k_w, lw[i].k_b));
    a.v = heads(torch::linear(h, lw[i].v_w, lw[i].v_b));
    a.probs = torch::softmax(torch::matmul(a.q, a.k.transpose(-1, -2)) / std::sqrt(double(D)) + ext, -1);
    a.ctx = merge(torch::matmul(a.probs, a.v));
    a.attn_dense = torch::linear(a.ctx, lw[i].o_w, lw[i].o_b);
    a.h1 = torch::layer_norm(a.attn_dense + h, {Hd}, lw[i].ln1_w,
                             lw[i].ln1_b, c.layer_norm_eps);
    a.inter = torch::linear(a.h1, lw[i].i_w, lw[i].i_b);
    a.gelu = c.hidden_act == Activation::Relu ? torch::relu(a.inter)
             : c.hidden_act == Activation::GeluTanh ? torch::gelu(a.inter, "tanh") : torch::gelu(a.inter);
    a.ff_dense = torch::linear(a.gelu, lw[i].out_w, lw[i].out_b);
    h = torch::layer_norm(a.ff_dense + a.h1, {Hd}, lw[i].ln2_w, lw[i].ln2_b,
                          c.layer_norm_eps);
    acts.push_back(std::move(a));
  }
  torch::Tensor cls = h.select(1, 0);
  torch::Tensor pooled = torch::tanh(torch::linear(cls, f64(head.pooler_w), f64(head.pooler_b)));

  // Classifier → pooler → [CLS] position.
  torch::Tensor R = torch::zeros({B, c.num_labels}, h.options());
  for (int64_t b = 0; b < B; ++b) R[b][targets[b]] = 1.0;
  R = linear_relprop(R, pooled, f64(head.classifier_w));
  R = linear_relprop(R, cls, f64(head.pooler_w));
  torch::Tensor Rh = torch::zeros_like(h);
  Rh.select(1, 0).copy_(R);

  LrpResult out;
  out.attn_cam.resize(acts.size());
  std::vector<torch::Tensor> keep;  // per layer [B, H]
  if (select.active) {
    for (int64_t i = 0; i < m.num_layers(); ++i) {
      if (select.heads.empty()) {
        keep.push_back(positional_heads(acts[i].probs, batch, select.positional_threshold));
      } else {
        torch::Tensor k = torch::zeros({B, H}, h.options());
        for (const auto& [l, hh] : select.heads)
          if (l == i) k.select(1, hh).fill_(1.0);
        keep.push_back(k);
      }
    }
    out.kept_heads = torch::stack(keep);
  }
  for (int64_t i = m.num_layers() - 1; i >= 0; --i) {
    const LayerActs& a = acts[i];
    // Output LayerNorm (identity) → Add(ff_dense, h1) → output dense → GELU (identity) → intermediate.
    auto [r_ff, r_h1_res] = add_relprop(Rh, a.ff_dense, a.h1);
    torch::Tensor r_gelu = linear_relprop(r_ff, a.gelu, lw[i].out_w);
    torch::Tensor r_h1 = linear_relprop(r_gelu, a.h1, lw[i].i_w) + r_h1_res;  // clone
    // Attention output LayerNorm (identity) → Add(attn_dense, input) → dense.
    auto [r_ad, r_in_res] = add_relprop(r_h1, a.attn_dense, a.input);
    torch::Tensor r_ctx = heads(linear_relprop(r_ad, a.ctx, lw[i].o_w));
    // Self-attention: context = probs @ V, scores = Q @ Kᵀ (scale and softmax pass relevance through).
    auto [r_probs, r_v] = matmul_relprop(r_ctx, a.probs, a.v);
    // Mask-LRP's MGAE keeps the map from its own unmasked pass, which skips the halving.
    out.attn_cam[i] = select.active ? r_probs : r_probs / 2;
    r_probs = r_probs / 2;
    r_v = r_v / 2;
    if (!keep.empty()) {  // the z-rule is linear in R: masking R at A·V masks both outputs per head
      torch::Tensor k = keep[i].view({B, H, 1, 1});
      r_probs = r_probs * k;
      r_v = r_v * k;
    }
    auto [r_q, r_kt] = matmul_relprop(r_probs, a.q, a.k.transpose(-1, -2));
    r_q = r_q / 2;
    torch::Tensor r_k = r_kt.transpose(-1, -2) / 2;
    torch::Tensor r_self = linear_relprop(merge(r_q), a.input, lw[i].q_w) +
                           linear_relprop(merge(r_k), a.input, lw[i].k_w) +
                           linear_relprop(merge(r_v), a.input, lw[i].v_w);
    Rh = r_self + r_in_res;  // clone of the layer input
  }
  out.input_relevance = Rh;
  return out;
}

std::vector<Explanation> LrpExplainer::compute(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                               const std::vector<int64_t>& targets, const ExplainOptions& o) {
  check_inputs(inputs, targets, clf.model.config().num_labels);
  const HeadSelection select = head_selection(clf, o);
  std::vector<Explanation> out;
  for (const auto& [s, e] : passes_in_order(inputs, o.limits())) {
    std::vector<const Encoding*> part(inputs.begin() + s, inputs.begin() + e);
    std::vector<int64_t> tg(targets.begin() + s, targets.begin() + e);
    Batch batch = make_batch(part, clf.tokenizer.pad_id(), clf.model.device());
    LrpResult r = lrp(clf, batch, tg, select);
    torch::Tensor chunk_scores = scores(clf, batch, r, tg, o);
    for (size_t b = 0; b < part.size(); ++b) {
      out.push_back({name(), tg[b], row_scores(chunk_scores, b, batch.lengths[b]), nlohmann::json::object()});
      if (r.kept_heads.defined()) {  // which heads passed relevance down, as "layer.head"
        nlohmann::json kept = nlohmann::json::array();
        torch::Tensor k = r.kept_heads.select(1, b).cpu();
        for (int64_t l = 0; l < k.size(0); ++l)
          for (int64_t hh = 0; hh < k.size(1); ++hh)
            if (k[l][hh].item<double>() > 0) kept.push_back(std::to_string(l) + "." + std::to_string(hh));
        out.back().extras["kept_heads"] = kept;
      }
    }
  }
  return out;
}

torch::Tensor relevance_rollout(const Classifier& clf, const Batch& batch, const LrpResult& r,
                                const std::vector<int64_t>& targets, ModelOutput output, const ExplainOptions& o) {
  std::vector<torch::Tensor> grads;
  {
    ForwardRequest req;
    req.inputs_embeds = clf.model.word_embeddings(batch.input_ids).detach().requires_grad_(true);
    req.token_type_ids = batch.token_type_ids;
    req.attention_mask = batch.attention_mask;
    req.want_attentions = true;
    ForwardResult fr = clf.model.forward(req);
    torch::Tensor f = target_output(fr.logits, targets_tensor(targets).to(fr.logits.device()), output).sum();
    grads = torch::autograd::grad({f}, fr.attentions, {}, false, false, true);
  }
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> maps;
  for (size_t l = 0; l < r.attn_cam.size(); ++l) {
    torch::Tensor g = grads[l].defined() ? grads[l] : torch::zeros_like(r.attn_cam[l]);
    maps.push_back((g.to(torch::kFloat64) * r.attn_cam[l]).clamp_min(0).mean(1));
  }
  return rollout(maps, start_layer(o, maps.size())).clone();
}

}  // namespace salient::explain
