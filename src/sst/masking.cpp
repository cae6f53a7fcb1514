#include "sst/masking.h"

#include <cmath>

#include "util/error.h"

namespace salient::sst {

namespace F = torch::nn::functional;

MaskKind parse_mask_kind(const std::string& name, const std::string& flag) {
  if (name == "none") return MaskKind::None;
  if (name == "baseline") return MaskKind::Baseline;
  if (name == "probabilistic") return MaskKind::Probabilistic;
  if (name == "robust") return MaskKind::Robust;
  fail("{}: expected none, baseline, probabilistic or robust, got '{}'", flag, name);
}

std::string mask_kind_name(MaskKind kind) {
  switch (kind) {
    case MaskKind::None: return "none";
    case MaskKind::Baseline: return "baseline";
    case MaskKind::Probabilistic: return "probabilistic";
    case MaskKind::Robust: return "robust";
  }
  return "?";
}

NoiseFill parse_noise_fill(const std::string& name, const std::string& flag) {
  if (name == "sax") return NoiseFill::Sax;
  if (name == "domain") return NoiseFill::Domain;
  fail("{}: expected sax or domain, got '{}'", flag, name);
}

std::string noise_fill_name(NoiseFill fill) { return fill == NoiseFill::Sax ? "sax" : "domain"; }

nlohmann::json FillOptions::to_json() const {
  return {{"epsilon", epsilon}, {"step", step}, {"steps", steps}, {"random_start", random_start},
          {"noise", noise_fill_name(noise)}};
}

void FillOptions::validate(const std::string& who, bool robust) const {
  if (!(epsilon > 0 && epsilon <= 1)) fail("{}--epsilon: must be in (0, 1], got {}", who, epsilon);
  if (!robust) return;
  if (!(step > 0 && step <= 1)) fail("{}--pgd-step: must be in (0, 1], got {}", who, step);
  if (steps < 1) fail("{}--pgd-steps: must be at least 1, got {}", who, steps);
}

torch::Tensor ordinary_token_ids(const Tokenizer& tok) {
  std::vector<int64_t> ids = tok.ordinary_ids();
  if (ids.empty()) fail("tokenizer: no ordinary tokens to draw random fills from");
  return torch::tensor(ids, torch::kInt64);
}

torch::Tensor keep_of(const torch::Tensor& subset, const torch::Tensor& features) {
  return subset.logical_or(features.logical_not());
}

namespace {

torch::Tensor per_row_loss(const torch::Tensor& logits, const torch::Tensor& target) {
  return F::cross_entropy(logits, target, F::CrossEntropyFuncOptions().reduction(torch::kNone));
}

}  // namespace

torch::Tensor pgd_complement(const std::function<torch::Tensor(const torch::Tensor&)>& logits_of, const torch::Tensor& x,
                             const torch::Tensor& keep, const torch::Tensor& target, const FillOptions& a,
                             at::Generator& gen, double lo, double hi) {
  const torch::Tensor kept = keep.to(torch::kBool);
  const torch::Tensor x0 = x.detach();
  auto project = [&](const torch::Tensor& adv) {
    torch::Tensor p = torch::min(torch::max(adv, x0 - a.epsilon), x0 + a.epsilon).clamp(lo, hi);
    return torch::where(kept, x0, p);
  };
  torch::Tensor adv = x0.clone();
  if (a.random_start) adv = project(x0 + (torch::rand(x0.sizes(), gen, x0.scalar_type()) * 2 - 1) * a.epsilon);
  torch::Tensor best = adv.clone();
  torch::Tensor best_loss = torch::full({x0.size(0)}, -std::numeric_limits<double>::infinity(), x0.options());
  for (int step = 0; step <= a.steps; ++step) {
    torch::Tensor v = adv.detach().set_requires_grad(true);
    torch::Tensor loss = per_row_loss(logits_of(v), target);
    {
      torch::NoGradGuard ng;
      torch::Tensor better = loss.detach() > best_loss;
      best = torch::where(better.unsqueeze(1), v.detach(), best);
      best_loss = torch::where(better, loss.detach(), best_loss);
    }
    if (step == a.steps) break;  // the last iterate is scored, not stepped from
    torch::Tensor grad = torch::autograd::grad({loss.sum()}, {v})[0];
    torch::NoGradGuard ng;
    adv = project(adv + a.step * grad.sign());
  }
  return best;
}

torch::Tensor hotflip_complement(const SstModel& model, const FeatureBatch& x, const torch::Tensor& keep,
                                 const torch::Tensor& target, int steps, const torch::Tensor& vocabulary) {
  const Transformer& net = text_classifier(model).model;
  const torch::Tensor emb = net.embedding_weights().word.detach();  // [V, E]
  const torch::Tensor allowed = torch::zeros({emb.size(0)}, torch::kBool).index_fill_(0, vocabulary, true);
  const torch::Tensor open = keep.to(torch::kBool).logical_not();  // the complement
  torch::Tensor ids = x.values.clone();
  torch::Tensor best = ids.clone();
  torch::Tensor best_loss = torch::full({x.size()}, -std::numeric_limits<double>::infinity());
  torch::Tensor flipped = torch::zeros_like(open);  // each position flips at most once
  for (int step = 0; step <= steps; ++step) {
    torch::Tensor e = net.word_embeddings(ids).detach().set_requires_grad(true);
    torch::Tensor loss = per_row_loss(text_embedding_logits(model, x, e), target);
    {
      torch::NoGradGuard ng;
      torch::Tensor better = loss.detach() > best_loss;
      best = torch::where(better.unsqueeze(1), ids, best);
      best_loss = torch::where(better, loss.detach(), best_loss);
    }
    if (step == steps) break;
    torch::Tensor g = torch::autograd::grad({loss.sum()}, {e})[0];  // [B, L, E]
    torch::NoGradGuard ng;
    for (int64_t b = 0; b < ids.size(0); ++b) {
      torch::Tensor positions = open[b].logical_and(flipped[b].logical_not()).nonzero().flatten();
      if (positions.numel() == 0) continue;
      torch::Tensor gb = g[b].index_select(0, positions);                   // [n, E]
      torch::Tensor gain = torch::matmul(gb, emb.t());                     // [n, V]: g·e_new
      gain -= (gb * emb.index_select(0, ids[b].index_select(0, positions))).sum(1, true);  // − g·e_old
      gain.masked_fill_(allowed.logical_not().unsqueeze(0), -std::numeric_limits<float>::infinity());
      const int64_t flat = gain.flatten().argmax().item<int64_t>();
      const int64_t pos = positions[flat / gain.size(1)].item<int64_t>();
      ids[b][pos] = flat % gain.size(1);
      flipped[b][pos] = true;
    }
  }
  return best;
}

torch::Tensor complement_fill(const SstModel& model, const FeatureBatch& x, const torch::Tensor& keep, MaskKind kind,
                              const torch::Tensor& target, const FillOptions& options, at::Generator& gen,
                              const torch::Tensor& vocabulary) {
  const bool text = model.modality() == "text";
  const bool sax = options.noise == NoiseFill::Sax;
  const torch::Tensor kept = keep.to(torch::kBool);
  torch::Tensor vocab = vocabulary;
  if (text && !vocab.defined() && (kind == MaskKind::Robust || (kind == MaskKind::Probabilistic && !sax)))
    vocab = ordinary_token_ids(text_classifier(model).tokenizer);
  switch (kind) {
    case MaskKind::None:
      return x.values;
    case MaskKind::Baseline:
      if (text) return torch::where(kept, x.values, torch::full_like(x.values, text_classifier(model).tokenizer.mask_id()));
      return torch::where(kept, x.values, torch::zeros_like(x.values));
    case MaskKind::Probabilistic: {
      if (text) {
        if (sax) {  // any id of the embedding table, as randint(0, vocabulary size)
          const int64_t v = text_classifier(model).model.embedding_weights().word.size(0);
          return torch::where(kept, x.values, torch::randint(v, x.values.sizes(), gen, torch::kInt64));
        }
        torch::Tensor pick = torch::randint(vocab.size(0), x.values.sizes(), gen, torch::kInt64);
        return torch::where(kept, x.values, vocab.index_select(0, pick.flatten()).view(x.values.sizes()));
      }
      torch::Tensor u = torch::rand(x.values.sizes(), gen, x.values.scalar_type());
      if (sax) u = (x.values + options.epsilon * u).clamp(0.0, 1.0);
      return torch::where(kept, x.values, u);
    }
    case MaskKind::Robust: {
      if (text) return hotflip_complement(model, x, kept, target, options.steps, vocab);
      const torch::Tensor ones = torch::ones(x.values.sizes(), torch::kFloat32);
      auto logits_of = [&](const torch::Tensor& v) {
        FeatureBatch b = x;
        b.values = v;
        return model.mixed_logits(b, v, ones);
      };
      return pgd_complement(logits_of, x.values, kept, target, options, gen);
    }
  }
  return x.values;
}

std::vector<double> subset_faithfulness(const SstModel& model, const FeatureBatch& x, const torch::Tensor& subset,
                                        const torch::Tensor& target, MaskKind kind, const FillOptions& options,
                                        int samples, at::Generator& gen, const torch::Tensor& vocabulary) {
  if (kind == MaskKind::None) fail("faithfulness: masking kind 'none' has no complement to test");
  if (samples < 1) fail("--samples: must be at least 1, got {}", samples);
  const torch::Tensor keep = keep_of(subset, x.features);
  const torch::Tensor keep_f = keep.to(torch::kFloat32);
  const int repeats = kind == MaskKind::Probabilistic ? samples : 1;
  torch::Tensor hits = torch::zeros({x.size()}, torch::kFloat64);
  for (int r = 0; r < repeats; ++r) {
    torch::Tensor fill = complement_fill(model, x, keep, kind, target, options, gen, vocabulary);
    torch::NoGradGuard ng;
    hits += model.mixed_logits(x, fill, keep_f).argmax(1).eq(target).to(torch::kFloat64);
  }
  hits /= repeats;
  return std::vector<double>(hits.data_ptr<double>(), hits.data_ptr<double>() + hits.numel());
}

}  // namespace salient::sst
