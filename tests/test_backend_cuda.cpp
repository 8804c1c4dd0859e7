// The CUDA backend against the CPU backend: the same per-trajectory code on both, so FP64 results
// agree to round-off (1e-10 relative after 10^4 steps; by default nvcc contracts a*b+c into FMAs,
// the CPU build does not, so they are not bitwise equal), hit lists match one to one, statuses
// agree, and FP32 on the GPU tracks FP64 on the CPU loosely. A build with -DVIGOR_CUDA_FMAD=OFF
// (VIGOR_CUDA_BITWISE) promises more: the GPU performs the CPU's operations, so every number of
// every comparison below, FP64 and FP32, must be the CPU's bits (docs/backends.md).
//
// Without a usable CUDA device (no GPU, no driver, or a build without CUDA) the GPU tests skip,
// unless VIGOR_REQUIRE_GPU=1, when they fail: a GPU machine must never pass by skipping.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine_hooks.hpp"
#include "host/backends/engine.hpp"
#include "host/backends/registry.hpp"
#include "kernels/core/config.hpp"
#include "kernels/core/mechanics.hpp"
#include "kernels/sections.hpp"
#include "kernels/tangent.hpp"
#include "models/double_spherical_pendulum.hpp"
#include "models/rigid_body_quaternion.hpp"

using namespace vigor::host;
using vigor::kernels::kStatusEscaped;
using vigor::kernels::kStatusNonFinite;
using vigor::kernels::kStatusOk;

namespace {

#ifndef VIGOR_CUDA_BITWISE
#define VIGOR_CUDA_BITWISE 0
#endif
/// nvcc adds no FMA of its own (--fmad=false): the GPU's results are the CPU's bits.
constexpr bool kBitwise = VIGOR_CUDA_BITWISE != 0;

bool gpu_required() {
  const char* v = std::getenv("VIGOR_REQUIRE_GPU");
  return v != nullptr && std::string(v) == "1";
}

/// One backend-comparison scenario.
struct Case {
  std::string model;
  std::string integrator;
  double dt = 0.01;
  std::int64_t steps = 10000;
  int segments = 4;
  double escape_radius = 0.0;
  std::int64_t max_crossings = 1000;
  /// Section-buffer slots per trajectory for FP64 (FP32 gets twice as many from the same bytes);
  /// small on purpose so that trajectories pause on full buffers and are relaunched.
  int slots = 3;
  std::vector<std::pair<std::string, double>> options;  ///< integrator options besides defaults
  int newton_iterations = 0;                            ///< 0: the integrator's default
  int coordinate = 0;                                   ///< section plane: this component = 0
  bool section = true;                                  ///< false: no section at all
  std::int64_t conservation_every = 1;                  ///< diagnostics.conservation_every
  bool bursts = true;    ///< false: per-step testing, the reference (EngineTestHooks::per_step)
  bool tangent = false;  ///< carry the tangent map
};

/// Initial states (SoA) and their count.
struct Ensemble {
  std::vector<double> soa;
  std::int64_t n = 0;
  std::int64_t escaping = -1;  ///< index of a trajectory that must escape, or -1
};

/// Hénon–Heiles (a = 1, b = -1/3) at E = 1/12 on the section q0 = 0 with p0 > 0, from a (q1, p1)
/// grid: mostly regular orbits, so round-off differences between the backends stay at round-off
/// over 10^4 steps instead of being amplified by chaos. Plus one trajectory above the escape
/// energy 1/6, thrown towards the saddle at (0, 1), which must leave through the escape radius.
Ensemble henon_heiles_ensemble() {
  const double e = 1.0 / 12.0;
  std::vector<std::vector<double>> rows;
  for (int iy = 0; iy < 20; ++iy) {
    for (int ip = 0; ip < 15; ++ip) {
      const double y = -0.25 + 0.7 * iy / 19.0;
      const double py = -0.35 + 0.7 * ip / 14.0;
      const double two_v = y * y - 2.0 / 3.0 * y * y * y;  // 2 V(0, y)
      const double px2 = 2.0 * e - py * py - two_v;
      if (px2 <= 0.0) continue;
      rows.push_back({0.0, y, std::sqrt(px2), py});
    }
  }
  Ensemble ens;
  ens.escaping = std::int64_t(rows.size());
  rows.push_back({0.0, 0.0, 0.05, 0.8});  // E = 0.32 > 1/6
  ens.n = std::int64_t(rows.size());
  ens.soa.resize(rows.size() * 4);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (int c = 0; c < 4; ++c) ens.soa[std::size_t(c) * rows.size() + i] = rows[i][c];
  return ens;
}

/// Pendulum (m = l = g = 1) on a (q0, p0) grid: librations and rotations. Orbits within 0.3 of
/// the separatrix energy H = 1 are left out: their period diverges logarithmically there, so
/// round-off differences in the energy become phase differences far above round-off.
Ensemble pendulum_ensemble() {
  std::vector<std::vector<double>> rows;
  for (int iq = 0; iq < 18; ++iq) {
    for (int ip = 0; ip < 18; ++ip) {
      const double q = -2.5 + 5.0 * (iq + 0.5) / 18.0;
      const double p = -2.5 + 5.0 * (ip + 0.5) / 18.0;
      if (std::abs(0.5 * p * p - std::cos(q) - 1.0) < 0.3) continue;
      rows.push_back({q, p});
    }
  }
  Ensemble ens;
  ens.n = std::int64_t(rows.size());
  ens.soa.resize(rows.size() * 2);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (int c = 0; c < 2; ++c) ens.soa[std::size_t(c) * rows.size() + i] = rows[i][c];
  return ens;
}

/// Rows (one per trajectory) to SoA.
Ensemble from_rows(const std::vector<std::vector<double>>& rows) {
  Ensemble ens;
  ens.n = std::int64_t(rows.size());
  const std::size_t dim = rows.front().size();
  ens.soa.resize(rows.size() * dim);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t c = 0; c < dim; ++c) ens.soa[c * rows.size() + i] = rows[i][c];
  return ens;
}

