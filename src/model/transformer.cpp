#include "model/transformer.h"
#include "model/gemm.h"

#ifdef SALIENT_CBLAS
#include <cblas.h>
#endif

#include <ATen/CPUGeneratorImpl.h>
#include <cmath>

#include "util/error.h"

namespace salient {

namespace {

std::string layer_prefix(int64_t i) { return "encoder.layer." + std::to_string(i) + "."; }

// DisentangledSelfAttention divides every term by √(D · (1 + the number of position terms)).
double deberta_scale(const ModelConfig& c) {
  return std::sqrt(static_cast<double>(c.head_dim() * (1 + (c.deberta.c2p ? 1 : 0) + (c.deberta.p2c ? 1 : 0))));
}

}  // namespace

std::map<std::string, std::vector<int64_t>> weight_shapes(const ModelConfig& c) {
  const int64_t E = c.embed_dim(), Hd = c.hidden_size, I = c.intermediate_size, N = c.num_labels;
  std::map<std::string, std::vector<int64_t>> s;
  if (c.is_vision()) {
    const int64_t p = c.patch_size;
    s["embeddings.patch_embeddings.projection.weight"] = {Hd, c.num_channels, p, p};
    s["embeddings.patch_embeddings.projection.bias"] = {Hd};
    s["embeddings.cls_token"] = {1, 1, Hd};
    s["embeddings.position_embeddings"] = {1, 1 + c.num_patches(), Hd};
  } else {
    using P = ModelFamily::Projection;
    const P projection = c.family().projection;
    s["embeddings.word_embeddings.weight"] = {c.vocab_size, E};
    if (!c.is_deberta() || c.deberta.position_biased_input)
      s["embeddings.position_embeddings.weight"] = {c.max_position_embeddings, E};
    if (c.type_vocab_size > 0) s["embeddings.token_type_embeddings.weight"] = {c.type_vocab_size, E};
    const int64_t normed = projection == P::BeforeNorm ? Hd : E;
    s["embeddings.LayerNorm.weight"] = {normed};
    s["embeddings.LayerNorm.bias"] = {normed};
    if (E != Hd && projection == P::BeforeNorm) s["embeddings.embed_proj.weight"] = {Hd, E};
    if (E != Hd && projection == P::AfterNorm) {
      s["embeddings_project.weight"] = {Hd, E};
      s["embeddings_project.bias"] = {Hd};
    }
    if (c.is_deberta() && c.deberta.relative_attention) {
      s["encoder.rel_embeddings.weight"] = {2 * c.deberta.span(c.max_position_embeddings), Hd};
      if (c.deberta.norm_rel_ebd) {
        s["encoder.LayerNorm.weight"] = {Hd};
        s["encoder.LayerNorm.bias"] = {Hd};
      }
    }
  }
  // Post-LN blocks name their norms after what they follow, pre-LN (ViT) blocks after what they precede.
  const std::string ln1 = c.pre_layer_norm() ? "layernorm_before" : "attention.output.LayerNorm";
  const std::string ln2 = c.pre_layer_norm() ? "layernorm_after" : "output.LayerNorm";
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = layer_prefix(i);
    for (const char* m : {"attention.self.query", "attention.self.key", "attention.self.value",
                          "attention.output.dense"}) {
      s[p + m + ".weight"] = {Hd, Hd};
      s[p + m + ".bias"] = {Hd};
    }
    s[p + ln1 + ".weight"] = {Hd};
    s[p + ln1 + ".bias"] = {Hd};
    s[p + "intermediate.dense.weight"] = {I, Hd};
    s[p + "intermediate.dense.bias"] = {I};
    s[p + "output.dense.weight"] = {Hd, I};
    s[p + "output.dense.bias"] = {Hd};
    s[p + ln2 + ".weight"] = {Hd};
    s[p + ln2 + ".bias"] = {Hd};
    if (c.is_deberta() && c.deberta.relative_attention && !c.deberta.share_att_key) {
      if (c.deberta.c2p) {
        s[p + "attention.self.pos_key_proj.weight"] = {Hd, Hd};
        s[p + "attention.self.pos_key_proj.bias"] = {Hd};
      }
      if (c.deberta.p2c) {
        s[p + "attention.self.pos_query_proj.weight"] = {Hd, Hd};
        s[p + "attention.self.pos_query_proj.bias"] = {Hd};
      }
    }
  }
  if (c.pools_every_layer()) {
    s[kScalarMixCoefficients] = {c.num_hidden_layers + 1};
    s[kScalarMixScale] = {1};
  }
  // The head (model/family.h): the final LayerNorm and the classifier (ViT), the output layer alone
  // after a scalar mix where the mix replaces the dense layer, else the dense and output layers.
  const ModelFamily& f = c.family();
  auto linear = [&](const std::string& layer, int64_t out, int64_t in) {
    s[layer + ".weight"] = {out, in};
    s[layer + ".bias"] = {out};
  };
  if (f.head == ModelFamily::Head::FinalNorm) {
    s[f.head_dense + ".weight"] = {Hd};
    s[f.head_dense + ".bias"] = {Hd};
    linear(f.head_output, N, Hd);
  } else if (c.pools_every_layer() && f.mix_replaces_dense) {
    linear(f.head_output, N, Hd);
  } else {
    const int64_t dense = f.dense_sized_by_pooler ? c.deberta.pooler_hidden_size : Hd;
    linear(f.head_dense, dense, Hd);
    linear(f.head_output, N, dense);
  }
  return s;
}

