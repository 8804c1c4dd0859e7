/// @file formula_model.cpp
/// @brief The ModelInfo and the plugin sources of a formula model (see formula_model.hpp).
#include "host/job/formula/formula_model.hpp"

#include <array>
#include <stdexcept>

#include "host/job/formula/codegen.hpp"
#include "kernels/core/mechanics.hpp"
#include "kernels/core/specs.hpp"
#include "kernels/core/vec.hpp"
#include "kernels/integrators/protocol.hpp"
#include "vigor/all_integrators.hpp"

namespace vigor::host::formula {

namespace {

/// A model with the members of one kind of formula model and nothing else: which integrators
/// handle a formula model is what kernels::integrator_supports says of its archetype, so the list
/// cannot drift from the dispatch the compiled engine will do.
template <bool kLagrangian, bool kConstrained, bool kForced>
struct Archetype {
  template <class Real>
  struct Model {
    static constexpr int dof = 2;
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

struct IntegratorSource {
  const char* name;
  const char* type;
  const char* header;
};
constexpr IntegratorSource kIntegratorSources[] = {
#define VIGOR_INTEGRATOR(name, Type, header) {#name, #Type, #header},
#include "kernels/integrators/integrators.def"
#undef VIGOR_INTEGRATOR
};

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
  // Tangent maps of formula models are not compiled (the job parser says so by name).
  info.energy = [spec](const double* params, const double* state) {
    return energy(*spec, params, state);
  };
  if (s.kind == ModelSpec::Kind::kSeparable)
    info.inv_mass = [spec](const double*, int i) { return 1.0 / spec->masses[i]; };
  info.check_state = [spec](const double* params, const double* state) -> std::string {
    if (spec->constraints.empty()) return {};
    return manifold_defect(*spec, params, state, kManifoldTolerance);
  };
  info.prepare = [spec](const Integration& in) {
    load_plugin(plugin_source(*spec, in.integrator, in.precision));
  };
  info.make_cpu_engine = [spec](const Integration& in, const EngineResources& r) {
    const LoadedPlugin p = load_plugin(plugin_source(*spec, in.integrator, in.precision));
    return p.factory(in, r);
  };
  return info;
}

PluginSource plugin_source(const ModelSpec& spec, const std::string& integrator,
                           Precision precision) {
  const IntegratorSource* is = nullptr;
  for (const auto& i : kIntegratorSources)
    if (integrator == i.name) is = &i;
  if (!is) throw std::invalid_argument("plugin_source: unknown integrator '" + integrator + "'");
  const char* real = precision == Precision::kFloat ? "float" : "double";
  PluginSource src;
  src.header_file = "model.hpp";
  src.header_text = model_header(spec, "FormulaModel");
  src.main_file = "plugin.cpp";
  src.main_text =
      std::string("// Generated by vigor: the CPU engine of the formula model \"") + spec.name +
      "\" with " + is->name + " in " + real + ".\n" +
      "#include \"host/backends/plugin_entry.hpp\"\n" + "#include \"kernels/integrators/" +
      is->header + "\"\n" + "#include \"model.hpp\"\n\n" +
      "VIGOR_PLUGIN_ENGINE(vigor::formula_models::FormulaModel, vigor::kernels::" + is->type +
      ", " + real + ")\n";
  src.what = "formula model '" + spec.name + "' (" + is->name + ", " + real + ")";
  return src;
}

}  // namespace vigor::host::formula