/// Planar double pendulum (unit parameters): small-to-moderate angles at rest, regular motion.
Ensemble double_pendulum_ensemble() {
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 10; ++j) rows.push_back({0.1 + 0.05 * i, -0.2 + 0.04 * j, 0.0, 0.0});
  return from_rows(rows);
}

/// Marsden–Wendlandt's double spherical pendulum rotated about z (a symmetry: exactly on the
/// constraint manifold), over 2e4 steps of 1e-3: a quarter of its 20-30 s run.
Ensemble double_spherical_ensemble() {
  const auto ref = vigor::models::DoubleSphericalPendulum<double>::reference_state();
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 64; ++i) {
    const double phi = 6.283185307179586 * i / 64.0, c = std::cos(phi), s = std::sin(phi);
    std::vector<double> x(12);
    for (int b = 0; b < 4; ++b) {
      x[std::size_t(3 * b)] = c * ref[std::size_t(3 * b)] - s * ref[std::size_t(3 * b + 1)];
      x[std::size_t(3 * b + 1)] = s * ref[std::size_t(3 * b)] + c * ref[std::size_t(3 * b + 1)];
      x[std::size_t(3 * b + 2)] = ref[std::size_t(3 * b + 2)];
    }
    rows.push_back(x);
  }
  return from_rows(rows);
}

/// Quaternion rigid body (I = 1, 2, 3) from the identity attitude with body angular velocities
/// spread around Marsden–Wendlandt's (0, 3, 4); p = dL/dqdot from the model itself.
Ensemble quaternion_ensemble() {
  using M = vigor::models::RigidBodyQuaternion<double>;
  const double params[3] = {1.0, 2.0, 3.0};
  const M m = M::from_params(params);
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 40; ++i) {
    const double w1 = 0.3 * std::sin(0.7 * i), w2 = 3.0 + 0.05 * i, w3 = 4.0 - 0.03 * i;
    vigor::kernels::Vec<double, 4> q{{1.0, 0.0, 0.0, 0.0}}, v{{0.0, 0.5 * w1, 0.5 * w2, 0.5 * w3}};
    vigor::kernels::Vec<double, 4> p;
    vigor::kernels::Mat<double, 4> mass;
    vigor::kernels::momentum_and_mass(m, q, v, p, mass);
    rows.push_back({q[0], q[1], q[2], q[3], p[0], p[1], p[2], p[3]});
  }
  return from_rows(rows);
}

/// Free rigid body on SO(3) (I = 2, 1, 2/3) from R = identity, body momenta around HLW's.
Ensemble rigid_body_so3_ensemble() {
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 40; ++i) {
    const double a = 1.1 + 0.01 * i;
    rows.push_back({1, 0, 0, 0, 1, 0, 0, 0, 1, std::cos(a), 0.05 * std::sin(3.0 * i), std::sin(a)});
  }
  return from_rows(rows);
}

/// Rigid ellipsoid in ideal fluid (kirchhoff_se3, default I and M) on the thesis's level set
/// Pi·P = 0, P·P = 5.22, H = 4: P on a spiral of directions, Pi normal to it with the energy
/// left (as examples/gallery/kirchhoff_level_set.py), B = E, x = 0.
Ensemble kirchhoff_se3_ensemble() {
  const double I[3] = {0.1253259217415516, 0.3939813715316293, 0.2962483540272737};
  const double M[3] = {1.1613972017578527, 1.3774779656135212, 2.4212857655720033};
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 20; ++i) {
    const double z = -0.95 + 0.1 * i, phi = 2.4 * i, rho = std::sqrt(1 - z * z);
    const double n[3] = {rho * std::cos(phi), rho * std::sin(phi), z};
    double p[3], ep = 0;
    for (int a = 0; a < 3; ++a) {
      p[a] = std::sqrt(5.22) * n[a];
      ep += 0.5 * p[a] * p[a] / M[a];
    }
    // u = n × e_k (the axis least aligned with n), normalised: Pi = r u has Pi·P = 0.
    const int k = std::abs(n[0]) < 0.5 ? 0 : (std::abs(n[1]) < 0.5 ? 1 : 2);
    double u[3] = {0, 0, 0};
    u[(k + 1) % 3] = n[(k + 2) % 3];
    u[(k + 2) % 3] = -n[(k + 1) % 3];
    const double un = std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    double w = 0;
    for (int a = 0; a < 3; ++a) w += 0.5 * (u[a] / un) * (u[a] / un) / I[a];
    const double r = std::sqrt((4.0 - ep) / w);
    rows.push_back({1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, r * u[0] / un, r * u[1] / un, r * u[2] / un,
                    p[0], p[1], p[2]});
  }
  return from_rows(rows);
}

/// Driven damped pendulum (Baker–Gollub parameters): angles and momenta on a coarse grid. The
/// attractor is chaotic, so only 2000 steps of h = 0.01 are compared.
Ensemble driven_pendulum_ensemble() {
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 10; ++j) rows.push_back({-1.0 + 0.2 * i, -0.5 + 0.1 * j});
  return from_rows(rows);
}

/// What an engine of the case is built from: its integration and resources.
struct EngineSpec {
  Integration integration;
  EngineResources resources;
};

