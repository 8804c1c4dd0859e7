/// @file lane_advance.hpp
/// @brief The timed loop the lane benchmarks share (lane_shape/, composition_loops/): a block of
/// perturbed copies of one state through kernels::advance_lanes on a given lane type, no engine.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

#include "driver_arrays.hpp"
#include "kernels/driver/advance.hpp"

namespace vigor_bench_util {

template <class X>
std::vector<double> defaults(const X& specs) {
  std::vector<double> v(8, 0.0);
  for (std::size_t i = 0; i < specs.size(); ++i) v[i] = specs[i].default_value;
  return v;
}

/// Seconds to advance n copies of s0 (perturbed by up to 0.6 % per trajectory) by `steps` steps
/// of size h on the lane type L; the final states in `out`. Conservation checks every `every`
/// steps (every = steps: the bare kernel, run in bursts by explicit steps).
template <template <class> class MT, template <class> class IT, class Real, class L>
double advance_on(long n, long steps, const std::vector<double>& s0, double h,
                  std::vector<Real>& out, long every = 1) {
  using M = MT<Real>;
  using I = IT<Real>;
  using P = typename L::Real;
  const std::vector<double> pv = defaults(M::kParams), ov = defaults(I::kOptions);
  const M m = M::from_params(pv.data());
  const I step = I::from_options(ov.data());
  const auto m_lanes = vigor::kernels::rebind_t<M, P>::from_params(pv.data());
  const auto step_lanes = vigor::kernels::rebind_t<I, P>::from_options(ov.data());
  constexpr int kDim = vigor::kernels::StateOps<M, Real>::kDim;
  DriverArrays<Real> arrays(n, kDim);
  std::vector<Real>& state = arrays.state;
  for (long i = 0; i < n; ++i)
    for (int c = 0; c < kDim; ++c) state[c * n + i] = Real(s0[c] * (1 + 1e-3 * double(i % 7)));
  const vigor::kernels::EnsembleArrays<Real> a = arrays.view();
  for (long i = 0; i < n; ++i) vigor::kernels::initial_energy(m, a, n, i);
  vigor::kernels::SegmentParams<Real> sp;
  sp.n = n;
  sp.h = Real(h);
  sp.end_step = steps;
  sp.conservation_every = every;
  const auto t0 = std::chrono::steady_clock::now();
  for (long i0 = 0; i0 < n; i0 += L::NB)
    vigor::kernels::advance_lanes<L, false>(m_lanes, m, step_lanes, step, step, sp, a, i0,
                                            int(std::min<long>(L::NB, n - i0)));
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out = state;
  return t;
}

}  // namespace vigor_bench_util
