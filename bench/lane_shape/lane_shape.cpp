/// @file lane_shape.cpp
/// @brief Implicit and constrained steps on the CPU lanes: one pack of a block's registers side by
/// side, against sub-blocks of one register stepped in turn
/// (kernels::integrator_register_sub_blocks picks between them per integrator and precision).
///
/// For each pair, a block of kernels::block_lanes<Real>() trajectories is advanced through
/// kernels::advance_lanes on PackLanes<Real, block, 1> and on PackLanes<Real, native, block /
/// native>, 512 trajectories on one thread, best of three runs each, the two in turn; the final
/// states must agree bit for bit (every lane computes what a one-lane run computes). Only the
/// driver and the step are timed: no engine, no threads, no output. Build and run (build.sh):
///
///   bash bench/lane_shape/build.sh . lane_shape && ./lane_shape
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "kernels/driver/advance.hpp"
#include "kernels/integrators/lobatto3.hpp"
#include "kernels/integrators/midpoint.hpp"
#include "kernels/integrators/newmark.hpp"
#include "kernels/integrators/rattle.hpp"
#include "kernels/integrators/shake.hpp"
#include "kernels/simd/pack_lanes.hpp"
#include "models/double_spherical_pendulum.hpp"
#include "models/henon_heiles.hpp"
#include "models/j2_satellite.hpp"

namespace {

using namespace vigor;

template <class X>
std::vector<double> defaults(const X& specs) {
  std::vector<double> v(8, 0.0);
  for (std::size_t i = 0; i < specs.size(); ++i) v[i] = specs[i].default_value;
  return v;
}

/// Seconds to advance n copies of s0 (perturbed by up to 0.6 % per trajectory) by `steps` steps
/// of size h on the lane type L; the final states in `out`.
template <template <class> class MT, template <class> class IT, class Real, class L>
double advance_on(long n, long steps, const std::vector<double>& s0, double h,
                  std::vector<Real>& out) {
  using M = MT<Real>;
  using I = IT<Real>;
  using P = typename L::Real;
  const std::vector<double> pv = defaults(M::kParams), ov = defaults(I::kOptions);
  const M m = M::from_params(pv.data());
  const I step = I::from_options(ov.data());
  const auto m_lanes = kernels::rebind_t<M, P>::from_params(pv.data());
  const auto step_lanes = kernels::rebind_t<I, P>::from_options(ov.data());
  constexpr int kDim = kernels::StateOps<M, Real>::kDim;
  std::vector<Real> state(std::size_t(kDim) * n), e0(n), ee(n), j0(8 * n), je(n), res(n);
  std::vector<std::int64_t> taken(n), crossings(n), recorded(n);
  std::vector<std::int32_t> status(n), hits(n);
  for (long i = 0; i < n; ++i)
    for (int c = 0; c < kDim; ++c) state[c * n + i] = Real(s0[c] * (1 + 1e-3 * double(i % 7)));
  kernels::EnsembleArrays<Real> a;
  a.state = state.data();
  a.energy0 = e0.data();
  a.energy_error = ee.data();
  a.momentum0 = j0.data();
  a.momentum_error = je.data();
  a.newton_residual = res.data();
  a.step = taken.data();
  a.status = status.data();
  a.crossings = crossings.data();
  a.recorded = recorded.data();
  a.hit_count = hits.data();
  for (long i = 0; i < n; ++i) kernels::initial_energy(m, a, n, i);
  kernels::SegmentParams<Real> sp;
  sp.n = n;
  sp.h = Real(h);
  sp.end_step = steps;
  const auto t0 = std::chrono::steady_clock::now();
  for (long i0 = 0; i0 < n; i0 += L::NB)
    kernels::advance_lanes<L, false>(m_lanes, m, step_lanes, step, step, sp, a, i0,
                                     int(std::min<long>(L::NB, n - i0)));
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out = state;
  return t;
}

template <template <class> class MT, template <class> class IT, class Real>
void compare(const char* name, const std::vector<double>& s0, double h, long steps) {
  constexpr int kBlock = kernels::block_lanes<Real>(), kNative = kernels::native_lanes<Real>();
  using OnePack = kernels::PackLanes<Real, kBlock, 1>;
  using SubBlocks = kernels::PackLanes<Real, kNative, kBlock / kNative>;
  std::vector<Real> x1, x2;
  double t1 = 1e30, t2 = 1e30;
  for (int r = 0; r < 3; ++r) {
    t1 = std::min(t1, advance_on<MT, IT, Real, OnePack>(512, steps, s0, h, x1));
    t2 = std::min(t2, advance_on<MT, IT, Real, SubBlocks>(512, steps, s0, h, x2));
  }
  const bool chosen = kernels::integrator_register_sub_blocks<IT<Real>, Real>;
  std::printf("%-26s %s  one pack of %2d: %.3f s  %d x %2d: %.3f s  (x%.2f)  %s  engine: %s\n",
              name, sizeof(Real) == 4 ? "FP32" : "FP64", kBlock, t1, kBlock / kNative, kNative, t2,
              t1 / t2, x1 == x2 ? "same bits" : "BITS DIFFER", chosen ? "sub-blocks" : "one pack");
}

template <class Real>
void all_pairs() {
  const auto d = models::DoubleSphericalPendulum<double>::reference_state();
  const std::vector<double> dsp(d.begin(), d.end()), hh{0.0, -0.2, 0.45, 0.0},
      j2{1.5, 0.0, 0.0, 0.0, 0.7, 0.4};
  compare<models::DoubleSphericalPendulum, kernels::Rattle, Real>("RATTLE, double spherical", dsp,
                                                                  1e-3, 20000);
  compare<models::DoubleSphericalPendulum, kernels::Shake, Real>("SHAKE, double spherical", dsp,
                                                                 1e-3, 20000);
  compare<models::HenonHeiles, kernels::Midpoint, Real>("midpoint, Henon-Heiles", hh, 1e-2, 20000);
  compare<models::HenonHeiles, kernels::LobattoIIIAB3, Real>("Lobatto, Henon-Heiles", hh, 1e-2,
                                                             20000);
  compare<models::J2Satellite, kernels::Midpoint, Real>("midpoint, J2", j2, 1e-2, 20000);
  compare<models::J2Satellite, kernels::Newmark, Real>("Newmark, J2", j2, 1e-2, 20000);
  compare<models::J2Satellite, kernels::LobattoIIIAB3, Real>("Lobatto, J2", j2, 1e-2, 20000);
}

}  // namespace

int main() {
  all_pairs<float>();
  all_pairs<double>();
}