EngineSpec make_spec(const Case& c, Precision precision, std::int64_t n) {
  const ModelInfo* model = find_model(c.model);
  const IntegratorInfo* integ = find_integrator(c.integrator);
  if (model == nullptr || integ == nullptr)
    throw std::runtime_error("not registered: " + c.model + " / " + c.integrator);
  EngineSpec e;
  Integration& s = e.integration;
  s.model = c.model;
  s.integrator = c.integrator;
  s.precision = precision;
  for (const auto& p : model->params) s.params.push_back(p.default_value);
  for (const auto& o : integ->options) {
    double v = o.default_value;
    for (const auto& [name, value] : c.options)
      if (name == o.name) v = value;
    s.options.push_back(v);
  }
  s.dt = c.dt;
  s.newton_iterations = c.newton_iterations;
  s.section.kind = c.section ? vigor::kernels::kSectionPlane : vigor::kernels::kSectionNone;
  s.section.coordinate = c.coordinate;
  s.section.direction = vigor::kernels::kDirUp;
  s.section.value = 0.0;
  s.section.max_crossings = c.max_crossings;
  s.escape_radius = c.escape_radius;
  s.tangent = c.tangent;
  s.conservation_every = c.conservation_every;
  // Bytes for `slots` FP64 slots per trajectory (t and the state in each).
  e.resources.hit_buffer_bytes =
      std::size_t(c.slots) * std::size_t(n) * std::size_t(model->dim + 1) * 8;
  return e;
}

/// The case's engine on `backend` (per-step testing when the case turns bursts off).
std::unique_ptr<Engine> make_case_engine(const Case& c, Precision precision, std::int64_t n,
                                         BackendKind backend) {
  const EngineSpec e = make_spec(c, precision, n);
  const vigor_test::ScopedEngineHooks hooks(false, /*per_step=*/!c.bursts);
  return make_engine(e.integration, e.resources, backend);
}

/// One hit: time, then the state.
using Hit = std::vector<double>;

struct Outcome {
  FinalData final;
  std::map<std::int64_t, std::vector<Hit>> hits;  ///< per trajectory, chronological
  std::int64_t hit_total = 0;
  std::int64_t relaunches = 0;  ///< launches beyond one per segment (trajectories paused)
  int capacity = 0;
  int dim = 0;
};

/// Drive an engine through the Engine interface exactly as the run loop does.
Outcome drive(Engine& engine, const Case& c, const Ensemble& ens) {
  Outcome out;
  out.dim = engine.dim();
  engine.upload(ens.soa, ens.n);
  out.capacity = engine.hit_capacity();
  HitBlock block;
  for (int s = 1; s <= c.segments; ++s) {
    const std::int64_t end = c.steps * s / c.segments;
    engine.launch(end);
    while (engine.drain(block) > 0) {
      engine.launch(end);
      ++out.relaunches;
    }
  }
  out.final = engine.download();
  EXPECT_EQ(block.dim, out.dim);
  EXPECT_EQ(block.values.size(), block.trajectory.size() * std::size_t(out.dim + 1));
  const std::size_t w = std::size_t(out.dim + 1);
  for (std::size_t k = 0; k < block.trajectory.size(); ++k)
    out.hits[block.trajectory[k]].emplace_back(block.values.begin() + std::ptrdiff_t(k * w),
                                               block.values.begin() + std::ptrdiff_t((k + 1) * w));
  out.hit_total = std::int64_t(block.trajectory.size());
  return out;
}

Outcome run_engine(const Case& c, const Ensemble& ens, Precision precision, BackendKind backend) {
  const std::unique_ptr<Engine> engine = make_case_engine(c, precision, ens.n, backend);
  return drive(*engine, c, ens);
}

/// |a - b| <= rel * max(1, |a|, |b|): relative for large values, absolute near zero.
bool close(double a, double b, double rel) {
  return std::abs(a - b) <= rel * std::max({1.0, std::abs(a), std::abs(b)});
}

/// How closely a result must match the CPU FP64 reference.
struct Tolerance {
  double state;  ///< final states, energy0 (close())
  double hit;    ///< hit states (close())
  double time;   ///< hit times: absolute, or relative to max(1, t) when time_relative
  bool time_relative;
  double energy;        ///< energy errors: relative ...
  double energy_floor;  ///< ... plus this absolute floor times (1 + |final state|^2)
};

/// FP64 on the GPU runs the same code as the CPU and differs only by round-off: nvcc contracts
/// a*b+c into FMAs, g++ without -mfma does not. Measured here with the CPU engine built with
/// -mfma -ffp-contract=fast against the normal build: states 1e-13 (HH), 2e-11 (pendulum
/// rotations, angle ~ 250), hit times 2e-12, energy errors 2e-12 absolute where yoshida6's are
/// themselves round-off (1e-12) — hence the 1e-11 floor.
constexpr Tolerance kFp64{1e-10, 1e-10, 1e-10, false, 1e-10, 1e-11};
/// FP32 against FP64 (HH at E = 1/12, 10^4 steps): states differ by up to 1.2e-4, energy errors
/// by 1e-5 on the escaping orbit (|H| terms ~ 5 there, hence the floor scales with the state),
/// hit times by 1.7e-3 at t ~ 73 (2e-5 relative). Hit states by up to 7e-4: at a nearly grazing
/// crossing (p0 small) a time error dt moves the interpolated state by |dx/dt| dt with dt ~ 1/p0,
/// so hits get twice the state tolerance.
constexpr Tolerance kFp32{1e-3, 2e-3, 1e-3, true, 1e-3, 1e-5};

