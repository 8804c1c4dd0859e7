/// @file cpu_simd_reference.cpp
/// @brief The hand-written SIMD-across-trajectories reference of vigor-bench-cpu.
///
/// The arithmetic of vigor's Störmer–Verlet step (kernels/integrators/stormer_verlet.hpp), the
/// models' forces and energies (models/henon_heiles.hpp, kepler.hpp, pendulum.hpp) and the driver's
/// per-step work (kernels/driver/advance.hpp: max |H - H0| every step, the sign-change test of the
/// section coordinate every step), written out by hand with no vigor header, expression by
/// expression in the order vigor evaluates them, and compiled as a user would compile it: with the
/// compiler's FP contraction (-ffp-contract=fast, bench/CMakeLists.txt), so GCC fuses multiply-adds
/// where it likes. vigor writes its FMAs explicitly where a compiler contracts these expressions
/// (the Verlet kicks and drifts, the Hénon–Heiles force), so on Hénon–Heiles the final states
/// agree with the engine's bit for bit. The Hénon–Heiles force is written with std::fma here too:
/// with the energy checked every step GCC shares the product a x x between force and energy and
/// would leave it unfused. On Kepler GCC fuses x x + y y, which vigor keeps unfused (faster
/// there), and the two agree to round-off.
///
/// Layout: trajectories advance in blocks of B = W x I lanes, W = vector register bytes /
/// sizeof(Real) (8 doubles / 16 floats per 64-byte AVX-512 register, 4 / 8 on AVX2, 2 / 4 on SSE):
/// I sub-blocks of one register each (I = 2 or 3, see interleave()), whose independent dependency
/// chains hide the latency of the chain of multiply-adds in one step (one register per block leaves
/// the FP pipes waiting on its own results: 2.6x slower on the development machine). A sub-block's
/// state lives in local SoA arrays `Real q[dof][W]`; each step of a sub-block is `#pragma omp simd`
/// loops over its W lanes (so every statement is one packed instruction), and OpenMP distributes
/// blocks over threads. Branches are masks: the crossing test adds a 0/1 lane value, the energy
/// check folds a lane into a "non-finite" flag (the workloads are bounded, so a lane that turns
/// non-finite means a wrong result and is reported, not frozen as the engine would).
///
/// Generated code, checked with `objdump -d --no-show-raw-insn -C vigor-bench-cpu` (GCC 12.2,
/// -O3 -march=native, on the 2-core AVX-512 development machine): every step loop is
/// packed 512-bit arithmetic on zmm registers, one instruction per statement per sub-block —
///   * Hénon–Heiles FP64: vfmadd132pd / vfmadd231pd / vfnmadd231pd zmm beside vmulpd / vaddpd
///     / vsubpd zmm (contraction on; with -ffp-contract=off, as before 2026-11-28, no FMA), the
///     energy check as vandpd + vmaxpd, the
///     crossing test as vcmpltpd / vcmpgepd into k-masks and a masked vpsubq; FP32 the same with
///     ...ps on zmm;
///   * Kepler: vsqrtpd + vdivpd zmm (vsqrtps + vdivps in FP32) — std::sqrt vectorises because the
///     build passes -fno-math-errno;
///   * pendulum: calls to glibc's libmvec AVX-512 variants _ZGVeN8v_sin / _ZGVeN8v_cos (FP64) and
///     _ZGVeN16v_sinf / _ZGVeN16v_cosf (FP32) with the lanes in zmm0, see below.
/// Most of the block state stays in registers across the step loop; with 2 sub-blocks the 32 zmm
/// registers do not hold everything, and GCC keeps the cached force and q0 of each sub-block on
/// the stack (a store and a reload per step).
///
/// sin / cos: glibc declares its vector variants (`#pragma omp declare simd` via
/// bits/math-vector.h) only under -ffast-math, which would also let the compiler reassociate the
/// rest of the step and break the comparison with the engine. Instead this file declares its own
/// functions with an OpenMP simd declaration and the assembler names `sin` / `cos` / `sinf` /
/// `cosf`: the compiler vectorises a call in an `omp simd` loop into the vector-ABI name built from
/// the assembler name
/// (`_ZGV<isa>N<lanes>v_sin`), which is exactly libmvec's symbol, and a scalar call stays the C
/// library's sin. No -ffast-math anywhere; the target links -lmvec. libmvec's sin/cos are accurate
/// to 4 ulp (glibc manual), the scalar ones to < 1 ulp: against an engine that calls the scalar
/// functions the pendulum agrees to round-off, against one that calls libmvec too, bit for bit.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "bench/cpu_suite.hpp"

