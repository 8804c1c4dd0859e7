// The CPU backend's SIMD path (blocks of trajectories in vector lanes, kernels/simd/) against the
// scalar per-trajectory driver: same states, statuses, counters and hits, bit for bit (the lanes'
// arithmetic is the scalar path's, sin, cos, exp and log included: vigor's own on both).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "engine_hooks.hpp"
#include "engine_runs.hpp"
#include "host/backends/cpu_engine.hpp"
#include "host/backends/engine_factory.hpp"
#include "host/backends/registry.hpp"
#include "host/job/job.hpp"
#include "host/output/hits.hpp"
#include "host/run/run.hpp"
#include "kernels/driver/deferred_crossings.hpp"
#include "kernels/driver/lane_driver.hpp"
#include "kernels/driver/lanes.hpp"
#include "kernels/integrators/midpoint.hpp"
#include "kernels/integrators/rk4.hpp"
#include "kernels/integrators/stormer_verlet.hpp"
#include "kernels/integrators/yoshida4.hpp"
#include "kernels/simd/pack.hpp"
#include "models/henon_heiles.hpp"

using namespace vigor::host;
namespace vk = vigor::kernels;

namespace {

using Outcome = vigor_test::EngineRun;
using vigor_test::expect_identical;
using vigor_test::per_trajectory;

/// CPU engines with the driver's event bursts, which runs never build (CpuEngine's kEventBursts):
/// Hénon–Heiles with the integrators of Simd.EventBurstsMatchPerStepTesting.
template <class M, class I, class Real>
using EventBurstCpuEngine = CpuEngine<M, I, Real, true>;

static_assert(EventBurstCpuEngine<vigor::models::HenonHeiles<double>, vk::StormerVerlet<double>,
                                  double>::Lanes::kEventBursts &&
                  !CpuEngine<vigor::models::HenonHeiles<double>, vk::StormerVerlet<double>,
                             double>::Lanes::kEventBursts,
              "the tests' engines have event bursts, the runs' do not");

/// An explicit pair runs its bursting segments in blocks of more sub-blocks, and each of its two
/// block types is compiled without what it never runs: the per-step blocks without quiet bursts,
/// the burst blocks without sections, escapes and event bursts (CpuEngine::kBurstBlocks). An
/// implicit pair has one block type, with all of it. Simd.BurstsBetweenChecksFreezeLikePerStep-
/// Testing and LaneIdentity hold both block types to the scalar path, which has everything.
using VerletEngine =
    CpuEngine<vigor::models::HenonHeiles<double>, vk::StormerVerlet<double>, double, true>;
using MidpointEngine =
    CpuEngine<vigor::models::HenonHeiles<double>, vk::Midpoint<double>, double, true>;
template <class E, class L>
using EngineDriver =
    vk::LaneDriver<L, false, typename E::ModelOnLanes, vigor::models::HenonHeiles<double>,
                   typename E::StepOnLanes, typename E::StepOnLanes, typename E::StepOnLanes>;
using VerletPerStep = EngineDriver<VerletEngine, VerletEngine::Lanes>;
using VerletBursts = EngineDriver<VerletEngine, VerletEngine::BurstLanes>;
static_assert(VerletEngine::kBurstBlocks && !VerletPerStep::kQuietBursts &&
                  VerletPerStep::kEventBursts && VerletPerStep::kSegmentEvents &&
                  VerletBursts::kQuietBursts && !VerletBursts::kEventBursts &&
                  !VerletBursts::kSegmentEvents &&
                  std::is_same_v<VerletBursts::Crossings, vk::NoCrossings>,
              "an explicit pair's block types each leave out what the other runs");
static_assert(!MidpointEngine::kBurstBlocks &&
                  std::is_same_v<MidpointEngine::Lanes, MidpointEngine::BurstLanes> &&
                  EngineDriver<MidpointEngine, MidpointEngine::Lanes>::kSegmentEvents,
              "an implicit pair has one block type, with sections and escapes");

/// The burst blocks take bursts and single steps through one loop (Loop::burst_or_one_step); one
/// lane, on the CPU and as a GPU thread, keeps the two apart (kernels/driver/lane_driver.hpp).
template <class L>
using VerletDriver =
    vk::LaneDriver<L, false, vigor::models::HenonHeiles<double>, vigor::models::HenonHeiles<double>,
                   vk::StormerVerlet<double>, vk::StormerVerlet<double>, vk::StormerVerlet<double>>;
static_assert(VerletBursts::kOneStepLoop && !VerletPerStep::kOneStepLoop &&
                  !VerletDriver<vk::ScalarLanes<double>>::kOneStepLoop &&
                  !VerletDriver<vk::DeferredLanes<double>>::kOneStepLoop,
              "one loop in the burst blocks only");

std::unique_ptr<Engine> event_burst_engine(const Integration& s, const EngineResources& r) {
  auto e = make_engine_of<EventBurstCpuEngine, vigor::models::HenonHeiles, vk::StormerVerlet,
                          vk::Yoshida4, vk::RungeKutta4>(s, r);
  if (!e) throw std::invalid_argument("no event-burst engine for integrator " + s.integrator);
  return e;
}

/// event_burst > 0: an engine with event bursts of that many steps (event_burst_engine).
Outcome run(const std::string& text, bool simd, std::size_t hit_budget = std::size_t(64) << 20,
            bool bursts = true, int event_burst = 0) {
  const Job job = parse_job(text);
  EngineResources r = engine_resources(RunOptions{});
  r.hit_buffer_bytes = hit_budget;
  const vigor_test::ScopedEngineHooks hooks(/*scalar_lanes=*/!simd, /*per_step=*/!bursts,
                                            event_burst);
  auto e = event_burst > 0 ? event_burst_engine(job.integration, r)
                           : make_engine(job.integration, r, BackendKind::kCpu);
  return vigor_test::run_engine(*e, job);
}

// 37 trajectories: not a multiple of any lane width, so the scalar tail runs too.
const char* kHenonHeiles = R"({
  "model": {"name": "henon_heiles"}, "integrator": {"name": "INTEGRATOR", "dt": 0.01},
  "steps": 5000, "segment_steps": 1500, "precision": "PRECISION",
  "ensemble": {"random_box": {"lo": [-0.05, -0.3, 0.2, -0.3], "hi": [0.05, 0.4, 0.65, 0.3],
                              "count": 37, "seed": 3}},
  "section": {"coordinate": "q0", "direction": "DIRECTION"},
  "escape_radius": 2.0, "output": {"dir": "unused"}})";

