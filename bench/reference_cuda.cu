/// @file reference_cuda.cu
/// @brief The hand-written CUDA reference of vigor-bench: one thread per trajectory, the state in
/// registers, every step in one kernel (bench/reference.hpp has the arithmetic). No vigor header.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/reference.hpp"

namespace vigor_bench {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA reference: ") + what + ": " + cudaGetErrorString(e));
}

template <class Real>
__global__ void __launch_bounds__(128)
    reference_kernel(Real* __restrict__ s, std::int64_t n, std::int64_t steps, Real h, Real a,
                     Real b, std::int64_t* __restrict__ crossings, Real* __restrict__ emax) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Real x = s[i], y = s[n + i], px = s[2 * n + i], py = s[3 * n + i];
  std::int64_t c = 0;
  Real em = Real(0);
  reference_trajectory(x, y, px, py, steps, h, a, b, c, em);
  s[i] = x;
  s[n + i] = y;
  s[2 * n + i] = px;
  s[3 * n + i] = py;
  crossings[i] = c;
  emax[i] = em;
}

template <class Real>
ReferenceResult run(std::vector<double>& state, std::int64_t n, std::int64_t steps, double h,
                    double a, double b) {
  ReferenceResult r;
  if (n == 0) return r;
  check(cudaSetDevice(0), "cudaSetDevice");
  const std::vector<Real> h_state(state.begin(), state.end());
  Real *d_state = nullptr, *d_emax = nullptr;
  std::int64_t* d_cross = nullptr;
  check(cudaMalloc(&d_state, h_state.size() * sizeof(Real)), "cudaMalloc");
  check(cudaMalloc(&d_emax, std::size_t(n) * sizeof(Real)), "cudaMalloc");
  check(cudaMalloc(&d_cross, std::size_t(n) * sizeof(std::int64_t)), "cudaMalloc");
  check(cudaMemcpy(d_state, h_state.data(), h_state.size() * sizeof(Real), cudaMemcpyHostToDevice),
        "cudaMemcpy");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const int block = 128;
  const auto grid = unsigned((n + block - 1) / block);
  const auto t0 = std::chrono::steady_clock::now();
  reference_kernel<Real>
      <<<grid, block>>>(d_state, n, steps, Real(h), Real(a), Real(b), d_cross, d_emax);
  check(cudaGetLastError(), "kernel launch");
  check(cudaDeviceSynchronize(), "kernel");
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<Real> out(h_state.size()), emax(static_cast<std::size_t>(n));
  std::vector<std::int64_t> cross(static_cast<std::size_t>(n));
  check(cudaMemcpy(out.data(), d_state, out.size() * sizeof(Real), cudaMemcpyDeviceToHost),
        "cudaMemcpy");
  check(cudaMemcpy(emax.data(), d_emax, emax.size() * sizeof(Real), cudaMemcpyDeviceToHost),
        "cudaMemcpy");
  check(cudaMemcpy(cross.data(), d_cross, cross.size() * sizeof(std::int64_t),
                   cudaMemcpyDeviceToHost),
        "cudaMemcpy");
  check(cudaFree(d_state), "cudaFree");
  check(cudaFree(d_emax), "cudaFree");
  check(cudaFree(d_cross), "cudaFree");
  state.assign(out.begin(), out.end());
  for (std::int64_t i = 0; i < n; ++i) {
    r.crossings += cross[std::size_t(i)];
    r.max_energy_error = std::max(r.max_energy_error, double(emax[std::size_t(i)]));
  }
  return r;
}

}  // namespace

GpuInfo cuda_info() {
  GpuInfo g;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    g.why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device";
    (void)cudaGetLastError();
    return g;
  }
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
    g.why = "cudaGetDeviceProperties failed";
    return g;
  }
  g.present = true;
  g.name = std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ")";
  std::size_t free_b = 0, total_b = 0;
  if (cudaSetDevice(0) == cudaSuccess && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
    g.free_bytes = double(free_b);
    g.total_bytes = double(total_b);
  }
  return g;
}

ReferenceResult reference_cuda(std::vector<double>& state, std::int64_t n, std::int64_t steps,
                               double h, double a, double b, bool fp32) {
  return fp32 ? run<float>(state, n, steps, h, a, b) : run<double>(state, n, steps, h, a, b);
}

}  // namespace vigor_bench