// GCC only: clang accepts the declarations but (14.0) does not vectorise the calls through them.
#if defined(__x86_64__) && defined(__GLIBC__) && defined(_OPENMP) && defined(__GNUC__) && \
    !defined(__clang__) && !defined(VIGOR_BENCH_NO_LIBMVEC)
#define VIGOR_BENCH_LIBMVEC 1
extern "C" {
#pragma omp declare simd notinbranch
double vigor_bench_sin(double) __asm__("sin");
#pragma omp declare simd notinbranch
double vigor_bench_cos(double) __asm__("cos");
#pragma omp declare simd notinbranch
float vigor_bench_sinf(float) __asm__("sinf");
#pragma omp declare simd notinbranch
float vigor_bench_cosf(float) __asm__("cosf");
}
#else
#define VIGOR_BENCH_LIBMVEC 0
inline double vigor_bench_sin(double x) { return std::sin(x); }
inline double vigor_bench_cos(double x) { return std::cos(x); }
inline float vigor_bench_sinf(float x) { return std::sin(x); }
inline float vigor_bench_cosf(float x) { return std::cos(x); }
#endif

namespace vigor_bench_cpu {

namespace {

using Clock = std::chrono::steady_clock;

/// Independent vector registers (sub-blocks) per block, per model: the fastest of 2, 3, 4 on the
/// development machine (one register per block is 2-2.6x slower everywhere). Hénon–Heiles and the
/// pendulum: 2 (3 and 4 spill more registers); Kepler: 3 (its sqrt and divide have long latencies;
/// +20 % over 2, 4 no better). VIGOR_BENCH_INTERLEAVE=N overrides it for every model.
template <class Sys>
constexpr int interleave() {
#if defined(VIGOR_BENCH_INTERLEAVE)
  return VIGOR_BENCH_INTERLEAVE;
#else
  return Sys::kInterleave;
#endif
}

// The loops over a lane's coordinates must be unrolled before the lane loop is vectorised.
#define BENCH_UNROLL _Pragma("GCC unroll 16")

inline double lane_sin(double x) { return vigor_bench_sin(x); }
inline float lane_sin(float x) { return vigor_bench_sinf(x); }
inline double lane_cos(double x) { return vigor_bench_cos(x); }
inline float lane_cos(float x) { return vigor_bench_cosf(x); }

// --- The models, one lane at a time (inlined into the lane loops) -------------------------------
// Each gives inv_mass() (diagonal, equal for all coordinates in these models), force(q, f, l) =
// -grad V and energy(q, p, l) = 1/2 sum p_i^2 inv_mass + V(q) of lane l of a block's SoA arrays,
// in vigor's evaluation order.

/// H = (px^2 + py^2)/2 + (x^2 + y^2)/2 + a x^2 y + b y^3 (models/henon_heiles.hpp).
template <class Real>
struct HenonHeilesLane {
  static constexpr int kDof = 2;
  static constexpr bool kSection = true;  // q0 = 0, upwards
  static constexpr bool kEnergy = true;   // max |H - H0| after every step
  static constexpr int kAux = 0;
  static constexpr int kInterleave = 2;
  Real a, b;
  Real inv_mass() const { return Real(1); }
  template <int B>
  void aux(const Real (&)[2][B], Real (&)[1][B], int) const {}
  template <int B>
  void force(const Real (&q)[2][B], const Real (&)[1][B], Real (&f)[2][B], int l) const {
    const Real x = q[0][l], y = q[1][l];
    // The fused forms a compiler gives x + 2a x y and y + a x x + 3b y y, written out: with the
    // energy checked every step GCC shares a x x with the energy and would leave it unfused.
    f[0][l] = -std::fma(Real(2) * a * x, y, x);
    f[1][l] = -std::fma(Real(3) * b * y, y, std::fma(a * x, x, y));
  }
  template <int B>
  Real energy(const Real (&q)[2][B], const Real (&p)[2][B], const Real (&)[1][B], int l) const {
    const Real x = q[0][l], y = q[1][l];
    Real t = p[0][l] * p[0][l] * Real(1);
    t += p[1][l] * p[1][l] * Real(1);
    return Real(0.5) * t + (Real(0.5) * (x * x + y * y) + a * x * x * y + b * y * y * y);
  }
};

/// Hénon–Heiles with Verlet steps only: no section test and no energy in the step loop; H is
/// evaluated once, after the last step, as the engine's bare workload does.
template <class Real>
struct HenonHeilesBareLane : HenonHeilesLane<Real> {
  static constexpr bool kSection = false;
  static constexpr bool kEnergy = false;
};

/// H = |p|^2/2 - mu/|q| (models/kepler.hpp): one sqrt and one divide per force.
template <class Real>
struct KeplerLane {
  static constexpr int kDof = 2;
  static constexpr bool kSection = false;
  static constexpr bool kEnergy = true;
  static constexpr int kAux = 0;
  static constexpr int kInterleave = 3;
  Real mu;
  Real inv_mass() const { return Real(1); }
  template <int B>
  void aux(const Real (&)[2][B], Real (&)[1][B], int) const {}
  template <int B>
  void force(const Real (&q)[2][B], const Real (&)[1][B], Real (&f)[2][B], int l) const {
    const Real x = q[0][l], y = q[1][l];
    const Real r2 = x * x + y * y;
    const Real inv_r = Real(1) / std::sqrt(r2);
    const Real k = mu * inv_r * inv_r * inv_r;
    f[0][l] = -(k * x);
    f[1][l] = -(k * y);
  }
  template <int B>
  Real energy(const Real (&q)[2][B], const Real (&p)[2][B], const Real (&)[1][B], int l) const {
    const Real x = q[0][l], y = q[1][l];
    Real t = p[0][l] * p[0][l] * Real(1);
    t += p[1][l] * p[1][l] * Real(1);
    return Real(0.5) * t + (-mu / std::sqrt(x * x + y * y));
  }
};

/// H = p^2/(2 m l^2) - m g l cos q (models/pendulum.hpp; vigor differentiates V by AD, which
/// evaluates to f = -(sin(q) * mgl)).
template <class Real>
struct PendulumLane {
  static constexpr int kDof = 1;
  static constexpr bool kSection = false;
  static constexpr bool kEnergy = true;
  static constexpr int kAux = 2;  // sin q, cos q
  static constexpr int kInterleave = 2;
  Real inv_ml2, mgl;
  Real inv_mass() const { return inv_ml2; }
  template <int B>
  void aux(const Real (&q)[1][B], Real (&t)[2][B], int l) const {
    t[0][l] = lane_sin(q[0][l]);
    t[1][l] = lane_cos(q[0][l]);
  }
  template <int B>
  void force(const Real (&)[1][B], const Real (&t)[2][B], Real (&f)[1][B], int l) const {
    f[0][l] = -(t[0][l] * mgl);
  }
  template <int B>
  Real energy(const Real (&)[1][B], const Real (&p)[1][B], const Real (&t)[2][B], int l) const {
    const Real k = p[0][l] * p[0][l] * inv_ml2;
    return Real(0.5) * k + (-mgl) * t[1][l];
  }
};

/// Counter type with the lane width of Real (so counts and masks pack like the state).
template <class Real>
using Count = std::conditional_t<sizeof(Real) == 8, std::int64_t, std::int32_t>;

/// One block: I sub-blocks of W lanes (W = one vector register), SoA.
template <class Sys, class Real, int W>
struct SubBlock {
  static constexpr int D = Sys::kDof;
  Real q[D][W], p[D][W], f[D][W], aux[Sys::kAux > 0 ? Sys::kAux : 1][W], e0[W], em[W], g_prev[W];
  Count<Real> cr[W], bad[W];
};

/// Advance the I x W trajectories starting at lane i0 of the padded SoA array `s` (np lanes per
/// component) through `steps` Störmer–Verlet steps.
///
/// Each step of each sub-block is two `omp simd` loops over its W lanes: (A) kick, drift and the
/// model's transcendental functions of the new q (sin, cos), (B) the force from them, kick, energy
/// check and section test. The split keeps calls out of the loop with selects (GCC 12 does not
/// if-convert a loop that contains a call, even to a function with SIMD clones); W lanes are
/// exactly one register, so every array below stays in a register across the step loop.
template <class Sys, class Real, int W, int I>
void advance_block(const Sys& sys, Real* __restrict s, std::int64_t np, std::int64_t i0,
                   std::int64_t steps, Real h, Real* __restrict emax_out,
                   Count<Real>* __restrict cross_out, Count<Real>* __restrict bad_out) {
  constexpr int D = Sys::kDof;
  const Real hh = Real(0.5) * h;
  const Real hm = h * sys.inv_mass();  // vigor: q += h * inv_mass(i) * p, i.e. (h * inv_mass) * p
  SubBlock<Sys, Real, W> b[I];
  BENCH_UNROLL
  for (int j = 0; j < I; ++j) {
    SubBlock<Sys, Real, W>& u = b[j];
    const std::int64_t o = i0 + j * W;
#pragma omp simd
    for (int l = 0; l < W; ++l) {
      BENCH_UNROLL
      for (int d = 0; d < D; ++d) {
        u.q[d][l] = s[d * np + o + l];
        u.p[d][l] = s[(D + d) * np + o + l];
      }
      sys.aux(u.q, u.aux, l);
    }
#pragma omp simd
    for (int l = 0; l < W; ++l) {
      sys.force(u.q, u.aux, u.f, l);
      u.e0[l] = sys.energy(u.q, u.p, u.aux, l);
      u.em[l] = Real(0);
      u.cr[l] = 0;
      u.bad[l] = 0;
    }
  }
  for (std::int64_t k = 0; k < steps; ++k) {
    // The hot loops: one packed instruction per statement per sub-block.
    BENCH_UNROLL
    for (int j = 0; j < I; ++j) {
      SubBlock<Sys, Real, W>& u = b[j];
#pragma omp simd
      for (int l = 0; l < W; ++l) {  // (A)
        if constexpr (Sys::kSection) u.g_prev[l] = u.q[0][l];
        BENCH_UNROLL
        for (int d = 0; d < D; ++d) u.p[d][l] += hh * u.f[d][l];  // kick
        BENCH_UNROLL
        for (int d = 0; d < D; ++d) u.q[d][l] += hm * u.p[d][l];  // drift
        sys.aux(u.q, u.aux, l);
      }
#pragma omp simd
      for (int l = 0; l < W; ++l) {     // (B)
        sys.force(u.q, u.aux, u.f, l);  // the force at the new q, cached for the next step
        BENCH_UNROLL
        for (int d = 0; d < D; ++d) u.p[d][l] += hh * u.f[d][l];  // kick
        if constexpr (Sys::kEnergy) {
          const Real de = std::abs(sys.energy(u.q, u.p, u.aux, l) - u.e0[l]);
          u.bad[l] |= de <= std::numeric_limits<Real>::max() ? 0 : 1;  // inf or NaN
          u.em[l] = u.em[l] < de ? de : u.em[l];
        }
        if constexpr (Sys::kSection) u.cr[l] += (u.g_prev[l] < Real(0)) & (u.q[0][l] >= Real(0));
      }
    }
  }
  BENCH_UNROLL
  for (int j = 0; j < I; ++j) {
    SubBlock<Sys, Real, W>& u = b[j];
    const std::int64_t o = i0 + j * W;
#pragma omp simd
    for (int l = 0; l < W; ++l) {
      if constexpr (!Sys::kEnergy) {  // H once, after the last step, as the bare engine run checks
        const Real de = std::abs(sys.energy(u.q, u.p, u.aux, l) - u.e0[l]);
        u.bad[l] = de <= std::numeric_limits<Real>::max() ? 0 : 1;
        u.em[l] = de;
      }
      BENCH_UNROLL
      for (int d = 0; d < D; ++d) {
        s[d * np + o + l] = u.q[d][l];
        s[(D + d) * np + o + l] = u.p[d][l];
      }
      emax_out[o + l] = u.em[l];
      cross_out[o + l] = u.cr[l];
      bad_out[o + l] = u.bad[l];
    }
  }
}

template <class Sys, class Real>
PeerResult run_blocks(const Sys& sys, const std::vector<double>& state, std::int64_t n,
                      std::int64_t steps, Real h, int threads) {
  constexpr int D = Sys::kDof;
  constexpr int W = simd_register_bytes() / int(sizeof(Real));
  constexpr int I = interleave<Sys>();
  constexpr int B = W * I;
  if (state.size() != std::size_t(2 * D) * std::size_t(n))
    throw std::invalid_argument("simd_reference: state size does not match the model");
  PeerResult r;
  r.block_lanes = B;
  if (n == 0) return r;
  // Pad to whole blocks with copies of the last trajectory (finite, so the padding lanes cost
  // the same and never raise the non-finite flag); padding results are dropped.
  const std::int64_t np = (n + B - 1) / B * B;
  std::vector<Real> s(static_cast<std::size_t>(2 * D * np));
  for (int c = 0; c < 2 * D; ++c)
    for (std::int64_t i = 0; i < np; ++i)
      s[std::size_t(c * np + i)] = Real(state[std::size_t(c * n + std::min(i, n - 1))]);
  const auto lanes = static_cast<std::size_t>(np);
  std::vector<Real> emax(lanes);
  std::vector<Count<Real>> cross(lanes), bad(lanes);
  Real* sd = s.data();
  Real* ed = emax.data();
  Count<Real>* cd = cross.data();
  Count<Real>* bd = bad.data();
  const std::int64_t blocks = np / B;

  const auto t0 = Clock::now();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t blk = 0; blk < blocks; ++blk)
    advance_block<Sys, Real, W, I>(sys, sd, np, blk * B, steps, h, ed, cd, bd);
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();

