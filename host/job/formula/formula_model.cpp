/// @file formula_model.cpp
/// @brief The ModelInfo and the plugin sources of a formula model (see formula_model.hpp).
#include "host/job/formula/formula_model.hpp"

#include <array>
#include <stdexcept>
#include <utility>

#include "host/backends/first_use.hpp"
#include "host/job/formula/codegen.hpp"
#include "kernels/core/mechanics.hpp"
#include "kernels/core/specs.hpp"
#include "kernels/core/vec.hpp"
#include "kernels/integrators/protocol.hpp"
#include "kernels/tangent.hpp"
#include "vigor/all_integrators.hpp"

namespace vigor::host::formula {

namespace {

/// A model with the members of one kind of formula model and nothing else: which integrators
/// handle a formula model, and for which its tangent map is compiled, is what
/// kernels::integrator_supports and kernels::tangent_built say of its archetype, so the lists
/// cannot drift from the dispatch the compiled engine will do.
template <bool kLagrangian, bool kConstrained, bool kForced, int kDof = 2>
struct Archetype {
  template <class Real>
  struct Model {
    static constexpr int dof = kDof;
    static constexpr int kConstraints = kConstrained ? 1 : 0;
    Real inv_mass(int) const requires(!kLagrangian) { return Real(1); }
    template <class T>
    T potential(const kernels::Vec<T, dof>& q) const requires(!kLagrangian) {
      return q[0];
    }
    template <class T>
    T lagrangian(const kernels::Vec<T, dof>& q, const kernels::Vec<T, dof>& v) const
        requires(kLagrangian) {
      return v[0] * v[0] + q[0];
    }
    template <class T>
    kernels::Vec<T, 1> constraints(const kernels::Vec<T, dof>& q) const requires(kConstrained) {
      return {{q[0]}};
    }
    template <class T>
    kernels::Vec<T, dof> external_force(const kernels::Vec<T, dof>& q, const kernels::Vec<T, dof>&,
                                        T) const requires(kForced) {
      return q;
    }
  };
};

template <bool kLagrangian, bool kConstrained, bool kForced>
std::vector<std::string> integrators_of_kind() {
  using M = typename Archetype<kLagrangian, kConstrained, kForced>::template Model<double>;
  static_assert(kernels::LagrangianModel<M> == kLagrangian &&
                kernels::SeparableModel<M> != kLagrangian &&
                kernels::ConstrainedModel<M> == kConstrained && kernels::ForcedModel<M> == kForced);
  std::vector<std::string> names;
#define VIGOR_INTEGRATOR(name, Type, header) \
  if constexpr (kernels::integrator_supports<kernels::Type<double>, M>) names.emplace_back(#name);
#include "kernels/integrators/integrators.def"
#undef VIGOR_INTEGRATOR
  return names;
}

/// Those of the integrators of a kind whose tangent map is compiled for a model of kDof degrees of
/// freedom.
template <bool kLagrangian, bool kConstrained, bool kForced, int kDof>
std::vector<std::string> tangent_integrators_of_kind() {
  using M = typename Archetype<kLagrangian, kConstrained, kForced, kDof>::template Model<double>;
  std::vector<std::string> names;
#define VIGOR_INTEGRATOR(name, Type, header)                                     \
  if constexpr (kernels::integrator_supports<kernels::Type<double>, M> &&       \
                kernels::tangent_built<kernels::Type<double>, M>)                \
    names.emplace_back(#name);
#include "kernels/integrators/integrators.def"
#undef VIGOR_INTEGRATOR
  return names;
}

/// A tangent map has K = 2 dof directions, at most kernels::kTangentMaxDirections.
constexpr int kTangentMaxDof = kernels::kTangentMaxDirections / 2;

template <bool kLagrangian, bool kConstrained, bool kForced, int... kDofs>
std::vector<std::string> tangent_integrators_for(int dof, std::integer_sequence<int, kDofs...>) {
  std::vector<std::string> names;
  ((dof == kDofs + 1
        ? void(names = tangent_integrators_of_kind<kLagrangian, kConstrained, kForced, kDofs + 1>())
        : void()),
   ...);
  return names;
}

template <bool kLagrangian, bool kConstrained, bool kForced>
std::vector<std::string> tangent_integrators_for(int dof) {
  return tangent_integrators_for<kLagrangian, kConstrained, kForced>(
      dof, std::make_integer_sequence<int, kTangentMaxDof>{});
}

std::vector<std::string> tangent_integrators_of(const ModelSpec& s) {
  const bool l = s.kind == ModelSpec::Kind::kLagrangian;
  const bool c = !s.constraints.empty();
  const bool f = !s.force.empty();
  if (l) {
    if (c)
      return f ? tangent_integrators_for<true, true, true>(s.dof)
               : tangent_integrators_for<true, true, false>(s.dof);
    return f ? tangent_integrators_for<true, false, true>(s.dof)
             : tangent_integrators_for<true, false, false>(s.dof);
  }
  if (c)
    return f ? tangent_integrators_for<false, true, true>(s.dof)
             : tangent_integrators_for<false, true, false>(s.dof);
  return f ? tangent_integrators_for<false, false, true>(s.dof)
           : tangent_integrators_for<false, false, false>(s.dof);
}

std::vector<std::string> integrators_of(const ModelSpec& s) {
  const bool l = s.kind == ModelSpec::Kind::kLagrangian;
  const bool c = !s.constraints.empty();
  const bool f = !s.force.empty();
  if (l) {
    if (c)
      return f ? integrators_of_kind<true, true, true>() : integrators_of_kind<true, true, false>();
    return f ? integrators_of_kind<true, false, true>() : integrators_of_kind<true, false, false>();
  }
  if (c)
    return f ? integrators_of_kind<false, true, true>() : integrators_of_kind<false, true, false>();
  return f ? integrators_of_kind<false, false, true>() : integrators_of_kind<false, false, false>();
}

}  // namespace

ModelInfo describe(std::shared_ptr<const ModelSpec> spec) {
  const ModelSpec& s = *spec;
  ModelInfo info;
  info.name = s.name;
  info.description = "model from formulas in the job file";
  info.formula = true;
  info.kind = s.kind == ModelSpec::Kind::kLagrangian ? "lagrangian" : "separable";
  info.dof = s.dof;
  info.dim = 2 * s.dof;
  info.constraints = int(s.constraints.size());
  info.forced = !s.force.empty();
  // ParamSpec names point into the spec, which the functions below keep alive with the info.
  for (const std::string& p : s.params)
    info.params.push_back({p.c_str(), 0.0, kernels::Rule::kFinite, "formula parameter"});
  info.state_names = s.state_names;
  info.momentum_names = s.momentum_names;
  info.integrators = integrators_of(s);
  info.tangent_integrators = tangent_integrators_of(s);
  info.energy = [spec](const double* params, const double* state) {
    return energy(*spec, params, state);
  };
  if (s.kind == ModelSpec::Kind::kSeparable)
    info.inv_mass = [spec](const double*, int i) { return 1.0 / spec->masses[i]; };
  info.check_state = [spec](const double* params, const double* state) -> std::string {
    if (spec->constraints.empty()) return {};
    return manifold_defect(*spec, params, state, kManifoldTolerance);
  };
  info.prepare = [spec](const Integration& in, BackendKind backend) {
    load_plugin(plugin_source(*spec, in, backend));
  };
  info.make_cpu_engine = [spec](const Integration& in, const EngineResources& r) {
    return load_plugin(plugin_source(*spec, in, BackendKind::kCpu)).factory(in, r);
  };
#if defined(VIGOR_HAVE_CUDA)
  info.make_cuda_engine = [spec](const Integration& in, const EngineResources& r) {
    return load_plugin(plugin_source(*spec, in, BackendKind::kCuda)).factory(in, r);
  };
#endif
  return info;
}

PluginSource plugin_source(const ModelSpec& spec, const Integration& in, BackendKind backend) {
  PluginSource src =
      engine_plugin_source(in, backend, "model.hpp", "vigor::formula_models::FormulaModel",
                           "the formula model \"" + spec.name + "\"");
  src.header_file = "model.hpp";
  src.header_text = model_header(spec, "FormulaModel", in.tangent);
  src.what = "formula model '" + spec.name + "' (" + (src.cuda ? "cuda, " : "cpu, ") +
             in.integrator + ", " + (in.precision == Precision::kFloat ? "float" : "double") +
             (in.tangent ? ", tangent maps" : "") + ")";
  return src;
}

}  // namespace vigor::host::formula
