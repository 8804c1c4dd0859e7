// The CUDA engines of the Toda lattice (built with -DTODA_WITH_CUDA=ON): the same integrators as
// main.cpp's register_model call, instantiated by nvcc for CMAKE_CUDA_ARCHITECTURES.
#include "host/custom_model_cuda.cuh"
#include "toda_lattice.hpp"

std::unique_ptr<vigor::host::Engine> toda_cuda_engines(const vigor::host::Integration& s,
                                                       const vigor::host::EngineResources& r) {
  return vigor::host::make_cuda_engine_among<toda::TodaLattice, vigor::kernels::StormerVerlet,
                                             vigor::kernels::Yoshida4>(s, r);
}