// ---- batched matmul ----
namespace {

#ifdef SALIENT_CBLAS
// One operand as [batch, rows, cols] that CBLAS can read without a copy when possible.
struct BlasOperand {
  torch::Tensor t;
  bool trans = false;
  int64_t ld = 0;
};

BlasOperand blas_operand(const torch::Tensor& x) {
  const int64_t r = x.size(-2), c = x.size(-1);
  torch::Tensor y = x.reshape({-1, r, c});
  if (r > 1 && c > 1) {
    if (y.stride(2) == 1 && y.stride(1) >= c) return {y, false, y.stride(1)};
    if (y.stride(1) == 1 && y.stride(2) >= r) return {y, true, y.stride(2)};
  }
  y = y.contiguous();
  return {y, false, std::max<int64_t>(c, 1)};
}

template <typename T>
void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
          int64_t ldc) {
  const CBLAS_TRANSPOSE A = ta ? CblasTrans : CblasNoTrans, B = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, A, B, M, N, K, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
  else
    cblas_dgemm(CblasRowMajor, A, B, M, N, K, 1.0, a, lda, b, ldb, 0.0, c, ldc);
}

torch::Tensor blas_bmm(const torch::Tensor& a, const torch::Tensor& b) {
  BlasOperand A = blas_operand(a), B = blas_operand(b);
  const int64_t batch = A.t.size(0), M = a.size(-2), K = a.size(-1), N = b.size(-1);
  std::vector<int64_t> shape(a.sizes().begin(), a.sizes().end() - 2);
  shape.push_back(M);
  shape.push_back(N);
  torch::Tensor out = torch::empty({batch, M, N}, a.options());
  if (M == 0 || N == 0) return out.view(shape);
  if (K == 0) return out.zero_().view(shape);
  AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), "batched_matmul", [&] {
    const scalar_t* ap = A.t.data_ptr<scalar_t>();
    const scalar_t* bp = B.t.data_ptr<scalar_t>();
    scalar_t* cp = out.data_ptr<scalar_t>();
    const int64_t sa = A.t.stride(0), sb = B.t.stride(0);
    // Enough matrices per task that a thread's share is worth waking it for.
    const int64_t grain = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, M * N * K));
    at::parallel_for(0, batch, grain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i)
        gemm<scalar_t>(A.trans, B.trans, M, N, K, ap + i * sa, A.ld, bp + i * sb, B.ld, cp + i * M * N, N);
    });
  });
  return out.view(shape);
}

class BatchedMatmulFn : public torch::autograd::Function<BatchedMatmulFn> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& a, const torch::Tensor& b) {
    ctx->save_for_backward({a, b});
    return blas_bmm(a, b);
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    const torch::Tensor &a = saved[0], &b = saved[1], &g = grads[0];
    torch::Tensor ga, gb;
    if (ctx->needs_input_grad(0)) ga = batched_matmul(g, b.transpose(-1, -2));
    if (ctx->needs_input_grad(1)) gb = batched_matmul(a.transpose(-1, -2), g);
    return {ga, gb};
  }
};
#endif

}  // namespace

