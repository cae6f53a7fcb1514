// Gradient-based explainers on the word-embedding output (as Captum's Layer* methods on
// bert.embeddings.word_embeddings): random, saliency (gradient L2), gradient × input,
// integrated gradients, and occlusion (leave-one-out).
#include <algorithm>
#include <cmath>

#include "explain/methods.h"
#include "util/error.h"

namespace salient::explain {
namespace {

// One padded batch of the inputs, its word embeddings, and the explained targets.
struct Prepared {
  Batch batch;
  torch::Tensor embeds;   // [B, L, E], detached
  torch::Tensor targets;  // [B]
};

Prepared prepare(const Classifier& clf, const std::vector<const Encoding*>& inputs, const std::vector<int64_t>& targets) {
  check_inputs(inputs, targets, clf.model.config().num_labels);
  Prepared p;
  p.batch = make_batch(inputs, clf.tokenizer.pad_id(), clf.model.device());
  torch::NoGradGuard no_grad;
  p.embeds = clf.model.word_embeddings(p.batch.input_ids).detach();
  p.targets = targets_tensor(targets).to(clf.model.device());
  return p;
}

// ∂F/∂e and F for rows of word embeddings `embeds` (rows are independent).
std::pair<torch::Tensor, torch::Tensor> output_and_grad(const Classifier& clf, torch::Tensor embeds,
                                                        const torch::Tensor& types, const torch::Tensor& mask,
                                                        const torch::Tensor& targets, ModelOutput output) {
  embeds = embeds.detach().requires_grad_(true);
  torch::Tensor f = target_output(cls_logits(clf.model, {}, types, mask, embeds), targets, output);
  torch::Tensor g = torch::autograd::grad({f.sum()}, {embeds})[0];
  return {f.detach(), g};
}

class RandomExplainer : public Explainer {
 public:
  std::string name() const override { return "random"; }
  std::vector<Explanation> explain(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                   const std::vector<int64_t>& targets, const ExplainOptions& o) override {
    check_inputs(inputs, targets, clf.model.config().num_labels);
    std::vector<Explanation> out;
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto rng = example_rng(o.seed, *inputs[i]);
      std::uniform_real_distribution<double> u(0.0, 1.0);
      Explanation e{name(), targets[i], {}, nlohmann::json::object()};
      for (size_t t = 0; t < inputs[i]->ids.size(); ++t) e.scores.push_back(u(rng));
      out.push_back(std::move(e));
    }
    return out;
  }
};

// Saliency and gradient × input share one backward pass over the whole batch.
class GradientExplainer : public Explainer {
 public:
  explicit GradientExplainer(bool times_input) : times_input_(times_input) {}
  std::string name() const override { return times_input_ ? "grad_x_input" : "saliency"; }
  std::vector<Explanation> explain(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                   const std::vector<int64_t>& targets, const ExplainOptions& o) override {
    Prepared p = prepare(clf, inputs, targets);
    std::vector<Explanation> out;
    const int64_t chunk = std::max<int64_t>(o.internal_batch, 1), B = p.embeds.size(0);
    for (int64_t s = 0; s < B; s += chunk) {
      const int64_t e = std::min(B, s + chunk);
      auto [f, g] = output_and_grad(clf, p.embeds.slice(0, s, e), p.batch.token_type_ids.slice(0, s, e),
                                    p.batch.attention_mask.slice(0, s, e), p.targets.slice(0, s, e), o.output);
      torch::Tensor scores = times_input_ ? (g * p.embeds.slice(0, s, e)).sum(-1) : g.norm(2, -1);
      for (int64_t b = 0; b < e - s; ++b)
        out.push_back({name(), targets[s + b], row_scores(scores, b, p.batch.lengths[s + b]), nlohmann::json::object()});
    }
    return out;
  }

