#include "sst/search.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <set>

#include "sst/masking.h"
#include "util/error.h"

namespace salient::sst {

using Clock = std::chrono::steady_clock;

void SearchOptions::validate() const {
  if (!(time_limit > 0)) fail("--time-limit: must be positive seconds, got {}", time_limit);
  if (batch < 1) fail("--search-batch: must be at least 1, got {}", batch);
  if (batch_tokens < 1) fail("--search-tokens: must be at least 1, got {}", batch_tokens);
  if (!(precision > 0 && precision < 1)) fail("--precision: must be in (0, 1), got {}", precision);
  if (!(delta > 0 && delta < 1)) fail("--delta: must be in (0, 1), got {}", delta);
  if (beam < 1) fail("--beam: must be at least 1, got {}", beam);
  if (init_samples < 1 || batch_samples < 1 || max_samples < init_samples)
    fail("anchors: sample counts must be ≥ 1 and max_samples ≥ init_samples");
  if (ranking != "ig" && ranking != "gradient") fail("--ranking: expected ig or gradient, got '{}'", ranking);
  if (ig_steps < 1) fail("--ig-steps: must be at least 1, got {}", ig_steps);
  if (coverage_samples < 1) fail("anchors: coverage_samples must be at least 1, got {}", coverage_samples);
  if (sis_criterion != "argmax" && sis_criterion != "threshold")
    fail("--sis-criterion: expected argmax or threshold, got '{}'", sis_criterion);
  if (!(sis_threshold > 0 && sis_threshold < 1)) fail("--sis-threshold: must be in (0, 1), got {}", sis_threshold);
}

const std::vector<std::string>& search_method_names() {
  static const std::vector<std::string> names = {"sis", "anchors", "gradient"};
  return names;
}

namespace {

double bernoulli_kl(double p, double q) {
  p = std::clamp(p, 1e-12, 1 - 1e-12);
  q = std::clamp(q, 1e-12, 1 - 1e-12);
  return p * std::log(p / q) + (1 - p) * std::log((1 - p) / (1 - q));
}

struct Timeout {};

// Rows of `x` per forward pass: `batch`, and for text no more than `batch_tokens` positions.
int64_t search_rows_per_pass(const SstModel& model, const FeatureBatch& x, const SearchOptions& o) {
  if (model.modality() != "text") return o.batch;
  return std::clamp<int64_t>(o.batch_tokens / std::max<int64_t>(1, x.width()), 1, o.batch);
}

// Evaluates one example under many keep masks, in chunks, counting rows and watching the clock.
class Oracle {
 public:
  Oracle(const SstModel& model, const FeatureBatch& x, int64_t target, const SearchOptions& o, const torch::Tensor& vocab)
      : model_(model), x_(x), target_(target), o_(o), vocab_(vocab), gen_(at::detail::createCPUGenerator(o.seed)),
        deadline_(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.time_limit))),
        rows_per_pass_(search_rows_per_pass(model, x, o)) {}

  int64_t rows() const { return rows_; }
  int64_t passes() const { return passes_; }
  int64_t rows_per_pass() const { return rows_per_pass_; }
  void count_pass(int64_t rows) {
    rows_ += rows;
    ++passes_;
  }
  void check_clock() const {
    if (Clock::now() > deadline_) throw Timeout{};
  }

  // keeps [M, F] bool (non-features are kept regardless) → per row, the softmax probability of
  // the target (want_prob) or 1 when the prediction is the target.
  torch::Tensor eval(const torch::Tensor& keeps, MaskKind kind, bool want_prob) {
    torch::NoGradGuard ng;
    std::vector<torch::Tensor> parts;
    const int64_t m = keeps.size(0);
    for (int64_t b = 0; b < m; b += rows_per_pass_) {
      check_clock();
      const int64_t e = std::min(m, b + rows_per_pass_);
      FeatureBatch xb = x_.repeat(e - b);
      torch::Tensor keep = keep_of(keeps.slice(0, b, e), xb.features);
      torch::Tensor fill = complement_fill(model_, xb, keep, kind, torch::full({e - b}, target_, torch::kInt64), o_.fill, gen_, vocab_);
      torch::Tensor logits = model_.mixed_logits(xb, fill, keep.to(torch::kFloat32));
      parts.push_back(want_prob ? torch::softmax(logits, 1).select(1, target_).to(torch::kFloat64)
                                : logits.argmax(1).eq(target_).to(torch::kFloat64));
      count_pass(e - b);
    }
    return torch::cat(parts);
  }

