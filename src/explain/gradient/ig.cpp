// ig: integrated gradients on the word embeddings (Sundararajan et al. 2017), Captum's
// LayerIntegratedGradients on bert.embeddings.word_embeddings; with layer=embeddings on the
// embedding layer's output (LayerIntegratedGradients on bert.embeddings). The fast paths (word
// embeddings only) are in ig_paths.h.
#include <algorithm>
#include <atomic>
#include <cmath>

#include "explain/gradient/embedding_gradients.h"
#include "explain/gradient/ig_paths.h"
#include "util/error.h"
#include "util/quadrature.h"

namespace salient::explain {
namespace {

// Integrated gradients on the word embeddings: attr = (x − x') ⊙ Σ_k w_k ∂F(x' + α_k(x − x'))/∂x,
// summed over the hidden dimension. All (input, point) rows are evaluated in chunks of at most
// internal_batch rows. Extras: delta = Σ attr − (F(x) − F(x')) (Captum's convergence delta).
constexpr int64_t kIgTokenRows = 2048;
// Rows of a shorter example join a chunk only if it has at least kIgPaddingRule/10 of the chunk's length.
constexpr int64_t kIgPaddingRule = 9;
// steps=auto: the first and the largest number of points tried.
constexpr int64_t kAutoFirstSteps = 8, kAutoMaxSteps = 1024;

class IntegratedGradients : public Explainer {
 public:
  std::string name() const override { return "ig"; }
  std::vector<Explanation> compute(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                   const std::vector<int64_t>& targets, const ExplainOptions& o) override {
    if (o.params.at("steps").is_string()) return to_accuracy(clf, inputs, targets, o);  // steps=auto
    const int64_t n = param_int(o, "steps");
    const std::string rule = param_string(o, "rule");
    const std::string baseline_kind = param_string(o, "baseline");
    if (n < 2) fail("--steps: need at least 2, got {}", n);
    // Captum's points (float32 linspace) and weights, for parity with LayerIntegratedGradients.
    const Quadrature q = make_quadrature(parse_rule(rule), n, QuadratureConvention::Captum);
    const std::vector<double>& alpha = q.alphas;
    const std::vector<double>& weight = q.weights;
    Prepared p = prepare(clf, inputs, targets, gradient_layer(o));
    const bool at_output = p.layer == GradientLayer::Embeddings;
    const int64_t B = p.embeds.size(0);
    const torch::Device dev = clf.model.device();

    // The baseline at the gradient layer: zeros there, or the baseline ids' representation (at
    // the embedding layer's output, as Captum's LayerIntegratedGradients on bert.embeddings).
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
            if (!clf.tokenizer.is_structural(a[b][t])) a[b][t] = fill;  // [CLS]/[SEP] kept
        base = represent(clf, ids.to(dev), p.batch.token_type_ids, p.batch.attention_mask, p.layer);
      } else {
        fail("--baseline: unknown baseline '{}' (pad, zeros, mask)", baseline_kind);
      }
    }
    torch::Tensor diff = p.embeds - base;
    const int64_t rows = B * n, chunk = std::max<int64_t>(o.internal_batch, 1);
    auto opts = torch::TensorOptions().dtype(p.embeds.scalar_type()).device(dev);
    torch::Tensor alpha_t = torch::tensor(alpha, torch::kDouble).to(dev), weight_t = torch::tensor(weight, torch::kDouble).to(dev);
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
    // impl: "fused" (CPU default: closed-form first layer, hand-written backward), "autograd"
    // (closed-form first layer under autograd; the default off CPU) or "plain" (the textbook
    // gradient at every point, also used for a model in training mode). Same values up to rounding.
    // The closed forms of fused and autograd integrate over the word embeddings (the embedding
    // LayerNorm is on the path); from the embedding layer's output IG runs plain.
    std::string impl = param_string(o, "impl");
    if (at_output && (impl == "fused" || impl == "autograd"))
      fail("--impl: {} integrates over the word embeddings; with --layer embeddings use auto or plain", impl);
    if (at_output) impl = "plain";
    // DeBERTa's embeddings (projection, padding zeroed) and disentangled attention are outside the
    // closed forms: IG there is the textbook gradient at every point.
    if (clf.model.config().is_deberta()) {
      if (impl == "fused" || impl == "autograd")
        fail("--impl: {} assumes BERT's embeddings and attention; a DeBERTa model takes auto or plain", impl);
      impl = "plain";
    }
    // The fused backward ends in the last layer's first token; a head that mixes every layer
    // (salient_pooling scalar_mix) takes the autograd path.
    const bool every_layer = clf.model.pools_every_layer();
    if (impl == "auto") impl = clf.model.training() ? "plain" : dev.is_cpu() && !every_layer ? "fused" : "autograd";
    if (impl != "fused" && impl != "autograd" && impl != "plain")
      fail("--impl: unknown implementation '{}' (auto, fused, autograd, plain)", impl);
    if (impl == "fused" && !dev.is_cpu()) fail("--impl: fused runs on CPU only");
    if (impl == "fused" && every_layer)
      fail("--impl: fused needs a head on the last layer's first token; this model mixes every layer "
           "(salient_pooling {}): use autograd or plain", clf.model.config().pooling);
    const bool plain = impl == "plain";
    LinearEmbedding le;
    std::vector<FusedLayer> fused;
    if (!plain) le = linear_embedding(clf.model, base, diff, p.batch.token_type_ids, p.batch.attention_mask);
    if (impl == "fused") {
      for (int64_t i = 0; i < clf.model.num_layers(); ++i) fused.push_back(fused_layer(clf.model, i));
      if (clf.model.num_layers() > 1) add_first_score_terms(clf.model, le);
    }
    torch::Tensor attr = torch::zeros({B, p.embeds.size(1)}, torch::TensorOptions().dtype(torch::kDouble).device(dev));
    // Chunks of rows: besides the row cap, at most kIgTokenRows token positions per pass: larger
    // passes run slower per FLOP once activations leave the caches (BERT-base, 128 tokens, 50
    // points: 16 rows per pass 1.19x the FLOP floor, 64 rows 1.37x; docs/PERFORMANCE.md).
    // A chunk also ends where the next example is much shorter than its longest (first) one, so
    // little padding is computed: padded positions cost as much as tokens. Each run of rows of
    // similar length is cut into equal chunks (BERT-base, 50 points: 13+13+12+12 rows, not
    // 16+16+16+2), so that threads taking whole chunks finish together.
    // Fused chunks run on every thread at once (below): together they stay within the token budget.
    const int64_t threads = at::get_num_threads();
    const int64_t chunk_tokens = std::min(
        kIgTokenRows, impl == "fused" && threads > 1 ? std::max<int64_t>(o.max_batch_tokens / threads, 1) : o.max_batch_tokens);
    std::vector<std::pair<int64_t, int64_t>> chunks;
    for (int64_t s = 0, run_end = 0; s < rows; s = run_end) {
      const int64_t Lc = p.batch.lengths[row_ex[s]];
      for (run_end = s + 1; run_end < rows && 10 * p.batch.lengths[row_ex[run_end]] >= kIgPaddingRule * Lc; ++run_end) {
      }
      const int64_t n_run = run_end - s;
      const int64_t per = rows_per_pass({chunk, chunk_tokens}, Lc);
      const int64_t k = (n_run + per - 1) / per;
      for (int64_t i = 0, b = s; i < k; ++i) {
        const int64_t e = b + n_run / k + (i < n_run % k ? 1 : 0);
        chunks.emplace_back(b, e);
        b = e;
      }
    }
    const int64_t n_chunks = static_cast<int64_t>(chunks.size());
    // A chunk's rows as (example, point) index tensors.
    auto chunk_rows = [&](int64_t c) {
      // Plain variables: C++17 lets no lambda capture a structured binding (clang enforces it).
      const int64_t s = chunks[c].first, e = chunks[c].second;
      auto index = [&](const std::vector<int64_t>& v) {
        return torch::tensor(std::vector<int64_t>(v.begin() + s, v.begin() + e), torch::kLong).to(dev);
      };
      return std::make_pair(index(row_ex), index(row_k));
    };
    // Per chunk: F per row and Σ_h d ⊙ ∂F/∂z per (row, token).
    std::vector<torch::Tensor> chunk_f(n_chunks), chunk_g(n_chunks);
    auto run_chunk = [&](int64_t c) {
      const int64_t Lc = p.batch.lengths[row_ex[chunks[c].first]];
      const auto [ex, k] = chunk_rows(c);
      torch::Tensor mask = p.batch.attention_mask.index_select(0, ex).slice(1, 0, Lc);
      torch::Tensor tg = p.targets.index_select(0, ex);
      if (plain) {
        torch::Tensor a = alpha_t.to(opts.dtype()).index_select(0, k).view({-1, 1, 1});
        torch::Tensor d = diff.index_select(0, ex).slice(1, 0, Lc);
        torch::Tensor pts = base.index_select(0, ex).slice(1, 0, Lc) + a * d;
        auto fg = output_and_grad(clf, pts, p.batch.token_type_ids.index_select(0, ex).slice(1, 0, Lc), mask, tg,
                                  output_of(o), p.layer);
        chunk_f[c] = fg.first.to(torch::kDouble);
        chunk_g[c] = (fg.second * d).sum(-1).to(torch::kDouble);
      } else if (impl == "fused") {
        std::tie(chunk_f[c], chunk_g[c]) =
            ig_alpha_gradient_fused(clf.model, le, fused, ex, alpha_t.index_select(0, k), Lc, mask, tg, output_of(o));
      } else {
        std::tie(chunk_f[c], chunk_g[c]) =
            ig_alpha_gradient(clf.model, le, ex, alpha_t.index_select(0, k), Lc, mask, tg, output_of(o));
      }
    };
    if (impl == "fused" && n_chunks > 1 && threads > 1) {
      // Chunks are independent: on several threads each takes whole chunks, which scales better
      // than splitting each pass's small kernels (ops inside a parallel region run single-threaded).
      // Each thread takes the next chunk when it is free; chunks come longest first, so the
      // threads finish close together.
      std::atomic<int64_t> next{0};
      at::parallel_for(0, std::min(threads, n_chunks), 1, [&](int64_t, int64_t) {
        for (int64_t c = next++; c < n_chunks; c = next++) run_chunk(c);
      });
    } else {
      for (int64_t c = 0; c < n_chunks; ++c) run_chunk(c);
    }
    // Summed in chunk order whatever the threads did, so results do not depend on them. Rules
    // whose points include α = 0 and 1 (trapezoid) already computed F(x') and F(x) for the delta.
    std::vector<double> f_in(B, std::nan("")), f_base(B, std::nan(""));
    for (int64_t c = 0; c < n_chunks; ++c) {
      const auto [s, e] = chunks[c];
      const int64_t Lc = p.batch.lengths[row_ex[s]];
      const auto [ex, k] = chunk_rows(c);
      attr.slice(1, 0, Lc).index_add_(0, ex, chunk_g[c] * weight_t.index_select(0, k).view({-1, 1}));
      torch::Tensor f = chunk_f[c].cpu().contiguous();
      for (int64_t r = s; r < e; ++r) {
        if (alpha[row_k[r]] == 0.0) f_base[row_ex[r]] = f.data_ptr<double>()[r - s];
        if (alpha[row_k[r]] == 1.0) f_in[row_ex[r]] = f.data_ptr<double>()[r - s];
      }
    }
    if (std::any_of(f_in.begin(), f_in.end(), [](double v) { return std::isnan(v); }) ||
        std::any_of(f_base.begin(), f_base.end(), [](double v) { return std::isnan(v); })) {
      torch::NoGradGuard no_grad;
      // Input and baseline in one pass.
      auto twice = [](const torch::Tensor& t) { return torch::cat({t, t}); };
      torch::Tensor logits = logits_at(clf, torch::cat({p.embeds, base}), twice(p.batch.token_type_ids),
                                       twice(p.batch.attention_mask), p.layer);
      torch::Tensor f = target_output(logits, twice(p.targets), output_of(o))
                            .to(torch::kDouble)
                            .cpu()
                            .contiguous();
      for (int64_t b = 0; b < B; ++b) {
        f_in[b] = f.data_ptr<double>()[b];
        f_base[b] = f.data_ptr<double>()[B + b];
      }
    }
    std::vector<Explanation> out;
    for (int64_t b = 0; b < B; ++b) {
      Explanation e{name(), targets[b], row_scores(attr, b, p.batch.lengths[b]), nlohmann::json::object()};
      double sum = 0;
      for (double v : e.scores) sum += v;
      e.extras["delta"] = sum - (f_in[b] - f_base[b]);
      e.extras["steps"] = n;
      e.extras["rule"] = rule_name(parse_rule(rule));
      e.extras["baseline"] = baseline_kind;
      out.push_back(std::move(e));
    }
    return out;
  }