 private:
  bool times_input_;
};

// Quadrature points α_k and weights w_k on [0, 1], exactly as Captum's approximation_methods:
// Riemann rules use n points of width 1/n (trapezoid: n points from 0 to 1 with the end weights
// halved); Gauss–Legendre maps the n-point rule from [−1, 1].
void quadrature(const std::string& rule, int64_t n, std::vector<double>& alpha, std::vector<double>& weight) {
  if (n < 2) fail("--steps: need at least 2, got {}", n);
  alpha.assign(n, 0.0);
  weight.assign(n, 1.0 / double(n));
  // Captum builds the points with torch.linspace in float32; do the same so parity is exact.
  auto linspace = [&](double a, double b) {
    torch::Tensor t = torch::linspace(a, b, n, torch::kFloat32).to(torch::kDouble);
    for (int64_t k = 0; k < n; ++k) alpha[k] = t[k].item<double>();
  };
  if (rule == "riemann_left" || rule == "left") {
    linspace(0.0, 1.0 - 1.0 / double(n));
  } else if (rule == "riemann_right" || rule == "right") {
    linspace(1.0 / double(n), 1.0);
  } else if (rule == "riemann_middle" || rule == "middle") {
    linspace(1.0 / (2.0 * double(n)), 1.0 - 1.0 / (2.0 * double(n)));
  } else if (rule == "riemann_trapezoid" || rule == "trapezoid") {
    linspace(0.0, 1.0);
    weight[0] /= 2;
    weight[n - 1] /= 2;
  } else if (rule == "gausslegendre" || rule == "gauss_legendre") {
    // Nodes by Newton's method on P_n from the Chebyshev guesses; weights 2 / ((1 − x²) P_n'(x)²).
    for (int64_t i = 0; i < n; ++i) {
      double x = std::cos(M_PI * (double(i) + 0.75) / (double(n) + 0.5)), dp = 0;
      for (int iter = 0; iter < 100; ++iter) {
        double p0 = 1, p1 = x;
        for (int64_t k = 2; k <= n; ++k) {
          const double p2 = ((2.0 * k - 1) * x * p1 - (k - 1.0) * p0) / double(k);
          p0 = p1;
          p1 = p2;
        }
        dp = double(n) * (x * p1 - p0) / (x * x - 1);
        const double dx = p1 / dp;
        x -= dx;
        if (std::abs(dx) < 1e-16) break;
      }
      // Ascending order of nodes, as numpy's leggauss.
      alpha[n - 1 - i] = 0.5 * (1 + x);
      weight[n - 1 - i] = 0.5 * 2.0 / ((1 - x * x) * dp * dp);
    }
  } else {
    fail("--rule: unknown rule '{}' (riemann_left, riemann_right, riemann_middle, riemann_trapezoid, gausslegendre)",
         rule);
  }
}

// Integrated gradients on the word embeddings: attr = (x − x') ⊙ Σ_k w_k ∂F(x' + α_k(x − x'))/∂x,
// summed over the hidden dimension. All (input, point) rows are evaluated in chunks of at most
// internal_batch rows. Extras: delta = Σ attr − (F(x) − F(x')) (Captum's convergence delta).
constexpr int64_t kIgTokenRows = 2048;

class IntegratedGradients : public Explainer {
 public:
  std::string name() const override { return "ig"; }
  std::vector<Explanation> explain(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                   const std::vector<int64_t>& targets, const ExplainOptions& o) override {
    const int64_t n = param_int(o, "steps", 50);
    const std::string rule = param_string(o, "rule", "riemann_trapezoid");
    const std::string baseline_kind = param_string(o, "baseline", "pad");
    std::vector<double> alpha, weight;
    quadrature(rule, n, alpha, weight);
    Prepared p = prepare(clf, inputs, targets);
    const int64_t B = p.embeds.size(0);
    const torch::Device dev = clf.model.device();

    // Baseline word embeddings.
    torch::Tensor base;
    {
      torch::NoGradGuard no_grad;
      if (baseline_kind == "zeros" || baseline_kind == "zero") {
        base = torch::zeros_like(p.embeds);
      } else if (baseline_kind == "pad" || baseline_kind == "mask") {
        const int64_t fill = baseline_kind == "pad" ? clf.tokenizer.pad_id() : clf.tokenizer.mask_id();
        torch::Tensor ids = p.batch.input_ids.clone().cpu();
        auto a = ids.accessor<int64_t, 2>();
        for (int64_t b = 0; b < B; ++b)
          for (int64_t t = 0; t < p.batch.lengths[b]; ++t)
            if (!clf.tokenizer.is_special(a[b][t])) a[b][t] = fill;  // [CLS]/[SEP] kept
        base = clf.model.word_embeddings(ids.to(dev)).detach();
      } else {
        fail("--baseline: unknown baseline '{}' (pad, zeros, mask)", baseline_kind);
      }
    }
    torch::Tensor diff = p.embeds - base;
    torch::Tensor total = torch::zeros_like(p.embeds);
    const int64_t rows = B * n, chunk = std::max<int64_t>(o.internal_batch, 1);
    auto opts = torch::TensorOptions().dtype(p.embeds.scalar_type()).device(dev);
    torch::Tensor alpha_t = torch::tensor(alpha, torch::kDouble).to(opts), weight_t = torch::tensor(weight, torch::kDouble).to(opts);
    // Rows (example, point) ordered by example length, longest first, so each chunk is cut to the
    // longest example it holds: little padding is computed even when lengths in the batch differ.
    std::vector<int64_t> by_length(B);
    for (int64_t b = 0; b < B; ++b) by_length[b] = b;
    std::stable_sort(by_length.begin(), by_length.end(),
                     [&](int64_t x, int64_t y) { return p.batch.lengths[x] > p.batch.lengths[y]; });
    std::vector<int64_t> row_ex(rows), row_k(rows);
    for (int64_t r = 0; r < rows; ++r) {
      row_ex[r] = by_length[r / n];
      row_k[r] = r % n;
    }
    for (int64_t s = 0, e = 0; s < rows; s = e) {
      const int64_t Lc = p.batch.lengths[row_ex[s]];
      // Besides the row cap, at most kIgTokenRows token positions per pass: larger passes run
      // slower per FLOP once activations leave the caches (BERT-base, 128 tokens, 50 points: 16
      // rows per pass 1.19x the FLOP floor, 64 rows 1.37x; docs/PERFORMANCE.md).
      e = std::min(rows, s + std::min(chunk, std::max<int64_t>(1, kIgTokenRows / Lc)));
      torch::Tensor ex = torch::tensor(std::vector<int64_t>(row_ex.begin() + s, row_ex.begin() + e), torch::kLong).to(dev);
      torch::Tensor k = torch::tensor(std::vector<int64_t>(row_k.begin() + s, row_k.begin() + e), torch::kLong).to(dev);
      torch::Tensor a = alpha_t.index_select(0, k).view({-1, 1, 1});
      torch::Tensor pts = (base.index_select(0, ex) + a * diff.index_select(0, ex)).slice(1, 0, Lc);
      auto [f, g] = output_and_grad(clf, pts, p.batch.token_type_ids.index_select(0, ex).slice(1, 0, Lc),
                                    p.batch.attention_mask.index_select(0, ex).slice(1, 0, Lc),
                                    p.targets.index_select(0, ex), o.output);
      total.slice(1, 0, Lc).index_add_(0, ex, g * weight_t.index_select(0, k).view({-1, 1, 1}));
    }
    torch::Tensor attr = (total * diff).sum(-1);  // [B, L]
    // Convergence delta needs F at the input and at the baseline.
    torch::Tensor f_in, f_base;
    {
      torch::NoGradGuard no_grad;
      auto run = [&](const torch::Tensor& emb) {
        ForwardRequest req;
        req.inputs_embeds = emb;
        req.token_type_ids = p.batch.token_type_ids;
        req.attention_mask = p.batch.attention_mask;
        return target_output(clf.model.forward(req).logits, p.targets, o.output).to(torch::kDouble).cpu();
      };
      f_in = run(p.embeds);
      f_base = run(base);
    }
    std::vector<Explanation> out;
    for (int64_t b = 0; b < B; ++b) {
      Explanation e{name(), targets[b], row_scores(attr, b, p.batch.lengths[b]), nlohmann::json::object()};
      double sum = 0;
      for (double v : e.scores) sum += v;
      e.extras["delta"] = sum - (f_in[b].item<double>() - f_base[b].item<double>());
      e.extras["steps"] = n;
      e.extras["rule"] = rule;
      e.extras["baseline"] = baseline_kind;
      out.push_back(std::move(e));
    }
    return out;
  }
};

// Leave-one-out: score_i = F(x) − F(x with token i replaced by [MASK] (default) or deleted).
// Special tokens are never removed and score 0. All perturbations go through batched scoring.
class Occlusion : public Explainer {
 public:
  std::string name() const override { return "occlusion"; }
  std::vector<Explanation> explain(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                   const std::vector<int64_t>& targets, const ExplainOptions& o) override {
    check_inputs(inputs, targets, clf.model.config().num_labels);
    const Removal removal = parse_removal(param_string(o, "removal", "mask"));
    std::vector<TokenSequence> seqs;
    std::vector<int64_t> seq_targets;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TokenSequence x = to_sequence(*inputs[i]);
      const std::vector<bool> removable = removable_positions(clf, *inputs[i]);
      seqs.push_back(x);
      seq_targets.push_back(targets[i]);
      for (size_t t = 0; t < x.ids.size(); ++t) {
        if (!removable[t]) continue;
        std::vector<int> rm(x.ids.size(), 0);
        rm[t] = 1;
        seqs.push_back(remove_positions(x, rm, removal, clf.tokenizer.mask_id()));
        seq_targets.push_back(targets[i]);
      }
    }
    const std::vector<double> f = score_sequences(clf, seqs, seq_targets, o.output, o.internal_batch);
    std::vector<Explanation> out;
    size_t at = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::vector<bool> removable = removable_positions(clf, *inputs[i]);
      const double full = f[at++];
      Explanation e{name(), targets[i], std::vector<double>(removable.size(), 0.0), nlohmann::json::object()};
      for (size_t t = 0; t < removable.size(); ++t)
        if (removable[t]) e.scores[t] = full - f[at++];
      out.push_back(std::move(e));
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Explainer> make_random() { return std::make_unique<RandomExplainer>(); }
std::unique_ptr<Explainer> make_saliency() { return std::make_unique<GradientExplainer>(false); }
std::unique_ptr<Explainer> make_grad_x_input() { return std::make_unique<GradientExplainer>(true); }
std::unique_ptr<Explainer> make_integrated_gradients() { return std::make_unique<IntegratedGradients>(); }
std::unique_ptr<Explainer> make_occlusion() { return std::make_unique<Occlusion>(); }

}  // namespace salient::explain