/// Compare `got` (GPU) with `want` (CPU FP64) within `tol`. Statuses, steps, crossings, recorded
/// counts and the hit lists (trajectory and number of hits) must match one to one.
void expect_agree(const Outcome& got, const Outcome& want, const Ensemble& ens,
                  const Tolerance& tol) {
  const std::int64_t n = ens.n;
  const int dim = want.dim;
  ASSERT_EQ(got.dim, dim);
  ASSERT_EQ(got.final.state.size(), std::size_t(dim) * std::size_t(n));
  ASSERT_EQ(got.final.status.size(), std::size_t(n));
  int state_bad = 0, energy_bad = 0, hit_bad = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto ui = std::size_t(i);
    EXPECT_EQ(got.final.status[ui], want.final.status[ui]) << "trajectory " << i;
    EXPECT_EQ(got.final.step[ui], want.final.step[ui]) << "trajectory " << i;
    EXPECT_EQ(got.final.crossings[ui], want.final.crossings[ui]) << "trajectory " << i;
    EXPECT_EQ(got.final.recorded[ui], want.final.recorded[ui]) << "trajectory " << i;
    double size2 = 0.0;
    for (int c = 0; c < dim; ++c) {
      const std::size_t k = std::size_t(c) * std::size_t(n) + ui;
      size2 += want.final.state[k] * want.final.state[k];
      if (!close(got.final.state[k], want.final.state[k], tol.state) && state_bad++ < 5)
        ADD_FAILURE() << "state[" << c << "] of trajectory " << i << ": " << got.final.state[k]
                      << " vs " << want.final.state[k];
    }
    EXPECT_TRUE(close(got.final.energy0[ui], want.final.energy0[ui], tol.state))
        << "energy0 of trajectory " << i;
    // Momentum drift and Newton residuals are themselves round-off sized (or O(h^2) for FP32
    // runs of momentum-conserving schemes): compare them on the energy errors' absolute scale.
    EXPECT_LE(std::abs(got.final.momentum_error[ui] - want.final.momentum_error[ui]),
              tol.energy * std::abs(want.final.momentum_error[ui]) + tol.energy_floor * (1 + size2))
        << "momentum drift of trajectory " << i;
    EXPECT_LE(got.final.newton_residual[ui],
              std::max(1e3 * tol.energy_floor * (1 + size2), 10 * want.final.newton_residual[ui]))
        << "Newton residual of trajectory " << i;
    const double ge = got.final.energy_error[ui], we = want.final.energy_error[ui];
    if (std::abs(ge - we) >
            tol.energy * std::max(std::abs(ge), std::abs(we)) + tol.energy_floor * (1 + size2) &&
        energy_bad++ < 5)
      ADD_FAILURE() << "energy error of trajectory " << i << ": " << ge << " vs " << we;

    // Hit lists, one to one, chronological within the trajectory.
    const auto gi = got.hits.find(i);
    const auto wi = want.hits.find(i);
    const std::size_t gn = gi == got.hits.end() ? 0 : gi->second.size();
    const std::size_t wn = wi == want.hits.end() ? 0 : wi->second.size();
    EXPECT_EQ(gn, wn) << "hits of trajectory " << i;
    EXPECT_EQ(std::int64_t(wn), want.final.recorded[ui]) << "trajectory " << i;
    for (std::size_t h = 0; h < std::min(gn, wn); ++h) {
      const Hit& g = gi->second[h];
      const Hit& w = wi->second[h];
      const double t_scale = tol.time_relative ? std::max(1.0, std::abs(w[0])) : 1.0;
      bool ok = std::abs(g[0] - w[0]) <= tol.time * t_scale;
      for (int c = 1; c <= dim; ++c)
        ok = ok && close(g[std::size_t(c)], w[std::size_t(c)], tol.hit);
      if (!ok && hit_bad++ < 5)
        ADD_FAILURE() << "hit " << h << " of trajectory " << i << ": t " << g[0] << " vs " << w[0];
    }
  }
  EXPECT_EQ(state_bad, 0) << "state mismatches";
  EXPECT_EQ(energy_bad, 0) << "energy-error mismatches";
  EXPECT_EQ(hit_bad, 0) << "hit mismatches";
  EXPECT_EQ(got.hit_total, want.hit_total);
}

/// Whether two arrays hold the same bits (so -0 differs from +0, and a NaN equals itself).
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

/// Every number of `got` the bits of `want`'s: final states and their diagnostics, and every hit.
void expect_identical(const Outcome& got, const Outcome& want) {
  const FinalData& g = got.final;
  const FinalData& w = want.final;
  EXPECT_TRUE(same_bits(g.state, w.state)) << "final states";
  EXPECT_TRUE(same_bits(g.energy0, w.energy0)) << "initial energies";
  EXPECT_TRUE(same_bits(g.energy_error, w.energy_error)) << "energy errors";
  EXPECT_TRUE(same_bits(g.momentum_error, w.momentum_error)) << "momentum drifts";
  EXPECT_TRUE(same_bits(g.newton_residual, w.newton_residual)) << "Newton residuals";
  EXPECT_TRUE(same_bits(g.tangent_out, w.tangent_out)) << "tangent diagnostics";
  EXPECT_EQ(g.step, w.step);
  EXPECT_EQ(g.crossings, w.crossings);
  EXPECT_EQ(g.recorded, w.recorded);
  EXPECT_EQ(g.status, w.status);
  ASSERT_EQ(got.hits.size(), want.hits.size()) << "trajectories with hits";
  int bad = 0;
  for (const auto& [i, hits] : want.hits) {
    const auto it = got.hits.find(i);
    if ((it == got.hits.end() || !same_bits(it->second, hits)) && bad++ < 5)
      ADD_FAILURE() << "the hits of trajectory " << i << " differ";
  }
  EXPECT_EQ(bad, 0) << "trajectories whose hits differ";
}

