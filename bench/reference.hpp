/// @file reference.hpp
/// @brief The hand-written reference the engine is measured against: velocity Verlet on
/// Hénon–Heiles with the cached force, the energy error checked every step and a sign-change test
/// of q0 every step — the arithmetic of vigor's Störmer–Verlet + HenonHeiles + driver, written out
/// by hand in the plainest form, with no vigor header. Used by the CPU reference (an OpenMP loop
/// over trajectories, vigor_bench.cpp) and the CUDA reference (one thread per trajectory,
/// reference_cuda.cu).
///
/// The expressions are written in exactly the order vigor evaluates them (force = -(grad V),
/// p += (h/2) f, q += h p, ...), with fused multiply-adds where vigor writes them (the kicks, the
/// drift and the last product of each force term: kernels/integrators/stormer_verlet.hpp,
/// models/henon_heiles.hpp) — which is where a compiler allowed to contract would put them — so on
/// the CPU the reference and the engine are bit-identical and on the GPU nvcc contracts the rest
/// into the same FMAs; the benchmark checks the final states.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#if defined(__CUDACC__)
#define BENCH_HD __host__ __device__ __forceinline__
#else
#define BENCH_HD inline
#endif

namespace vigor_bench {

/// a * b + c with one rounding, on the host and the device (float or double).
template <class Real>
BENCH_HD Real fused(Real a, Real b, Real c) {
#if defined(__CUDA_ARCH__)
  return ::fma(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

/// One trajectory of H = (px^2 + py^2)/2 + (x^2 + y^2)/2 + a x^2 y + b y^3 through `steps` steps.
/// Returns through the references: the final state, the crossings of x = 0 upwards, max |H - H0|.
template <class Real>
BENCH_HD void reference_trajectory(Real& x, Real& y, Real& px, Real& py, std::int64_t steps, Real h,
                                   Real a, Real b, std::int64_t& crossings, Real& emax) {
  const Real hh = Real(0.5) * h;
  Real fx = -fused(Real(2) * a * x, y, x);
  Real fy = -fused(Real(3) * b * y, y, fused(a * x, x, y));
  const Real e0 = Real(0.5) * (px * px + py * py) +
                  (Real(0.5) * (x * x + y * y) + a * x * x * y + b * y * y * y);
  Real em = Real(0);
  std::int64_t c = 0;
  for (std::int64_t k = 0; k < steps; ++k) {
    const Real x_prev = x;
    px = fused(hh, fx, px);
    py = fused(hh, fy, py);
    x = fused(h, px, x);
    y = fused(h, py, y);
    fx = -fused(Real(2) * a * x, y, x);
    fy = -fused(Real(3) * b * y, y, fused(a * x, x, y));
    px = fused(hh, fx, px);
    py = fused(hh, fy, py);
    const Real e = Real(0.5) * (px * px + py * py) +
                   (Real(0.5) * (x * x + y * y) + a * x * x * y + b * y * y * y);
    const Real de = e > e0 ? e - e0 : e0 - e;
    if (!(de <= std::numeric_limits<Real>::max())) break;  // inf/NaN: stop, as the engine does
    em = em < de ? de : em;
    if (x_prev < Real(0) && x >= Real(0)) ++c;
  }
  crossings = c;
  emax = em;
}

/// What a reference run reports.
struct ReferenceResult {
  double seconds = 0.0;  ///< wall time of the integration (launch to completion)
  std::int64_t crossings = 0;
  double max_energy_error = 0.0;
};

/// The GPU as the benchmark sees it.
struct GpuInfo {
  bool present = false;
  std::string name;  ///< "NVIDIA H100 80GB HBM3 (sm_90)"
  double free_bytes = 0;
  double total_bytes = 0;
  std::string why;  ///< when not present
};

#if defined(VIGOR_BENCH_CUDA)
/// Defined in reference_cuda.cu.
GpuInfo cuda_info();
/// Integrate the SoA states (x, y, px, py; n each) in place on the GPU in FP64 or FP32.
ReferenceResult reference_cuda(std::vector<double>& state, std::int64_t n, std::int64_t steps,
                               double h, double a, double b, bool fp32);
#endif

}  // namespace vigor_bench