std::string with(std::string s, const std::string& key, const std::string& value) {
  s.replace(s.find(key), key.size(), value);
  return s;
}

}  // namespace

TEST(Simd, LaneWidthFollowsTheTarget) {
  // AVX-512 machines give 8 doubles / 16 floats; the scalar fallback would give 1 and lose the
  // point of the backend, so a width below 2 is a build problem.
  EXPECT_GE(vk::native_lanes<double>(), 2);
  EXPECT_EQ(vk::native_lanes<float>(), 2 * vk::native_lanes<double>());
  const Outcome o =
      run(with(with(with(kHenonHeiles, "INTEGRATOR", "verlet"), "PRECISION", "double"), "DIRECTION",
               "up"),
          true);
  EXPECT_EQ(o.lanes, vk::block_lanes<double>());
}

TEST(Simd, HenonHeilesBitwiseEqualToScalarForEveryPolynomialIntegrator) {
  // Some of these orbits lie above the escape energy 1/6 and escape (status 2), others stay: lanes
  // stop at different steps inside one block.
  for (const char* integ :
       {"verlet", "yoshida4", "yoshida6", "blanes_moan6", "kahan_li8", "sofspa10", "rk4",
        "symplectic_euler_a", "symplectic_euler_b", "explicit_euler", "newmark"}) {
    for (const char* prec : {"double", "float"}) {
      for (const char* dir : {"up", "both"}) {
        SCOPED_TRACE(std::string(integ) + " " + prec + " " + dir);
        const std::string job = with(
            with(with(kHenonHeiles, "INTEGRATOR", integ), "PRECISION", prec), "DIRECTION", dir);
        const Outcome simd = run(job, true);
        const Outcome scalar = run(job, false);
        expect_identical(simd, scalar, 37);
        if (std::string(integ) == "verlet" && std::string(prec) == "double") {
          int escaped = 0, ok = 0;
          for (auto st : simd.final.status) (st == 2 ? escaped : ok) += 1;
          EXPECT_GT(escaped, 0);
          EXPECT_GT(ok, 0);
          EXPECT_GT(simd.hits.size(), 100u);
        }
      }
    }
  }
}

