/// @file ensemble_storage.hpp
/// @brief The per-trajectory arrays of an ensemble, owned by one vector type (std::vector on the
/// host, thrust::device_vector on the device), and the kernels::EnsembleArrays view of them.
/// Host-only; one definition for both backends and the driver tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "host/backends/engine.hpp"
#include "kernels/driver/segment.hpp"

namespace vigor::host {

/// Raw pointer to a vector's elements; specialised for thrust::device_vector in cuda_engine.cuh.
template <class V>
struct RawPointer {
  static auto get(V& v) { return v.data(); }
};

/// Copies between a vector's elements and host memory; specialised for thrust::device_vector in
/// cuda_engine.cuh.
template <class V>
struct HostCopy {
  static void to_host(const V& v, void* dst) {
    if (!v.empty()) std::memcpy(dst, v.data(), v.size() * sizeof(v[0]));
  }
  static void from_host(V& v, const void* src) {
    if (!v.empty()) std::memcpy(v.data(), src, v.size() * sizeof(v[0]));
  }
};

/// `HitVector` holds the section buffers: on the host an UninitializedVector, since the
/// kernel writes a slot before a drain reads it and only the slots it wrote are read.
template <class Real, template <class...> class Vector,
          template <class...> class HitVector = Vector>
struct EnsembleStorage {
  Vector<Real> state, energy0, energy_error, momentum0, momentum_error, newton_residual;
  HitVector<Real> hits;
  Vector<std::int64_t> step, crossings, recorded;
  Vector<std::int32_t> status, hit_count;
  Vector<Real> tangent, tangent_acc, tangent_out, state0;  ///< empty without tangent maps
  Vector<Real> state_lo;  ///< round-off terms of a compensated integrator; empty otherwise

  /// Size every array for n trajectories of `dim` components, `maps` momentum-map components and
  /// `capacity` hit slots each, and reset the per-trajectory counters (the state is left to the
  /// caller to fill, the hit slots to the kernel).
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

  /// Size the round-off terms of a compensated integrator (kernels::Compensated), all zero: the
  /// initial state is exact as given.
  void allocate_round_off(std::int64_t n, int dim) {
    state_lo.assign(std::size_t(n) * std::size_t(dim), Real(0));
  }

  /// f(name, vector) for every array a later launch reads: all but the section buffers (hits,
  /// hit_count), which are empty between segments, and nothing derived from the request.
  template <class F>
  void for_each_persistent(F&& f) {
    f("state", state);
    f("energy0", energy0);
    f("energy_error", energy_error);
    f("momentum0", momentum0);
    f("momentum_error", momentum_error);
    f("newton_residual", newton_residual);
    f("step", step);
    f("crossings", crossings);
    f("recorded", recorded);
    f("status", status);
    f("tangent", tangent);
    f("tangent_acc", tangent_acc);
    f("tangent_out", tangent_out);
    f("state0", state0);
    f("state_lo", state_lo);
  }

  /// Engine::save_state of these arrays.
  std::vector<StateArray> save() {
    std::vector<StateArray> out;
    for_each_persistent([&](const char* name, auto& v) {
      using V = std::decay_t<decltype(v)>;
      StateArray a;
      a.name = name;
      a.elem_bytes = int(sizeof(typename V::value_type));
      a.bytes.resize(v.size() * sizeof(typename V::value_type));
      HostCopy<V>::to_host(v, a.bytes.data());
      out.push_back(std::move(a));
    });
    return out;
  }

  /// Engine::restore_state: every persistent array must be there with its exact size (an empty
  /// one may be absent: checkpoints written before it existed).
  void restore(const std::vector<StateArray>& in) {
    std::size_t matched = 0;
    for_each_persistent([&](const char* name, auto& v) {
      using V = std::decay_t<decltype(v)>;
      const std::size_t elem = sizeof(typename V::value_type);
      const StateArray* found = nullptr;
      for (const auto& a : in)
        if (a.name == name) found = &a;
      if (!found && v.empty()) return;
      if (!found) throw std::runtime_error(std::string("checkpoint lacks the array ") + name);
      if (std::size_t(found->elem_bytes) != elem || found->bytes.size() != v.size() * elem)
        throw std::runtime_error(std::string("checkpoint array ") + name + " holds " +
                                 std::to_string(found->bytes.size()) + " bytes of " +
                                 std::to_string(found->elem_bytes) +
                                 "-byte values; this run needs " + std::to_string(v.size() * elem) +
                                 " bytes of " + std::to_string(elem) + "-byte values");
      HostCopy<V>::from_host(v, found->bytes.data());
      ++matched;
    });
    if (matched != in.size())
      throw std::runtime_error("checkpoint holds arrays this run does not have");
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
    if (state_lo.size() > 0) a.state_lo = ptr(state_lo);
    return a;
  }

 private:
  template <class V>
  static auto ptr(V& v) {
    return RawPointer<V>::get(v);
  }
};

}  // namespace vigor::host
