/// @file lane_shape.cpp
/// @brief Implicit and constrained steps on the CPU lanes: one pack of a block's registers side by
/// side, against sub-blocks of one register stepped in turn
/// (kernels::lane_sub_blocks picks between them per integrator, model and precision).
///
/// For each pair, a block of kernels::block_lanes<Real>() trajectories is advanced through
/// kernels::advance_lanes on PackLanes<Real, block, 1> and on PackLanes<Real, native, block /
/// native>, 512 trajectories on one thread, best of three runs each, the two in turn; the final
/// states must agree bit for bit (every lane computes what a one-lane run computes). Only the
/// driver and the step are timed: no engine, no threads, no output.
///
/// The rigid body on SO(3) is timed on the scalar lanes too (one trajectory at a time), against
/// which its lanes are new. Then the bursts' block shape (kernels::burst_block_lanes): explicit
/// steps with nothing tested between conservation checks (the bare kernel), in blocks of
/// block_lanes() against burst_block_lanes() lanes, both as sub-blocks of one register:
/// Hénon–Heiles, whose q, p and force fit the registers four times over, and the outer solar
/// system, whose one sub-block spills already. Build and run (bench/build_against.sh):
///
///   bash bench/build_against.sh bench/lane_shape/lane_shape.cpp . lane_shape && ./lane_shape
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "../lane_advance.hpp"
#include "kernels/driver/advance.hpp"
#include "kernels/integrators/blanes_moan6.hpp"
#include "kernels/integrators/lobatto3.hpp"
#include "kernels/integrators/midpoint.hpp"
#include "kernels/integrators/newmark.hpp"
#include "kernels/integrators/rattle.hpp"
#include "kernels/integrators/shake.hpp"
#include "kernels/integrators/stormer_verlet.hpp"
#include "kernels/integrators/variational_euler_so3.hpp"
#include "kernels/simd/pack_lanes.hpp"
#include "models/double_spherical_pendulum.hpp"
#include "models/henon_heiles.hpp"
#include "models/j2_satellite.hpp"
#include "models/kepler.hpp"
#include "models/outer_solar_system.hpp"
#include "models/pendulum.hpp"
#include "models/rigid_body_so3.hpp"

namespace {

using namespace vigor;

using vigor_bench_util::advance_on;

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
  const bool chosen = kernels::lane_sub_blocks<IT<Real>, MT<Real>, Real>;
  std::printf("%-26s %s  one pack of %2d: %.3f s  %d x %2d: %.3f s  (x%.2f)  %s  engine: %s\n",
              name, sizeof(Real) == 4 ? "FP32" : "FP64", kBlock, t1, kBlock / kNative, kNative, t2,
              t1 / t2, x1 == x2 ? "same bits" : "BITS DIFFER", chosen ? "sub-blocks" : "one pack");
}

/// The SIMD lanes against one trajectory at a time on the scalar lanes (as a GPU thread runs it,
/// and as the CPU ran the pairs without lanes): both shapes of the lanes, best of three each.
template <template <class> class MT, template <class> class IT, class Real>
void compare_with_scalar(const char* name, const std::vector<double>& s0, double h, long steps) {
  constexpr int kBlock = kernels::block_lanes<Real>(), kNative = kernels::native_lanes<Real>();
  using OnePack = kernels::PackLanes<Real, kBlock, 1>;
  using SubBlocks = kernels::PackLanes<Real, kNative, kBlock / kNative>;
  using Scalar = kernels::ScalarLanes<Real>;
  std::vector<Real> x0, x1, x2;
  double t0 = 1e30, t1 = 1e30, t2 = 1e30;
  for (int r = 0; r < 3; ++r) {
    t0 = std::min(t0, advance_on<MT, IT, Real, Scalar>(512, steps, s0, h, x0));
    t1 = std::min(t1, advance_on<MT, IT, Real, OnePack>(512, steps, s0, h, x1));
    t2 = std::min(t2, advance_on<MT, IT, Real, SubBlocks>(512, steps, s0, h, x2));
  }
  const bool chosen = kernels::lane_sub_blocks<IT<Real>, MT<Real>, Real>;
  std::printf(
      "%-26s %s  scalar: %.3f s  one pack of %2d: %.3f s (x%.2f)  %d x %2d: %.3f s (x%.2f)  %s  "
      "engine: %s\n",
      name, sizeof(Real) == 4 ? "FP32" : "FP64", t0, kBlock, t1, t0 / t1, kBlock / kNative, kNative,
      t2, t0 / t2, x0 == x1 && x0 == x2 ? "same bits" : "BITS DIFFER",
      chosen ? "sub-blocks" : "one pack");
}

