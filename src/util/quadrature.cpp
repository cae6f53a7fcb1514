#include "util/quadrature.h"

#include <torch/torch.h>

#include <cmath>

#include "util/error.h"

namespace salient {

Rule parse_rule(const std::string& name, const std::string& flag) {
  if (name == "riemann_left" || name == "left") return Rule::Left;
  if (name == "riemann_right" || name == "right") return Rule::Right;
  if (name == "riemann_middle" || name == "middle" || name == "midpoint") return Rule::Middle;
  if (name == "riemann_trapezoid" || name == "trapezoid") return Rule::Trapezoid;
  if (name == "gausslegendre" || name == "gauss" || name == "gauss_legendre" || name == "gauss-legendre")
    return Rule::GaussLegendre;
  fail("{}: unknown rule '{}' (riemann_left, riemann_right, riemann_middle, riemann_trapezoid, gausslegendre; "
       "or left, right, midpoint, trapezoid, gauss)",
       flag, name);
}

std::string rule_name(Rule rule) {
  switch (rule) {
    case Rule::Left: return "riemann_left";
    case Rule::Right: return "riemann_right";
    case Rule::Middle: return "riemann_middle";
    case Rule::Trapezoid: return "riemann_trapezoid";
    case Rule::GaussLegendre: return "gausslegendre";
  }
  return "?";
}

std::string rule_short_name(Rule rule) {
  switch (rule) {
    case Rule::Left: return "left";
    case Rule::Right: return "right";
    case Rule::Middle: return "midpoint";
    case Rule::Trapezoid: return "trapezoid";
    case Rule::GaussLegendre: return "gauss";
  }
  return "?";
}

const std::vector<std::string>& rule_names() {
  static const std::vector<std::string> names = {"riemann_left", "riemann_right", "riemann_middle",
                                                  "riemann_trapezoid", "gausslegendre"};
  return names;
}

namespace {

// Nodes by Newton's method on P_n from the Chebyshev guesses; weights 2 / ((1 − x²) P_n'(x)²),
// both mapped to [0, 1]; ascending, as numpy's leggauss.
Quadrature gauss_legendre(int64_t n) {
  Quadrature q;
  q.alphas.resize(n);
  q.weights.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    double x = std::cos(M_PI * (double(i) + 0.75) / (double(n) + 0.5)), dp = 0;
    for (int iter = 0; iter < 100; ++iter) {
      double p0 = 1, p1 = x;  // P_0, P_1
      for (int64_t k = 2; k <= n; ++k) {
        const double p2 = ((2.0 * k - 1) * x * p1 - (k - 1.0) * p0) / double(k);
        p0 = p1;
        p1 = p2;
      }
      const double pn = n == 1 ? x : p1, pn1 = n == 1 ? 1.0 : p0;
      dp = double(n) * (x * pn - pn1) / (x * x - 1);
      const double dx = pn / dp;
      x -= dx;
      if (std::abs(dx) < 1e-16) break;
    }
    q.alphas[n - 1 - i] = 0.5 * (1 + x);
    q.weights[n - 1 - i] = 1.0 / ((1 - x * x) * dp * dp);
  }
  return q;
}

// torch.linspace(a, b, n) in float32, widened: Captum's points exactly.
std::vector<double> linspace_f32(double a, double b, int64_t n) {
  torch::Tensor t = torch::linspace(a, b, n, torch::kFloat32).to(torch::kDouble).contiguous();
  return std::vector<double>(t.data_ptr<double>(), t.data_ptr<double>() + n);
}

}  // namespace

Quadrature make_quadrature(Rule rule, int64_t n, QuadratureConvention convention, const std::string& flag) {
  if (n < 1) fail("{}: the number of integration points must be positive (got {})", flag, n);
  if (rule == Rule::Trapezoid && n < 2) fail("{}: the trapezoid rule needs at least 2 points (got {})", flag, n);
  if (rule == Rule::GaussLegendre) return gauss_legendre(n);
  Quadrature q;
  const double dn = double(n);
  if (convention == QuadratureConvention::Captum) {
    q.weights.assign(n, 1.0 / dn);
    switch (rule) {
      case Rule::Left: q.alphas = linspace_f32(0.0, 1.0 - 1.0 / dn, n); break;
      case Rule::Right: q.alphas = linspace_f32(1.0 / dn, 1.0, n); break;
      case Rule::Middle: q.alphas = linspace_f32(1.0 / (2.0 * dn), 1.0 - 1.0 / (2.0 * dn), n); break;
      case Rule::Trapezoid:
        q.alphas = linspace_f32(0.0, 1.0, n);
        q.weights.front() /= 2;
        q.weights.back() /= 2;
        break;
      default: break;
    }
    return q;
  }
  for (int64_t k = 0; k < n; ++k) {
    switch (rule) {
      case Rule::Left: q.alphas.push_back(double(k) / dn); q.weights.push_back(1.0 / dn); break;
      case Rule::Right: q.alphas.push_back(double(k + 1) / dn); q.weights.push_back(1.0 / dn); break;
      case Rule::Middle: q.alphas.push_back((double(k) + 0.5) / dn); q.weights.push_back(1.0 / dn); break;
      case Rule::Trapezoid:
        q.alphas.push_back(double(k) / (dn - 1));
        q.weights.push_back((k == 0 || k == n - 1 ? 0.5 : 1.0) / (dn - 1));
        break;
      default: break;
    }
  }
  return q;
}

}  // namespace salient
