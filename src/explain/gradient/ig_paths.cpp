// Integrated gradients' fast paths: see ig_paths.h.
#include "explain/gradient/ig_paths.h"

#include <cmath>

#include "explain/gradient/ig_kernels.h"
#include "explain/methods.h"
#include "model/gemm.h"

namespace salient::explain {
namespace {

// out[r, i, :] = a[r, i]·P[ex[r], i, :] + b[r, i]·Q[ex[r], i, :] + c, without autograd.
torch::Tensor combine_rows(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& P,
                           const torch::Tensor& Q, const torch::Tensor& c, const torch::Tensor& ex) {
  const int64_t R = a.size(0), L = a.size(1), N = P.size(2);
  torch::Tensor out = torch::empty({R, L, N}, P.options());
  torch::Tensor ac = a.contiguous(), bc = b.contiguous(), cc = c.contiguous(), exc = ex.contiguous();
  AT_DISPATCH_FLOATING_TYPES(P.scalar_type(), "row_combination", [&] {
    const scalar_t *ap = ac.data_ptr<scalar_t>(), *bp = bc.data_ptr<scalar_t>(), *cp = cc.data_ptr<scalar_t>();
    const scalar_t *pp = P.data_ptr<scalar_t>(), *qp = Q.data_ptr<scalar_t>();
    const int64_t* xp = exc.data_ptr<int64_t>();
    const int64_t p0 = P.stride(0), p1 = P.stride(1), q0 = Q.stride(0), q1 = Q.stride(1);
    scalar_t* op = out.data_ptr<scalar_t>();
    at::parallel_for(0, R * L, std::max<int64_t>(1, 4096 / N), [&](int64_t s, int64_t e) {
      for (int64_t t = s; t < e; ++t) {
        const int64_t r = t / L, i = t % L;
        const scalar_t *pr = pp + xp[r] * p0 + i * p1, *qr = qp + xp[r] * q0 + i * q1;
        const scalar_t av = ap[t], bv = bp[t];
        scalar_t* o = op + t * N;
        for (int64_t n = 0; n < N; ++n) o[n] = av * pr[n] + bv * qr[n] + cp[n];
      }
    });
  });
  return out;
}

// ga[r, i] += ⟨g[r, i, :], P[ex[r], i, :]⟩ and gb[r, i] += ⟨g[r, i, :], Q[ex[r], i, :]⟩.
void dot_rows(const torch::Tensor& g, const torch::Tensor& P, const torch::Tensor& Q, const torch::Tensor& ex,
              torch::Tensor& ga, torch::Tensor& gb) {
  const int64_t R = g.size(0), L = g.size(1), N = g.size(2);
  torch::Tensor gc = g.contiguous(), exc = ex.contiguous();
  AT_DISPATCH_FLOATING_TYPES(g.scalar_type(), "dot_rows", [&] {
    const scalar_t *gp = gc.data_ptr<scalar_t>(), *pp = P.data_ptr<scalar_t>(), *qp = Q.data_ptr<scalar_t>();
    const int64_t* xp = exc.data_ptr<int64_t>();
    const int64_t p0 = P.stride(0), p1 = P.stride(1), q0 = Q.stride(0), q1 = Q.stride(1);
    scalar_t *gap = ga.data_ptr<scalar_t>(), *gbp = gb.data_ptr<scalar_t>();
    at::parallel_for(0, R * L, std::max<int64_t>(1, 4096 / N), [&](int64_t s, int64_t e) {
      for (int64_t t = s; t < e; ++t) {
        const int64_t r = t / L, i = t % L;
        const scalar_t *pr = pp + xp[r] * p0 + i * p1, *qr = qp + xp[r] * q0 + i * q1, *gr = gp + t * N;
        // Eight partial sums, so the compiler can vectorise the dot products.
        scalar_t sa[8] = {}, sb[8] = {};
        int64_t n = 0;
        for (; n + 8 <= N; n += 8)
          for (int l = 0; l < 8; ++l) {
            sa[l] += gr[n + l] * pr[n + l];
            sb[l] += gr[n + l] * qr[n + l];
          }
        for (; n < N; ++n) {
          sa[0] += gr[n] * pr[n];
          sb[0] += gr[n] * qr[n];
        }
        gap[t] += ((sa[0] + sa[1]) + (sa[2] + sa[3])) + ((sa[4] + sa[5]) + (sa[6] + sa[7]));
        gbp[t] += ((sb[0] + sb[1]) + (sb[2] + sb[3])) + ((sb[4] + sb[5]) + (sb[6] + sb[7]));
      }
    });
  });
}

// out[r, i, :] = a[r, i] · P[ex[r], i, :] + b[r, i] · Q[ex[r], i, :] + c, differentiable in a and b
// only (P, Q, c are constants). On CPU one pass forward and one backward (∂a = ⟨g, P⟩,
// ∂b = ⟨g, Q⟩) where tensor ops would make six passes over an [R, L, N] tensor.
class RowCombination : public torch::autograd::Function<RowCombination> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& a, const torch::Tensor& b,
                               const torch::Tensor& P, const torch::Tensor& Q, const torch::Tensor& c,
                               const torch::Tensor& ex) {
    ctx->save_for_backward({P, Q, ex});
    return combine_rows(a, b, P, Q, c, ex);
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    const torch::Tensor &P = saved[0], &Q = saved[1], &ex = saved[2];
    const torch::Tensor& g = grads[0];
    torch::Tensor ga = torch::zeros({g.size(0), g.size(1)}, g.options()), gb = torch::zeros_like(ga);
    dot_rows(g, P, Q, ex, ga, gb);
    return {ga, gb, {}, {}, {}, {}};
  }
};