  // A keep row [F] with exactly `positions` kept among the features.
  torch::Tensor keep_row(const std::vector<int64_t>& positions) const {
    torch::Tensor k = torch::zeros({x_.width()}, torch::kBool);
    for (int64_t p : positions) k[p] = true;
    return k;
  }

  const SstModel& model() const { return model_; }
  const FeatureBatch& x() const { return x_; }
  int64_t target() const { return target_; }

 private:
  const SstModel& model_;
  const FeatureBatch& x_;
  int64_t target_;
  const SearchOptions& o_;
  torch::Tensor vocab_;
  at::Generator gen_;
  Clock::time_point deadline_;
  int64_t rows_per_pass_;
  int64_t rows_ = 0, passes_ = 0;
};

// Per keep row: is that subset sufficient by the search's SIS criterion (baseline completion)?
torch::Tensor sufficient_rows(Oracle& oracle, const torch::Tensor& keeps, const SearchOptions& o) {
  if (o.sis_criterion == "threshold") return oracle.eval(keeps, MaskKind::Baseline, true).ge(o.sis_threshold);
  return oracle.eval(keeps, MaskKind::Baseline, false).gt(0.5);
}

// Carter et al.'s backward selection over `remaining` (every other feature stays at the baseline),
// then the shortest sufficient suffix of the removal order; none sufficient: all of `remaining`.
torch::Tensor find_sis(Oracle& oracle, std::vector<int64_t> remaining, const SearchOptions& o) {
  const int64_t f = static_cast<int64_t>(remaining.size());
  torch::Tensor current = oracle.keep_row(remaining);
  std::vector<int64_t> removed;
  while (!remaining.empty()) {
    const int64_t r = static_cast<int64_t>(remaining.size());
    torch::Tensor keeps = current.unsqueeze(0).repeat({r, 1});
    for (int64_t i = 0; i < r; ++i) keeps[i][remaining[i]] = false;
    torch::Tensor p = oracle.eval(keeps, MaskKind::Baseline, true);
    const int64_t best = p.argmax().item<int64_t>();
    current[remaining[best]] = false;
    removed.push_back(remaining[best]);
    remaining.erase(remaining.begin() + best);
  }
  // Suffixes of the removal order, shortest first: keep the last k removed.
  torch::Tensor keeps = torch::zeros({f + 1, oracle.x().width()}, torch::kBool);
  for (int64_t k = 1; k <= f; ++k) {
    keeps[k] = keeps[k - 1];
    keeps[k][removed[f - k]] = true;
  }
  torch::Tensor ok = sufficient_rows(oracle, keeps, o);
  for (int64_t k = 0; k <= f; ++k)
    if (ok[k].item<bool>()) return keeps[k];
  return keeps[f];
}

// argmax: one SIS of the whole input. threshold: Carter et al.'s SIScollection, disjoint SISes
// until what is left is not sufficient; the first is the subset.
void sis(Oracle& oracle, const SearchOptions& o, SearchResult& r) {
  const std::vector<int64_t> features = subset_positions(oracle.x().features[0]);
  std::vector<int64_t> remaining = features;
  if (o.sis_criterion == "argmax") {
    r.subset = find_sis(oracle, remaining, o);
    return;
  }
  try {
    while (!remaining.empty() && sufficient_rows(oracle, oracle.keep_row(remaining).unsqueeze(0), o)[0].item<bool>()) {
      torch::Tensor s = find_sis(oracle, remaining, o);
      r.collection.push_back(s);
      if (!s.any().item<bool>()) break;  // the baseline alone suffices: masking it changes nothing
      const auto in_sis = s.accessor<bool, 1>();
      remaining.erase(std::remove_if(remaining.begin(), remaining.end(), [&](int64_t p) { return in_sis[p]; }),
                      remaining.end());
    }
  } catch (const Timeout&) {
    if (r.collection.empty()) throw;
    r.complete = false;
  }
  // The whole input below the threshold has no SIS; it is reported as the subset, flagged.
  r.no_sis = r.collection.empty();
  r.subset = r.no_sis ? oracle.keep_row(features) : r.collection.front();
}