 private:
  // steps=auto: each input integrated with kAutoFirstSteps points, then twice as many, ... until its
  // completeness gap |Σ attr − (F(x) − F(x'))| is at most tol · |F(x) − F(x')| (or kAutoMaxSteps
  // points are reached: extras.converged false). The points of one count are not reused by the next
  // (Gauss-Legendre's are not nested): the rounds cost less than twice the last one.
  std::vector<Explanation> to_accuracy(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                       const std::vector<int64_t>& targets, const ExplainOptions& o) {
    const double tol = param_double(o, "tol");
    std::vector<Explanation> out(inputs.size());
    std::vector<size_t> open(inputs.size());
    for (size_t i = 0; i < open.size(); ++i) open[i] = i;
    for (int64_t n = kAutoFirstSteps; !open.empty(); n *= 2) {
      ExplainOptions on = o;
      on.params["steps"] = n;
      std::vector<const Encoding*> some;
      std::vector<int64_t> their_targets;
      for (size_t i : open) some.push_back(inputs[i]), their_targets.push_back(targets[i]);
      std::vector<Explanation> ex = compute(clf, some, their_targets, on);
      std::vector<size_t> still;
      for (size_t j = 0; j < open.size(); ++j) {
        Explanation& e = ex[j];
        double sum = 0;
        for (double v : e.scores) sum += v;
        const double gap = std::abs(e.extras["delta"].get<double>());
        const double change = std::abs(sum - e.extras["delta"].get<double>());  // |F(x) − F(x')|
        const bool converged = gap <= tol * change;
        if (!converged && 2 * n <= kAutoMaxSteps) {
          still.push_back(open[j]);
          continue;
        }
        e.extras["tol"] = tol;
        e.extras["converged"] = converged;
        out[open[j]] = std::move(e);
      }
      open = std::move(still);
    }
    return out;
  }
};

}  // namespace

