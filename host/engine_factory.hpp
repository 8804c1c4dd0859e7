/// @file engine_factory.hpp
/// @brief The engine factory of a model registered at run time: the engine of the request's
/// integrator among a fixed list, in the request's precision (host/custom_model.hpp for the CPU,
/// host/custom_model_cuda.cuh for CUDA). The built-in models get theirs from make_engine_for
/// (host/backends/make_engine.hpp), over every integrator that handles them.
#pragma once

#include <memory>

#include "host/engine.hpp"

namespace vigor::host {

/// The engine of model ModelT and integrator IntegratorT in the request's precision.
template <template <class, class, class> class EngineT, template <class> class ModelT,
          template <class> class IntegratorT>
std::unique_ptr<Engine> make_engine_of(const EngineRequest& r) {
  if (r.precision == Precision::kFloat)
    return std::make_unique<EngineT<ModelT<float>, IntegratorT<float>, float>>(r);
  return std::make_unique<EngineT<ModelT<double>, IntegratorT<double>, double>>(r);
}

/// The engine of the request's integrator if it is one of IntegratorTs (by kName), else nullptr.
template <template <class, class, class> class EngineT, template <class> class ModelT,
          template <class> class... IntegratorTs>
std::unique_ptr<Engine> make_engine_among(const EngineRequest& r) {
  std::unique_ptr<Engine> e;
  ((!e && r.integrator == IntegratorTs<double>::kName
        ? (void)(e = make_engine_of<EngineT, ModelT, IntegratorTs>(r))
        : (void)0),
   ...);
  return e;
}

}  // namespace vigor::host