torch::Tensor row_combination(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& P,
                              const torch::Tensor& Q, const torch::Tensor& c, const torch::Tensor& ex) {
  if (P.device().is_cpu() && P.stride(2) == 1 && Q.stride(2) == 1) return RowCombination::apply(a, b, P, Q, c, ex);
  return a.unsqueeze(-1) * P.index_select(0, ex) + b.unsqueeze(-1) * Q.index_select(0, ex) + c;
}

// Layer `layer`'s Q, K and V weights stacked as one [3Hd, Hd] matrix, and their biases.
std::pair<torch::Tensor, torch::Tensor> stacked_qkv(const Transformer& m, int64_t layer) {
  const Transformer::LayerWeights& l = m.layer(layer);
  return {torch::cat({l.q_w, l.k_w, l.v_w}), torch::cat({l.q_b, l.k_b, l.v_b})};
}

}  // namespace

LinearEmbedding linear_embedding(const Transformer& m, const torch::Tensor& base, const torch::Tensor& diff,
                                 const torch::Tensor& types, const torch::Tensor& mask) {
  torch::NoGradGuard no_grad;
  const Transformer::EmbeddingWeights& W = m.embedding_weights();
  const auto dt = base.scalar_type();
  LinearEmbedding le;
  torch::Tensor c = (base + m.embedding_offsets(types, mask, base.size(0), base.size(1))).to(torch::kDouble);
  torch::Tensor d = diff.to(torch::kDouble);
  c = c - c.mean(-1, true);
  d = d - d.mean(-1, true);
  le.s_cc = (c * c).mean(-1);
  le.s_cd = (c * d).mean(-1);
  le.s_dd = (d * d).mean(-1);
  torch::Tensor gamma = W.ln_w.to(torch::kDouble);
  le.u = (c * gamma).to(dt);
  le.v = (d * gamma).to(dt);
  le.beta = W.ln_b;
  if (m.config().embed_dim() != m.config().hidden_size) {
    const torch::Tensor& pw = W.project_w;
    le.u = torch::linear(le.u, pw);
    le.v = torch::linear(le.v, pw);
    le.beta = torch::linear(le.beta, pw, W.project_b);
  }
  // The first layer's Q|K|V along the line, where the first layer runs in full: below a last
  // layer that computes [CLS] alone, or in every model whose head mixes every layer.
  if (m.num_layers() > 1 || m.pools_every_layer()) {
    auto [w, b] = stacked_qkv(m, 0);
    le.qkv_u = torch::linear(le.u, w);
    le.qkv_v = torch::linear(le.v, w);
    le.qkv_c = torch::linear(le.beta, w, b);
  }
  return le;
}

// The first layer's attention score terms of ig_kernels.h from le's Q|K|V parts, per example.
void add_first_score_terms(const Transformer& m, LinearEmbedding& le) {
  torch::NoGradGuard no_grad;
  const int64_t B = le.qkv_u.size(0), L = le.qkv_u.size(1), H = m.num_heads(), D = m.config().head_dim(),
                Hd = m.config().hidden_size;
  const double scale = 1.0 / std::sqrt(double(D));
  // Part j (0: Q, 1: K) as [B, H, L, D], in float64 so the grams add no rounding of their own.
  auto heads = [&](const torch::Tensor& t, int64_t j) {
    return t.narrow(2, j * Hd, Hd).to(torch::kDouble).reshape({B, L, H, D}).transpose(1, 2);
  };
  torch::Tensor qu = heads(le.qkv_u, 0), ku = heads(le.qkv_u, 1), qv = heads(le.qkv_v, 0), kv = heads(le.qkv_v, 1);
  auto gram = [](const torch::Tensor& q, const torch::Tensor& k) { return torch::matmul(q, k.transpose(-1, -2)); };
  const auto dt = le.qkv_u.scalar_type();
  le.grams = (torch::stack({gram(qu, ku), gram(qu, kv), gram(qv, ku), gram(qv, kv)}, 2) * scale).to(dt).contiguous();
  torch::Tensor cq = le.qkv_c.narrow(0, 0, Hd).to(torch::kDouble).reshape({1, H, 1, D});
  le.keys = (torch::stack({(ku * cq).sum(-1), (kv * cq).sum(-1)}, 2) * scale).to(dt).contiguous();
}