TEST(Simd, PausedLanesResumeExactly) {
  // A one-slot buffer pauses every lane at each crossing; lanes of one block then run at
  // different step counts.
  const std::string job = with(
      with(with(kHenonHeiles, "INTEGRATOR", "verlet"), "PRECISION", "double"), "DIRECTION", "up");
  expect_identical(run(job, true, 1), run(job, false), 37);
}

TEST(Simd, CrossingsPastTheLimitAreCountedLikeTheScalarPath) {
  // max_crossings = 3: later crossings are counted but neither located nor written; the block
  // driver claims hit slots when it finds a crossing and locates the claimed ones later, in
  // batches, so both the counters and the three recorded hits must still match the scalar path.
  std::string job = with(with(with(kHenonHeiles, "INTEGRATOR", "verlet"), "PRECISION", "double"),
                         "DIRECTION", "both");
  job = with(job, R"("direction": "both")", R"("direction": "both", "max_crossings": 3)");
  const Outcome simd = run(job, true);
  expect_identical(simd, run(job, false), 37);
  int capped = 0;
  for (std::size_t i = 0; i < simd.final.recorded.size(); ++i) {
    EXPECT_LE(simd.final.recorded[i], 3);
    capped += simd.final.crossings[i] > simd.final.recorded[i];
  }
  EXPECT_GT(capped, 10);
}

TEST(Simd, ForcedModelCrossingsMatchTheScalarPath) {
  // The driven pendulum's field depends on time: the batched location must evaluate it at each
  // queued crossing's own step time (a wrong step time would move a hit by ~h * A = 0.05). With
  // vigor's own sin and cos (kernels/core/trig.hpp) the lanes equal the scalar path bit for bit.
  const std::string job = R"({
    "model": {"name": "driven_pendulum"}, "integrator": {"name": "midpoint", "dt": 0.05},
    "steps": 600, "segment_steps": 250,
    "ensemble": {"random_box": {"lo": [-3, -2], "hi": [3, 2], "count": 23, "seed": 5}},
    "section": {"coordinate": "p0", "direction": "both"}, "output": {"dir": "unused"}})";
  const Outcome simd = run(job, true);
  const Outcome scalar = run(job, false);
  EXPECT_GT(simd.lanes, 1);
  expect_identical(simd, scalar, 23);
  EXPECT_GT(simd.hits.size(), 100u);
}

TEST(Simd, ConstrainedModelCrossingsMatchTheScalarPathAndLieOnTheManifold) {
  // Constrained models locate a pack's queued crossings one by one on the scalar model
  // (PendingCrossings::locate_one_by_one). GCC 12.2 at -O2 once dropped that call in FP32, so
  // the hits' slots were counted but never written: the results held whatever the buffer held.
  // Each hit must equal the scalar path's and lie on the plane (x = 0 exactly: the locator pins
  // it) and on the rod's sphere |q| = 1 to RATTLE's Newton residual, ~10 ulp of the precision.
  for (const std::string precision : {"float", "double"})
    for (const std::string integrator : {"rattle", "shake", "midpoint"}) {
      SCOPED_TRACE(integrator + " / " + precision);
      const std::string job = R"({
        "model": {"name": "pendulum_cartesian"}, "integrator": {"name": ")" +
                              integrator +
                              R"(", "dt": 0.01},
        "steps": 3000, "segment_steps": 1000, "precision": ")" +
                              precision + R"(",
        "ensemble": {"states": [[1, 0, 0, 0.5], [0, -1, 1.0, 0], [0.6, -0.8, 0.4, 0.3]]},
        "section": {"coordinate": "q0", "direction": "both"}, "output": {"dir": "unused"}})";
      const Outcome simd = run(job, true);
      EXPECT_GT(simd.lanes, 1);
      expect_identical(simd, run(job, false), 3);
      ASSERT_GE(simd.hits.size(), 12u);
      const double tol = precision == "float" ? 1e-5 : 1e-12;
      for (std::size_t k = 0; k < simd.hits.size(); ++k) {
        const double* h = &simd.hits.values[k * 5];  // t, x, y, p_x, p_y
        EXPECT_GT(h[0], 0.0);
        EXPECT_LE(h[0], 30.0);
        EXPECT_EQ(h[1], 0.0);
        EXPECT_NEAR(std::hypot(h[1], h[2]), 1.0, tol) << "hit " << k;
      }
    }
}

