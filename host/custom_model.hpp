/// @file custom_model.hpp
/// @brief Registering a model of your own at run time, from a program that links vigor::vigor.
///
///     #include "host/custom_model.hpp"   // also declares cli_main
///     #include "my_model.hpp"            // template <class Real> struct MyModel { ... };
///
///     int main(int argc, char** argv) {
///       vigor::host::register_model<MyModel, vigor::kernels::StormerVerlet,
///                                   vigor::kernels::Midpoint>();
///       return vigor::host::cli_main(argc, argv);
///     }
///
/// The model then appears in `list`, and job files, `validate` and `run` handle it exactly like a
/// built-in model: the same validation, the same engines, the same outputs. What a model class
/// template must and may provide is in docs/models.md (the built-in models in models/ are
/// examples); examples/custom_model/ is a complete project.
///
/// The integrators listed are the only ones compiled for the model (each in float and double,
/// with its tangent map in double where kernels::tangent_built allows it): every instantiation
/// costs compile time, so list the ones you use. One that does not handle the model (an explicit
/// splitting on a constrained model, say) stops the build with a static_assert saying so, as
/// does a model that lacks a required member. Mistakes only visible at run time — a name taken by
/// a built-in model or registered twice, a call after cli_main has started — throw
/// std::invalid_argument or std::logic_error naming the model (host::register_model(ModelInfo),
/// host/backends/registry.hpp).
///
/// Backends: this file compiles the CPU engines (include it from a .cpp file, compiled with the
/// flags vigor::vigor carries). For the CUDA engines, instantiate them in a .cu file with
/// host/custom_model_cuda.cuh and pass that factory to register_model; without one, `auto` runs
/// the model on the CPU and `--backend cuda` is refused (exit code 2).
#pragma once

#if defined(__CUDACC__)
// The CPU engines' SIMD lanes use GCC vector extensions that nvcc's front end does not compile.
#error "host/custom_model.hpp is for .cpp files; in a .cu file use host/custom_model_cuda.cuh"
#endif

#include <concepts>
#include <type_traits>

#include "host/backends/cpu_engine.hpp"
#include "host/backends/engine_factory.hpp"
#include "host/backends/model_info.hpp"
#include "host/backends/registry.hpp"
#include "host/cli/cli.hpp"
#include "kernels/core/specs.hpp"
#include "vigor/all_integrators.hpp"

namespace vigor::host {

namespace custom_model_detail {

template <class M>
concept HasName = requires {
  { M::kName } -> std::convertible_to<const char*>;
};
template <class M>
concept HasDescription = requires {
  { M::kDescription } -> std::convertible_to<const char*>;
};
template <class M>
concept HasDof = requires {
  { M::dof } -> std::convertible_to<int>;
};
template <class M>
concept HasParamArray = requires {
  M::kParams.size();
  *M::kParams.begin();
};
template <class M>
concept HasParams = HasParamArray<M> &&
    std::is_same_v<std::remove_cvref_t<decltype(*M::kParams.begin())>, kernels::ParamSpec>;
template <class M>
concept HasFromParams = requires(const double* v) {
  { M::from_params(v) } -> std::same_as<M>;
};
template <class M>
concept HasStateOps = requires {
  kernels::StateOps<M, double>::kDim;
};

/// Whether ModelT has what every model must have; a static_assert names what is missing.
template <template <class> class ModelT>
constexpr bool check_model() {
  using M = ModelT<double>;
  static_assert(HasName<M>,
                "register_model: the model needs static constexpr const char* kName (its job "
                "name: lower-case letters, digits and underscores)");
  static_assert(HasDescription<M>,
                "register_model: the model needs static constexpr const char* kDescription");
  static_assert(HasDof<M>, "register_model: the model needs static constexpr int dof");
  static_assert(HasParams<M>,
                "register_model: the model needs static constexpr std::array<kernels::ParamSpec, "
                "N> kParams (N may be 0)");
  static_assert(HasFromParams<M>,
                "register_model: the model needs static Model from_params(const double* v) (v: "
                "the parameter values in kParams order)");
  constexpr bool mechanics = [] {
    if constexpr (HasDof<M>)
      return kernels::PhaseModel<M> || HasStateOps<M>;
    else
      return false;
  }();
  static_assert(mechanics,
                "register_model: the model needs inv_mass(i) and a templated potential<T>(q) "
                "(separable), or a templated lagrangian<T>(q, v), or its own kernels::StateOps "
                "specialisation (docs/models.md)");
  return HasName<M> && HasDescription<M> && HasDof<M> && HasParams<M> && HasFromParams<M> &&
         mechanics;
}

/// Whether IntegratorT handles ModelT; a static_assert says so when it does not.
template <template <class> class ModelT, template <class> class IntegratorT>
constexpr bool check_integrator() {
  using M = ModelT<double>;
  using I = IntegratorT<double>;
  constexpr bool known = requires {
    { I::kName } -> std::convertible_to<const char*>;
  };
  static_assert(known,
                "register_model: each integrator must be one of vigor's integrator templates "
                "(vigor::kernels::StormerVerlet, Midpoint, Rattle, ...: integrators.def)");
  if constexpr (known) {
    static_assert(kernels::integrator_supports<I, M>,
                  "register_model: an integrator in the list does not handle this model (`vigor "
                  "list` prints what each one handles; the explicit splittings need a separable "
                  "model without constraints or forcing): drop it from the list");
    return kernels::integrator_supports<I, M>;
  } else {
    return false;
  }
}

}  // namespace custom_model_detail

/// Register model template ModelT (a class template on its Real, docs/models.md) with the
/// integrators IntegratorTs (class templates of vigor::kernels: StormerVerlet, Yoshida4,
/// Midpoint, Rattle, ...). Its ModelInfo comes from the code that describes the built-in models
/// (host/backends/model_info.hpp); its CPU engines are compiled here, in the caller's translation
/// unit, and `cuda_engines` (from host/custom_model_cuda.cuh, same integrators) adds CUDA ones.
/// Call it from main before cli_main; throws std::invalid_argument when the name is taken or
/// invalid.
template <template <class> class ModelT, template <class> class... IntegratorTs>
void register_model(EngineFactory cuda_engines = nullptr) {
  static_assert(sizeof...(IntegratorTs) > 0,
                "register_model<Model, Integrators...>: name at least one integrator");
  constexpr bool model_ok = custom_model_detail::check_model<ModelT>();
  constexpr bool integrators_ok =
      model_ok && (true && ... && custom_model_detail::check_integrator<ModelT, IntegratorTs>());
  // Nothing below is instantiated after a failed check, so the static_assert is the only error.
  if constexpr (model_ok && integrators_ok && sizeof...(IntegratorTs) > 0) {
    ModelInfo info = describe_model<ModelT>();
    (add_integrator<ModelT, IntegratorTs>(info), ...);
    info.make_cpu_engine = &make_engine_of<CpuEngine, ModelT, IntegratorTs...>;
    info.make_cuda_engine = cuda_engines;
    register_model(std::move(info));
  }
}

}  // namespace vigor::host