// F at the points for rows (example ex[r], quadrature point α_r), [R], and ∂F/∂α per token, [R, Lc].
std::pair<torch::Tensor, torch::Tensor> ig_alpha_gradient(const Transformer& m, const LinearEmbedding& le,
                                                          const torch::Tensor& ex, const torch::Tensor& alpha_rows,
                                                          int64_t Lc, const torch::Tensor& mask,
                                                          const torch::Tensor& targets, ModelOutput output) {
  const int64_t R = ex.size(0), H = m.num_heads(), D = m.config().head_dim(), Hd = m.config().hidden_size;
  const auto dt = le.u.scalar_type();
  auto rows = [&](const torch::Tensor& t) { return t.index_select(0, ex).slice(1, 0, Lc); };
  torch::Tensor alpha = alpha_rows.view({-1, 1}).expand({R, Lc}).clone().requires_grad_(true);  // float64 leaf
  torch::Tensor var = rows(le.s_cc) + alpha * (2.0 * rows(le.s_cd) + alpha * rows(le.s_dd));
  torch::Tensor inv = torch::rsqrt(var + m.config().layer_norm_eps);
  torch::Tensor A = inv.to(dt), B = (alpha * inv).to(dt);
  torch::Tensor e = row_combination(A, B, le.u.slice(1, 0, Lc), le.v.slice(1, 0, Lc), le.beta, ex);
  torch::Tensor ext = m.extended_mask(mask, R, Lc);
  torch::Tensor h = e;
  const int64_t last = m.num_layers() - 1;
  // A head that mixes every layer needs each state, and every token of the last layer.
  const bool every_layer = m.pools_every_layer();
  std::vector<torch::Tensor> states{e};
  const int64_t before_top = every_layer ? last + 1 : last;
  if (before_top > 0) {
    torch::Tensor qkv = row_combination(A, B, le.qkv_u.slice(1, 0, Lc), le.qkv_v.slice(1, 0, Lc), le.qkv_c, ex);
    auto heads = [&](int64_t j) { return qkv.narrow(2, j * Hd, Hd).view({R, Lc, H, D}).transpose(1, 2); };
    QKV x{heads(0), heads(1), heads(2)};
    h = m.finish_layer(0, e, torch::softmax(m.attention_scores(0, x, ext), -1), x.v);
    states.push_back(h);
    for (int64_t i = 1; i < before_top; ++i) {
      h = m.layer_forward(i, h, ext);
      states.push_back(h);
    }
  }
  torch::Tensor logits =
      every_layer ? m.classify_states(states, mask) : m.classify(m.first_token_layer(last, h, ext));
  torch::Tensor f = target_output(logits, targets, output);
  torch::Tensor g = torch::autograd::grad({f.sum()}, {alpha})[0];
  return {f.detach().to(torch::kDouble), g};
}
FusedLayer fused_layer(const Transformer& m, int64_t layer) {
  FusedLayer f;
  static_cast<Transformer::LayerWeights&>(f) = m.layer(layer);
  std::tie(f.w_qkv, f.b_qkv) = stacked_qkv(m, layer);
  f.w_qkv_t = f.w_qkv.t().contiguous();
  f.o_w_t = f.o_w.t().contiguous();
  f.i_w_t = f.i_w.t().contiguous();
  f.out_w_t = f.out_w.t().contiguous();
  return f;
}
namespace {

// What a layer's backward needs from its forward.
struct LayerTape {
  torch::Tensor x, qkv, probs;  // input [R, L, Hd]; Q|K|V [R, L, 3Hd] or V [R, L, Hd]; P [R, H, L(, L)]
  int64_t v_off = 0;            // where V's columns start in qkv
  torch::Tensor qk, ph;         // first-token layer: scale·W_kᵀq [H, R, Hd] and Σ_j p_j h_j [R, H, Hd]
  torch::Tensor y, mean1, rstd1, x1, f1, z, mean2, rstd2;  // output projection onwards, [rows, ·]
  // (f1: the feed-forward's pre-activation, or for exact GELU the activation's slope there)
};

template <typename T>
GridOperand<const T> operand(const torch::Tensor& t, int64_t offset, int64_t ld, int64_t s1) {
  return {t.data_ptr<T>() + offset, ld, s1, 0};
}
template <typename T>
GridOperand<T> result(const torch::Tensor& t, int64_t offset, int64_t ld, int64_t s1) {
  return {t.data_ptr<T>() + offset, ld, s1, 0};
}

// Full layers and the first-token layer of Transformer with their backward written out (input
// gradients only), for R rows of L tokens. Attention's products are one CBLAS call per (row, head)
// on the buffers in place; everything else is one ATen kernel per step, without autograd.
class FusedEncoder {
 public:
  FusedEncoder(const Transformer& m, int64_t R, int64_t L, const torch::Tensor& ext)
      : m_(m), R_(R), L_(L), H_(m.num_heads()), D_(m.config().head_dim()), Hd_(m.config().hidden_size),
        scale_(1.0 / std::sqrt(double(m.config().head_dim()))), ext_(ext) {
    switch (m.config().hidden_act) {
      case Activation::GeluExact: act_ = "none"; break;
      case Activation::GeluTanh: act_ = "tanh"; break;
      case Activation::Relu: act_ = "relu"; break;
    }
  }

