#include "model/embeddings.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/error.h"

namespace salient {
namespace {

std::string shape_of(const torch::Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes().vec(), ", ")); }

torch::Tensor embedding_dropout(const torch::Tensor& x, double p, bool training) {
  return (training && p > 0) ? torch::dropout(x, p, true) : x;
}

}  // namespace

TextEmbeddings::TextEmbeddings(const ModelConfig& config, const WeightLookup& weight,
                               const OptionalWeightLookup& optional)
    : config_(config) {
  w_.word = weight("embeddings.word_embeddings.weight");
  w_.position = optional("embeddings.position_embeddings.weight");  // DeBERTa without position_biased_input: none
  w_.token_type = optional("embeddings.token_type_embeddings.weight");
  w_.ln_w = weight("embeddings.LayerNorm.weight");
  w_.ln_b = weight("embeddings.LayerNorm.bias");
  using P = ModelFamily::Projection;
  const P projection = config.family().projection;
  if (projection == P::BeforeNorm) w_.project_w = optional("embeddings.embed_proj.weight");  // no bias
  if (projection == P::AfterNorm) {
    w_.project_w = optional("embeddings_project.weight");
    w_.project_b = optional("embeddings_project.bias");
  }
}

torch::Tensor TextEmbeddings::words(const torch::Tensor& input_ids) const {
  return torch::embedding(w_.word, input_ids.to(w_.word.device()));  // ids may come from the CPU
}

torch::Tensor TextEmbeddings::offsets(const torch::Tensor& token_type_ids, const torch::Tensor& attention_mask,
                                      int64_t B, int64_t L) const {
  auto long_opts = torch::TensorOptions().dtype(torch::kLong).device(w_.word.device());
  if (L > config_.max_tokens()) fail("input has {} tokens but the model allows at most {}", L, config_.max_tokens());
  if (!w_.position.defined()) {  // DeBERTa-v3: positions enter the attention only
    torch::Tensor x = torch::zeros({B, L, config_.embed_dim()}, w_.word.options());
    if (config_.type_vocab_size > 0)
      x = x + torch::embedding(w_.token_type, token_type_ids.defined() ? token_type_ids.to(long_opts.device())
                                                                       : torch::zeros({B, L}, long_opts));
    return x;
  }
  torch::Tensor positions;
  if (config_.family().positions_after_padding) {
    // RoBERTa numbers real tokens from pad_token_id + 1; padding gets pad_token_id.
    torch::Tensor m = attention_mask.defined() ? attention_mask.to(long_opts) : torch::ones({B, L}, long_opts);
    positions = torch::cumsum(m, 1) * m + config_.pad_token_id;
  } else {
    positions = torch::arange(L, long_opts).unsqueeze(0).expand({B, L});
  }
  torch::Tensor x = torch::embedding(w_.position, positions);
  if (config_.type_vocab_size > 0) {
    torch::Tensor types =
        token_type_ids.defined() ? token_type_ids.to(long_opts.device()) : torch::zeros({B, L}, long_opts);
    x = x + torch::embedding(w_.token_type, types);
  }
  return x;
}

torch::Tensor TextEmbeddings::forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                                      const torch::Tensor& attention_mask, const torch::Tensor& inputs_embeds,
                                      bool training) const {
  torch::Tensor x = inputs_embeds.defined() ? inputs_embeds : words(input_ids);
  x = x + offsets(token_type_ids, attention_mask, x.size(0), x.size(1));
  if (config_.family().projection == ModelFamily::Projection::BeforeNorm) {
    // DebertaV2Embeddings: the projection before the LayerNorm, then the padding zeroed.
    if (w_.project_w.defined()) x = torch::linear(x, w_.project_w);
    x = torch::layer_norm(x, {config_.hidden_size}, w_.ln_w, w_.ln_b, config_.layer_norm_eps);
    if (attention_mask.defined()) x = x * attention_mask.to(x.device(), x.scalar_type()).unsqueeze(-1);
    return embedding_dropout(x, config_.hidden_dropout_prob, training);
  }
  x = torch::layer_norm(x, {config_.embed_dim()}, w_.ln_w, w_.ln_b, config_.layer_norm_eps);
  x = embedding_dropout(x, config_.hidden_dropout_prob, training);
  if (w_.project_w.defined()) x = torch::linear(x, w_.project_w, w_.project_b);
  return x;
}

PatchEmbeddings::PatchEmbeddings(const ModelConfig& config, const WeightLookup& weight) : config_(config) {
  w_.projection_w = weight("embeddings.patch_embeddings.projection.weight");
  w_.projection_b = weight("embeddings.patch_embeddings.projection.bias");
  w_.cls_token = weight("embeddings.cls_token");
  w_.position = weight("embeddings.position_embeddings");
}

torch::Tensor PatchEmbeddings::patches(const torch::Tensor& pixel_values) const {
  const int64_t C = config_.num_channels, S = config_.image_size, p = config_.patch_size;
  if (pixel_values.dim() != 4 || pixel_values.size(1) != C || pixel_values.size(2) != S || pixel_values.size(3) != S)
    fail("pixel_values: expected [batch, {}, {}, {}], got {}", C, S, S, shape_of(pixel_values));
  // Non-overlapping patches: the convolution is one matrix product per patch. Unfolding into
  // [B, P, C·p·p] rows and one linear map is the same sum in the same (c, i, j) order as HF's Conv2d.
  const int64_t B = pixel_values.size(0), n = S / p;
  torch::Tensor x = pixel_values.to(w_.projection_w.device(), w_.projection_w.scalar_type());
  x = x.reshape({B, C, n, p, n, p}).permute({0, 2, 4, 1, 3, 5}).reshape({B, n * n, C * p * p});
  return torch::linear(x, w_.projection_w.reshape({w_.projection_w.size(0), -1}), w_.projection_b);
}

torch::Tensor PatchEmbeddings::forward(const torch::Tensor& patch_embeds, bool training) const {
  const int64_t B = patch_embeds.size(0);
  if (patch_embeds.dim() != 3 || patch_embeds.size(1) != config_.num_patches())
    fail("patch embeddings: expected [batch, {}, {}], got {}", config_.num_patches(), config_.hidden_size,
         shape_of(patch_embeds));
  torch::Tensor x = torch::cat({w_.cls_token.expand({B, 1, -1}), patch_embeds}, 1) + w_.position;
  return embedding_dropout(x, config_.hidden_dropout_prob, training);
}

}  // namespace salient
