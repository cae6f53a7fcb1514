#pragma once
// Quadrature on [0, 1] for path integrals (integrated gradients, Self-Attention Attribution):
// ∫0^1 g ≈ Σ_k w_k g(α_k). One set of rule names, Captum's, with salient's short forms as aliases.
#include <string>
#include <vector>

namespace salient {

enum class Rule { Left, Right, Middle, Midpoint = Middle, Trapezoid, GaussLegendre };

// riemann_left | riemann_right | riemann_middle | riemann_trapezoid | gausslegendre, and the
// aliases left | right | middle | midpoint | trapezoid | gauss | gauss_legendre | gauss-legendre.
// Errors name `flag`.
Rule parse_rule(const std::string& name, const std::string& flag = "--rule");
std::string rule_name(Rule rule);                // Captum's name
std::string rule_short_name(Rule rule);          // left | right | midpoint | trapezoid | gauss
const std::vector<std::string>& rule_names();    // Captum's names, for help texts and --list

// How the points and weights are made. The two conventions differ only for the Riemann rules:
// - Exact: α_k = k/n (left), (k+1)/n (right), (k+½)/n (middle) in double precision; the trapezoid
//   rule is the textbook one, α_k = k/(n−1) with weights 1/(n−1), ends halved (they sum to 1).
//   The AttAttr authors' code (and the fixture) use these points.
// - Captum: the points as captum/attr/_utils/approximation_methods.py builds them, with
//   torch.linspace in float32; its trapezoid puts n points on [0, 1] with weights 1/n and the ends
//   halved, so they sum to (n−1)/n. Integrated gradients uses it for parity with Captum.
// Gauss–Legendre is the same under both: the n-point Legendre rule mapped from [−1, 1].
enum class QuadratureConvention { Exact, Captum };

struct Quadrature {
  std::vector<double> alphas, weights;  // ascending α
};

// At least 1 point (2 for the trapezoid rule); errors name `flag`.
Quadrature make_quadrature(Rule rule, int64_t n, QuadratureConvention convention, const std::string& flag = "--steps");

}  // namespace salient