/// In a bitwise build, `got` must be `want` to the bit; in any build, within `tol`.
void expect_agree_or_identical(const Outcome& got, const Outcome& want, const Ensemble& ens,
                               const Tolerance& tol) {
  expect_agree(got, want, ens, tol);
  if (kBitwise) expect_identical(got, want);
}

/// The scenario must exercise what it claims to, or the comparison proves nothing.
void expect_meaningful(const Outcome& cpu, const Ensemble& ens, const Case& c) {
  EXPECT_GE(cpu.hit_total, ens.n) << "too few section crossings to compare";
  if (c.slots < c.max_crossings) {
    EXPECT_GT(cpu.relaunches, 0) << "no trajectory paused on a full buffer";
  }
  std::int64_t ok = 0;
  for (std::int64_t i = 0; i < ens.n; ++i) {
    const auto ui = std::size_t(i);
    if (i == ens.escaping) {
      EXPECT_EQ(cpu.final.status[ui], kStatusEscaped) << "the escaping orbit did not escape";
      EXPECT_LT(cpu.final.step[ui], c.steps);
    } else if (cpu.final.status[ui] == kStatusOk && cpu.final.step[ui] == c.steps) {
      ++ok;
    }
  }
  EXPECT_EQ(ok, ens.n - (ens.escaping >= 0 ? 1 : 0)) << "bounded orbits must finish with ok";
}

/// kFp32 with the state, hit and time tolerances scaled by `scale` (scenarios whose FP32 round-off
/// grows further over their run than Hénon–Heiles' does; see Scenario::fp32_scale).
Tolerance fp32_tolerance(double scale) {
  Tolerance t = kFp32;
  t.state *= scale;
  t.hit *= scale;
  t.time *= scale;
  return t;
}

/// GPU FP64 (and, with `with_fp32`, FP32) against CPU FP64 for one scenario.
void compare_backends(const Case& c, const Ensemble& ens, bool with_fp32, double fp32_scale = 1.0) {
  const Outcome cpu = run_engine(c, ens, Precision::kDouble, BackendKind::kCpu);
  expect_meaningful(cpu, ens, c);
  {
    SCOPED_TRACE("CUDA FP64 vs CPU FP64");
    const Outcome gpu = run_engine(c, ens, Precision::kDouble, BackendKind::kCuda);
    EXPECT_EQ(gpu.capacity, cpu.capacity);
    expect_agree_or_identical(gpu, cpu, ens, kFp64);
  }
  if (!with_fp32 && !kBitwise) return;
  const Outcome gpu = run_engine(c, ens, Precision::kFloat, BackendKind::kCuda);
  if (with_fp32) {
    SCOPED_TRACE("CUDA FP32 vs CPU FP64");
    expect_agree(gpu, cpu, ens, fp32_tolerance(fp32_scale));
  }
  if (kBitwise) {
    // FP32 against FP32: every scenario, also those whose FP32 orbits part from FP64's.
    SCOPED_TRACE("CUDA FP32 vs CPU FP32, bit for bit");
    expect_identical(gpu, run_engine(c, ens, Precision::kFloat, BackendKind::kCpu));
  }
}

Case henon_heiles_case(const std::string& integrator) {
  Case c;
  c.model = "henon_heiles";
  c.integrator = integrator;
  c.escape_radius = 3.0;
  return c;
}

/// A named comparison: the case and its ensemble.
struct Scenario {
  std::string name;  ///< "<integrator> / <model>"
  Case c;
  Ensemble ens;
  bool with_fp32 = false;  ///< also compare GPU FP32 (regular orbits of O(1) size only)
  /// FP32 tolerances relative to kFp32: where the scenario's own FP32 round-off, measured as CPU
  /// FP32 against CPU FP64 (CudaBackendHarness.CpuFloatTracksCpuDouble...), grows beyond it.
  double fp32_scale = 1.0;
};