  // Output projection of the context, residual, LayerNorm, feed-forward, residual, LayerNorm;
  // ctx and resid are [N, Hd].
  torch::Tensor tail_forward(const FusedLayer& w, const torch::Tensor& ctx, const torch::Tensor& resid,
                             LayerTape& t) const {
    const double eps = m_.config().layer_norm_eps;
    t.y = torch::addmm(w.o_b, ctx, w.o_w_t).add_(resid);
    auto ln1 = torch::native_layer_norm(t.y, {Hd_}, w.ln1_w, w.ln1_b, eps);
    t.x1 = std::get<0>(ln1);
    t.mean1 = std::get<1>(ln1);
    t.rstd1 = std::get<2>(ln1);
    t.f1 = torch::addmm(w.i_b, t.x1, w.i_w_t);
    torch::Tensor g;
    if (act_ == "none") {
      // Exact GELU: its derivative comes from the same pass and replaces f1 on the tape.
      g = torch::empty_like(t.f1);
      torch::Tensor slope = torch::empty_like(t.f1);
      AT_DISPATCH_FLOATING_TYPES(g.scalar_type(), "gelu_with_derivative", [&] {
        const scalar_t* x = t.f1.data_ptr<scalar_t>();
        scalar_t *y = g.data_ptr<scalar_t>(), *dy = slope.data_ptr<scalar_t>();
        at::parallel_for(0, g.numel(), 16384, [&](int64_t b, int64_t e) {
          gelu_with_derivative<scalar_t>(e - b, x + b, y + b, dy + b);
        });
      });
      t.f1 = slope;
    } else {
      g = act_ == "relu" ? torch::relu(t.f1) : torch::gelu(t.f1, act_);
    }
    t.z = torch::addmm(w.out_b, g, w.out_w_t).add_(t.x1);
    auto ln2 = torch::native_layer_norm(t.z, {Hd_}, w.ln2_w, w.ln2_b, eps);
    t.mean2 = std::get<1>(ln2);
    t.rstd2 = std::get<2>(ln2);
    return std::get<0>(ln2);
  }

  // From ∂F/∂output [N, Hd]: ∂F/∂ctx and ∂F/∂resid.
  std::pair<torch::Tensor, torch::Tensor> tail_backward(const FusedLayer& w, const torch::Tensor& d_out,
                                                        const LayerTape& t) const {
    const std::array<bool, 3> only_input{true, false, false};
    torch::Tensor dz = std::get<0>(
        torch::native_layer_norm_backward(d_out, t.z, {Hd_}, t.mean2, t.rstd2, w.ln2_w, w.ln2_b, only_input));
    torch::Tensor dg = torch::mm(dz, w.out_w);
    torch::Tensor df1 = act_ == "none"   ? dg.mul_(t.f1)
                        : act_ == "relu" ? dg * (t.f1 > 0)
                                         : torch::gelu_backward(dg, t.f1, act_);
    torch::Tensor dx1 = torch::addmm(dz, df1, w.i_w);
    torch::Tensor dy = std::get<0>(
        torch::native_layer_norm_backward(dx1, t.y, {Hd_}, t.mean1, t.rstd1, w.ln1_w, w.ln1_b, only_input));
    return {torch::mm(dy, w.o_w), dy};
  }