TEST(Simd, NonFiniteLanesFreezeLikeTheScalarPath) {
  // Hénon–Heiles far above the escape energy without an escape radius: orbits run off to
  // infinity and produce non-finite energies at different steps.
  const std::string job = R"({
    "model": {"name": "henon_heiles"}, "integrator": {"name": "verlet", "dt": 0.05}, "steps": 4000,
    "ensemble": {"random_box": {"lo": [0, -1, 0.5, 0.5], "hi": [0, 1, 1.5, 1.5], "count": 21}},
    "output": {"dir": "unused"}})";
  const Outcome simd = run(job, true);
  expect_identical(simd, run(job, false), 21);
  int frozen = 0;
  for (auto st : simd.final.status) frozen += st == 1;
  EXPECT_GT(frozen, 0);
}

TEST(Simd, BurstsBetweenChecksFreezeLikePerStepTesting) {
  // With no section and no escape radius, both drivers run the steps between conservation checks
  // as bursts with no test and validate the end states; a burst that ends non-finite is undone
  // and retaken step by step. Orbits far above the escape energy run off to infinity at different
  // steps: with bursts, each must freeze at the same step and state as with per-step testing
  // (EngineTestHooks::per_step), on the scalar path (the GPU's driver) and on the block path,
  // for every explicit integrator (each updates q and p additively, which is what makes the
  // end-of-burst test enough). conservation_every = 5 ends most bursts at a check; 400 ends some
  // at the segment's end (1500 steps, not a multiple of 400), where the state itself is tested.
  // Bursts run in blocks of more sub-blocks than per-step testing (kernels::burst_block_lanes):
  // 70 trajectories are two full burst blocks and a partial one in FP64 (32 lanes with AVX-512),
  // one and a partial one in FP32 (64), with lanes frozen in several sub-blocks.
  constexpr int kCount = 70;
  const std::string wild = R"({
    "model": {"name": "henon_heiles"}, "integrator": {"name": "INTEGRATOR", "dt": 0.05},
    "steps": 4000, "segment_steps": 1500, "precision": "PRECISION",
    "ensemble": {"random_box": {"lo": [0, -1, 0.5, 0.5], "hi": [0, 1, 1.5, 1.5], "count": 70}},
    "diagnostics": {"conservation_every": EVERY}, "output": {"dir": "unused"}})";
  for (const char* integ :
       {"verlet", "yoshida4", "yoshida6", "blanes_moan6", "kahan_li8", "sofspa10", "rk4",
        "symplectic_euler_a", "symplectic_euler_b", "explicit_euler"}) {
    for (const char* prec : {"double", "float"}) {
      for (const char* every : {"5", "400"}) {
        SCOPED_TRACE(std::string(integ) + " " + prec + " every " + every);
        const std::string job =
            with(with(with(wild, "INTEGRATOR", integ), "PRECISION", prec), "EVERY", every);
        const Outcome per_step = run(job, false, std::size_t(64) << 20, false);
        const Outcome scalar = run(job, false);
        expect_identical(scalar, per_step, kCount);
        const Outcome blocks = run(job, true);
        const Outcome blocks_per_step = run(job, true, std::size_t(64) << 20, false);
        expect_identical(blocks, per_step, kCount);
        expect_identical(blocks_per_step, per_step, kCount);
        const bool fp64 = std::string(prec) == "double";
        EXPECT_EQ(blocks.lanes,
                  fp64 ? vk::burst_block_lanes<double>() : vk::burst_block_lanes<float>());
        EXPECT_EQ(blocks_per_step.lanes,
                  fp64 ? vk::block_lanes<double>() : vk::block_lanes<float>());
        int frozen = 0, ok = 0;
        for (auto st : scalar.final.status) (st == 1 ? frozen : ok) += 1;
        EXPECT_GT(frozen, 10);
        EXPECT_EQ(ok + frozen, kCount);
      }
    }
  }
}