// Anchors with KL-LUCB (Kaufmann & Kalyanakrishnan 2013), as anchor_base.py's anchor_beam runs it.
// Returns the chosen anchor's keep row; a time-out after an anchor passed returns that anchor with
// `complete` cleared (larger sets that might cover more were not all tried).
torch::Tensor anchors(Oracle& oracle, const SearchOptions& o, bool& complete) {
  struct Candidate {
    std::vector<int64_t> set;  // sorted positions
    double coverage = 0;
    double n = 0, positives = 0;
    double mean() const { return n > 0 ? positives / n : 0; }
  };
  const std::vector<int64_t> features = subset_positions(oracle.x().features[0]);
  const int64_t nf = static_cast<int64_t>(features.size());
  int64_t round = 1;
  auto level = [&](double n_candidates) {  // anchor_base.compute_beta, for KL-LUCB's rounds
    const double alpha = 1.1, k = 405.5;
    const double t = std::log(k * n_candidates * std::pow(static_cast<double>(round), alpha) / o.delta);
    return t + std::log(t);
  };
  // anchor_beam's confidence level for accepting a set: log((1 + (B − 1)·features) / δ).
  const double accept_level = std::log((1.0 + static_cast<double>(o.beam - 1) * static_cast<double>(nf)) / o.delta);
  auto sample = [&](std::vector<Candidate>& cs, const std::vector<size_t>& which, int64_t per) {
    std::vector<torch::Tensor> keeps;
    for (size_t c : which) {
      torch::Tensor k = oracle.keep_row(cs[c].set);
      keeps.push_back(k.unsqueeze(0).expand({per, k.size(0)}));
    }
    torch::Tensor hits = oracle.eval(torch::cat(keeps), MaskKind::Probabilistic, false);
    for (size_t i = 0; i < which.size(); ++i) {
      cs[which[i]].n += static_cast<double>(per);
      cs[which[i]].positives += hits.slice(0, i * per, (i + 1) * per).sum().item<double>();
    }
    ++round;
  };
  auto passes = [&](const Candidate& c, double level_) {
    return c.mean() >= o.precision && kl_lower_bound(c.mean(), level_ / c.n) > o.precision - o.epsilon_stop;
  };
  // anchor_base's coverage: the share of draws from the perturbation distribution (each feature
  // kept with probability 1/2) that keep every feature of the set; fixed draws, so a superset
  // never covers more. Row j of `drawn` is feature j's draws.
  auto coverage_gen = at::detail::createCPUGenerator(o.seed ^ 0x9e3779b97f4a7c15ULL);
  const torch::Tensor drawn = torch::rand({nf, o.coverage_samples}, coverage_gen).lt(0.5);
  auto coverage = [&](const std::vector<int64_t>& set) {
    oracle.check_clock();
    torch::Tensor all = torch::ones({o.coverage_samples}, torch::kBool);
    for (int64_t p : set) all.logical_and_(drawn[std::lower_bound(features.begin(), features.end(), p) - features.begin()]);
    return all.to(torch::kFloat64).mean().item<double>();
  };
  std::vector<int64_t> best;
  double best_coverage = -1;
  try {
    // The empty anchor first: when the prediction survives the fill of every feature, it is the
    // answer (coverage 1), at confidence log(1/δ) as anchor_base tests it.
    std::vector<Candidate> empty = {{{}, 1.0}};
    sample(empty, {0}, o.init_samples);
    if (empty[0].mean() > o.precision && passes(empty[0], std::log(1.0 / o.delta))) return oracle.keep_row({});
    std::vector<std::vector<int64_t>> beam = {{}};
    for (int64_t size = 1; size <= nf; ++size) {
      std::set<std::vector<int64_t>> seen;
      std::vector<Candidate> cs;
      for (const auto& a : beam)
        for (int64_t f : features) {
          if (std::binary_search(a.begin(), a.end(), f)) continue;
          std::vector<int64_t> s = a;
          s.insert(std::upper_bound(s.begin(), s.end(), f), f);
          if (!seen.insert(s).second) continue;
          const double c = coverage(s);
          if (c > best_coverage) cs.push_back({s, c});  // only a set that could cover more is tried
        }
      if (cs.empty()) break;
      std::vector<size_t> all(cs.size());
      std::iota(all.begin(), all.end(), 0);
      sample(cs, all, o.init_samples);
      const double nc = static_cast<double>(cs.size());
      const size_t b = std::min<size_t>(o.beam, cs.size());
      std::vector<size_t> top;
      while (true) {  // KL-LUCB: separate the b best means from the rest with tolerance ε
        std::vector<size_t> order = all;
        std::stable_sort(order.begin(), order.end(), [&](size_t i, size_t j) { return cs[i].mean() > cs[j].mean(); });
        top.assign(order.begin(), order.begin() + b);
        if (b == cs.size()) break;
        const double lv = level(nc);
        size_t lt = top[0], ut = order[b];
        double lb_min = 2, ub_max = -1;
        for (size_t i = 0; i < order.size(); ++i) {
          const auto& c = cs[order[i]];
          if (i < b) {
            const double lb = kl_lower_bound(c.mean(), lv / c.n);
            if (lb < lb_min) lb_min = lb, lt = order[i];
          } else {
            const double ub = kl_upper_bound(c.mean(), lv / c.n);
            if (ub > ub_max) ub_max = ub, ut = order[i];
          }
        }
        if (ub_max - lb_min <= o.lucb_epsilon) break;
        std::vector<size_t> more;
        if (cs[lt].n < o.max_samples) more.push_back(lt);
        if (cs[ut].n < o.max_samples) more.push_back(ut);
        if (more.empty()) break;
        sample(cs, more, o.batch_samples);
      }
      beam.clear();
      for (size_t c : top) {  // anchor_beam: sample until the precision is decided, then test it
        const double thr = o.precision;
        while (cs[c].n < o.max_samples) {
          const double m = cs[c].mean();
          const double lb = kl_lower_bound(m, accept_level / cs[c].n), ub = kl_upper_bound(m, accept_level / cs[c].n);
          if (!((m >= thr && lb < thr - o.epsilon_stop) || (m < thr && ub >= thr + o.epsilon_stop))) break;
          sample(cs, {c}, o.batch_samples);
        }
        if (passes(cs[c], accept_level) && cs[c].coverage > best_coverage) {
          best = cs[c].set;
          best_coverage = cs[c].coverage;
        }
        beam.push_back(cs[c].set);
      }
      if (best_coverage >= 1) break;  // nothing covers more
    }
  } catch (const Timeout&) {
    if (best_coverage < 0) throw;
    complete = false;
  }
  // None passed (only possible when sets stopped being tried): the whole input, whose completions
  // are all the input itself.
  return oracle.keep_row(best_coverage >= 0 ? best : features);
}