  // One full layer from its input x [R, L, Hd].
  torch::Tensor forward(const FusedLayer& w, const torch::Tensor& x, LayerTape& t) const {
    const int64_t qs = L_ * 3 * Hd_, ld = 3 * Hd_, ps = H_ * L_ * L_, ph = L_ * L_;
    torch::Tensor qkv = torch::addmm(w.b_qkv, x.reshape({R_ * L_, Hd_}), w.w_qkv_t).view({R_, L_, 3 * Hd_});
    torch::Tensor scores = torch::empty({R_, H_, L_, L_}, x.options());
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "fused_scores", [&] {
      // S = Q_h K_hᵀ per (row, head)
      gemm_grid<scalar_t>(false, true, R_, H_, L_, L_, D_, {qkv.data_ptr<scalar_t>(), ld, qs, D_},
                          {qkv.data_ptr<scalar_t>() + Hd_, ld, qs, D_}, {scores.data_ptr<scalar_t>(), L_, ps, ph});
    });
    return attend(w, x, scores.mul_(scale_).add_(ext_), qkv, 2 * Hd_, t);
  }

  // The first layer on IG's line from its input x, its finished scores (closed form with the mask
  // added, ig_kernels.h) and its values v [R, L, Hd].
  torch::Tensor first_forward(const FusedLayer& w, const torch::Tensor& x, const torch::Tensor& scores,
                              const torch::Tensor& v, LayerTape& t) const {
    return attend(w, x, scores, v, 0, t);
  }

  // From ∂F/∂output [R, L, Hd]: ∂F/∂(Q|K|V) [R, L, 3Hd] and the residual part of ∂F/∂input
  // [R, L, Hd] (the caller adds ∂(Q|K|V)·W_qkv).
  std::pair<torch::Tensor, torch::Tensor> backward(const FusedLayer& w, const torch::Tensor& d_out,
                                                   const LayerTape& t) const {
    const int64_t qs = L_ * 3 * Hd_, ld = 3 * Hd_, ps = H_ * L_ * L_, ph = L_ * L_;
    torch::Tensor dqkv = torch::empty({R_, L_, 3 * Hd_}, d_out.options());
    torch::Tensor ds, dy;  // not a structured binding: the lambdas below capture them (C++17 forbids it)
    std::tie(ds, dy) = attention_backward(w, d_out, t, dqkv);
    ds.mul_(scale_);
    AT_DISPATCH_FLOATING_TYPES(dy.scalar_type(), "fused_attention_backward_qk", [&] {
      const scalar_t *q = t.qkv.data_ptr<scalar_t>(), *d = ds.data_ptr<scalar_t>();
      scalar_t* dq = dqkv.data_ptr<scalar_t>();
      // dQ_h = dS K_h; dK_h = dSᵀ Q_h
      gemm_grid<scalar_t>(false, false, R_, H_, L_, D_, L_, {d, L_, ps, ph}, {q + Hd_, ld, qs, D_}, {dq, ld, qs, D_});
      gemm_grid<scalar_t>(true, false, R_, H_, L_, D_, L_, {d, L_, ps, ph}, {q, ld, qs, D_}, {dq + Hd_, ld, qs, D_});
    });
    return {dqkv, dy};
  }

  // first_forward's backward: ∂F/∂scores [R, H, L, L], ∂F/∂v [R, L, Hd] and the residual part of
  // ∂F/∂input [R, L, Hd].
  std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> first_backward(const FusedLayer& w,
                                                                         const torch::Tensor& d_out,
                                                                         const LayerTape& t) const {
    torch::Tensor dv = torch::empty({R_, L_, Hd_}, d_out.options());
    auto [ds, dy] = attention_backward(w, d_out, t, dv);
    return {ds, dv, dy};
  }

