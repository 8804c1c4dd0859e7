/// @file cpu_suite.hpp
/// @brief Shared declarations of vigor-bench-cpu (cpu_suite.cpp): the three workloads, and the two
/// peer implementations it measures vigor's CPU engine against — a hand-written
/// SIMD-across-trajectories reference loop (cpu_simd_reference.cpp) and Boost.Odeint's
/// `velocity_verlet` per trajectory (cpu_odeint.cpp, built only when Boost is found).
///
/// Every peer takes the ensemble as vigor generated it (SoA doubles, `state[c * n + i]`), converts
/// it to its precision outside the timed region, integrates it with the same thread count as the
/// engine, and hands back the final states (SoA doubles), the per-trajectory max |H - H0| and
/// section crossings where it computes them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vigor_bench_cpu {

/// The workloads (DESIGN.md §1; issue 8): Störmer–Verlet on
///   kHenonHeiles  H = (px^2 + py^2)/2 + (x^2 + y^2)/2 + a x^2 y + b y^3, section q0 = 0 up;
///   kKepler       H = |p|^2/2 - mu/|q|            (one sqrt and one divide per force);
///   kPendulum     H = p^2/(2 m l^2) - m g l cos q  (one sin per force, one cos per energy);
///   kHenonHeilesBare  Hénon–Heiles with no section and H checked only after the last step
///                 (diagnostics.conservation_every = steps): the engine's step loop does Odeint's
///                 work plus a test of the state for non-finite values, so that comparison is
///                 like for like (the per-step H of the other workloads is work Odeint skips).
enum class Workload { kHenonHeiles, kKepler, kPendulum, kHenonHeilesBare };

/// Model parameters in the model's kParams order, and the step.
struct Problem {
  Workload workload = Workload::kHenonHeiles;
  std::vector<double> params;  ///< henon_heiles: a, b; kepler: mu; pendulum: m, l, g
  double dt = 0.01;
  int dim = 4;  ///< state components (2 dof)
};

/// What a peer run hands back.
struct PeerResult {
  double seconds = 0.0;                 ///< wall time of the integration loop only
  std::vector<double> state;            ///< final states, SoA [c * n + i]
  std::vector<double> energy_error;     ///< max |H - H0| per trajectory (empty: not computed)
  std::vector<std::int64_t> crossings;  ///< q0 = 0 upward crossings (empty: not computed)
  std::int64_t non_finite = 0;          ///< trajectories whose energy became inf/NaN
  int block_lanes = 1;                  ///< trajectories advanced side by side per block
};

/// Vector register width of the compile target in bytes: 64 (AVX-512F), 32 (AVX/AVX2), else 16.
constexpr int simd_register_bytes() {
#if defined(__AVX512F__)
  return 64;
#elif defined(__AVX2__) || defined(__AVX__)
  return 32;
#else
  return 16;
#endif
}

/// The hand-written SIMD reference (cpu_simd_reference.cpp): blocks of lanes in SoA registers,
/// `#pragma omp simd` over the lanes, OpenMP over blocks. `fp32` selects float.
PeerResult simd_reference(const Problem& problem, const std::vector<double>& state, std::int64_t n,
                          std::int64_t steps, bool fp32, int threads);

/// Lanes per block the reference uses (vector register width x independent registers per block).
int simd_reference_lanes(Workload workload, bool fp32);
/// How the reference computes sin/cos ("libmvec _ZGVeN8v_sin ..." or "scalar libm").
std::string simd_reference_math();

/// Boost.Odeint velocity_verlet per trajectory on Hénon–Heiles (both Hénon–Heiles workloads:
/// Odeint does the same steps for either; cpu_odeint.cpp); only built when
/// Boost is found (VIGOR_BENCH_ODEINT).
PeerResult odeint_henon_heiles(const Problem& problem, const std::vector<double>& state,
                               std::int64_t n, std::int64_t steps, bool fp32, int threads);
/// "Boost 1.74.0, compiled with -ffp-contract=fast" (odeint's version and its extra flags).
std::string odeint_version();

}  // namespace vigor_bench_cpu