TEST(Simd, EventBurstsMatchPerStepTesting) {
  // With a plane section, an escape radius or H checked every step, the driver runs up to
  // sp.event_burst steps with those tests folded into one flag per lane and retakes a flagged
  // burst step by step (kernels/driver/advance.hpp). The GPU runs them by default; the CPU's
  // engines are built without them (its SIMD blocks are faster per step), so this test builds
  // its own (event_burst_engine) to pin the driver's bursts on the CPU's lanes. Everything
  // must equal per-step testing (EngineTestHooks::per_step) bit for bit, with bursts of 8 and 3
  // steps, on the scalar path (the GPU's driver) and on the block path: the located crossings,
  // escapes, orbits frozen on a non-finite state, the maxima, the check schedule (every 7 steps:
  // bursts hold checks inside), and pauses on a one-slot buffer. The box mixes bounded orbits
  // (crossings every few hundred steps) with orbits above the escape energy, which leave through
  // the radius or, without one, run off to infinity.
  const std::string wild = R"({
    "model": {"name": "henon_heiles"}, "integrator": {"name": "INTEGRATOR", "dt": 0.04},
    "steps": 3000, "segment_steps": 1100, "precision": "PRECISION",
    "ensemble": {"random_box": {"lo": [-0.1, -0.5, -0.4, -0.4], "hi": [0.1, 0.7, 1.0, 1.0],
                                "count": 45, "seed": 11}},
    EVENTS, "output": {"dir": "unused"}})";
  const char* events[] = {
      R"("section": {"coordinate": "q0", "direction": "both"}, "escape_radius": 2.0)",
      R"("section": {"coordinate": "q1", "direction": "up"})", R"("escape_radius": 3.0)",
      R"("diagnostics": {"conservation_every": 1})",
      R"("section": {"coordinate": "p0", "direction": "down"},
         "diagnostics": {"conservation_every": 7})"};
  for (const char* integ : {"verlet", "yoshida4", "rk4"}) {
    for (const char* prec : {"double", "float"}) {
      for (const char* ev : events) {
        const std::string job =
            with(with(with(wild, "INTEGRATOR", integ), "PRECISION", prec), "EVENTS", ev);
        for (const std::size_t budget : {std::size_t(64) << 20, std::size_t(1)}) {
          SCOPED_TRACE(std::string(integ) + " " + prec + " " + ev + " budget " +
                       std::to_string(budget));
          const Outcome per_step = run(job, false, budget, false);
          for (const int burst : {8, 3}) {
            expect_identical(run(job, false, budget, true, burst), per_step, 45);
            expect_identical(run(job, true, budget, true, burst), per_step, 45);
          }
          expect_identical(run(job, true, budget, false), per_step, 45);
          // The job has events to retake: crossings or stops.
          std::int64_t events_seen = 0;
          for (std::size_t i = 0; i < 45; ++i)
            events_seen += per_step.final.crossings[i] + (per_step.final.status[i] != 0);
          EXPECT_GT(events_seen, 20);
        }
      }
    }
  }
}