/// The implicit and constrained scenarios the GPU tests compare (and the CPU harness checks), and
/// RK4 on the models only implicit schemes took before it.
std::vector<Scenario> implicit_scenarios() {
  auto make = [](const std::string& model, const std::string& integrator, double dt,
                 std::int64_t steps, int coordinate, int slots) {
    Case c;
    c.model = model;
    c.integrator = integrator;
    c.dt = dt;
    c.steps = steps;
    c.coordinate = coordinate;
    c.slots = slots;
    return c;
  };
  std::vector<Scenario> v;
  Case mid = henon_heiles_case("midpoint");
  mid.newton_iterations = 3;  // the benchmark's count
  v.push_back({"midpoint / henon_heiles", mid, henon_heiles_ensemble(), true});
  v.push_back(
      {"lobatto3 / henon_heiles", henon_heiles_case("lobatto3"), henon_heiles_ensemble(), true});
  Case nm = henon_heiles_case("newmark");
  nm.options = {{"gamma", 0.5}, {"beta", 0.25}};
  v.push_back({"newmark / henon_heiles", nm, henon_heiles_ensemble(), true});
  v.push_back({"midpoint / double_pendulum", make("double_pendulum", "midpoint", 0.01, 4000, 0, 3),
               double_pendulum_ensemble()});
  // Few crossings of x1 = 0 in 5 s: compare them, do not force relaunches (slots >= crossings).
  v.push_back({"rattle / double_spherical_pendulum",
               make("double_spherical_pendulum", "rattle", 1e-3, 5000, 0, 1000),
               double_spherical_ensemble()});
  // q1 = 0: the body turns through it twice per revolution.
  v.push_back({"midpoint / rigid_body_quaternion",
               make("rigid_body_quaternion", "midpoint", 0.01, 3000, 1, 1000),
               quaternion_ensemble()});
  // Pi0 = 0: the body momentum precesses through it. FP32: these bodies turn near the
  // intermediate axis, where the phase error that FP32 round-off starts grows linearly over the
  // 4000 steps: CPU FP32 against CPU FP64 differs by up to 1.5e-3 in R and Pi (trajectories 23,
  // 27, 35, 37), the GPU's FP32 by 1.3e-3 (an H100, 2026-11-25: another rounding path of the
  // same size, FMA-contracted). Hence 4 x kFp32.
  v.push_back({"variational_euler_so3 / rigid_body_so3",
               make("rigid_body_so3", "variational_euler_so3", 0.05, 4000, 9, 1000),
               rigid_body_so3_ensemble(), true, 4.0});
  // P2 = 0 (the thesis's section). 400 steps of h = 0.025 (t = 10): the level set is partly
  // chaotic, so a longer run would compare round-off amplified by the orbits' divergence.
  v.push_back({"variational_euler_se3 / kirchhoff_se3",
               make("kirchhoff_se3", "variational_euler_se3", 0.025, 400, 17, 1000),
               kirchhoff_se3_ensemble()});
  v.push_back({"midpoint / driven_pendulum",
               make("driven_pendulum", "midpoint", 0.01, 2000, 0, 1000),
               driven_pendulum_ensemble()});
  // The triple jump of the midpoint rule (its substeps from their own times), and RK4 on
  // Hamilton's equations of a non-separable and a forced model (phase_rates on the device).
  v.push_back({"midpoint4 / double_pendulum",
               make("double_pendulum", "midpoint4", 0.01, 4000, 0, 3), double_pendulum_ensemble()});
  v.push_back({"midpoint4 / driven_pendulum",
               make("driven_pendulum", "midpoint4", 0.01, 2000, 0, 1000),
               driven_pendulum_ensemble()});
  v.push_back({"rk4 / double_pendulum", make("double_pendulum", "rk4", 0.01, 4000, 0, 3),
               double_pendulum_ensemble()});
  v.push_back({"rk4 / driven_pendulum", make("driven_pendulum", "rk4", 0.01, 2000, 0, 1000),
               driven_pendulum_ensemble()});
  return v;
}

Scenario implicit_scenario(const std::string& name) {
  for (Scenario& s : implicit_scenarios())
    if (s.name == name) return s;
  throw std::runtime_error("no scenario " + name);
}

}  // namespace

/// GPU tests: skipped without a device, failed without one when VIGOR_REQUIRE_GPU=1.
class CudaBackend : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() > 0) return;
    const std::string why = cuda_unavailable_reason();
    if (gpu_required()) FAIL() << "VIGOR_REQUIRE_GPU=1 but no usable CUDA device: " << why;
    GTEST_SKIP() << "no usable CUDA device: " << why;
  }
};

TEST_F(CudaBackend, HenonHeilesVerletMatchesCpu) {
  compare_backends(henon_heiles_case("verlet"), henon_heiles_ensemble(), true);
}

TEST_F(CudaBackend, HenonHeilesYoshida4MatchesCpu) {
  compare_backends(henon_heiles_case("yoshida4"), henon_heiles_ensemble(), true);
}

TEST_F(CudaBackend, HenonHeilesRk4MatchesCpu) {
  compare_backends(henon_heiles_case("rk4"), henon_heiles_ensemble(), true);
}

TEST_F(CudaBackend, PendulumYoshida6MatchesCpu) {
  Case c;
  c.model = "pendulum";
  c.integrator = "yoshida6";
  c.max_crossings = 5;  // fewer recorded than detected: exercises the per-run recording limit
  c.slots = 3;
  // FP64 only: in FP32 the angle of a rotating pendulum grows to ~250 rad, where its rounding
  // (ulp 1.5e-5, over 7 x 10^4 substeps) moves states and energies by ~1e-3, the size of the
  // loose FP32 tolerance itself; FP32 is compared on Henon-Heiles, whose states stay O(1).
  compare_backends(c, pendulum_ensemble(), false);
}