  r.state.resize(std::size_t(2 * D * n));
  for (int c = 0; c < 2 * D; ++c)
    for (std::int64_t i = 0; i < n; ++i)
      r.state[std::size_t(c * n + i)] = double(s[std::size_t(c * np + i)]);
  r.energy_error.assign(emax.begin(), emax.begin() + n);
  if (Sys::kSection) r.crossings.assign(cross.begin(), cross.begin() + n);
  for (std::int64_t i = 0; i < n; ++i) r.non_finite += bad[std::size_t(i)] != 0 ? 1 : 0;
  return r;
}

template <class Real>
PeerResult run_typed(const Problem& pb, const std::vector<double>& state, std::int64_t n,
                     std::int64_t steps, int threads) {
  const Real h = Real(pb.dt);
  const std::vector<double>& v = pb.params;
  switch (pb.workload) {
    case Workload::kHenonHeiles:
      return run_blocks(HenonHeilesLane<Real>{Real(v.at(0)), Real(v.at(1))}, state, n, steps, h,
                        threads);
    case Workload::kHenonHeilesBare:
      return run_blocks(HenonHeilesBareLane<Real>{{Real(v.at(0)), Real(v.at(1))}}, state, n, steps,
                        h, threads);
    case Workload::kKepler:
      return run_blocks(KeplerLane<Real>{Real(v.at(0))}, state, n, steps, h, threads);
    case Workload::kPendulum: {
      // Pendulum::from_params: inv_ml2 = 1/(m l^2), mgl = m g l, in double, then rounded.
      const double m = v.at(0), l = v.at(1), g = v.at(2);
      return run_blocks(PendulumLane<Real>{Real(1.0 / (m * l * l)), Real(m * g * l)}, state, n,
                        steps, h, threads);
    }
  }
  throw std::invalid_argument("simd_reference: unknown workload");
}

}  // namespace

