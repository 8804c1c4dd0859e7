/// @file driver_arrays.hpp
/// @brief Host memory for the benchmarks that call the driver directly (bench/lane_shape,
/// bench/section_kernel): every per-trajectory array of kernels::EnsembleArrays that a segment
/// without tangent maps reads or writes, and the hit buffer for `capacity` hits per trajectory.
/// Header-only and free of host/, so that these programs build against any source tree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/driver/segment.hpp"

namespace vigor_bench_util {

template <class Real>
struct DriverArrays {
  std::vector<Real> state, energy0, energy_error, momentum0, momentum_error, newton_residual, hits;
  std::vector<std::int64_t> step, crossings, recorded;
  std::vector<std::int32_t> status, hit_count;

  /// n trajectories of dim state components (the model's momentum maps up to 8), zero-filled.
  DriverArrays(long n, int dim, int capacity = 0)
      : state(std::size_t(dim) * n),
        energy0(n),
        energy_error(n),
        momentum0(8 * std::size_t(n)),
        momentum_error(n),
        newton_residual(n),
        hits(std::size_t(dim + 1) * capacity * n),
        step(n),
        crossings(n),
        recorded(n),
        status(n),
        hit_count(n) {}

  vigor::kernels::EnsembleArrays<Real> view() {
    vigor::kernels::EnsembleArrays<Real> a;
    a.state = state.data();
    a.energy0 = energy0.data();
    a.energy_error = energy_error.data();
    a.momentum0 = momentum0.data();
    a.momentum_error = momentum_error.data();
    a.newton_residual = newton_residual.data();
    a.step = step.data();
    a.status = status.data();
    a.crossings = crossings.data();
    a.recorded = recorded.data();
    a.hit_count = hit_count.data();
    a.hits = hits.empty() ? nullptr : hits.data();
    return a;
  }
};

}  // namespace vigor_bench_util