TEST(Simd, ConservationChecksEveryKStepsMatchTheScalarPath) {
  // diagnostics.conservation_every = 7 divides neither the segment (1500 steps) nor the run:
  // checks fall on multiples of each trajectory's own step count. A one-slot buffer pauses lanes
  // at every crossing, so the lanes of a block reach their checks at different iterations and
  // the block driver must fold H only into the lanes that are due.
  const std::string hh = with(
      with(with(kHenonHeiles, "INTEGRATOR", "verlet"), "PRECISION", "double"), "DIRECTION", "up");
  const std::string job = with(hh, R"("escape_radius")",
                               R"("diagnostics": {"conservation_every": 7}, "escape_radius")");
  for (const std::size_t budget : {std::size_t(64) << 20, std::size_t(1)}) {
    SCOPED_TRACE(budget);
    expect_identical(run(job, true, budget), run(job, false, budget), 37);
  }
  // Orbits that run off to infinity: between checks the state test freezes them, on both paths
  // at the same step and state.
  const std::string wild = R"({
    "model": {"name": "henon_heiles"}, "integrator": {"name": "verlet", "dt": 0.05}, "steps": 4000,
    "ensemble": {"random_box": {"lo": [0, -1, 0.5, 0.5], "hi": [0, 1, 1.5, 1.5], "count": 21}},
    "diagnostics": {"conservation_every": 5}, "output": {"dir": "unused"}})";
  const Outcome simd = run(wild, true);
  expect_identical(simd, run(wild, false), 21);
  int frozen = 0;
  for (auto st : simd.final.status) frozen += st == 1;
  EXPECT_GT(frozen, 0);
  // A model with a momentum map (J_z) and an implicit, constrained step: its drift is folded at
  // the same checks as H. The states start on the sphere |q| = 1 with p tangent to it.
  std::string rows;
  for (int k = 0; k < 11; ++k) {
    const double th = 0.3 + 0.1 * k, v = 0.2 + 0.05 * k;
    char row[160];
    std::snprintf(row, sizeof row, "%s[%.17g,0,%.17g,0,%.17g,0]", k ? "," : "", std::sin(th),
                  -std::cos(th), v);
    rows += row;
  }
  const std::string sph = R"({
    "model": {"name": "spherical_pendulum"}, "integrator": {"name": "rattle", "dt": 0.01},
    "steps": 2000, "segment_steps": 700, "ensemble": {"states": [ROWS]},
    "section": {"coordinate": "q0", "direction": "up"},
    "diagnostics": {"conservation_every": 3}, "output": {"dir": "unused"}})";
  for (const std::size_t budget : {std::size_t(64) << 20, std::size_t(1)}) {
    SCOPED_TRACE(budget);
    const Outcome a = run(with(sph, "ROWS", rows), true, budget);
    const Outcome b = run(with(sph, "ROWS", rows), false, budget);
    expect_identical(a, b, 11);
    EXPECT_EQ(a.final.momentum_error, b.final.momentum_error);
    EXPECT_GT(a.hits.size(), 11u);  // about three up-crossings per orbit in 20 time units
  }
}

TEST(Simd, ConservationEveryChangesTheMonitorNotTheOrbit) {
  // Checking H less often must leave every orbit, crossing and status as it was, give maxima no
  // larger than the every-step ones, not depend on how the run is cut into segments, and with
  // K = steps report exactly |H(end) - H(0)|.
  const std::string hh = with(
      with(with(kHenonHeiles, "INTEGRATOR", "verlet"), "PRECISION", "double"), "DIRECTION", "up");
  const auto every = [&](const std::string& k, const std::string& seg) {
    return with(with(hh, R"("escape_radius")",
                     R"("diagnostics": {"conservation_every": )" + k + R"(}, "escape_radius")"),
                R"("segment_steps": 1500)", R"("segment_steps": )" + seg);
  };
  for (const bool simd : {true, false}) {
    SCOPED_TRACE(simd);
    const Outcome k1 = run(every("1", "1500"), simd);
    const Outcome k7 = run(every("7", "1500"), simd);
    const Outcome k7b = run(every("7", "999"), simd);
    const Outcome kn = run(every("5000", "1500"), simd);
    for (const Outcome* o : {&k7, &k7b, &kn}) {
      EXPECT_EQ(0, std::memcmp(o->final.state.data(), k1.final.state.data(),
                               k1.final.state.size() * sizeof(double)));
      EXPECT_EQ(o->final.step, k1.final.step);
      EXPECT_EQ(o->final.status, k1.final.status);
      EXPECT_EQ(o->final.crossings, k1.final.crossings);
      EXPECT_EQ(per_trajectory(o->hits, 37), per_trajectory(k1.hits, 37));
    }
    EXPECT_EQ(k7.final.energy_error, k7b.final.energy_error);
    int fewer = 0, checked_at_end = 0;
    for (std::size_t i = 0; i < 37; ++i) {
      EXPECT_LE(k7.final.energy_error[i], k1.final.energy_error[i]) << i;
      EXPECT_LE(kn.final.energy_error[i], k1.final.energy_error[i]) << i;
      fewer += k7.final.energy_error[i] < k1.final.energy_error[i];
      if (kn.final.step[i] != 5000) {
        // Stopped (escaped) before the only check: never evaluated.
        EXPECT_EQ(kn.final.energy_error[i], 0.0) << i;
        continue;
      }
      // H of the final state, evaluated here (a = 1, b = -1/3). Each H is a sum of terms of
      // size <= 0.2 rounded a dozen times: |error| < 12 * 2^-53 * 0.2 ~ 3e-16 per evaluation.
      const auto H = [](const double* x, std::size_t n, std::size_t j) {
        const double q0 = x[j], q1 = x[n + j], p0 = x[2 * n + j], p1 = x[3 * n + j];
        return 0.5 * (p0 * p0 + p1 * p1) + 0.5 * (q0 * q0 + q1 * q1) + q0 * q0 * q1 -
               q1 * q1 * q1 / 3.0;
      };
      const double h_end = H(kn.final.state.data(), 37, i);
      EXPECT_NEAR(kn.final.energy_error[i], std::abs(h_end - kn.final.energy0[i]), 1e-15) << i;
      ++checked_at_end;
    }
    EXPECT_GT(fewer, 20);  // the every-step max mostly falls between the multiples of 7
    EXPECT_GT(checked_at_end, 10);
  }
}