// No section, no escape radius, H every 7 steps: the GPU runs the steps between checks as bursts
// with no per-step test (kernels/driver/advance.hpp). The bounded orbits agree with the CPU as in
// the tests above (energy errors are maxima over the same checks); the orbit thrown out of the well
// runs off to infinity, and both backends must freeze it, at a finite state, near the same step
// (the step of the overflow may move by one with the GPU's FMA rounding).
TEST_F(CudaBackend, HenonHeilesBurstsBetweenChecksMatchCpu) {
  Case c = henon_heiles_case("verlet");
  c.escape_radius = 0.0;
  c.section = false;
  c.conservation_every = 7;
  Ensemble bounded = henon_heiles_ensemble();
  const std::int64_t wild = bounded.escaping;
  std::vector<std::vector<double>> rows;
  for (std::int64_t i = 0; i < bounded.n; ++i) {
    std::vector<double> row;
    for (int k = 0; k < 4; ++k) row.push_back(bounded.soa[std::size_t(k * bounded.n + i)]);
    rows.push_back(row);
  }
  const std::vector<double> wild_row = rows[std::size_t(wild)];
  rows.erase(rows.begin() + wild);
  bounded = from_rows(rows);
  for (const Precision prec : {Precision::kDouble, Precision::kFloat}) {
    SCOPED_TRACE(prec == Precision::kDouble ? "FP64" : "FP32");
    const Outcome cpu = run_engine(c, bounded, Precision::kDouble, BackendKind::kCpu);
    const Outcome gpu = run_engine(c, bounded, prec, BackendKind::kCuda);
    expect_agree(gpu, cpu, bounded, prec == Precision::kDouble ? kFp64 : kFp32);
    if (kBitwise)
      expect_identical(
          gpu, prec == Precision::kDouble ? cpu : run_engine(c, bounded, prec, BackendKind::kCpu));
  }
  const Ensemble one = from_rows({wild_row});
  const Outcome cpu = run_engine(c, one, Precision::kDouble, BackendKind::kCpu);
  const Outcome gpu = run_engine(c, one, Precision::kDouble, BackendKind::kCuda);
  ASSERT_EQ(cpu.final.status[0], kStatusNonFinite);
  EXPECT_EQ(gpu.final.status[0], kStatusNonFinite);
  EXPECT_LE(std::abs(gpu.final.step[0] - cpu.final.step[0]), 1);
  EXPECT_LT(cpu.final.step[0], c.steps);
  if (kBitwise) expect_identical(gpu, cpu);
  for (int k = 0; k < 4; ++k) EXPECT_TRUE(std::isfinite(gpu.final.state[std::size_t(k)])) << k;
  // On the GPU itself, bursts against per-step testing: the same orbits to round-off, not to the
  // bit, in a default build. nvcc contracts the burst loop's steps and the per-step loop's steps
  // into FMAs differently (measured on an H200: FP64 final states and energy maxima differ in their
  // last bits; FP32, with f483546's driver too, x = 0.02749182 against 0.02749039 after 10^4
  // steps). The CPU compiles with -ffp-contract=off and holds the two to the bit
  // (tests/test_simd.cpp), and so must a bitwise build's GPU. The bounded orbits agree within the
  // GPU tolerances, and the wild orbit freezes near the same step in both.
  Case per_step = c;
  per_step.bursts = false;
  for (const Precision prec : {Precision::kDouble, Precision::kFloat}) {
    SCOPED_TRACE(prec == Precision::kDouble ? "GPU bursts vs per-step, FP64" : "FP32");
    expect_agree_or_identical(run_engine(c, bounded, prec, BackendKind::kCuda),
                              run_engine(per_step, bounded, prec, BackendKind::kCuda), bounded,
                              prec == Precision::kDouble ? kFp64 : kFp32);
    const Outcome b = run_engine(c, one, prec, BackendKind::kCuda);
    const Outcome p = run_engine(per_step, one, prec, BackendKind::kCuda);
    EXPECT_EQ(b.final.status[0], kStatusNonFinite);
    EXPECT_EQ(p.final.status[0], kStatusNonFinite);
    EXPECT_LE(std::abs(b.final.step[0] - p.final.step[0]), 1);
    if (kBitwise) expect_identical(b, p);
  }
}

// A section, an escape radius and H at every step (the section survey's default): the GPU runs
// event bursts (kernels/driver/advance.hpp), and a burst with a crossing or an escape in it is
// undone and retaken step by step. Against per-step testing on the GPU itself: the same statuses,
// steps, crossings and hits, and the orbits to round-off (nvcc contracts the two loops' steps
// differently, as above; the CPU holds them to the bit, Simd.EventBurstsMatchPerStepTesting). Three
// slots per trajectory, so the bursts meet pauses on full buffers too; the escaping orbit leaves
// inside a burst.
TEST_F(CudaBackend, EventBurstsMatchPerStepTestingOnTheGpu) {
  const Case c = henon_heiles_case("verlet");
  Case per_step = c;
  per_step.bursts = false;
  const Ensemble ens = henon_heiles_ensemble();
  for (const Precision prec : {Precision::kDouble, Precision::kFloat}) {
    SCOPED_TRACE(prec == Precision::kDouble ? "GPU event bursts vs per-step, FP64" : "FP32");
    const Outcome b = run_engine(c, ens, prec, BackendKind::kCuda);
    const Outcome p = run_engine(per_step, ens, prec, BackendKind::kCuda);
    expect_agree_or_identical(b, p, ens, prec == Precision::kDouble ? kFp64 : kFp32);
    EXPECT_EQ(b.final.status[std::size_t(ens.escaping)], kStatusEscaped);
  }
}

// The section on (so no bursts: every step between checks is tested for non-finite values) and H
// every 5 steps: the everyday GPU path with conservation_every > 1. Orbits, hits and energy maxima
// agree with the CPU as with a check every step. Written after ptxas miscompiled the one-lane
// failure test of this path, freezing every trajectory at its first step
// (kernels/driver/events.hpp, failed_lanes).
TEST_F(CudaBackend, SectionWithChecksEveryKStepsMatchesCpu) {
  Case c = henon_heiles_case("verlet");
  c.conservation_every = 5;
  compare_backends(c, henon_heiles_ensemble(), true);
}

// The implicit and constrained integrators: the same fixed-iteration Newton on both backends, so
// FP64 agrees to round-off as for the explicit ones (the Newton solves converge to round-off with
// the default iteration counts; tolerances as above).

/// One GPU comparison per implicit scenario (FP32 too where the orbits stay regular enough).
class CudaBackendImplicit : public CudaBackend,
                            public ::testing::WithParamInterface<std::string> {};

TEST_P(CudaBackendImplicit, MatchesCpu) {
  const Scenario s = implicit_scenario(GetParam());
  compare_backends(s.c, s.ens, s.with_fp32, s.fp32_scale);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, CudaBackendImplicit, ::testing::ValuesIn([] {
                           std::vector<std::string> names;
                           for (const Scenario& s : implicit_scenarios()) names.push_back(s.name);
                           return names;
                         }()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           std::string n;
                           for (const char ch : param_info.param)
                             if (std::isalnum(static_cast<unsigned char>(ch))) n += ch;
                           return n;
                         });