PeerResult simd_reference(const Problem& problem, const std::vector<double>& state, std::int64_t n,
                          std::int64_t steps, bool fp32, int threads) {
  return fp32 ? run_typed<float>(problem, state, n, steps, threads)
              : run_typed<double>(problem, state, n, steps, threads);
}

int simd_reference_lanes(Workload workload, bool fp32) {
  const int w = simd_register_bytes() / (fp32 ? 4 : 8);
  switch (workload) {
    case Workload::kHenonHeiles:
      return w * interleave<HenonHeilesLane<double>>();
    case Workload::kHenonHeilesBare:
      return w * interleave<HenonHeilesBareLane<double>>();
    case Workload::kKepler:
      return w * interleave<KeplerLane<double>>();
    case Workload::kPendulum:
      return w * interleave<PendulumLane<double>>();
  }
  return w;
}

std::string simd_reference_math() {
#if VIGOR_BENCH_LIBMVEC
  const char* isa = simd_register_bytes() == 64 ? "e" : simd_register_bytes() == 32 ? "d" : "b";
  const int w64 = simd_register_bytes() / 8, w32 = simd_register_bytes() / 4;
  return std::string("sin/cos: glibc libmvec _ZGV") + isa + "N" + std::to_string(w64) +
         "v_sin/cos (FP64), _ZGV" + isa + "N" + std::to_string(w32) +
         "v_sinf/cosf (FP32); sqrt, divide: packed instructions";
#else
  return "sin/cos: scalar libm calls (libmvec not used with this compiler or target); sqrt, "
         "divide: packed";
#endif
}

}  // namespace vigor_bench_cpu
