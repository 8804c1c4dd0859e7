/// @file check.cuh
/// @brief The one checking macro every CUDA runtime call in vigor goes through.
///
///     VIGOR_CUDA_CHECK(cudaMemcpy(d_x, h_x, bytes, cudaMemcpyHostToDevice));
///     kernel<<<grid, block>>>(...);
///     VIGOR_CUDA_CHECK_LAUNCH();
///
/// A failing call throws std::runtime_error naming the call as written, the CUDA error's name and
/// description, and the file and line, e.g.
///   `CUDA error: cudaMalloc(&p, bytes) failed: cudaErrorMemoryAllocation (out of memory) at
///    host/backends/cuda_engine.cuh:120`.
/// The run loop turns it into exit code 3 (runtime failure). Host-only: never use it in device
/// code.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace vigor::cuda_detail {

/// Build and throw the exception for a failed call (out of line of the macro to keep it small).
[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file,
                                          int line) {
  std::string msg = "CUDA error: ";
  msg += call;
  msg += " failed: ";
  msg += cudaGetErrorName(err);
  msg += " (";
  msg += cudaGetErrorString(err);
  msg += ") at ";
  msg += file;
  msg += ':';
  msg += std::to_string(line);
  throw std::runtime_error(msg);
}

}  // namespace vigor::cuda_detail

/// Evaluate a CUDA runtime call once; throw std::runtime_error unless it returned cudaSuccess.
#define VIGOR_CUDA_CHECK(call)                                                            \
  do {                                                                                    \
    const cudaError_t vigor_cuda_err_ = (call);                                           \
    if (vigor_cuda_err_ != cudaSuccess)                                                   \
      ::vigor::cuda_detail::throw_cuda_error(vigor_cuda_err_, #call, __FILE__, __LINE__); \
  } while (0)

/// After every kernel launch: a bad configuration (grid, block, shared memory, missing kernel
/// image for this GPU) is reported here. Errors raised while the kernel runs surface at the next
/// synchronising call, which goes through VIGOR_CUDA_CHECK as well.
#define VIGOR_CUDA_CHECK_LAUNCH() VIGOR_CUDA_CHECK(cudaGetLastError())