/// Bare explicit steps in blocks of block_lanes() and of burst_block_lanes() lanes (sub-blocks of
/// one register), best of five, interleaved; what the engine picks for the model.
template <template <class> class MT, template <class> class IT, class Real>
void compare_bursts(const char* name, const std::vector<double>& s0, double h, long n, long steps) {
  constexpr int kNative = kernels::native_lanes<Real>();
  constexpr int kBlock = kernels::block_lanes<Real>(), kBurst = kernels::burst_block_lanes<Real>();
  using Two = kernels::PackLanes<Real, kNative, kBlock / kNative>;
  using Four = kernels::PackLanes<Real, kNative, kBurst / kNative>;
  constexpr int kLive = 3 * MT<Real>::dof;
  std::vector<Real> x1, x2;
  double t1 = 1e30, t2 = 1e30;
  for (int r = 0; r < 5; ++r) {
    t1 = std::min(t1, advance_on<MT, IT, Real, Two>(n, steps, s0, h, x1, steps));
    t2 = std::min(t2, advance_on<MT, IT, Real, Four>(n, steps, s0, h, x2, steps));
  }
  std::printf("%-26s %s  bursts in %d x %2d: %.4f s  %d x %2d: %.4f s  (x%.3f)  %s  engine: %d\n",
              name, sizeof(Real) == 4 ? "FP32" : "FP64", kBlock / kNative, kNative, t1,
              kBurst / kNative, kNative, t2, t1 / t2, x1 == x2 ? "same bits" : "BITS DIFFER",
              kernels::burst_block_lanes<Real>(kLive) / kNative);
}

template <class Real>
void burst_blocks() {
  const std::vector<double> hh{0.0, -0.2, 0.45, 0.0};
  const auto o = models::OuterSolarSystem<double>::reference_state();
  const std::vector<double> oss(o.begin(), o.end());
  compare_bursts<models::HenonHeiles, kernels::StormerVerlet, Real>("Verlet, Henon-Heiles", hh,
                                                                    1e-2, 4096, 20000);
  compare_bursts<models::HenonHeiles, kernels::BlanesMoan6, Real>("blanes_moan6, Henon-Heiles", hh,
                                                                  1e-2, 4096, 5000);
  compare_bursts<models::OuterSolarSystem, kernels::StormerVerlet, Real>("Verlet, outer solar", oss,
                                                                         10.0, 2048, 2000);
  compare_bursts<models::OuterSolarSystem, kernels::BlanesMoan6, Real>("blanes_moan6, outer solar",
                                                                       oss, 10.0, 2048, 500);
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
  // Models whose Hessian comes from nested-dual AD of the potential (Henon-Heiles writes its own).
  const std::vector<double> pend{1.0, 0.5}, kep{0.7, 0.0, 0.0, 1.2};
  compare<models::Pendulum, kernels::Midpoint, Real>("midpoint, pendulum", pend, 1e-2, 20000);
  compare<models::Kepler, kernels::Midpoint, Real>("midpoint, Kepler", kep, 1e-2, 20000);
  compare<models::Kepler, kernels::LobattoIIIAB3, Real>("Lobatto, Kepler", kep, 1e-2, 20000);
  compare<models::Kepler, kernels::Newmark, Real>("Newmark, Kepler", kep, 1e-2, 20000);
  // The rigid body on SO(3): R and Pi, Newton on the body velocity (Cayley: its own Jacobian;
  // exponential chart: forward AD, Dual<Real, 3>).
  const auto b = models::RigidBodySO3<double>::reference_state();
  const std::vector<double> body(b.begin(), b.end());
  compare_with_scalar<models::RigidBodySO3, kernels::VariationalEulerSO3, Real>(
      "var. Euler (Cayley), SO(3)", body, 1e-2, 20000);
  compare_with_scalar<models::RigidBodySO3, kernels::VariationalEulerSO3Exp, Real>(
      "var. Euler (exp), SO(3)", body, 1e-2, 20000);
}

}  // namespace

int main() {
  all_pairs<float>();
  all_pairs<double>();
  burst_blocks<float>();
  burst_blocks<double>();
}
