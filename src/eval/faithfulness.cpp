#include "eval/faithfulness.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "util/error.h"

namespace salient {

Removal parse_removal(const std::string& name) {
  if (name == "mask") return Removal::Mask;
  if (name == "delete") return Removal::Delete;
  fail("--removal: unknown value '{}' (expected mask or delete)", name);
}

namespace {
// SplitMix64: a position's tie key, a fixed pseudo-random function of (seed, position).
uint64_t tie_key(uint64_t seed, uint64_t position) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (position + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
}  // namespace

std::vector<int> top_k_removable(const std::vector<double>& scores, const std::vector<bool>& removable, int64_t k,
                                 uint64_t tie_seed) {
  if (scores.size() != removable.size())
    fail("top_k_removable: {} scores but {} removable flags", scores.size(), removable.size());
  std::vector<size_t> order;
  for (size_t i = 0; i < scores.size(); ++i)
    if (removable[i]) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (scores[a] != scores[b]) return scores[a] > scores[b];
    return tie_key(tie_seed, a) < tie_key(tie_seed, b);
  });
  std::vector<int> mask(scores.size(), 0);
  k = std::clamp<int64_t>(k, 0, static_cast<int64_t>(order.size()));
  for (int64_t i = 0; i < k; ++i) mask[order[i]] = 1;
  return mask;
}

TokenSequence remove_positions(const TokenSequence& x, const std::vector<int>& remove, Removal removal,
                               int64_t mask_id) {
  TokenSequence out;
  for (size_t i = 0; i < x.ids.size(); ++i) {
    const int64_t type = i < x.type_ids.size() ? x.type_ids[i] : 0;
    if (!remove[i]) {
      out.ids.push_back(x.ids[i]);
      out.type_ids.push_back(type);
    } else if (removal == Removal::Mask) {
      out.ids.push_back(mask_id);
      out.type_ids.push_back(type);
    }
  }
  return out;
}

FaithfulnessResult evaluate_faithfulness(const SequenceScorer& scorer, const TokenSequence& x,
                                         const std::vector<double>& scores, const std::vector<bool>& removable,
                                         int64_t k, const FaithfulnessOptions& options) {
  if (scores.size() != x.ids.size()) fail("evaluate_faithfulness: {} scores for {} tokens", scores.size(), x.ids.size());
  const int64_t n = std::count(removable.begin(), removable.end(), true);
  if (n == 0) fail("evaluate_faithfulness: the input has no removable token");
  if (k <= 0) k = static_cast<int64_t>(std::ceil(0.2 * double(n)));
  int64_t positives = 0;
  for (size_t i = 0; i < scores.size(); ++i) positives += removable[i] && scores[i] > 0;
  // The most positions any top k may take: all removable ones, or with positive_only the positive.
  const int64_t most = options.positive_only ? positives : n;
  k = std::min(k, most);

  // Every perturbed input, scored in one call: [full, comp(k), suff(k), aopc comp/suff pairs, curve pairs].
  std::vector<TokenSequence> batch{x};
  auto add_pair = [&](int64_t kk) {
    std::vector<int> top = top_k_removable(scores, removable, kk, options.tie_seed);
    std::vector<int> rest(top.size());
    for (size_t i = 0; i < top.size(); ++i) rest[i] = removable[i] && !top[i];
    batch.push_back(remove_positions(x, top, options.removal, options.mask_id));   // without the top
    batch.push_back(remove_positions(x, rest, options.removal, options.mask_id));  // only the top
  };
  add_pair(k);
  std::vector<int64_t> aopc_k;
  for (double f : options.aopc_fractions) {
    // Small epsilon so that e.g. 0.3 · 10 gives 3 and not 2 (floating point), as int() on exact decimals.
    const int64_t kk = std::min(static_cast<int64_t>(std::floor(f * double(n) + 1e-9)), most);
    if (kk > 0 && !(options.aopc_distinct && !aopc_k.empty() && aopc_k.back() == kk)) aopc_k.push_back(kk);
  }
  for (int64_t kk : aopc_k) add_pair(kk);
  FaithfulnessResult r;
  if (options.curve_steps < 0) fail("evaluate_faithfulness: curve_steps must be >= 0, got {}", options.curve_steps);
  const int64_t steps = options.curve_steps;
  std::vector<int64_t> curve_k;
  for (int64_t s = 0; steps > 0 && s <= steps; ++s) {
    const double f = double(s) / double(steps);
    r.curve_fractions.push_back(f);
    curve_k.push_back(std::min(static_cast<int64_t>(std::floor(f * double(n) + 1e-9)), most));
  }
  for (int64_t kk : curve_k) add_pair(kk);

  std::vector<double> out = scorer(batch);
  if (out.size() != batch.size()) fail("evaluate_faithfulness: scorer returned {} values for {} inputs", out.size(), batch.size());
  r.full = out[0];
  r.k = k;
  // positive_only with no positive score: no top k to remove, so neither is defined.
  r.comprehensiveness = k > 0 ? r.full - out[1] : std::numeric_limits<double>::quiet_NaN();
  r.sufficiency = k > 0 ? r.full - out[2] : std::numeric_limits<double>::quiet_NaN();
  size_t at = 3;
  if (aopc_k.empty() && !options.aopc_fractions.empty())
    r.aopc_comprehensiveness = r.aopc_sufficiency = std::numeric_limits<double>::quiet_NaN();
  if (!aopc_k.empty()) {
    for (size_t i = 0; i < aopc_k.size(); ++i, at += 2) {
      r.aopc_comprehensiveness += r.full - out[at];
      r.aopc_sufficiency += r.full - out[at + 1];
    }
    r.aopc_comprehensiveness /= double(aopc_k.size());
    r.aopc_sufficiency /= double(aopc_k.size());
  }
  for (size_t i = 0; i < curve_k.size(); ++i, at += 2) {
    r.deletion_curve.push_back(out[at]);
    r.insertion_curve.push_back(out[at + 1]);
  }
  for (size_t i = 1; i < curve_k.size(); ++i) {
    const double dx = r.curve_fractions[i] - r.curve_fractions[i - 1];
    r.deletion_auc += 0.5 * dx * (r.deletion_curve[i] + r.deletion_curve[i - 1]);
    r.insertion_auc += 0.5 * dx * (r.insertion_curve[i] + r.insertion_curve[i - 1]);
  }
  return r;
}

}  // namespace salient
