/// @file tangent_run.hpp
/// @brief One trajectory through the drivers, plain or with its tangent map, and the orbits the
/// tangent-map tests (tests/test_tangent_*.cpp) share.
///
/// The tests are split over several executables because their dual-number steps, inlined into
/// one unit, took the compiler about nine minutes (docs/building.md, Build time).
///
/// Tolerances. A symplectic step's defect |M^T J M - J| is pure round-off: each step adds a few
/// ulps of |M|^2 (|M| stays O(1)..O(10) on the orbits used), so 1e-12 after 10^3 steps leaves two
/// decades over the measured 1e-15..1e-13. Explicit Euler's defect is O(h) per step (det = 1 + h^2
/// for the oscillator), RK4's O(h^5): both stay far above it and grow with the number of steps.
/// Finite differences: central, eps = 1e-5, error eps^2 |Phi'''| + ulp/eps ~ 1e-10..1e-9, checked
/// at 1e-7 (the "to their accuracy").
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/driver/advance.hpp"
#include "vigor/all_integrators.hpp"
#include "vigor/all_models.hpp"

namespace tangent_test {

using namespace vigor;
using namespace vigor::kernels;

using namespace vigor;
using namespace vigor::kernels;

/// One trajectory through the drivers, plain or with its tangent map.
template <class M, class I>
struct Run1 {
  using TOps = TangentOps<M, double>;
  using ID = rebind_t<I, typename TOps::D>;
  static constexpr int kDim = StateOps<M, double>::kDim;

  M model;
  I integ;
  ID integ_d;
  double h;
  std::vector<double> state, state0, partials, acc, out;
  std::vector<double> e0, ee, j0, je, nr;
  std::vector<std::int64_t> step, crossings, recorded;
  std::vector<std::int32_t> status, hit_count;
  EnsembleArrays<double> a;

  Run1(const std::vector<double>& x, double dt, int newton = 0, std::vector<double> options = {})
      : model(make_model()),
        integ(make_integrator<I>(options, newton)),
        integ_d(make_integrator<ID>(options, newton)),
        h(dt),
        state(x),
        state0(x.size()),
        partials(TOps::kStored * TOps::K),
        acc(kTangentAccCount),
        out(kTangentOutCount),
        e0(1),
        ee(1),
        j0(8),
        je(1),
        nr(1),
        step(1),
        crossings(1),
        recorded(1),
        status(1),
        hit_count(1) {
    a.state = state.data();
    a.energy0 = e0.data();
    a.energy_error = ee.data();
    a.momentum0 = j0.data();
    a.momentum_error = je.data();
    a.newton_residual = nr.data();
    a.step = step.data();
    a.status = status.data();
    a.crossings = crossings.data();
    a.recorded = recorded.data();
    a.hit_count = hit_count.data();
  }

  static M make_model() {
    std::vector<double> p;
    for (const auto& s : M::kParams) p.push_back(s.default_value);
    p.push_back(0.0);
    return M::from_params(p.data());
  }
  template <class J>
  static J make_integrator(std::vector<double> options, int newton) {
    if (options.empty())
      for (const auto& o : I::kOptions) options.push_back(o.default_value);
    options.push_back(0.0);
    J j = J::from_options(options.data());
    set_newton_iterations(j, newton);
    return j;
  }

  SegmentParams<double> params(std::int64_t end) const {
    SegmentParams<double> sp;
    sp.n = 1;
    sp.h = h;
    sp.end_step = end;
    return sp;
  }

  /// Plain steps to `end` (no tangent map).
  void plain(std::int64_t end) {
    if (step[0] == 0) initial_energy(model, a, 1, 0);
    advance_trajectory(model, integ, params(end), a, 0);
  }
  /// Steps with the tangent map to `end`.
  void tangent(std::int64_t end) {
    if (step[0] == 0 && a.tangent == nullptr) {
      a.tangent = partials.data();
      a.tangent_acc = acc.data();
      a.tangent_out = out.data();
      a.state0 = state0.data();
      initial_energy_tangent(model, integ_d, h, a, 1, 0);
    }
    advance_trajectory_tangent(model, integ, integ_d, params(end), a, 0);
  }
  double partial(int c, int j) const { return partials[std::size_t(c * TOps::K + j)]; }
  double defect() const { return out[kOutDefect]; }
  double det_error() const { return out[kOutDetError]; }
};

inline std::vector<double> henon_heiles_regular() { return {0.0, 0.1, 0.35, 0.0}; }
/// x = 0 and H = E with y, p_y given: p_x from the energy (classic Hénon–Heiles sections).
inline std::vector<double> henon_heiles_at(double E, double y, double py) {
  const double V = 0.5 * y * y - y * y * y / 3.0;
  return {0.0, y, std::sqrt(2.0 * (E - V) - py * py), py};
}
inline std::vector<double> kepler_orbit() { return {1.0, 0.0, 0.0, 1.2}; }  // e = 0.44
template <class M>
std::vector<double> reference_of() {
  const auto r = M::reference_state();
  return std::vector<double>(r.begin(), r.end());
}

using HH = models::HenonHeiles<double>;
using KP = models::Kepler<double>;
using DSP = models::DoubleSphericalPendulum<double>;
using RB = models::RigidBodySO3<double>;
using KS = models::KirchhoffSE3<double>;

// --- the defect after some steps, and the dual Jacobian against central differences -----------

template <class M, class I>
double defect_after(const std::vector<double>& x, double h, std::int64_t steps, int newton = 0) {
  Run1<M, I> r(x, h, newton);
  r.tangent(steps);
  EXPECT_EQ(r.status[0], kStatusOk);
  EXPECT_EQ(r.step[0], steps);
  return r.defect();
}

/// max over (c, j) of |dual partial - central difference| after `steps` steps, perturbing the
/// initial state along the seed's columns (the tangent projector's for constrained models).
template <class M, class I>
double dual_vs_fd(const std::vector<double>& x, double h, int steps, int newton = 0) {
  using TOps = TangentOps<M, double>;
  Run1<M, I> dual(x, h, newton);
  dual.tangent(steps);
  const M m = dual.model;
  typename TOps::State x0;
  StateOps<M, double>::load(m, x.data(), 1, x0);
  typename TOps::StateD seed;
  TOps::seed(m, x0, seed);
  const auto sv = TOps::OpsD::as_vector(seed);
  const double eps = 1e-5;
  double worst = 0.0;
  for (int j = 0; j < TOps::K; ++j) {
    std::vector<double> xp(x), xm(x);
    for (int c = 0; c < TOps::kStored; ++c) {
      xp[std::size_t(c)] += eps * sv[c].d[j];
      xm[std::size_t(c)] -= eps * sv[c].d[j];
    }
    Run1<M, I> rp(xp, h, newton), rm(xm, h, newton);
    rp.plain(steps);
    rm.plain(steps);
    for (int c = 0; c < TOps::kStored; ++c) {
      const double fd = (rp.state[std::size_t(c)] - rm.state[std::size_t(c)]) / (2 * eps);
      worst = std::max(worst, std::abs(fd - dual.partial(c, j)));
    }
  }
  return worst;
}

}  // namespace tangent_test