template <typename T>
void gemm_grid(bool ta, bool tb, int64_t n1, int64_t n2, int64_t M, int64_t N, int64_t K, GridOperand<const T> a,
               GridOperand<const T> b, GridOperand<T> c, bool accumulate) {
  if (n1 <= 0 || n2 <= 0 || M <= 0 || N <= 0) return;
  const int64_t grain = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, M * N * K));
  at::parallel_for(0, n1 * n2, grain, [&](int64_t s, int64_t e) {
    for (int64_t t = s; t < e; ++t) {
      const int64_t i = t / n2, j = t % n2;
      const T* ap = a.base + i * a.s1 + j * a.s2;
      const T* bp = b.base + i * b.s1 + j * b.s2;
      T* cp = c.base + i * c.s1 + j * c.s2;
#ifdef SALIENT_CBLAS
      const CBLAS_TRANSPOSE A = ta ? CblasTrans : CblasNoTrans, B = tb ? CblasTrans : CblasNoTrans;
      if constexpr (std::is_same_v<T, float>)
        cblas_sgemm(CblasRowMajor, A, B, M, N, K, 1.0f, ap, a.ld, bp, b.ld, accumulate ? 1.0f : 0.0f, cp, c.ld);
      else
        cblas_dgemm(CblasRowMajor, A, B, M, N, K, 1.0, ap, a.ld, bp, b.ld, accumulate ? 1.0 : 0.0, cp, c.ld);
#else
      const auto dt = std::is_same_v<T, float> ? torch::kFloat32 : torch::kFloat64;
      auto view = [&](const T* p, int64_t rows, int64_t cols, int64_t ld) {
        return torch::from_blob(const_cast<T*>(p), {rows, cols}, {ld, 1}, torch::dtype(dt));
      };
      torch::Tensor x = ta ? view(ap, K, M, a.ld).t() : view(ap, M, K, a.ld);
      torch::Tensor y = tb ? view(bp, N, K, b.ld).t() : view(bp, K, N, b.ld);
      torch::Tensor z = view(cp, M, N, c.ld);
      if (accumulate) z.add_(torch::mm(x, y));
      else z.copy_(torch::mm(x, y));
#endif
    }
  });
}

template void gemm_grid<float>(bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, GridOperand<const float>,
                               GridOperand<const float>, GridOperand<float>, bool);
template void gemm_grid<double>(bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, GridOperand<const double>,
                                GridOperand<const double>, GridOperand<double>, bool);

torch::Tensor batched_matmul(const torch::Tensor& a, const torch::Tensor& b) {
#ifdef SALIENT_CBLAS
  bool ok = a.device().is_cpu() && b.device().is_cpu() && a.scalar_type() == b.scalar_type() &&
            (a.scalar_type() == torch::kFloat32 || a.scalar_type() == torch::kFloat64) && a.dim() >= 3 &&
            a.dim() == b.dim() && a.size(-1) == b.size(-2);
  for (int64_t d = 0; ok && d < a.dim() - 2; ++d) ok = a.size(d) == b.size(d);
  static const bool off = std::getenv("SALIENT_ATEN_BMM") != nullptr;  // A/B switch for bench
  if (ok && !off) return BatchedMatmulFn::apply(a, b);
#endif
  return torch::matmul(a, b);
}

Transformer::Transformer(ModelConfig config, uint64_t seed) : config_(std::move(config)) {
  auto gen = at::detail::createCPUGenerator(seed);
  torch::NoGradGuard no_grad;
  for (const auto& [name, shape] : weight_shapes(config_)) {
    torch::Tensor t = torch::empty(shape, torch::kFloat32);
    const bool is_norm = name.find("LayerNorm") != std::string::npos || name.find("layernorm") != std::string::npos;
    const bool is_bias = name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
    // A scalar mix starts as the plain mean of the states (coefficients 0, γ = 1), as the authors'.
    if ((is_norm && !is_bias) || name == kScalarMixScale) t.fill_(1.0);
    else if (is_bias || name == kScalarMixCoefficients) t.zero_();
    else t.normal_(0.0, 0.02, gen);
    weights_[name] = t;
  }
  // HF zeroes the padding row of the word embeddings.
  if (!config_.is_vision() && config_.pad_token_id >= 0 && config_.pad_token_id < config_.vocab_size)
    weights_["embeddings.word_embeddings.weight"][config_.pad_token_id].zero_();
  bind();
}

const torch::Tensor& Transformer::w(const std::string& name) const {
  auto it = weights_.find(name);
  if (it == weights_.end()) fail("model has no weight '{}'", name);
  return it->second;
}

