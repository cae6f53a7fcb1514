#pragma once
// What replaces the features outside a subset (the complement), in the three senses of
// sufficiency of Bassan et al.: a fixed baseline, random values, or an adversary.
//   baseline       images: 0; text: [MASK]
//   probabilistic  random values, drawn as NoiseFill says (the authors' ε-noise by default)
//   robust         images: ℓ∞ PGD on the complement within ε (signed-gradient steps that
//                  accumulate, projected back onto the ε-ball and [0, 1]; random start), maximising
//                  the cross-entropy of the explained class; text: a HotFlip-style attack that
//                  replaces, per step, the one complement token whose first-order change of the
//                  loss along the word-embedding gradient is largest (a token budget, not an ε)
// The reference code's PGD discards each step (IBM/SAX ICLR25 attack_files/pgd_file.py, L89-91),
// so its "robust" masking is uniform noise in the ε-ball; docs/sst-definitions.md.
#include <torch/torch.h>

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "sst/model.h"

namespace salient::sst {

enum class MaskKind { None, Baseline, Probabilistic, Robust };
MaskKind parse_mask_kind(const std::string& name, const std::string& flag);  // none | baseline | probabilistic | robust
std::string mask_kind_name(MaskKind kind);

// How probabilistic masking draws the complement (--noise):
//   sax     the authors' code (IBM/SAX ICLR25/with_explanation): images clamp(x + ε·U[0, 1), 0, 1)
//           with ε = --epsilon (mnist.py, cifar10.py); text ids uniform over the whole vocabulary
//           [0, V), special tokens included (imdb.py, SNLI.py: randint(0, 30522))
//   domain  uniform over the input domain: images U[0, 1]; text the vocabulary's ordinary tokens
//           (ordinary_token_ids), salient's fill before the authors' was adopted
enum class NoiseFill { Sax, Domain };
NoiseFill parse_noise_fill(const std::string& name, const std::string& flag);  // sax | domain
std::string noise_fill_name(NoiseFill fill);

// What fills a complement beside the masking kind: the robust adversary's budget and the
// probabilistic fill's distribution (whose ε-noise shares the adversary's ε, as in SAX).
struct FillOptions {
  double epsilon = 0.12;  // images: ℓ∞ radius of PGD and of the sax noise (the paper's setting)
  double step = 0.01;     // images: step size
  int steps = 10;         // images: PGD steps; text: tokens flipped (one per step)
  bool random_start = true;
  NoiseFill noise = NoiseFill::Sax;
  void validate(const std::string& who, bool robust) const;  // ε always; the PGD steps when `robust`
  nlohmann::json to_json() const;
};

// Token ids the domain fill of text draws: the vocabulary without [CLS], [SEP], [PAD], [MASK] and the
// bracketed placeholders ([unused0]...).
torch::Tensor ordinary_token_ids(const Tokenizer& tokenizer);

// The values that replace the complement of `keep` (bool or {0,1} float [B, F]); positions kept
// hold x's values. `target` [B] is the class the robust adversary attacks (the model's prediction
// on x). `gen` drives the probabilistic fill and PGD's random start. `vocabulary` (text) is what
// the domain fill and HotFlip draw from (default: ordinary_token_ids).
torch::Tensor complement_fill(const SstModel& model, const FeatureBatch& x, const torch::Tensor& keep, MaskKind kind,
                              const torch::Tensor& target, const FillOptions& options, at::Generator& gen,
                              const torch::Tensor& vocabulary = {});

// ℓ∞ PGD on the complement, for any differentiable `logits_of(values)`: returns adversarial
// values equal to x on `keep`, within ε of x and inside [lo, hi] elsewhere. Of the iterates, each
// row keeps the one with the highest loss (the random start included), so a flip found at any step
// is kept.
torch::Tensor pgd_complement(const std::function<torch::Tensor(const torch::Tensor&)>& logits_of, const torch::Tensor& x,
                             const torch::Tensor& keep, const torch::Tensor& target, const FillOptions& options,
                             at::Generator& gen, double lo = 0.0, double hi = 1.0);

// HotFlip on the complement of a text batch: `steps` times, per row, the complement position and
// vocabulary token with the largest first-order loss increase (gradient · (e_new − e_old)) is
// flipped. Returns the ids of the row's best-loss iterate.
torch::Tensor hotflip_complement(const SstModel& model, const FeatureBatch& x, const torch::Tensor& keep,
                                 const torch::Tensor& target, int steps, const torch::Tensor& vocabulary);

// Faithfulness of subsets (bool [B, F]) for the explained classes `target` [B]:
//   baseline       1 when the prediction with the complement at the baseline is the target
//   probabilistic  share of `samples` random fills that keep it
//   robust         1 when the attack on the complement does not change it
std::vector<double> subset_faithfulness(const SstModel& model, const FeatureBatch& x, const torch::Tensor& subset,
                                        const torch::Tensor& target, MaskKind kind, const FillOptions& options,
                                        int samples, at::Generator& gen, const torch::Tensor& vocabulary = {});

// keep for a subset: the subset plus every non-feature position.
torch::Tensor keep_of(const torch::Tensor& subset, const torch::Tensor& features);

}  // namespace salient::sst