// Tangent maps: the same dual-number step on both backends. The defects are round-off on both
// (compared against a bound, not each other); the indicators are smooth functions of the
// trajectory and its partials, which agree to ~1e-12 over these 10^4 steps of mostly regular
// orbits, so 1e-6 relative leaves ample room for FMA contraction on the GPU.
TEST_F(CudaBackend, TangentDiagnosticsMatchCpu) {
  for (const char* integrator : {"verlet", "midpoint"}) {
    Case c = henon_heiles_case(integrator);
    c.tangent = true;
    const Ensemble ens = henon_heiles_ensemble();
    const Outcome cpu = run_engine(c, ens, Precision::kDouble, BackendKind::kCpu);
    const Outcome gpu = run_engine(c, ens, Precision::kDouble, BackendKind::kCuda);
    expect_agree_or_identical(gpu, cpu, ens, kFp64);
    const std::size_t n = std::size_t(ens.n);
    ASSERT_EQ(gpu.final.tangent_out.size(), cpu.final.tangent_out.size());
    ASSERT_EQ(cpu.final.tangent_out.size(), n * vigor::kernels::kTangentOutCount);
    for (std::size_t i = 0; i < n; ++i) {
      if (cpu.final.status[i] != vigor::kernels::kStatusOk) continue;
      auto at = [&](const Outcome& o, int slot) { return o.final.tangent_out[slot * n + i]; };
      EXPECT_LT(at(gpu, vigor::kernels::kOutDefectRel), 1e-12) << integrator << " " << i;
      for (int slot : {vigor::kernels::kOutLyapunov, vigor::kernels::kOutMegno,
                       vigor::kernels::kOutSali, vigor::kernels::kOutGali2})
        EXPECT_TRUE(close(at(gpu, slot), at(cpu, slot), 1e-6))
            << integrator << " trajectory " << i << " slot " << slot << ": " << at(gpu, slot)
            << " vs " << at(cpu, slot);
    }
  }
}

TEST_F(CudaBackend, DeviceNameNamesTheArchitecture) {
  const Case c = henon_heiles_case("verlet");
  const auto engine = make_case_engine(c, Precision::kDouble, 1, BackendKind::kCuda);
  EXPECT_EQ(engine->backend_name(), "cuda");
  EXPECT_NE(engine->device_name().find("(sm_"), std::string::npos) << engine->device_name();
}

// Runs everywhere: the tolerances above are not tuned to pass by accident. On the CPU, FP32 must
// track FP64 within the FP32 tolerance the GPU test uses (the GPU's FP32 differs from the CPU's
// FP32 only by FMA contraction, far below it), and the scenarios must be meaningful.
TEST(CudaBackendHarness, CpuFloatTracksCpuDoubleWithinTheGpuTolerance) {
  for (const std::string integ : {"verlet", "yoshida4", "rk4"}) {
    SCOPED_TRACE(integ);
    const Case c = henon_heiles_case(integ);
    const Ensemble ens = henon_heiles_ensemble();
    const Outcome dbl = run_engine(c, ens, Precision::kDouble, BackendKind::kCpu);
    expect_meaningful(dbl, ens, c);
    const Outcome flt = run_engine(c, ens, Precision::kFloat, BackendKind::kCpu);
    expect_agree(flt, dbl, ens, kFp32);
  }
  // The same for every implicit scenario the GPU compares in FP32 too, each with its own scale.
  for (const Scenario& sc : implicit_scenarios()) {
    if (!sc.with_fp32) continue;
    SCOPED_TRACE(sc.name);
    const Outcome dbl = run_engine(sc.c, sc.ens, Precision::kDouble, BackendKind::kCpu);
    const Outcome flt = run_engine(sc.c, sc.ens, Precision::kFloat, BackendKind::kCpu);
    expect_agree(flt, dbl, sc.ens, fp32_tolerance(sc.fp32_scale));
  }
}

// Runs everywhere: every implicit scenario above is meaningful on the CPU (enough crossings, all
// trajectories finish with status ok), so a GPU run compares something real.
TEST(CudaBackendHarness, ImplicitScenariosAreMeaningfulOnTheCpu) {
  for (const Scenario& sc : implicit_scenarios()) {
    SCOPED_TRACE(sc.name);
    const Outcome cpu = run_engine(sc.c, sc.ens, Precision::kDouble, BackendKind::kCpu);
    expect_meaningful(cpu, sc.ens, sc.c);
  }
}

// Runs everywhere: without a device, asking for CUDA is a clear error and auto picks the CPU.
TEST(CudaBackendAvailability, NoDeviceMeansClearErrorAndCpuForAuto) {
  const Case c = henon_heiles_case("verlet");
  const EngineSpec r = make_spec(c, Precision::kDouble, 1);
  if (cuda_device_count() > 0) {
    EXPECT_EQ(resolve_backend(BackendKind::kAuto), BackendKind::kCuda);
    EXPECT_TRUE(cuda_unavailable_reason().empty());
    EXPECT_NO_THROW((void)make_engine(r.integration, r.resources, BackendKind::kCuda));
    return;
  }
  EXPECT_FALSE(gpu_required()) << "VIGOR_REQUIRE_GPU=1 but no usable CUDA device: "
                               << cuda_unavailable_reason();
  EXPECT_EQ(resolve_backend(BackendKind::kAuto), BackendKind::kCpu);
  EXPECT_EQ(resolve_backend(BackendKind::kCpu), BackendKind::kCpu);
  const std::string why = cuda_unavailable_reason();
  EXPECT_FALSE(why.empty());
  try {
    (void)make_engine(r.integration, r.resources, BackendKind::kCuda);
    ADD_FAILURE() << "make_engine(kCuda) did not throw without a device";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("CUDA"), std::string::npos) << msg;
    EXPECT_NE(msg.find(why), std::string::npos) << "the message should say why: " << msg;
  }
  // The CPU backend is unaffected.
  EXPECT_NO_THROW((void)make_engine(r.integration, r.resources, BackendKind::kCpu));
}