ExplainerInfo ig_info() {
  const std::vector<std::string> rules = {"gausslegendre", "riemann_left", "riemann_right", "riemann_middle",
                                          "riemann_trapezoid", "gauss", "left", "right", "middle", "midpoint",
                                          "trapezoid", "gauss_legendre", "gauss-legendre"};
  return {"ig", "gradient", "integrated gradients on the word embeddings (Sundararajan et al. 2017)",
          {auto_int_param("steps", 50, 2, 100000,
                          "integration points; auto: 8, 16, 32, ... (at most 1024) until the completeness gap is "
                          "within --tol of |F(x) - F(baseline)|"),
           number_param("tol", 0.01, 0, 1, "with --steps auto: the completeness gap allowed, relative to |F(x) - F(baseline)|"),
           choice_param("rule", "gausslegendre", rules, "quadrature rule (Captum's names; short aliases accepted)"),
           choice_param("baseline", "pad", {"pad", "mask", "zeros", "zero"},
                        "pad / mask: every non-structural token replaced by [PAD] / [MASK]; zeros: zero embeddings"),
           choice_param("impl", "auto", {"auto", "fused", "autograd", "plain"},
                        "implementation (same values up to rounding): fused on CPU, autograd elsewhere; "
                        "plain with --layer embeddings"),
           gradient_layer_param()},
          [] { return std::unique_ptr<Explainer>(new IntegratedGradients()); }, {Footprint::Pass::gradient, /*fills_budget=*/true, kIgTokenRows, "steps", /*thread_passes=*/true}};
}

}  // namespace salient::explain
