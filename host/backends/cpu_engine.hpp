/// @file cpu_engine.hpp
/// @brief CPU backend: an OpenMP loop over trajectories calling the shared per-trajectory driver.
///
/// The arrays have exactly the device layout (SoA), and each trajectory is advanced by the same
/// kernels::advance_trajectory the CUDA kernel calls, so the two backends run one copy of the
/// numerics. Trajectories are independent, so results do not depend on the thread count or the
/// schedule.
#pragma once

#include <omp.h>

#include <chrono>
#include <stdexcept>
#include <cstdint>
#include <string>
#include <vector>

#include "host/backends/engine_common.hpp"
#include "host/backends/ensemble_storage.hpp"
#include "host/engine.hpp"
#include "kernels/driver.hpp"

namespace vigor::host {

template <class M, class I, class Real>
class CpuEngine final : public Engine {
 public:
  static constexpr int kDim = 2 * M::dof;

  explicit CpuEngine(const EngineRequest& r) : request_(r) {}

  int dim() const override { return kDim; }
  std::string backend_name() const override { return "cpu"; }
  std::string device_name() const override;
  int hit_capacity() const override { return setup_ ? setup_->params.hit_capacity : 0; }

  void upload(const std::vector<double>& state_soa, std::int64_t n) override {
    if (n < 0 || state_soa.size() != std::size_t(n) * kDim)
      throw std::invalid_argument("CpuEngine::upload: expected " + std::to_string(kDim) + " x " +
                                  std::to_string(n) + " state values, got " +
                                  std::to_string(state_soa.size()));
    setup_ = std::make_unique<EngineSetup<M, I, Real>>(request_, n, request_.hit_buffer_bytes);
    n_ = n;
    store_.allocate(n, kDim, setup_->params.hit_capacity);
    for (std::size_t k = 0; k < state_soa.size(); ++k) store_.state[k] = Real(state_soa[k]);
    const auto a = store_.arrays();
    const M model = setup_->model;
#pragma omp parallel for schedule(static) num_threads(threads())
    for (std::int64_t i = 0; i < n; ++i) kernels::initial_energy(model, a, n, i);
  }

  void launch(std::int64_t end_step) override {
    setup_->params.end_step = end_step;
    const auto t0 = std::chrono::steady_clock::now();
    const auto a = store_.arrays();
    const M model = setup_->model;
    const I integrator = setup_->integrator;
    const kernels::SegmentParams<Real> sp = setup_->params;
    // Dynamic chunks: frozen or paused trajectories cost nothing, so work per index varies.
#pragma omp parallel for schedule(dynamic, 256) num_threads(threads())
    for (std::int64_t i = 0; i < n_; ++i) kernels::advance_trajectory(model, integrator, sp, a, i);
    kernel_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  std::int64_t drain(HitBlock& out) override {
    const int cap = setup_->params.hit_capacity;
    out.dim = kDim;
    std::int64_t full = 0;
    if (cap == 0) return 0;
    for (std::int64_t i = 0; i < n_; ++i) {
      const int c = store_.hit_count[i];
      if (c == 0) continue;
      unpack_hits(store_.hits.data(), n_, cap, kDim, i, c, out);
      store_.hit_count[i] = 0;
      if (c == cap) ++full;
    }
    return full;
  }

  FinalData download() override {
    FinalData f;
    f.state.assign(store_.state.begin(), store_.state.end());
    f.energy0.assign(store_.energy0.begin(), store_.energy0.end());
    f.energy_error.assign(store_.energy_error.begin(), store_.energy_error.end());
    f.step = store_.step;
    f.crossings = store_.crossings;
    f.recorded = store_.recorded;
    f.status = store_.status;
    return f;
  }

 private:
  int threads() const { return request_.threads > 0 ? request_.threads : omp_get_max_threads(); }

  EngineRequest request_;
  std::unique_ptr<EngineSetup<M, I, Real>> setup_;
  std::int64_t n_ = 0;
  EnsembleStorage<Real, std::vector> store_;
};

/// "cpu (N threads, <model name from /proc/cpuinfo>)"; defined in host/backends/cpu_info.cpp.
std::string cpu_device_name(int threads);

template <class M, class I, class Real>
std::string CpuEngine<M, I, Real>::device_name() const {
  return cpu_device_name(threads());
}

}  // namespace vigor::host
