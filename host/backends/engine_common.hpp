/// @file engine_common.hpp
/// @brief What the CPU and CUDA engines share: the model, the integrators and the kernels'
/// segment parameters made from an Integration (the one place SegmentParams are filled), and
/// unpacking drained hits. Host-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/backends/engine.hpp"
#include "host/backends/test_hooks.hpp"
#include "kernels/driver/segment.hpp"
#include "kernels/integrators/protocol.hpp"
#include "kernels/tangent.hpp"

namespace vigor::host {

/// Steps per event burst (kernels::SegmentParams::event_burst), per backend: a burst with an
/// event in it is taken twice, so the length trades the tests saved per step against the retaken
/// steps, and a block of lanes (a GPU warp, a CPU block) retakes when any of its lanes has an
/// event. Measured (docs/performance.md, "Events in bursts"): on a GPU 8 steps gain 6 % on the
/// section kernel and 33 % (16 steps) where H alone is checked every step; on the CPU's SIMD
/// blocks, whose per-step tests are lane masks already, every length was slower (-11 % at 8), so
/// the CPU engines are built without them (kernels::EventBurstLanes) and test every step; the
/// tests build CPU engines with them (CpuEngine's kEventBursts) to pin them to per-step testing.
inline constexpr int kGpuEventBurstSteps = 8;

/// The kernels' parameters of a segment of n trajectories of the integration, with `hit_capacity`
/// section-buffer slots each (end_step is set per launch); `bursts` false only for the tests'
/// per-step reference (EngineTestHooks::per_step).
template <class Real>
kernels::SegmentParams<Real> segment_params(const Integration& s, std::int64_t n, int hit_capacity,
                                            bool bursts = true) {
  kernels::SegmentParams<Real> p;
  p.n = n;
  p.h = Real(s.dt);
  p.section_kind = s.section.kind;
  p.section_coord = s.section.coordinate;
  p.section_direction = s.section.direction;
  p.section_value = Real(s.section.value);
  p.stroboscopic_every = s.section.every > 0 ? s.section.every : 1;
  p.max_recorded = s.section.max_crossings;
  p.hit_capacity = hit_capacity;
  p.escape_radius2 = s.escape_radius > 0 ? Real(s.escape_radius * s.escape_radius) : Real(-1);
  p.newton_tolerance = s.newton_tolerance > 0 ? Real(s.newton_tolerance) : Real(-1);
  p.conservation_every = s.conservation_every > 0 ? s.conservation_every : 1;
  p.bursts = bursts;
  return p;
}

/// The model, the integrator (plain and for the tangent-map step) and the segment parameters of
/// an engine for n trajectories.
template <class M, class I, class Real>
struct EngineSetup {
  static constexpr int kDim = kernels::StateOps<M, Real>::kDim;
  using TOps = kernels::TangentOps<M, Real>;
  /// Partials stored per trajectory when the tangent map is on.
  static constexpr int kPartials = TOps::kStored * TOps::K;
  /// The integrator of the tangent-map step (kernels::tangent_integrator_t).
  using TangentStep = kernels::tangent_integrator_t<I, M, Real>;
  M model;
  I integrator;
  TangentStep tangent_step;
  kernels::SegmentParams<Real> params;

  /// event_burst: the engine's steps per event burst (kGpuEventBurstSteps; 0 where its lanes have
  /// none); EngineTestHooks::event_burst overrides it.
  EngineSetup(const Integration& s, std::int64_t n, std::size_t hit_budget,
              const EngineTestHooks& hooks, int event_burst)
      : model(M::from_params(s.params.data())),
        integrator(I::from_options(s.options.data())),
        tangent_step(TangentStep::from_options(s.options.data())),
        params(segment_params<Real>(
            s, n, choose_hit_capacity(s.section, n, kDim, sizeof(Real), hit_budget),
            !hooks.per_step)) {
    // A compensated job gets the Compensated<I> engine (compiled on first use) and no other.
    if (s.compensated != kernels::integrator_compensated<I>)
      throw std::logic_error(std::string("engine of ") + I::kName +
                             (s.compensated ? " without" : " with") +
                             " compensated summation asked to run a job that sets "
                             "integrator.compensated to " +
                             (s.compensated ? "true" : "false"));
    params.event_burst = hooks.event_burst > 0 ? hooks.event_burst : event_burst;
    kernels::set_newton_iterations(integrator, s.newton_iterations);
    kernels::set_newton_iterations(tangent_step, s.newton_iterations);
  }
};

/// Write the hits of trajectory i (count of them, laid out [(c * cap + slot) * n + i]) to
/// trajectory[0 .. count) and values[0 .. count * (dim + 1)).
template <class Real>
void unpack_hits(const Real* hits, std::int64_t n, int cap, int dim, std::int64_t i, int count,
                 std::int64_t* trajectory, double* values) {
  for (int s = 0; s < count; ++s) {
    trajectory[s] = i;
    for (int c = 0; c <= dim; ++c) *values++ = double(hits[(std::int64_t(c) * cap + s) * n + i]);
  }
}

}  // namespace vigor::host
