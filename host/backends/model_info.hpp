/// @file model_info.hpp
/// @brief How a model class template becomes a ModelInfo (host/backends/registry.hpp): its name,
/// kind, dimensions, parameters, state and momentum-map names, and its energy and manifold check in
/// double. One code path for the built-in models (host/backends/registry.cpp, from
/// models/models.def) and for models a program registers at run time (host/custom_model.hpp); only
/// the integrator list differs (every supported one for built-ins, the ones named at registration
/// otherwise).
///
/// Host-only; included by host/backends/registry.cpp and host/custom_model.hpp.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>

#include "host/backends/registry.hpp"
#include "kernels/core/mechanics.hpp"
#include "kernels/integrators/protocol.hpp"
#include "kernels/state.hpp"
#include "kernels/tangent.hpp"

namespace vigor::host {

namespace model_info_detail {

/// "<index> is <value>, above the tolerance <limit>".
inline std::string defect_text(int index, double value, double limit) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%d is %.3g, above the tolerance %.3g", index, value, limit);
  return buf;
}

}  // namespace model_info_detail

/// Whether a (q, p) state satisfies the model's constraints g(q) = 0 and G(q) v = 0: "" when it
/// does, else which constraint is off and by how much (kManifoldTolerance, relative).
template <class M>
std::string check_phase_state(const M& m, const double* state) {
  using model_info_detail::defect_text;
  constexpr int n = M::dof;
  constexpr int k = kernels::constraint_count<M>;
  kernels::Vec<double, n> q, p;
  for (int i = 0; i < n; ++i) {
    q[i] = state[i];
    p[i] = state[n + i];
  }
  const kernels::Vec<double, n> v = kernels::velocity_of(m, q, p);
  kernels::Vec<double, k> g;
  double G[k][n];
  kernels::constraint_jacobian(m, q, g, G);
  // The models write each constraint in length units (|q| - l to first order), so g compares
  // with the size of q and G v with the size of v: round-off of a state on the manifold is
  // ~1e-16 of those.
  const double gtol = kManifoldTolerance * kernels::max_abs(q);
  const double vtol = kManifoldTolerance * kernels::max_abs(v);
  for (int a = 0; a < k; ++a) {
    if (!(std::abs(g[a]) <= gtol))
      return "not on the constraint manifold: |g(q)| of constraint " +
             defect_text(a, std::abs(g[a]), gtol) +
             " (give positions that satisfy the constraints)";
    double gv = 0.0;
    for (int i = 0; i < n; ++i) gv += G[a][i] * v[i];
    if (!(std::abs(gv) <= vtol))
      return "velocity not tangent to the constraint manifold: |G(q) v| of constraint " +
             defect_text(a, std::abs(gv), vtol) +
             " (the momenta must satisfy the differentiated constraints)";
  }
  return {};
}

/// Everything about model template ModelT except its integrators and engines (see
/// add_integrator, and host/backends/registry.cpp / host/custom_model.hpp for those).
template <template <class> class ModelT>
ModelInfo describe_model() {
  using M = ModelT<double>;
  using Ops = kernels::StateOps<M, double>;
  ModelInfo info;
  info.name = M::kName;
  info.description = M::kDescription;
  info.kind = !kernels::PhaseModel<M>       ? "lie_group"
              : kernels::LagrangianModel<M> ? "lagrangian"
                                            : "separable";
  info.dof = M::dof;
  info.dim = Ops::kDim;
  info.constraints = kernels::constraint_count<M>;
  if constexpr (kernels::PhaseModel<M>) info.forced = kernels::ForcedModel<M>;
  info.params.assign(M::kParams.begin(), M::kParams.end());
  if constexpr (requires { M::kStateNames; }) {
    for (const char* s : M::kStateNames) info.state_names.emplace_back(s);
  } else {
    // Appending (not "q" + to_string) sidesteps a GCC 12 false -Wrestrict warning.
    for (const char* prefix : {"q", "p"}) {
      for (int i = 0; i < M::dof; ++i) {
        std::string name(prefix);
        name.append(std::to_string(i));
        info.state_names.push_back(name);
      }
    }
  }
  if constexpr (requires { M::kMomentumNames; })
    for (const char* s : M::kMomentumNames) info.momentum_names.emplace_back(s);
  info.energy = [](const double* params, const double* state) {
    const M m = M::from_params(params);
    typename Ops::State s;
    Ops::load(m, state, 1, s);
    return double(Ops::energy(m, s));
  };
  if constexpr (kernels::SeparableModel<M>)
    info.inv_mass = [](const double* params, int i) { return M::from_params(params).inv_mass(i); };
  info.check_state = [](const double* params, const double* state) -> std::string {
    const M m = M::from_params(params);
    if constexpr (requires(typename Ops::State s) { Ops::manifold_defect(m, s); }) {
      typename Ops::State s;
      Ops::load(m, state, 1, s);
      return Ops::manifold_defect(m, s);
    } else if constexpr (kernels::ConstrainedModel<M>) {
      return check_phase_state(m, state);
    } else {
      return {};
    }
  };
  return info;
}

/// Append integrator template IntegratorT to info.integrators (and to tangent_integrators when
/// its tangent map on the model is compiled) if it handles ModelT; returns whether it does.
template <template <class> class ModelT, template <class> class IntegratorT>
bool add_integrator(ModelInfo& info) {
  using M = ModelT<double>;
  using I = IntegratorT<double>;
  if constexpr (kernels::integrator_supports<I, M>) {
    info.integrators.emplace_back(I::kName);
    if constexpr (kernels::tangent_built<I, M>) info.tangent_integrators.emplace_back(I::kName);
    return true;
  } else {
    return false;
  }
}

}  // namespace vigor::host
