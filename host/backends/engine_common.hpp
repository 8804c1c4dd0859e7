/// @file engine_common.hpp
/// @brief What the CPU and CUDA engines share: building the model, the integrator and the segment
/// parameters from a request, and unpacking drained hits. Host-only.
#pragma once

#include <cstdint>
#include <vector>

#include "host/engine.hpp"
#include "kernels/driver.hpp"

namespace vigor::host {

template <class M, class I, class Real>
struct EngineSetup {
  static constexpr int kDim = kernels::StateOps<M, Real>::kDim;
  using TOps = kernels::TangentOps<M, Real>;
  /// Partials stored per trajectory when the tangent map is on.
  static constexpr int kPartials = TOps::kStored * TOps::K;
  /// The integrator of the tangent-map step (kernels::tangent_integrator_t).
  using IntegratorD = kernels::tangent_integrator_t<I, M, Real>;
  M model;
  I integrator;
  IntegratorD integrator_d;
  kernels::SegmentParams<Real> params;

  EngineSetup(const EngineRequest& r, std::int64_t n, std::size_t budget)
      : model(M::from_params(r.params.data())),
        integrator(I::from_options(r.options.data())),
        integrator_d(IntegratorD::from_options(r.options.data())) {
    kernels::set_newton_iterations(integrator, r.newton_iterations);
    kernels::set_newton_iterations(integrator_d, r.newton_iterations);
    params.n = n;
    params.h = Real(r.dt);
    params.section_kind = r.section.kind;
    params.section_coord = r.section.coordinate;
    params.section_direction = r.section.direction;
    params.section_value = Real(r.section.value);
    params.stroboscopic_every = r.section.every > 0 ? r.section.every : 1;
    params.max_recorded = r.section.max_crossings;
    params.hit_capacity = choose_hit_capacity(r.section, n, kDim, sizeof(Real), budget);
    params.escape_radius2 =
        r.escape_radius > 0 ? Real(r.escape_radius * r.escape_radius) : Real(-1);
    params.newton_tolerance = r.newton_tolerance > 0 ? Real(r.newton_tolerance) : Real(-1);
    params.conservation_every = r.conservation_every > 0 ? r.conservation_every : 1;
    params.bursts = r.bursts;
  }
};

/// Write the hits of trajectory i (count of them, laid out [(c * cap + slot) * n + i]) to
/// trajectory[0 .. count) and values[0 .. count * (dim + 1)).
template <class Real>
void unpack_hits(const Real* hits, std::int64_t n, int cap, int dim, std::int64_t i, int count,
                 std::int64_t* trajectory, double* values) {
  for (int s = 0; s < count; ++s) {
    trajectory[s] = i;
    for (int c = 0; c <= dim; ++c)
      *values++ = double(hits[(std::int64_t(c) * cap + s) * n + i]);
  }
}

}  // namespace vigor::host