TEST(Simd, KeplerAndSolarSystemBitwiseEqualToScalar) {
  // sqrt and division are correctly rounded in packed form too: identical results.
  const std::string kepler = R"({
    "model": {"name": "kepler"}, "integrator": {"name": "yoshida4", "dt": 0.01}, "steps": 3000,
    "ensemble": {"random_box": {"lo": [0.6, -0.1, -0.1, 1.2], "hi": [0.8, 0.1, 0.1, 1.5],
                                "count": 19}},
    "section": {"coordinate": "q1", "direction": "up"}, "output": {"dir": "unused"}})";
  expect_identical(run(kepler, true), run(kepler, false), 19);
  const std::string solar = R"({
    "model": {"name": "outer_solar_system"}, "integrator": {"name": "verlet", "dt": 10},
    "steps": 300, "ensemble": {"states": [STATES]}, "output": {"dir": "unused"}})";
  // Nine copies of a perturbed HLW-like configuration (one block of 8 plus the tail).
  std::string rows;
  for (int k = 0; k < 9; ++k) {
    std::string r =
        "[0,0,0, -3.5,-3.8,-1.55, 9.07,-3.04,-1.64, 8.31,-16.29,-7.25, 11.47,-25.72,"
        "-10.81, -15.53,-25.22,-3.19, 0,0,0, 5.4e-6,-3.9e-6,-1.8e-6, 4.8e-7,1.38e-6,"
        "5.5e-7, 1.55e-7,6e-8,2.4e-8, 1.5e-7,5.9e-8,2.05e-8, 2.1e-11,-1.3e-11,-1e-11]";
    r.replace(r.find("-3.5"), 4, std::to_string(-3.5 - 0.01 * k));
    rows += (k ? "," : "") + r;
  }
  expect_identical(run(with(solar, "STATES", rows), true), run(with(solar, "STATES", rows), false),
                   9);
}

TEST(Simd, PendulumLanesMatchTheScalarPathBitForBit) {
  // sin and cos are vigor's own (kernels/core/trig.hpp): a lane performs the scalar function's
  // operations, so 2000 Verlet steps of the pendulum agree bit for bit (with libmvec's packed
  // sin they had parted by ~1e-12). Rotating orbits (p up to 2) carry the angle through many
  // turns, so the reduction's quadrants are all exercised.
  const std::string job = R"({
    "model": {"name": "pendulum"}, "integrator": {"name": "verlet", "dt": 0.01}, "steps": 2000,
    "ensemble": {"box": {"lo": [-2.0, -2.0], "hi": [2.0, 2.0], "counts": [9, 5]}},
    "output": {"dir": "unused"}})";
  const Outcome simd = run(job, true);
  const Outcome scalar = run(job, false);
  EXPECT_GT(simd.lanes, 1);
  expect_identical(simd, scalar, 45);
}