  // The first-token layer, as Transformer::first_token_layer: [R, L, Hd] → [R, Hd].
  torch::Tensor top_forward(const FusedLayer& w, const torch::Tensor& x_in, LayerTape& t) const {
    t.x = x_in.contiguous();
    const torch::Tensor& x = t.x;
    torch::Tensor h0 = x.select(1, 0);
    torch::Tensor q = torch::addmm(w.b_qkv.slice(0, 0, Hd_), h0, w.w_qkv_t.slice(1, 0, Hd_));  // [R, Hd]
    t.qk = torch::empty({H_, R_, Hd_}, x.options());
    t.ph = torch::empty({R_, H_, Hd_}, x.options());
    torch::Tensor scores = torch::empty({R_, H_, L_}, x.options()), ctx = torch::empty({R_, Hd_}, x.options());
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "fused_top_scores", [&] {
      using T = scalar_t;
      // qk_h = q_h W_k,h: [R, D] × [D, Hd]
      gemm_grid<T>(false, false, H_, 1, R_, Hd_, D_, operand<T>(q, 0, Hd_, D_),
                   operand<T>(w.w_qkv, Hd_ * Hd_, Hd_, D_ * Hd_), result<T>(t.qk, 0, Hd_, R_ * Hd_));
      t.qk.mul_(scale_);
      // scores_r = qk_r x_rᵀ: [H, Hd] × [Hd, L]
      gemm_grid<T>(false, true, R_, 1, H_, L_, Hd_, operand<T>(t.qk, 0, R_ * Hd_, Hd_), operand<T>(x, 0, Hd_, L_ * Hd_),
                   result<T>(scores, 0, L_, H_ * L_));
    });
    t.probs = torch::_softmax(scores.add_(ext_.reshape({R_, 1, L_})), -1, false);
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "fused_top_context", [&] {
      using T = scalar_t;
      // ph_r = P_r x_r: [H, L] × [L, Hd]
      gemm_grid<T>(false, false, R_, 1, H_, Hd_, L_, operand<T>(t.probs, 0, L_, H_ * L_), operand<T>(x, 0, Hd_, L_ * Hd_),
                   result<T>(t.ph, 0, Hd_, H_ * Hd_));
      // ctx_h = ph_h W_v,hᵀ: [R, Hd] × [Hd, D]
      gemm_grid<T>(false, true, H_, 1, R_, D_, Hd_, operand<T>(t.ph, 0, H_ * Hd_, Hd_),
                   operand<T>(w.w_qkv, 2 * Hd_ * Hd_, Hd_, D_ * Hd_), result<T>(ctx, 0, Hd_, D_));
    });
    ctx.add_(w.b_qkv.slice(0, 2 * Hd_));  // Σ_j p_j = 1
    return tail_forward(w, ctx, h0, t);
  }

  // From ∂F/∂output [R, Hd]: ∂F/∂input [R, L, Hd].
  torch::Tensor top_backward(const FusedLayer& w, const torch::Tensor& d_out, const LayerTape& t) const {
    torch::Tensor dctx, dy;  // captured below: no structured binding
    std::tie(dctx, dy) = tail_backward(w, d_out, t);
    const torch::Tensor& x = t.x;
    torch::Tensor dx = torch::zeros({R_, L_, Hd_}, dy.options());
    torch::Tensor dph = torch::empty({R_, H_, Hd_}, dy.options()), dprobs = torch::empty({R_, H_, L_}, dy.options());
    AT_DISPATCH_FLOATING_TYPES(dy.scalar_type(), "fused_top_backward_v", [&] {
      using T = scalar_t;
      // dph_h = dctx_h W_v,h: [R, D] × [D, Hd]
      gemm_grid<T>(false, false, H_, 1, R_, Hd_, D_, operand<T>(dctx, 0, Hd_, D_),
                   operand<T>(w.w_qkv, 2 * Hd_ * Hd_, Hd_, D_ * Hd_), result<T>(dph, 0, H_ * Hd_, Hd_));
      // dP_r = dph_r x_rᵀ: [H, Hd] × [Hd, L]
      gemm_grid<T>(false, true, R_, 1, H_, L_, Hd_, operand<T>(dph, 0, Hd_, H_ * Hd_), operand<T>(x, 0, Hd_, L_ * Hd_),
                   result<T>(dprobs, 0, L_, H_ * L_));
      // dx_r += P_rᵀ dph_r: [L, H] × [H, Hd]
      gemm_grid<T>(true, false, R_, 1, L_, Hd_, H_, operand<T>(t.probs, 0, L_, H_ * L_), operand<T>(dph, 0, Hd_, H_ * Hd_),
                   result<T>(dx, 0, Hd_, L_ * Hd_), true);
    });
    torch::Tensor ds = torch::_softmax_backward_data(dprobs, t.probs, -1, t.probs.scalar_type());
    torch::Tensor dqk = torch::empty({R_, H_, Hd_}, dy.options()), dq = torch::empty({R_, Hd_}, dy.options());
    AT_DISPATCH_FLOATING_TYPES(dy.scalar_type(), "fused_top_backward_qk", [&] {
      using T = scalar_t;
      // dqk_r = dS_r x_r: [H, L] × [L, Hd]
      gemm_grid<T>(false, false, R_, 1, H_, Hd_, L_, operand<T>(ds, 0, L_, H_ * L_), operand<T>(x, 0, Hd_, L_ * Hd_),
                   result<T>(dqk, 0, Hd_, H_ * Hd_));
      // dx_r += dS_rᵀ qk_r: [L, H] × [H, Hd]
      gemm_grid<T>(true, false, R_, 1, L_, Hd_, H_, operand<T>(ds, 0, L_, H_ * L_), operand<T>(t.qk, 0, R_ * Hd_, Hd_),
                   result<T>(dx, 0, Hd_, L_ * Hd_), true);
      // dq_h = dqk_h W_k,hᵀ: [R, Hd] × [Hd, D]
      gemm_grid<T>(false, true, H_, 1, R_, D_, Hd_, operand<T>(dqk, 0, H_ * Hd_, Hd_),
                   operand<T>(w.w_qkv, Hd_ * Hd_, Hd_, D_ * Hd_), result<T>(dq, 0, Hd_, D_));
    });
    // Through q = W_q h0 + b_q (qk carries the scale), plus the residual.
    dx.select(1, 0).add_(torch::addmm(dy, dq.mul_(scale_), w.w_qkv.slice(0, 0, Hd_)));
    return dx;
  }

 private:
  // Softmax of the finished scores, context P·V_h with V_h the head's columns of `values` from
  // column v_off on ([R, L, ·]), and the layer's tail.
  torch::Tensor attend(const FusedLayer& w, const torch::Tensor& x, const torch::Tensor& scores,
                       const torch::Tensor& values, int64_t v_off, LayerTape& t) const {
    const int64_t ld = values.size(2), ps = H_ * L_ * L_, ph = L_ * L_;
    t.qkv = values;
    t.v_off = v_off;
    t.probs = torch::_softmax(scores, -1, false);
    torch::Tensor ctx = torch::empty({R_, L_, Hd_}, x.options());
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "fused_context", [&] {
      // ctx_h = P V_h, written into the heads' columns of ctx
      gemm_grid<scalar_t>(false, false, R_, H_, L_, D_, L_, {t.probs.data_ptr<scalar_t>(), L_, ps, ph},
                          {values.data_ptr<scalar_t>() + v_off, ld, L_ * ld, D_},
                          {ctx.data_ptr<scalar_t>(), Hd_, L_ * Hd_, D_});
    });
    return tail_forward(w, ctx.view({R_ * L_, Hd_}), x.reshape({R_ * L_, Hd_}), t).view({R_, L_, Hd_});
  }

  // attend's backward from ∂F/∂output: writes ∂F/∂V into d_values (laid out as attend's values)
  // and returns ∂F/∂scores and the residual part of ∂F/∂input.
  std::pair<torch::Tensor, torch::Tensor> attention_backward(const FusedLayer& w, const torch::Tensor& d_out,
                                                             const LayerTape& t, torch::Tensor& d_values) const {
    const int64_t ld = t.qkv.size(2), ps = H_ * L_ * L_, ph = L_ * L_;
    torch::Tensor dctx, dy;  // captured below: no structured binding
    std::tie(dctx, dy) = tail_backward(w, d_out.reshape({R_ * L_, Hd_}), t);
    torch::Tensor dprobs = torch::empty({R_, H_, L_, L_}, dy.options());
    AT_DISPATCH_FLOATING_TYPES(dy.scalar_type(), "fused_attention_backward", [&] {
      const scalar_t *v = t.qkv.data_ptr<scalar_t>() + t.v_off, *p = t.probs.data_ptr<scalar_t>();
      const scalar_t* dc = dctx.data_ptr<scalar_t>();
      // dP = dctx_h V_hᵀ; dV_h = Pᵀ dctx_h
      gemm_grid<scalar_t>(false, true, R_, H_, L_, L_, D_, {dc, Hd_, L_ * Hd_, D_}, {v, ld, L_ * ld, D_},
                          {dprobs.data_ptr<scalar_t>(), L_, ps, ph});
      gemm_grid<scalar_t>(true, false, R_, H_, L_, D_, L_, {p, L_, ps, ph}, {dc, Hd_, L_ * Hd_, D_},
                          {d_values.data_ptr<scalar_t>() + t.v_off, ld, L_ * ld, D_});
    });
    torch::Tensor ds = torch::_softmax_backward_data(dprobs, t.probs, -1, t.probs.scalar_type());
    return {ds, dy.view({R_, L_, Hd_})};
  }

  const Transformer& m_;
  int64_t R_, L_, H_, D_, Hd_;
  double scale_;
  torch::Tensor ext_;
  std::string act_;
};

