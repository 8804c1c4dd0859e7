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
#include <cstdint>
#include <string>
#include <vector>

#include "host/backends/engine_common.hpp"
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
    setup_ = std::make_unique<EngineSetup<M, I, Real>>(request_, n, request_.hit_buffer_bytes);
    n_ = n;
    state_.assign(state_soa.begin(), state_soa.end());
    energy0_.assign(n, Real(0));
    energy_error_.assign(n, Real(0));
    step_.assign(n, 0);
    status_.assign(n, kernels::kStatusOk);
    crossings_.assign(n, 0);
    recorded_.assign(n, 0);
    hit_count_.assign(n, 0);
    hits_.assign(std::size_t(setup_->params.hit_capacity) * (kDim + 1) * n, Real(0));
    const auto a = arrays();
    const M model = setup_->model;
#pragma omp parallel for schedule(static) num_threads(threads())
    for (std::int64_t i = 0; i < n; ++i) kernels::initial_energy(model, a, n, i);
  }

  void launch(std::int64_t end_step) override {
    setup_->params.end_step = end_step;
    const auto t0 = std::chrono::steady_clock::now();
    const auto a = arrays();
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
      const int c = hit_count_[i];
      if (c == 0) continue;
      unpack_hits(hits_.data(), n_, cap, kDim, i, c, out);
      hit_count_[i] = 0;
      if (c == cap) ++full;
    }
    return full;
  }

  FinalData download() override {
    FinalData f;
    f.state.assign(state_.begin(), state_.end());
    f.energy0.assign(energy0_.begin(), energy0_.end());
    f.energy_error.assign(energy_error_.begin(), energy_error_.end());
    f.step = step_;
    f.crossings = crossings_;
    f.recorded = recorded_;
    f.status = status_;
    return f;
  }

 private:
  int threads() const { return request_.threads > 0 ? request_.threads : omp_get_max_threads(); }

  kernels::EnsembleArrays<Real> arrays() {
    kernels::EnsembleArrays<Real> a;
    a.state = state_.data();
    a.energy0 = energy0_.data();
    a.energy_error = energy_error_.data();
    a.step = step_.data();
    a.status = status_.data();
    a.crossings = crossings_.data();
    a.recorded = recorded_.data();
    a.hit_count = hit_count_.data();
    a.hits = hits_.data();
    return a;
  }

  EngineRequest request_;
  std::unique_ptr<EngineSetup<M, I, Real>> setup_;
  std::int64_t n_ = 0;
  std::vector<Real> state_, energy0_, energy_error_, hits_;
  std::vector<std::int64_t> step_, crossings_, recorded_;
  std::vector<std::int32_t> status_, hit_count_;
};

/// "cpu (N threads, <model name from /proc/cpuinfo>)"; defined in host/backends/cpu_info.cpp.
std::string cpu_device_name(int threads);

template <class M, class I, class Real>
std::string CpuEngine<M, I, Real>::device_name() const {
  return cpu_device_name(threads());
}

}  // namespace vigor::host