// Integrated gradients (or the gradient) of the target logit with respect to the keep mask on
// the path from the baseline completion (keep = 0) to the input (keep = 1), then a binary search
// over the size of the top-ranked set.
torch::Tensor gradient_search(Oracle& oracle, const SearchOptions& o) {
  const FeatureBatch& x = oracle.x();
  const torch::Tensor feats = x.features.to(torch::kFloat32);
  auto unused = at::detail::createCPUGenerator(0);  // the baseline fill draws nothing
  const torch::Tensor fill = complement_fill(oracle.model(), x, torch::zeros_like(x.features), MaskKind::Baseline, {}, {}, unused);
  const int64_t m = o.ranking == "ig" ? o.ig_steps : 1;
  torch::Tensor attribution = torch::zeros({x.width()});
  // a backward pass keeps every layer's activations: a quarter of the rows of a forward one
  const int64_t rows = std::max<int64_t>(1, oracle.rows_per_pass() / 4);
  for (int64_t b = 0; b < m; b += rows) {
    oracle.check_clock();
    const int64_t e = std::min(m, b + rows);
    torch::Tensor alphas = o.ranking == "ig" ? (torch::arange(b, e, torch::kFloat32) + 0.5) / static_cast<double>(m)
                                             : torch::ones({1});
    FeatureBatch xb = x.repeat(e - b);
    torch::Tensor keep = (alphas.unsqueeze(1) * feats + (1 - feats)).detach().set_requires_grad(true);
    torch::Tensor logit = oracle.model().mixed_logits(xb, fill.expand({e - b, -1}), keep).select(1, oracle.target());
    torch::Tensor g = torch::autograd::grad({logit.sum()}, {keep})[0];
    attribution += g.sum(0).detach() / static_cast<double>(m);
    oracle.count_pass(e - b);
  }
  attribution = attribution.masked_fill(x.features[0].logical_not(), -std::numeric_limits<float>::infinity());
  const int64_t nf = oracle.x().features[0].sum().item<int64_t>();
  torch::Tensor order = attribution.argsort(0, true).slice(0, 0, nf);
  auto top_k = [&](int64_t k) {
    torch::Tensor keep = torch::zeros({x.width()}, torch::kBool);
    if (k > 0) keep.index_fill_(0, order.slice(0, 0, k), true);
    return keep;
  };
  int64_t lo = 0, hi = nf;  // top-nf is the input itself: sufficient
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    if (oracle.eval(top_k(mid).unsqueeze(0), MaskKind::Baseline, false)[0].item<double>() > 0.5) hi = mid;
    else lo = mid + 1;
  }
  return top_k(lo);
}

}  // namespace

