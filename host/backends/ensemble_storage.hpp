/// @file ensemble_storage.hpp
/// @brief The per-trajectory arrays of an ensemble, owned by one vector type (std::vector on the
/// host, thrust::device_vector on the device), and the kernels::EnsembleArrays view of them.
/// Host-only; one definition for both backends and the driver tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/driver.hpp"

namespace vigor::host {

/// Raw pointer to a vector's elements; specialised for thrust::device_vector in cuda_engine.cuh.
template <class V>
struct RawPointer {
  static auto get(V& v) { return v.data(); }
};

template <class Real, template <class...> class Vector>
struct EnsembleStorage {
  Vector<Real> state, energy0, energy_error, momentum0, momentum_error, newton_residual, hits;
  Vector<std::int64_t> step, crossings, recorded;
  Vector<std::int32_t> status, hit_count;
  Vector<Real> tangent, tangent_acc, tangent_out, state0;  ///< empty without tangent maps

  /// Size every array for n trajectories of `dim` components, `maps` momentum-map components and
  /// `capacity` hit slots each, and reset the per-trajectory counters (the state is left to the
  /// caller to fill).
  void allocate(std::int64_t n, int dim, int maps, int capacity) {
    const auto un = std::size_t(n);
    state.resize(un * std::size_t(dim));
    energy0.assign(un, Real(0));
    energy_error.assign(un, Real(0));
    momentum0.assign(un * std::size_t(maps), Real(0));
    momentum_error.assign(un, Real(0));
    newton_residual.assign(un, Real(0));
    step.assign(un, 0);
    status.assign(un, std::int32_t(kernels::kStatusOk));
    crossings.assign(un, 0);
    recorded.assign(un, 0);
    hit_count.assign(un, 0);
    hits.resize(std::size_t(capacity) * std::size_t(dim + 1) * un);
  }

  /// Size the tangent-map arrays: `partials` per trajectory (TangentOps kStored x K).
  void allocate_tangent(std::int64_t n, int dim, int partials) {
    const auto un = std::size_t(n);
    tangent.resize(un * std::size_t(partials));
    tangent_acc.assign(un * kernels::kTangentAccCount, Real(0));
    tangent_out.assign(un * kernels::kTangentOutCount, Real(0));
    state0.resize(un * std::size_t(dim));
  }

  kernels::EnsembleArrays<Real> arrays() {
    kernels::EnsembleArrays<Real> a;
    a.state = ptr(state);
    a.energy0 = ptr(energy0);
    a.energy_error = ptr(energy_error);
    a.momentum0 = momentum0.size() > 0 ? ptr(momentum0) : nullptr;
    a.momentum_error = ptr(momentum_error);
    a.newton_residual = ptr(newton_residual);
    a.step = ptr(step);
    a.status = ptr(status);
    a.crossings = ptr(crossings);
    a.recorded = ptr(recorded);
    a.hit_count = ptr(hit_count);
    a.hits = ptr(hits);
    if (tangent.size() > 0) {
      a.tangent = ptr(tangent);
      a.tangent_acc = ptr(tangent_acc);
      a.tangent_out = ptr(tangent_out);
      a.state0 = ptr(state0);
    }
    return a;
  }

 private:
  template <class V>
  static auto ptr(V& v) {
    return RawPointer<V>::get(v);
  }
};

}  // namespace vigor::host
