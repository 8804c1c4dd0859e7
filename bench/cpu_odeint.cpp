/// @file cpu_odeint.cpp
/// @brief Boost.Odeint's `velocity_verlet` on Hénon–Heiles, one trajectory at a time, OpenMP over
/// trajectories: the peer a C++ user would reach for first, written the way the odeint
/// documentation writes a second-order system.
///
/// Per trajectory: the state is a pair of `std::array<Real, 2>` (q, p) — odeint's array algebra, no
/// heap, everything inlinable; the system is a functor returning the acceleration -grad V(q) (unit
/// masses); one stepper per trajectory (velocity_verlet caches the acceleration between steps, so a
/// stepper must not be shared); a fixed-step `do_step` loop. No energy check and no section test:
/// odeint offers neither inside its step loop, so this peer does less work per step than the engine
/// and the SIMD reference on the henon_heiles workload (both evaluate H every step), and about the
/// same on henon_heiles_bare (no section, H after the last step only).
///
/// odeint's velocity Verlet is the same method as vigor's Störmer–Verlet (kick-drift-kick), written
/// as q1 = q + h p + h^2/2 a, p1 = p + h/2 (a + a1): equal in exact arithmetic, different in
/// round-off, so its final states agree with the engine's to round-off, not bit for bit. For the
/// same reason this file is compiled the way odeint's users compile it, with the compiler's default
/// FP contraction (-ffp-contract=fast: FMAs), even where the vigor build turns contraction off
/// (bench/CMakeLists.txt; +20-25 % for odeint on the development machine).
#include <omp.h>

#include <array>
#include <boost/numeric/odeint.hpp>
#include <boost/version.hpp>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench/cpu_suite.hpp"

namespace vigor_bench_cpu {

namespace {

namespace odeint = boost::numeric::odeint;

template <class Real>
using Coor = std::array<Real, 2>;

/// a = -grad V for H = (px^2 + py^2)/2 + (x^2 + y^2)/2 + a x^2 y + b y^3.
template <class Real>
struct HenonHeilesAcceleration {
  Real a, b;
  void operator()(const Coor<Real>& q, const Coor<Real>& /*p*/, Coor<Real>& acc, Real /*t*/) const {
    const Real x = q[0], y = q[1];
    acc[0] = -(x + Real(2) * a * x * y);
    acc[1] = -(y + a * x * x + Real(3) * b * y * y);
  }
};

template <class Real>
PeerResult run_typed(const Problem& pb, const std::vector<double>& state, std::int64_t n,
                     std::int64_t steps, int threads) {
  if ((pb.workload != Workload::kHenonHeiles && pb.workload != Workload::kHenonHeilesBare) ||
      state.size() != std::size_t(4) * std::size_t(n))
    throw std::invalid_argument("odeint_henon_heiles: expects the Henon-Heiles state");
  using Stepper = odeint::velocity_verlet<Coor<Real>, Coor<Real>, Real, Coor<Real>, Real, Real>;
  const HenonHeilesAcceleration<Real> system{Real(pb.params.at(0)), Real(pb.params.at(1))};
  const Real dt = Real(pb.dt);

  PeerResult r;
  r.state.resize(state.size());
  std::vector<double>& out = r.state;
  const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t i = 0; i < n; ++i) {
    std::pair<Coor<Real>, Coor<Real>> x{
        {Real(state[std::size_t(i)]), Real(state[std::size_t(n + i)])},
        {Real(state[std::size_t(2 * n + i)]), Real(state[std::size_t(3 * n + i)])}};
    Stepper stepper;
    Real t = Real(0);
    for (std::int64_t k = 0; k < steps; ++k) {
      stepper.do_step(system, x, t, dt);
      t += dt;
    }
    out[std::size_t(i)] = double(x.first[0]);
    out[std::size_t(n + i)] = double(x.first[1]);
    out[std::size_t(2 * n + i)] = double(x.second[0]);
    out[std::size_t(3 * n + i)] = double(x.second[1]);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace

PeerResult odeint_henon_heiles(const Problem& problem, const std::vector<double>& state,
                               std::int64_t n, std::int64_t steps, bool fp32, int threads) {
  return fp32 ? run_typed<float>(problem, state, n, steps, threads)
              : run_typed<double>(problem, state, n, steps, threads);
}

#ifndef VIGOR_BENCH_ODEINT_FLAGS
#define VIGOR_BENCH_ODEINT_FLAGS "the target's flags"
#endif

std::string odeint_version() {
  return "Boost " + std::to_string(BOOST_VERSION / 100000) + "." +
         std::to_string(BOOST_VERSION / 100 % 1000) + "." + std::to_string(BOOST_VERSION % 100) +
         ", compiled with " + VIGOR_BENCH_ODEINT_FLAGS;
}

}  // namespace vigor_bench_cpu
