/// @file engine_factory.hpp
/// @brief The one engine factory: the engine of an Integration's integrator among a list of
/// integrator templates, in its precision, for one model and one backend.
///
/// The built-in models instantiate it with every integrator of kernels/integrators/integrators.def
/// (the generated cpu_<model>.cpp and cuda_<model>.cu, CMakeLists.txt), a model registered at run
/// time with the integrators named at registration (host/custom_model.hpp). Only the pairs an
/// integrator supports are compiled, so one model's translation unit holds the engines of its
/// pairs, and the build of model x integrator x precision parallelises per model.
#pragma once

#include <memory>

#include "host/backends/engine.hpp"
#include "kernels/integrators/protocol.hpp"

namespace vigor::host {

/// The engine of model ModelT and integrator IntegratorT in the integration's precision, into `e`
/// when `e` is empty, the integrator is the integration's and it handles the model.
template <template <class, class, class> class EngineT, template <class> class ModelT,
          template <class> class IntegratorT>
void make_engine_if(const Integration& s, const EngineResources& r, std::unique_ptr<Engine>& e) {
  using I = IntegratorT<double>;
  if constexpr (kernels::integrator_supports<I, ModelT<double>>) {
    if (e || s.integrator != I::kName) return;
    if (s.precision == Precision::kFloat)
      e = std::make_unique<EngineT<ModelT<float>, IntegratorT<float>, float>>(s, r);
    else
      e = std::make_unique<EngineT<ModelT<double>, IntegratorT<double>, double>>(s, r);
  }
}

/// The engine of the integration's integrator among IntegratorTs, or nullptr (an EngineFactory).
template <template <class, class, class> class EngineT, template <class> class ModelT,
          template <class> class... IntegratorTs>
std::unique_ptr<Engine> make_engine_of(const Integration& s, const EngineResources& r) {
  std::unique_ptr<Engine> e;
  (make_engine_if<EngineT, ModelT, IntegratorTs>(s, r, e), ...);
  return e;
}

/// The integrator families, one translation unit each (make_engine_of_family).
enum class IntegratorFamily { kExplicit, kSolving };

/// make_engine_if for an integrator of family kFamily: one that solves a Newton system per step
/// (kernels::integrator_solves) is of kSolving, any other of kExplicit.
template <template <class, class, class> class EngineT, template <class> class ModelT,
          IntegratorFamily kFamily, template <class> class IntegratorT>
void make_engine_in_family_if(const Integration& s, const EngineResources& r,
                              std::unique_ptr<Engine>& e) {
  constexpr bool solves = kernels::integrator_solves<IntegratorT<double>>;
  if constexpr (solves == (kFamily == IntegratorFamily::kSolving))
    make_engine_if<EngineT, ModelT, IntegratorT>(s, r, e);
}

/// make_engine_of over the integrators of one family.
///
/// A built-in model's CPU engines are two translation units, one per family
/// (cmake/instantiate_cpu.cpp.in). GCC's inliner keeps to a growth budget for the whole unit
/// (`inline-unit-growth`): in one unit with every integrator, the explicit steps' many copies spent
/// the budget that the solving steps' small pack operations needed, and those steps' speed moved
/// with any change to the explicit ones (docs/performance.md, "Engine units per family").
template <template <class, class, class> class EngineT, template <class> class ModelT,
          IntegratorFamily kFamily, template <class> class... IntegratorTs>
std::unique_ptr<Engine> make_engine_of_family(const Integration& s, const EngineResources& r) {
  std::unique_ptr<Engine> e;
  (make_engine_in_family_if<EngineT, ModelT, kFamily, IntegratorTs>(s, r, e), ...);
  return e;
}

}  // namespace vigor::host