void Transformer::bind() {
  layers_.clear();
  const std::string ln1 = config_.pre_layer_norm() ? "layernorm_before." : "attention.output.LayerNorm.";
  const std::string ln2 = config_.pre_layer_norm() ? "layernorm_after." : "output.LayerNorm.";
  for (int64_t i = 0; i < config_.num_hidden_layers; ++i) {
    const std::string p = layer_prefix(i);
    LayerWeights l;
    l.q_w = w(p + "attention.self.query.weight");
    l.q_b = w(p + "attention.self.query.bias");
    l.k_w = w(p + "attention.self.key.weight");
    l.k_b = w(p + "attention.self.key.bias");
    l.v_w = w(p + "attention.self.value.weight");
    l.v_b = w(p + "attention.self.value.bias");
    l.o_w = w(p + "attention.output.dense.weight");
    l.o_b = w(p + "attention.output.dense.bias");
    l.ln1_w = w(p + ln1 + "weight");
    l.ln1_b = w(p + ln1 + "bias");
    l.i_w = w(p + "intermediate.dense.weight");
    l.i_b = w(p + "intermediate.dense.bias");
    l.out_w = w(p + "output.dense.weight");
    l.out_b = w(p + "output.dense.bias");
    l.ln2_w = w(p + ln2 + "weight");
    l.ln2_b = w(p + ln2 + "bias");
    layers_.push_back(l);
  }
  auto weight = [&](const std::string& name) -> const torch::Tensor& { return w(name); };
  auto optional = [&](const std::string& name) {
    auto it = weights_.find(name);
    return it == weights_.end() ? torch::Tensor() : it->second;
  };
  for (int64_t i = 0; i < config_.num_hidden_layers; ++i) {
    LayerWeights& l = layers_[static_cast<size_t>(i)];
    const std::string p = layer_prefix(i) + "attention.self.";
    l.pos_key_w = optional(p + "pos_key_proj.weight");
    l.pos_key_b = optional(p + "pos_key_proj.bias");
    l.pos_query_w = optional(p + "pos_query_proj.weight");
    l.pos_query_b = optional(p + "pos_query_proj.bias");
  }
  rel_embeddings_ = optional("encoder.rel_embeddings.weight");
  rel_ln_w_ = optional("encoder.LayerNorm.weight");
  rel_ln_b_ = optional("encoder.LayerNorm.bias");
  text_ = TextEmbeddings();
  patches_ = PatchEmbeddings();
  if (config_.is_vision()) patches_ = PatchEmbeddings(config_, weight);
  else text_ = TextEmbeddings(config_, weight, optional);
  head_ = make_sequence_classification_head(config_, weight);
}

Transformer::PoolerClassifierWeights Transformer::pooler_classifier(const std::string& who) const {
  const std::string refusal = config_.lrp_refusal();
  if (!refusal.empty()) fail("{}: {}", who, refusal);
  return {w("pooler.dense.weight"), w("pooler.dense.bias"), w("classifier.weight"), w("classifier.bias")};
}

std::vector<std::string> Transformer::expected_weight_names() const {
  std::vector<std::string> names;
  for (const auto& kv : weight_shapes(config_)) names.push_back(kv.first);
  return names;
}

void Transformer::set_weights(std::map<std::string, torch::Tensor> weights) {
  weights_ = std::move(weights);
  bind();
}

std::vector<torch::Tensor> Transformer::parameters() const {
  std::vector<torch::Tensor> out;
  for (const auto& kv : weights_) out.push_back(kv.second);
  return out;
}

void Transformer::set_requires_grad(bool on) {
  for (auto& kv : weights_) kv.second.requires_grad_(on);
}

void Transformer::to(torch::Device device, torch::Dtype dtype) {
  torch::NoGradGuard no_grad;
  for (auto& kv : weights_) {
    const bool rg = kv.second.requires_grad();
    kv.second = kv.second.to(device, dtype).detach().requires_grad_(rg);
  }
  bind();
}

void Transformer::to(torch::Dtype dtype) { to(device(), dtype); }

torch::Device Transformer::device() const { return weights_.begin()->second.device(); }
torch::Dtype Transformer::dtype() const { return weights_.begin()->second.scalar_type(); }

int64_t Transformer::parameter_count() const {
  int64_t n = 0;
  for (const auto& kv : weights_) n += kv.second.numel();
  return n;
}

Transformer Transformer::clone() const {
  Transformer copy;
  copy.config_ = config_;
  copy.training_ = training_;
  torch::NoGradGuard no_grad;
  for (const auto& kv : weights_)
    copy.weights_[kv.first] = kv.second.detach().clone().requires_grad_(kv.second.requires_grad());
  copy.bind();
  return copy;
}

