#include "host/registry.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "kernels/core/mechanics.hpp"
#include "kernels/integrators/protocol.hpp"
#include "kernels/tangent.hpp"
#include "kernels/state.hpp"
#include "vigor/all_integrators.hpp"
#include "vigor/all_models.hpp"

namespace vigor::host {

#define VIGOR_MODEL(name, Type, header) \
  std::unique_ptr<Engine> make_cpu_engine_##name(const EngineRequest&);
#include "models/models.def"
#undef VIGOR_MODEL

#if defined(VIGOR_HAVE_CUDA)
#define VIGOR_MODEL(name, Type, header) \
  std::unique_ptr<Engine> make_cuda_engine_##name(const EngineRequest&);
#include "models/models.def"
#undef VIGOR_MODEL
int cuda_runtime_device_count(std::string* why);  // host/backends/cuda_runtime.cu
#endif

namespace {

/// "<index> is <value>, above the tolerance <limit>".
std::string defect_text(int index, double value, double limit) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%d is %.3g, above the tolerance %.3g", index, value, limit);
  return buf;
}

/// Whether a (q, p) state satisfies the model's constraints g(q) = 0 and G(q) v = 0.
template <class M>
std::string check_phase_state(const M& m, const double* state) {
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
#define VIGOR_INTEGRATOR(name, Type, header)                                       \
  if (kernels::integrator_supports<kernels::Type<double>, M>) {                    \
    info.integrators.push_back(#name);                                             \
    if (kernels::tangent_built<kernels::Type<double>, M>)                          \
      info.tangent_integrators.push_back(#name);                                   \
  }
#include "kernels/integrators/integrators.def"
#undef VIGOR_INTEGRATOR
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

template <template <class> class IntegratorT>
IntegratorInfo describe_integrator() {
  using I = IntegratorT<double>;
  IntegratorInfo info;
  info.name = I::kName;
  info.description = I::kDescription;
  info.reference = I::kReference;
  info.order = I::kOrder;
  info.symplectic = I::kSymplectic;
  info.is_explicit = I::kExplicit;
  info.newton_iterations = kernels::default_newton_iterations<I>;
  info.requires_model = kernels::integrator_requires<I>;
  info.options.assign(I::kOptions.begin(), I::kOptions.end());
  return info;
}

}  // namespace

int ModelInfo::state_index(const std::string& s) const {
  for (std::size_t i = 0; i < state_names.size(); ++i)
    if (state_names[i] == s) return int(i);
  return -1;
}

const std::vector<ModelInfo>& model_infos() {
  static const std::vector<ModelInfo> infos = [] {
    std::vector<ModelInfo> v;
#define VIGOR_MODEL(name, Type, header) v.push_back(describe_model<models::Type>());
#include "models/models.def"
#undef VIGOR_MODEL
    return v;
  }();
  return infos;
}

const std::vector<IntegratorInfo>& integrator_infos() {
  static const std::vector<IntegratorInfo> infos = [] {
    std::vector<IntegratorInfo> v;
#define VIGOR_INTEGRATOR(name, Type, header) v.push_back(describe_integrator<kernels::Type>());
#include "kernels/integrators/integrators.def"
#undef VIGOR_INTEGRATOR
    return v;
  }();
  return infos;
}

const ModelInfo* find_model(const std::string& name) {
  for (const auto& m : model_infos())
    if (m.name == name) return &m;
  return nullptr;
}

const IntegratorInfo* find_integrator(const std::string& name) {
  for (const auto& i : integrator_infos())
    if (i.name == name) return &i;
  return nullptr;
}

int cuda_device_count() {
#if defined(VIGOR_HAVE_CUDA)
  std::string why;
  return cuda_runtime_device_count(&why);
#else
  return 0;
#endif
}

std::string cuda_unavailable_reason() {
#if defined(VIGOR_HAVE_CUDA)
  std::string why;
  return cuda_runtime_device_count(&why) > 0 ? std::string() : why;
#else
  return "this build of vigor has no CUDA backend (no CUDA compiler was found at configure time)";
#endif
}

BackendKind resolve_backend(BackendKind requested) {
  if (requested != BackendKind::kAuto) return requested;
  return cuda_device_count() > 0 ? BackendKind::kCuda : BackendKind::kCpu;
}

std::unique_ptr<Engine> make_engine(const EngineRequest& r, BackendKind backend) {
  std::unique_ptr<Engine> e;
  if (backend == BackendKind::kCuda) {
    if (cuda_device_count() == 0)
      throw std::runtime_error("backend cuda: no usable CUDA device: " + cuda_unavailable_reason());
#if defined(VIGOR_HAVE_CUDA)
#define VIGOR_MODEL(name, Type, header) \
  if (r.model == #name) e = make_cuda_engine_##name(r);
#include "models/models.def"
#undef VIGOR_MODEL
#endif
  } else {
#define VIGOR_MODEL(name, Type, header) \
  if (r.model == #name) e = make_cpu_engine_##name(r);
#include "models/models.def"
#undef VIGOR_MODEL
  }
  if (!e)
    throw std::runtime_error("no engine for model '" + r.model + "' and integrator '" +
                             r.integrator + "'");
  return e;
}

}  // namespace vigor::host