double kl_upper_bound(double mean, double level_over_n) {
  double lo = mean, hi = 1.0;
  for (int i = 0; i < 50; ++i) {
    const double q = (lo + hi) / 2;
    (bernoulli_kl(mean, q) > level_over_n ? hi : lo) = q;
  }
  return lo;
}

double kl_lower_bound(double mean, double level_over_n) {
  double lo = 0.0, hi = mean;
  for (int i = 0; i < 50; ++i) {
    const double q = (lo + hi) / 2;
    (bernoulli_kl(mean, q) > level_over_n ? lo : hi) = q;
  }
  return hi;
}

SearchResult sufficient_subset_search(const std::string& method, const SstModel& model, const FeatureBatch& example,
                                      int64_t target, const SearchOptions& o, const torch::Tensor& vocabulary) {
  if (example.size() != 1) fail("sufficient_subset_search: one example at a time, got {}", example.size());
  const auto t0 = Clock::now();
  torch::Tensor vocab = vocabulary;
  if (!vocab.defined() && model.modality() == "text") vocab = ordinary_token_ids(text_classifier(model).tokenizer);
  Oracle oracle(model, example, target, o, vocab);
  SearchResult r;
  try {
    if (method == "sis") sis(oracle, o, r);
    else if (method == "anchors") r.subset = anchors(oracle, o, r.complete);
    else if (method == "gradient") r.subset = gradient_search(oracle, o);
    else fail("--methods: unknown search '{}' (sst, sis, anchors, gradient)", method);
  } catch (const Timeout&) {
    r.timed_out = true;
    r.subset = torch::Tensor();
  }
  r.forward_rows = oracle.rows();
  r.forward_passes = oracle.passes();
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

}  // namespace salient::sst