Transformer Transformer::with_position_table(int64_t positions) const {
  if (config_.is_vision()) fail("position table: a ViT's positions are fixed by its image and patch sizes");
  const int64_t learned = config_.max_position_embeddings;
  if (positions <= config_.position_offset)
    fail("position table: {} rows leave no positions after the offset {}", positions, config_.position_offset);
  Transformer copy = clone();
  copy.config_.max_position_embeddings = positions;
  torch::NoGradGuard no_grad;
  torch::Tensor& table = copy.weights_.at("embeddings.position_embeddings.weight");
  const bool grad = table.requires_grad();
  // Rows below the offset (RoBERTa's padding positions) are never repeated.
  const int64_t off = config_.position_offset, period = learned - off;
  torch::Tensor rows = torch::arange(positions, torch::kLong);
  rows = torch::where(rows < off, rows, off + (rows - off) % period);
  table = table.index_select(0, rows.to(table.device())).contiguous().requires_grad_(grad);
  copy.bind();
  return copy;
}

torch::Tensor Transformer::activation(const torch::Tensor& x) const {
  switch (config_.hidden_act) {
    case Activation::GeluExact: return torch::gelu(x);
    case Activation::GeluTanh: return torch::gelu(x, "tanh");
    case Activation::Relu: return torch::relu(x);
  }
  return x;
}

torch::Tensor Transformer::dropout(const torch::Tensor& x, double p) const {
  return (training_ && p > 0) ? torch::dropout(x, p, true) : x;
}

const TextEmbeddings& Transformer::text_embeddings() const {
  if (config_.is_vision())
    fail("this is a vision transformer (model_type vit): it takes pixel values, not token ids or word embeddings");
  return text_;
}

const PatchEmbeddings& Transformer::patch_embedding_piece() const {
  if (!config_.is_vision())
    fail("this is a text model (model_type {}): it takes token ids, not pixel values", config_.model_type);
  return patches_;
}

torch::Tensor Transformer::word_embeddings(const torch::Tensor& input_ids) const {
  return text_embeddings().words(input_ids);
}

torch::Tensor Transformer::embedding_offsets(const torch::Tensor& token_type_ids, const torch::Tensor& attention_mask,
                                             int64_t B, int64_t L) const {
  return text_embeddings().offsets(token_type_ids, attention_mask, B, L);
}

torch::Tensor Transformer::embed(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                                 const torch::Tensor& attention_mask, const torch::Tensor& inputs_embeds) const {
  return text_embeddings().forward(input_ids, token_type_ids, attention_mask, inputs_embeds, training_);
}

torch::Tensor Transformer::patch_embeddings(const torch::Tensor& pixel_values) const {
  return patch_embedding_piece().patches(pixel_values);
}

torch::Tensor Transformer::embed_patches(const torch::Tensor& patch_embeds) const {
  return patch_embedding_piece().forward(patch_embeds, training_);
}

torch::Tensor Transformer::extended_mask(const torch::Tensor& attention_mask, int64_t batch, int64_t length) const {
  auto opts = torch::TensorOptions().dtype(dtype()).device(device());
  if (!attention_mask.defined()) return torch::zeros({batch, 1, 1, length}, opts);
  return ((1.0 - attention_mask.to(opts)) * -10000.0).view({batch, 1, 1, length});
}

torch::Tensor Transformer::attention_input(int64_t layer, const torch::Tensor& hidden) const {
  if (!config_.pre_layer_norm()) return hidden;
  const LayerWeights& l = layers_.at(layer);
  return torch::layer_norm(hidden, {config_.hidden_size}, l.ln1_w, l.ln1_b, config_.layer_norm_eps);
}

QKV Transformer::project_qkv(int64_t layer, const torch::Tensor& hidden) const {
  const LayerWeights& l = layers_.at(layer);
  const int64_t B = hidden.size(0), L = hidden.size(1), H = num_heads(), D = config_.head_dim();
  auto heads = [&](const torch::Tensor& t) { return t.view({B, L, H, D}).transpose(1, 2); };
  const torch::Tensor x = attention_input(layer, hidden);
  return {heads(torch::linear(x, l.q_w, l.q_b)), heads(torch::linear(x, l.k_w, l.k_b)),
          heads(torch::linear(x, l.v_w, l.v_b))};
}