namespace {

// Lane values that exercise every compare outcome: equal pairs, signed zeros, infinities, NaN.
template <class T>
std::vector<T> awkward_values() {
  const T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  return {T(0), -T(0), T(1), T(-1), T(0.5), inf, -inf, nan, T(1e-30), T(-2.5), T(3), T(1)};
}

template <class T, int W>
void check_lane_bits() {
  using P = vk::Pack<T, W>;
  const std::vector<T> v = awkward_values<T>();
  P a, b;
  // Lane l pairs v[l % m] with v[(3 l + 1) % m]: every value meets several partners.
  const int m = int(v.size());
  for (int l = 0; l < W; ++l) {
    a.set(l, v[std::size_t(l % m)]);
    b.set(l, v[std::size_t((3 * l + 1) % m)]);
  }
  for (int l = 0; l < W; ++l) {  // set/[] round trip, lane by lane, in every register
    const T x = v[std::size_t(l % m)];
    if (std::isnan(x))
      EXPECT_TRUE(std::isnan(a[l])) << l;
    else
      EXPECT_EQ(a[l], x) << l;
  }
  std::uint64_t lt = 0, le = 0, gt = 0, ge = 0, eq = 0, fin = 0;
  for (int l = 0; l < W; ++l) {
    const std::uint64_t bit = std::uint64_t(1) << l;
    if (a[l] < b[l]) lt |= bit;
    if (a[l] <= b[l]) le |= bit;
    if (a[l] > b[l]) gt |= bit;
    if (a[l] >= b[l]) ge |= bit;
    if (a[l] == b[l]) eq |= bit;
    if (std::isfinite(a[l])) fin |= bit;
  }
  EXPECT_EQ(vk::compare_bits<vk::Cmp::kLt>(a, b), lt);
  EXPECT_EQ(vk::compare_bits<vk::Cmp::kLe>(a, b), le);
  EXPECT_EQ(vk::compare_bits<vk::Cmp::kGt>(a, b), gt);
  EXPECT_EQ(vk::compare_bits<vk::Cmp::kGe>(a, b), ge);
  EXPECT_EQ(vk::compare_bits<vk::Cmp::kEq>(a, b), eq);
  EXPECT_EQ((a < b).bits(), lt);  // through a vector mask
  EXPECT_EQ(((a < b) | (a == b)).bits(), le);
  EXPECT_EQ(vk::finite_bits(a), fin);
  EXPECT_EQ(vk::finite_lanes(a).bits(), fin);
  std::vector<int> seen;
  vk::for_each_lane(lt, [&](int l) { seen.push_back(l); });
  ASSERT_EQ(int(seen.size()), __builtin_popcountll(lt));
  for (std::size_t k = 1; k < seen.size(); ++k) EXPECT_LT(seen[k - 1], seen[k]);
}

}  // namespace

TEST(Simd, LaneBitsMatchLaneByLaneCompares) {
  // The block driver's decisions (non-finite, crossing, escape, Newton) are these bits; a wrong
  // bit would freeze, stop or record the wrong trajectory.
  check_lane_bits<double, vk::native_lanes<double>()>();
  check_lane_bits<double, 2 * vk::native_lanes<double>()>();
  check_lane_bits<float, vk::native_lanes<float>()>();
  check_lane_bits<float, 2 * vk::native_lanes<float>()>();
  check_lane_bits<double, 2>();  // narrower than a register: the generic path
}

namespace {

/// The sub-block indices for_each_sub<B> passes, in order.
template <int B>
std::vector<int> sub_blocks_visited() {
  std::vector<int> seen;
  vk::for_each_sub<B>([&](auto bc) { seen.push_back(decltype(bc)::value); });
  return seen;
}

std::vector<int> zero_to(int n) {
  std::vector<int> v(n);
  for (int b = 0; b < n; ++b) v[b] = b;
  return v;
}

}  // namespace

TEST(Simd, EverySubBlockIsVisitedOnceInOrder) {
  // The driver steps sub-block b with for_each_sub: one missed or repeated would leave lanes
  // unstepped or step them twice. B reaches 32 with VIGOR_BURST_REGISTERS raised on a 2-lane
  // target (a block has at most 64 lanes), so a version that writes its calls out must go past 8.
  EXPECT_EQ(sub_blocks_visited<1>(), zero_to(1));
  EXPECT_EQ(sub_blocks_visited<2>(), zero_to(2));
  EXPECT_EQ(sub_blocks_visited<7>(), zero_to(7));
  EXPECT_EQ(sub_blocks_visited<8>(), zero_to(8));
  EXPECT_EQ(sub_blocks_visited<9>(), zero_to(9));
  EXPECT_EQ(sub_blocks_visited<17>(), zero_to(17));
  EXPECT_EQ(sub_blocks_visited<32>(), zero_to(32));
}
