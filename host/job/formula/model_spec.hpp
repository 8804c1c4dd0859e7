/// @file model_spec.hpp
/// @brief A model written in the job (`model.formula`, DESIGN.md §4): reading and checking it,
/// and its energy by the formula interpreter (what validation needs before anything is compiled).
#pragma once

#include <string>
#include <vector>

#include "host/job/formula/formula.hpp"
#include "host/job/json_fields.hpp"

namespace vigor::host::formula {

/// Largest dof of a formula model: the generated model carries dof x dof Newton Jacobians in
/// registers (fixed-size arrays), and hand-written mechanical systems stay far below it.
inline constexpr int kMaxDof = 32;

/// A formula model, checked: every formula parsed in its scope, every name resolved.
struct ModelSpec {
  enum class Kind { kSeparable, kLagrangian };
  std::string name = "formula";  ///< [a-z][a-z0-9_]*, at most 64 characters
  int dof = 0;
  Kind kind = Kind::kSeparable;
  /// V(q) (separable: H = sum p_i^2 / (2 m_i) + V(q)) or L(q, v) (lagrangian).
  Formula energy_term;
  std::vector<double> masses;        ///< separable only: dof positive masses (default 1)
  std::vector<Formula> constraints;  ///< g_a(q) = 0, fewer than dof
  std::vector<Formula> force;        ///< empty, or dof generalised forces F_i(q, v, t)
  std::vector<std::string> momentum_names;
  std::vector<Formula> momentum_maps;    ///< J_k(q, p)
  std::vector<std::string> state_names;  ///< 2 dof names (default q0 …, p0 …)
  std::vector<std::string> params;       ///< model.params' keys, in the job's order
  std::vector<double> param_values;
};

/// Read `model` (the job's model object, which has a "formula" key) at key path `path`; throws
/// JobError naming the key (model.formula.potential: column 14: unexpected ')').
ModelSpec read_model_spec(const Json& model, const std::string& path = "model");

/// H at a (q, p) state (2 dof values) with parameter values `params` (ModelSpec::params order):
/// separable, sum p_i^2 / (2 m_i) + V(q); lagrangian, v . p - L(q, v) with v solved from
/// p = dL/dv by Newton's method on the interpreted formula's derivatives (dual numbers). NaN when
/// the state gives no finite value or the velocity solve does not converge.
double energy(const ModelSpec& spec, const double* params, const double* state);

/// "" when a (q, p) state satisfies the constraints, g(q) = 0 and G(q) v = 0, within `tolerance`
/// relative to max|q_i| and max|v_i| (as host::check_phase_state for compiled models), else which
/// constraint is off and by how much.
std::string manifold_defect(const ModelSpec& spec, const double* params, const double* state,
                            double tolerance);

}  // namespace vigor::host::formula