torch::Tensor Transformer::relative_positions(int64_t length) const {
  // HF build_relative_position and make_log_bucket_position (modeling_deberta_v2.py), in the same
  // float operations: query i, key j → i − j, beyond ±bucket/2 on a log scale up to the span.
  const ModelConfig::Deberta& d = config_.deberta;
  const torch::Tensor ids = torch::arange(length, torch::TensorOptions(torch::kLong).device(device()));
  torch::Tensor rel = ids.unsqueeze(1) - ids.unsqueeze(0);  // [L, L]
  const int64_t buckets = d.position_buckets, max_position = d.max_relative_positions < 1
                                                                   ? config_.max_position_embeddings
                                                                   : d.max_relative_positions;
  if (buckets > 0 && max_position > 0) {
    const int64_t mid = buckets / 2;
    const torch::Tensor sign = torch::sign(rel);
    const torch::Tensor abs_pos = torch::where((rel < mid) & (rel > -mid), torch::full_like(rel, mid - 1), torch::abs(rel));
    const torch::Tensor log_pos =
        torch::ceil(torch::log(abs_pos / static_cast<double>(mid)) /
                    torch::log(torch::full({}, static_cast<double>(max_position - 1) / static_cast<double>(mid),
                                           torch::TensorOptions(torch::kFloat32).device(device()))) *
                    static_cast<double>(mid - 1)) +
        static_cast<double>(mid);
    rel = torch::where(abs_pos <= mid, rel.to(log_pos.scalar_type()), log_pos * sign).to(torch::kLong);
  }
  return rel;
}

torch::Tensor Transformer::disentangled_bias(int64_t layer, const QKV& qkv) const {
  const ModelConfig::Deberta& d = config_.deberta;
  const LayerWeights& l = layers_.at(layer);
  const int64_t L = qkv.q.size(2), H = num_heads(), D = config_.head_dim();
  const int64_t span = d.span(config_.max_position_embeddings);
  torch::Tensor rel = rel_embeddings_.slice(0, 0, 2 * span);
  if (rel_ln_w_.defined()) rel = torch::layer_norm(rel, {config_.hidden_size}, rel_ln_w_, rel_ln_b_, config_.layer_norm_eps);
  rel = dropout(rel, config_.hidden_dropout_prob);  // HF's pos_dropout
  auto heads = [&](const torch::Tensor& t) { return t.view({2 * span, H, D}).transpose(0, 1); };  // [H, 2S, D]
  const torch::Tensor positions = relative_positions(L);  // on the model's device, as HF's
  const double scale = deberta_scale(config_);
  const std::vector<int64_t> expanded = {qkv.q.size(0), H, L, L};
  torch::Tensor bias;
  if (d.c2p) {  // content → position: q_i · k_pos(δ(i, j))
    const torch::Tensor pos_key = heads(d.share_att_key ? torch::linear(rel, l.k_w, l.k_b) : torch::linear(rel, l.pos_key_w, l.pos_key_b));
    const torch::Tensor att = torch::matmul(qkv.q, pos_key.transpose(-1, -2));  // [B, H, L, 2S]
    const torch::Tensor index = torch::clamp(positions + span, 0, 2 * span - 1).expand(expanded);
    bias = torch::gather(att, -1, index) / scale;
  }
  if (d.p2c) {  // position → content: k_j · q_pos(δ(j, i)), gathered per key and transposed
    const torch::Tensor pos_query =
        heads(d.share_att_key ? torch::linear(rel, l.q_w, l.q_b) : torch::linear(rel, l.pos_query_w, l.pos_query_b));
    const torch::Tensor att = torch::matmul(qkv.k, pos_query.transpose(-1, -2));  // [B, H, L, 2S]
    const torch::Tensor index = torch::clamp(-positions + span, 0, 2 * span - 1).expand(expanded);
    const torch::Tensor term = torch::gather(att, -1, index).transpose(-1, -2) / scale;
    bias = bias.defined() ? bias + term : term;
  }
  return bias;
}

torch::Tensor Transformer::attention_scores(int64_t layer, const QKV& qkv, const torch::Tensor& ext_mask) const {
  if (!config_.is_deberta()) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(config_.head_dim()));
    return batched_matmul(qkv.q, qkv.k.transpose(-1, -2)) * scale + ext_mask;
  }
  const ModelConfig::Deberta& d = config_.deberta;
  torch::Tensor scores = batched_matmul(qkv.q, qkv.k.transpose(-1, -2) / deberta_scale(config_));
  if (d.relative_attention && (d.c2p || d.p2c)) scores = scores + disentangled_bias(layer, qkv);
  return scores + ext_mask;
}

torch::Tensor Transformer::finish_layer(int64_t layer, const torch::Tensor& hidden, const torch::Tensor& probs,
                                        const torch::Tensor& v) const {
  // probs may carry a leading batch larger than hidden's (e.g. m integration points sharing one
  // input); broadcasting in matmul and the residual handles it.
  torch::Tensor ctx = batched_matmul(probs, v);  // [B', H, L, D] (broadcast B' falls back to torch::matmul)
  const int64_t B = ctx.size(0), L = ctx.size(2);
  return finish_from_context(layer, hidden, ctx.transpose(1, 2).reshape({B, L, config_.hidden_size}));
}

