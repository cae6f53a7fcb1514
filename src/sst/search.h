#pragma once
// Post-hoc searches for a sufficient subset of one input's features, the baselines SST is compared
// with (Bassan et al. §5): they run on a standard model and cost many forward passes each.
//   sis       Sufficient Input Subsets (Carter et al., AISTATS 2019): backward selection removes,
//             one at a time, the feature whose removal (set to the baseline) leaves the explained
//             class most probable; the subset is the shortest suffix of that removal order (the
//             features removed last) that is sufficient. Sufficient means, by `sis_criterion`:
//               argmax     the baseline completion is still predicted as the class (salient's)
//               threshold  the class's probability on the baseline completion is ≥ `sis_threshold`
//                          (Carter et al.'s definition); the search then goes on as their
//                          SIScollection: the SIS found is masked and the next one is sought in
//                          what is left, until what is left is not sufficient. The subset
//                          reported is the first SIS; the collection comes in `collection`.
//   anchors   Anchors (Ribeiro et al., AAAI 2018): a beam search over growing feature sets; a
//             set's precision is the share of random completions (the probabilistic fill) that
//             keep the prediction; KL-LUCB picks the beam with confidence 1 − δ. A set passes when
//             its precision is ≥ the threshold with its lower bound above threshold − ε_stop; of
//             the sets that pass, the one with the highest coverage is returned, and larger sets
//             are tried only while they can cover more; the empty anchor is tried first
//             (anchor_base.py's anchor_beam, its confidence levels included). Coverage is the share
//             of `coverage_samples` draws of Anchors' perturbation distribution (each feature kept
//             with probability 1/2, as anchor_text and anchor_image perturb) that keep the whole
//             set. Precision, unlike anchor_base's, fills the whole complement: it is the
//             probabilistic sufficiency the SST table checks.
//   gradient  a ranking by integrated gradients of the explained logit along the path from the
//             baseline completion to the input (or the plain gradient, `ranking`), then a binary
//             search for the smallest top-k whose baseline completion keeps the prediction
// Each stops at a per-example time limit and then reports a time-out (no subset).
#include <torch/torch.h>

#include <string>
#include <vector>

#include "sst/masking.h"
#include "sst/model.h"

namespace salient::sst {

struct SearchOptions {
  double time_limit = 10;  // seconds per example
  int64_t batch = 512;     // rows per forward pass
  // text: and at most this many token positions per pass (a long document's row is all of its
  // windows, and one pass of 512 of them does not fit in memory); lower it for a time limit kept
  // more closely, since the clock is read between passes
  int64_t batch_tokens = 32768;
  uint64_t seed = 0;
  // anchors
  double precision = 0.95, delta = 0.1, lucb_epsilon = 0.1, epsilon_stop = 0.05;
  int beam = 2;
  int64_t init_samples = 10, batch_samples = 10, max_samples = 1000;  // per candidate
  int64_t coverage_samples = 10000;                                    // anchor_base's default
  // sis
  std::string sis_criterion = "argmax";  // argmax | threshold
  double sis_threshold = 0.9;            // threshold: the class probability a sufficient subset keeps
  // The probabilistic fill of Anchors' precision samples (evaluate: the same as its checks').
  FillOptions fill;
  // gradient
  std::string ranking = "ig";  // ig | gradient
  int64_t ig_steps = 20;
  void validate() const;
};

struct SearchResult {
  torch::Tensor subset;  // bool [F]; undefined when timed out
  // sis with the threshold criterion: every SIS found, in order (the first is `subset`); empty
  // when the whole input is below the threshold (`no_sis`: then `subset` is the whole input).
  std::vector<torch::Tensor> collection;
  bool no_sis = false;
  // false when the time ran out after a subset was found: sis's collection was cut short, or
  // anchors had larger sets left that might cover more than the anchor returned.
  bool complete = true;
  bool timed_out = false;
  double seconds = 0;
  int64_t forward_rows = 0;    // inputs evaluated
  int64_t forward_passes = 0;  // model calls they took (batch, batch_tokens)
};

const std::vector<std::string>& search_method_names();  // sis, anchors, gradient
// One example (a one-row batch) explained for class `target`. The text model's probabilistic fill
// draws from `vocabulary` (ordinary_token_ids).
SearchResult sufficient_subset_search(const std::string& method, const SstModel& model, const FeatureBatch& example,
                                      int64_t target, const SearchOptions& options,
                                      const torch::Tensor& vocabulary = {});

// KL-LUCB's confidence bounds for a Bernoulli mean: the largest (smallest) q with
// n · KL(p̂ ‖ q) ≤ level.
double kl_upper_bound(double mean, double level_over_n);
double kl_lower_bound(double mean, double level_over_n);

}  // namespace salient::sst