template <typename T>
FirstScoreTerms<T> first_score_terms(const LinearEmbedding& le) {
  return {le.grams.data_ptr<T>(), le.keys.data_ptr<T>(), le.grams.stride(0), le.keys.stride(0), le.grams.size(-1)};
}

}  // namespace

// ∂F/∂α per (row, token) as ig_alpha_gradient, on the fused path (CPU). layers: every layer; le
// with the first layer's score terms (add_first_score_terms) when there are two layers or more.
std::pair<torch::Tensor, torch::Tensor> ig_alpha_gradient_fused(const Transformer& m, const LinearEmbedding& le,
                                      const std::vector<FusedLayer>& layers, const torch::Tensor& ex_in,
                                      const torch::Tensor& alpha_rows, int64_t Lc, const torch::Tensor& mask,
                                      const torch::Tensor& targets, ModelOutput output) {
  const int64_t R = ex_in.size(0), last = m.num_layers() - 1, H = m.num_heads(), Hd = m.config().hidden_size;
  const auto dt = le.u.scalar_type();
  const torch::Tensor ex = ex_in.contiguous();
  auto rows = [&](const torch::Tensor& t) { return t.index_select(0, ex).slice(1, 0, Lc); };
  // The first layer's values along the line: V = A·V(u) + B·V(v) + V(β) + b_v.
  auto values = [&](const torch::Tensor& t) { return t.slice(1, 0, Lc).narrow(2, 2 * Hd, Hd); };
  torch::Tensor ext = m.extended_mask(mask, R, Lc);
  FusedEncoder enc(m, R, Lc, ext);
  std::vector<LayerTape> tapes(last + 1);
  torch::Tensor alpha, A, B, inv, out;
  {
    torch::NoGradGuard no_grad;
    alpha = alpha_rows.view({-1, 1}).expand({R, Lc});
    inv = torch::rsqrt(rows(le.s_cc) + alpha * (2.0 * rows(le.s_cd) + alpha * rows(le.s_dd)) +
                       m.config().layer_norm_eps);
    A = inv.to(dt);
    B = (alpha * inv).to(dt);
    torch::Tensor h = combine_rows(A, B, le.u.slice(1, 0, Lc), le.v.slice(1, 0, Lc), le.beta, ex);
    if (last > 0) {
      torch::Tensor scores = torch::empty({R, H, Lc, Lc}, h.options()), mask_rows = ext.reshape({R, Lc}).contiguous();
      AT_DISPATCH_FLOATING_TYPES(dt, "first_scores", [&] {
        first_scores_forward<scalar_t>(first_score_terms<scalar_t>(le), R, H, Lc, ex.data_ptr<int64_t>(),
                                       A.data_ptr<scalar_t>(), B.data_ptr<scalar_t>(), mask_rows.data_ptr<scalar_t>(),
                                       scores.data_ptr<scalar_t>());
      });
      torch::Tensor v = combine_rows(A, B, values(le.qkv_u), values(le.qkv_v), le.qkv_c.narrow(0, 2 * Hd, Hd), ex);
      h = enc.first_forward(layers[0], h, scores, v, tapes[0]);
      for (int64_t i = 1; i < last; ++i) h = enc.forward(layers[i], h, tapes[i]);
    }
    out = enc.top_forward(layers[last], h, tapes[last]);
  }
  // The classifier head (a few [R, Hd] operations, family-specific) under autograd.
  torch::Tensor leaf = out.view({R, 1, Hd}).detach().requires_grad_(true);
  torch::Tensor f = target_output(m.classify(leaf), targets, output);
  torch::Tensor d_out = torch::autograd::grad({f.sum()}, {leaf})[0].reshape({R, Hd});
  torch::NoGradGuard no_grad;
  torch::Tensor d = enc.top_backward(layers[last], d_out, tapes[last]);
  torch::Tensor ga = torch::zeros({R, Lc}, d.options()), gb = torch::zeros({R, Lc}, d.options());
  for (int64_t i = last - 1; i > 0; --i) {
    auto [dqkv, dres] = enc.backward(layers[i], d, tapes[i]);
    d = torch::addmm(dres.reshape({R * Lc, -1}), dqkv.view({R * Lc, -1}), layers[i].w_qkv).view({R, Lc, -1});
  }
  if (last > 0) {
    torch::Tensor ds, dv, dres;  // captured below: no structured binding
    std::tie(ds, dv, dres) = enc.first_backward(layers[0], d, tapes[0]);
    AT_DISPATCH_FLOATING_TYPES(dt, "first_scores_backward", [&] {
      first_scores_backward<scalar_t>(first_score_terms<scalar_t>(le), R, H, Lc, ex.data_ptr<int64_t>(),
                                      A.data_ptr<scalar_t>(), B.data_ptr<scalar_t>(), ds.data_ptr<scalar_t>(),
                                      ga.data_ptr<scalar_t>(), gb.data_ptr<scalar_t>());
    });
    dot_rows(dv, values(le.qkv_u), values(le.qkv_v), ex, ga, gb);
    d = dres;
  }
  dot_rows(d, le.u.slice(1, 0, Lc), le.v.slice(1, 0, Lc), ex, ga, gb);
  // A = (σ²)^−½, B = α·A with σ² = S_cc + 2α·S_cd + α²·S_dd + ε:
  // dA/dα = −A³·(S_cd + α·S_dd), dB/dα = A + α·dA/dα.
  torch::Tensor dA = -inv * inv * inv * (rows(le.s_cd) + alpha * rows(le.s_dd));
  return {f.detach().to(torch::kDouble), ga.to(torch::kDouble) * dA + gb.to(torch::kDouble) * (inv + alpha * dA)};
}

}  // namespace salient::explain