torch::Tensor Transformer::finish_from_context(int64_t layer, const torch::Tensor& hidden,
                                               const torch::Tensor& ctx) const {
  const LayerWeights& l = layers_.at(layer);
  const int64_t Hd = config_.hidden_size;
  torch::Tensor attn_out = dropout(torch::linear(ctx, l.o_w, l.o_b), config_.hidden_dropout_prob);
  if (config_.pre_layer_norm()) {
    // ViTLayer: h = x + attention(LN_before(x)); out = h + FF(LN_after(h)).
    torch::Tensor h = attn_out + hidden;
    torch::Tensor ff = activation(torch::linear(torch::layer_norm(h, {Hd}, l.ln2_w, l.ln2_b, config_.layer_norm_eps),
                                                l.i_w, l.i_b));
    return h + dropout(torch::linear(ff, l.out_w, l.out_b), config_.hidden_dropout_prob);
  }
  torch::Tensor h1 = torch::layer_norm(attn_out + hidden, {Hd}, l.ln1_w, l.ln1_b, config_.layer_norm_eps);
  torch::Tensor ff = activation(torch::linear(h1, l.i_w, l.i_b));
  ff = dropout(torch::linear(ff, l.out_w, l.out_b), config_.hidden_dropout_prob);
  return torch::layer_norm(ff + h1, {Hd}, l.ln2_w, l.ln2_b, config_.layer_norm_eps);
}

torch::Tensor Transformer::first_token_layer(int64_t layer, const torch::Tensor& hidden,
                                             const torch::Tensor& ext_mask) const {
  // DeBERTa's keys carry relative positions: the shortcut's algebra does not hold.
  if (config_.is_deberta()) return layer_forward(layer, hidden, ext_mask).slice(1, 0, 1);
  const LayerWeights& l = layers_.at(layer);
  const int64_t B = hidden.size(0), L = hidden.size(1), H = num_heads(), D = config_.head_dim(),
                Hd = config_.hidden_size;
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  // Keys and values read the normalised states in a pre-LN block; the residual reads the raw ones.
  const torch::Tensor raw = hidden;
  const torch::Tensor x = attention_input(layer, hidden);
  torch::Tensor h0 = x.select(1, 0);                                                       // [B, Hd]
  torch::Tensor q = torch::linear(h0, l.q_w, l.q_b).view({B, H, D}).transpose(0, 1);      // [H, B, D]
  torch::Tensor qk = batched_matmul(q, l.k_w.view({H, D, Hd})).transpose(0, 1) * scale;   // [B, H, Hd]
  torch::Tensor scores = batched_matmul(qk, x.transpose(1, 2));                           // [B, H, L]
  scores = scores + ext_mask.reshape({ext_mask.size(0), 1, L});
  torch::Tensor probs = dropout(torch::softmax(scores, -1), config_.attention_probs_dropout_prob);
  torch::Tensor ph = batched_matmul(probs, x).transpose(0, 1);                            // [H, B, Hd]
  torch::Tensor ctx = batched_matmul(ph, l.v_w.view({H, D, Hd}).transpose(1, 2));         // [H, B, D]
  ctx = (ctx + l.v_b.view({H, 1, D})).transpose(0, 1).reshape({B, 1, Hd});
  return finish_from_context(layer, raw.slice(1, 0, 1), ctx);
}

torch::Tensor Transformer::layer_forward(int64_t layer, const torch::Tensor& hidden, const torch::Tensor& ext_mask,
                                         const LayerHooks* hooks, ForwardResult* record,
                                         const ForwardRequest* req) const {
  QKV qkv = project_qkv(layer, hidden);
  torch::Tensor scores = attention_scores(layer, qkv, ext_mask);
  torch::Tensor probs = torch::softmax(scores, -1);
  // DeBERTa's XSoftmax masks queries too: a padding position attends to nothing.
  if (config_.is_deberta() && ext_mask.defined() && ext_mask.size(-1) == probs.size(-1))
    probs = probs * ext_mask.transpose(-1, -2).eq(0).to(probs.scalar_type());
  if (hooks) {
    // Hook tensors may come from the CPU; .to() is a no-op on the model's device and keeps the
    // gradient path to the caller's tensor either way.
    const torch::Device dev = probs.device();
    if (hooks->attn_override.defined()) probs = hooks->attn_override.to(dev);
    if (hooks->attn_scale.defined()) probs = probs * hooks->attn_scale.to(dev);
    if (hooks->head_mask.defined()) {
      const torch::Tensor hm = hooks->head_mask.to(dev);
      probs = probs * (hm.dim() == 1 ? hm.view({1, -1, 1, 1}) : hm.view({hm.size(0), hm.size(1), 1, 1}));
    }
  }
  probs = dropout(probs, config_.attention_probs_dropout_prob);
  if (record && req) {
    if (req->want_attentions) record->attentions.push_back(probs);
    if (req->want_attention_logits) record->attention_logits.push_back(scores);
    if (req->want_queries_keys) {
      record->queries.push_back(qkv.q);
      record->keys.push_back(qkv.k);
    }
  }
  return finish_layer(layer, hidden, probs, qkv.v);
}

