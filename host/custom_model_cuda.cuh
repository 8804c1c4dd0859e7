/// @file custom_model_cuda.cuh
/// @brief The CUDA engines of a model registered at run time (host/custom_model.hpp), for a .cu
/// file compiled by nvcc:
///
///     // my_model_cuda.cu
///     #include "host/custom_model_cuda.cuh"
///     #include "my_model.hpp"
///     std::unique_ptr<vigor::host::Engine> my_model_cuda_engines(
///         const vigor::host::Integration& s, const vigor::host::EngineResources& r) {
///       return vigor::host::make_cuda_engine_among<MyModel, vigor::kernels::StormerVerlet>(s, r);
///     }
///
/// and in main.cpp, with the same integrators,
///
///     vigor::host::register_model<MyModel, vigor::kernels::StormerVerlet>(&my_model_cuda_engines);
///
/// The CPU engines stay in the .cpp (their SIMD lanes use GCC vector extensions that nvcc's front
/// end does not take); this file instantiates only the fused segment kernel and its engine
/// (host/backends/cuda_engine.cuh), like vigor's generated cuda_<model>.cu files. Compile it for
/// the architectures of the GPUs it will run on (CMAKE_CUDA_ARCHITECTURES), in C++20;
/// vigor::vigor adds --expt-relaxed-constexpr to CUDA compiles. Needs a vigor built with CUDA.
#pragma once

#if !defined(VIGOR_HAVE_CUDA)
#error "host/custom_model_cuda.cuh: this vigor was built without CUDA (VIGOR_HAVE_CUDA is not set)"
#endif

#include <memory>

#include "host/backends/cuda_engine.cuh"
#include "host/backends/engine_factory.hpp"
#include "vigor/all_integrators.hpp"

namespace vigor::host {

/// The CUDA engine of the integration's integrator among IntegratorTs (nullptr for another one).
template <template <class> class ModelT, template <class> class... IntegratorTs>
std::unique_ptr<Engine> make_cuda_engine_among(const Integration& s, const EngineResources& r) {
  return make_engine_of<CudaEngine, ModelT, IntegratorTs...>(s, r);
}

}  // namespace vigor::host