torch::Tensor Transformer::run_layers(int64_t from, torch::Tensor hidden, const torch::Tensor& ext_mask,
                                      const std::vector<LayerHooks>& hooks, std::vector<torch::Tensor>* states) const {
  for (int64_t i = from; i < num_layers(); ++i) {
    hidden = layer_forward(i, hidden, ext_mask, hooks.empty() ? nullptr : &hooks[i]);
    if (states) states->push_back(hidden);
  }
  return hidden;
}

torch::Tensor Transformer::classify(const torch::Tensor& last_hidden) const {
  if (pools_every_layer())
    fail("internal: classify() reads the last layer, but this model's head mixes every layer (salient_pooling {})",
         config_.pooling);
  return head_->forward(last_hidden, training_);
}

torch::Tensor Transformer::classify_states(const std::vector<torch::Tensor>& states,
                                           const torch::Tensor& attention_mask) const {
  if (static_cast<int64_t>(states.size()) != num_layers() + 1)
    fail("internal: classify_states: {} states for a model with {} layers (needs {})", states.size(), num_layers(),
         num_layers() + 1);
  if (!pools_every_layer()) return head_->forward(states.back(), training_);
  torch::Tensor mask = attention_mask.defined() ? attention_mask.to(states.back().device()) : attention_mask;
  return head_->forward(scalar_mix(states, w(kScalarMixCoefficients), w(kScalarMixScale), mask,
                                   config_.pooling == "scalar_mix_cls"),
                        training_);
}

ForwardResult Transformer::forward(const ForwardRequest& req) const {
  if (!req.hooks.empty() && static_cast<int64_t>(req.hooks.size()) != num_layers())
    fail("forward: {} layer hooks given for a model with {} layers", req.hooks.size(), num_layers());
  torch::Tensor hidden;
  if (config_.is_vision()) {
    if (req.input_ids.defined()) fail("forward: a vision transformer takes pixel_values, not input_ids");
    if (!req.pixel_values.defined() && !req.inputs_embeds.defined())
      fail("forward: a vision transformer needs pixel_values or inputs_embeds (patch embeddings)");
    hidden = embed_patches(req.inputs_embeds.defined() ? req.inputs_embeds : patch_embeddings(req.pixel_values));
  } else {
    if (req.pixel_values.defined())
      fail("forward: pixel_values given to a text model (model_type {})", config_.model_type);
    if (!req.input_ids.defined() && !req.inputs_embeds.defined())
      fail("forward: neither input_ids nor inputs_embeds given");
    hidden = embed(req.input_ids, req.token_type_ids, req.attention_mask, req.inputs_embeds);
  }
  const int64_t B = hidden.size(0), L = hidden.size(1);
  ForwardResult out;
  torch::Tensor ext = extended_mask(req.attention_mask, B, L);
  // A head that mixes every layer needs every state even when the caller does not ask for them.
  const bool keep_states = req.want_hidden_states || pools_every_layer();
  std::vector<torch::Tensor> states;
  if (keep_states) states.push_back(hidden);
  for (int64_t i = 0; i < num_layers(); ++i) {
    hidden = layer_forward(i, hidden, ext, req.hooks.empty() ? nullptr : &req.hooks[i], &out, &req);
    if (keep_states) states.push_back(hidden);
  }
  // ViT has no padding; text masks come as given (undefined: every token counts).
  out.logits = pools_every_layer() ? classify_states(states, req.attention_mask) : classify(hidden);
  if (req.want_hidden_states) out.hidden_states = std::move(states);
  return out;
}

torch::Tensor Transformer::logits(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                                  const torch::Tensor& attention_mask) const {
  ForwardRequest req;
  req.input_ids = input_ids;
  req.token_type_ids = token_type_ids;
  req.attention_mask = attention_mask;
  return forward(req).logits;
}

}  // namespace salient
