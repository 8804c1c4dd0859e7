/// @file cuda_engine.cuh
/// @brief CUDA backend: the ensemble lives on the device in SoA layout and is advanced by the one
/// fused segment kernel (kernels/cuda/segment_kernel.cuh), whose threads call the same
/// kernels::advance_trajectory the CPU backend calls.
///
/// Mirrors CpuEngine (host/backends/cpu_engine.hpp) call for call:
///   * upload   converts the initial states to Real on the host, copies them to the device and
///              computes H at t = 0 with a kernel;
///   * launch   runs the segment kernel and adds its time, measured with CUDA events, to
///              kernel_seconds();
///   * drain    compacts the section buffers on the device (exclusive scan of the per-trajectory
///              hit counts, then a gather kernel that also resets the counts and converts to
///              double), copies back only the dense hits straight into the hit block, in
///              trajectory order, chronological within a trajectory
///              — the order of the CPU backend. It returns how many trajectories filled their
///              buffer (those may be paused short of end_step);
///   * download copies every per-trajectory array back, as double.
/// State stays on the device between segments; nothing but hits crosses the bus during a run.
///
/// Every CUDA runtime call goes through VIGOR_CUDA_CHECK (a failure throws std::runtime_error
/// naming the call, file and line); every launch is followed by VIGOR_CUDA_CHECK_LAUNCH. Thrust
/// algorithms throw thrust::system_error (a std::runtime_error) themselves.
///
/// Device selection: cuda_device_for_process(EngineResources::node_rank) — device 0 of those
/// CUDA_VISIBLE_DEVICES exposes for a plain process, local rank k mod the device count for MPI
/// ranks. Compiled by nvcc only,
/// in the generated per-model TUs.
#pragma once

#include <cuda_runtime.h>
#include <thrust/count.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/scan.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "host/backends/engine.hpp"
#include "host/backends/engine_common.hpp"
#include "host/backends/ensemble_storage.hpp"
#include "kernels/cuda/check.cuh"
#include "kernels/cuda/segment_kernel.cuh"
#include "kernels/driver/advance.hpp"

namespace vigor::host {

/// The GPU of a process that is rank `node_rank` among the ranks of its node (-1: not started as
/// ranks); host/backends/cuda_runtime.cu.
int cuda_device_for_process(int node_rank);

template <class T, class Alloc>
struct RawPointer<thrust::device_vector<T, Alloc>> {
  static T* get(thrust::device_vector<T, Alloc>& v) { return thrust::raw_pointer_cast(v.data()); }
};

template <class T, class Alloc>
struct HostCopy<thrust::device_vector<T, Alloc>> {
  static void to_host(const thrust::device_vector<T, Alloc>& v, void* dst) {
    if (!v.empty())
      VIGOR_CUDA_CHECK(cudaMemcpy(dst, thrust::raw_pointer_cast(v.data()), v.size() * sizeof(T),
                                  cudaMemcpyDeviceToHost));
  }
  static void from_host(thrust::device_vector<T, Alloc>& v, const void* src) {
    if (!v.empty())
      VIGOR_CUDA_CHECK(cudaMemcpy(thrust::raw_pointer_cast(v.data()), src, v.size() * sizeof(T),
                                  cudaMemcpyHostToDevice));
  }
};

template <class M, class I, class Real>
class CudaEngine final : public Engine {
 public:
  static constexpr int kDim = kernels::StateOps<M, Real>::kDim;
  static constexpr int kMaps = kernels::StateOps<M, Real>::kMomentumMaps;
  /// Tangent maps are built in FP64 only: FP32 round-off (~1e-7 per step) would hide the very
  /// defects they measure, and the instantiations double the build time.
  static constexpr bool kTangent = kernels::tangent_built<I, M> && std::is_same_v<Real, double>;

  CudaEngine(const Integration& s, const EngineResources& r)
      : integration_(s), resources_(r), device_(cuda_device_for_process(r.node_rank)) {
    VIGOR_CUDA_CHECK(cudaSetDevice(device_));
    cudaDeviceProp prop{};
    VIGOR_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
    device_name_ = std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
                   std::to_string(prop.minor) + ")";
    // Fails early and clearly when this build has no kernel image for the device's architecture
    // (CMAKE_CUDA_ARCHITECTURES), instead of at the first launch.
    cudaFuncAttributes attr{};
    VIGOR_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernels::segment_kernel<M, I, Real>));
    VIGOR_CUDA_CHECK(cudaEventCreate(&start_));
    VIGOR_CUDA_CHECK(cudaEventCreate(&stop_));
    // Drawn once, before anything of the run is allocated: every chunk's upload then gets the
    // same capacity, whatever the device holds by then.
    if (r.hit_budget_from_memory)
      hit_budget_ = hit_budget_from_memory(free_memory(), r.host_available);
  }

  ~CudaEngine() override {
    // No throwing from a destructor: errors here can only repeat an earlier, reported one.
    if (start_ != nullptr) (void)cudaEventDestroy(start_);
    if (stop_ != nullptr) (void)cudaEventDestroy(stop_);
  }

  CudaEngine(const CudaEngine&) = delete;
  CudaEngine& operator=(const CudaEngine&) = delete;

  int dim() const override { return kDim; }
  std::string backend_name() const override { return "cuda"; }
  std::string device_name() const override { return device_name_; }
  int hit_capacity() const override { return setup_ ? setup_->params.hit_capacity : 0; }
  std::size_t hit_budget() const override { return hit_budget_; }

  void upload(const std::vector<double>& state_soa, std::int64_t n) override {
    if (n < 0 || state_soa.size() != std::size_t(n) * kDim)
      throw std::invalid_argument("CudaEngine::upload: expected " + std::to_string(kDim) + " x " +
                                  std::to_string(n) + " state values, got " +
                                  std::to_string(state_soa.size()));
    bind();
    setup_ = std::make_unique<EngineSetup<M, I, Real>>(integration_, n, hit_budget_, hooks_,
                                                       kGpuEventBurstSteps);
    n_ = n;
    const std::size_t un = std::size_t(n);
    const int cap = setup_->params.hit_capacity;
    // Convert on the host: the device only ever sees Real.
    const std::vector<Real> h_state(state_soa.begin(), state_soa.end());
    try {
      d_.allocate(n, kDim, kMaps, cap);
      if (integration_.tangent) d_.allocate_tangent(n, kDim, EngineSetup<M, I, Real>::kPartials);
      if constexpr (kernels::integrator_compensated<I>) d_.allocate_round_off(n, kDim);
      d_offset_.resize(cap > 0 ? un : 0);
      release(d_dense_values_);
      release(d_dense_trajectory_);
    } catch (const std::bad_alloc&) {
      const double per_traj =
          double(kDim + kMaps + 4 + (kernels::integrator_compensated<I> ? kDim : 0)) *
              sizeof(Real) +
          3.0 * 8 + 2.0 * 4 + double(cap) * (kDim + 1) * sizeof(Real) + (cap > 0 ? 8.0 : 0.0) +
          (integration_.tangent
               ? double(EngineSetup<M, I, Real>::kPartials + kernels::kTangentAccCount +
                        kernels::kTangentOutCount + kDim) *
                     sizeof(Real)
               : 0.0);
      throw std::runtime_error(
          "CUDA backend: out of device memory for " + std::to_string(n) + " trajectories (about " +
          std::to_string(per_traj * double(n) / double(1 << 20)) + " MiB) on " + device_name_);
    }
    copy_to_device(d_.state, h_state.data(), h_state.size());
    if (integration_.tangent && !kTangent)
      throw std::invalid_argument("CudaEngine: tangent maps of this pair are not built");
    bool seeded = false;
    if constexpr (kTangent) {
      if (integration_.tangent) {
        kernels::launch_initial_tangent(setup_->model, setup_->tangent_step, setup_->params.h,
                                        arrays(), n_);
        seeded = true;
      }
    }
    if (!seeded) kernels::launch_initial_energy(setup_->model, arrays(), n_);
    VIGOR_CUDA_CHECK(cudaDeviceSynchronize());
  }

  void launch(std::int64_t end_step) override {
    require_upload("launch");
    bind();
    setup_->params.end_step = end_step;
    VIGOR_CUDA_CHECK(cudaEventRecord(start_, nullptr));
    bool done = false;
    if constexpr (kTangent) {
      if (integration_.tangent) {
        kernels::launch_segment_tangent(setup_->model, setup_->integrator, setup_->tangent_step,
                                        setup_->params, arrays());
        done = true;
      }
    }
    if (!done) kernels::launch_segment(setup_->model, setup_->integrator, setup_->params, arrays());
    VIGOR_CUDA_CHECK(cudaEventRecord(stop_, nullptr));
    // Errors raised while the kernel ran (an illegal address, say) are reported here.
    VIGOR_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0.0f;
    VIGOR_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    kernel_seconds_ += double(ms) * 1e-3;
  }

  std::int64_t drain(HitBlock& out) override {
    require_upload("drain");
    const int cap = setup_->params.hit_capacity;
    out.dim = kDim;
    if (cap == 0 || n_ == 0) return 0;
    bind();
    // offset[i] = sum of hit_count[j < i]: where trajectory i's hits go in the dense array.
    thrust::exclusive_scan(thrust::device, d_.hit_count.begin(), d_.hit_count.end(),
                           d_offset_.begin(), std::int64_t(0), thrust::plus<std::int64_t>());
    std::int64_t last_offset = 0;
    std::int32_t last_count = 0;
    copy_to_host(&last_offset, d_offset_, std::size_t(n_ - 1), 1);
    copy_to_host(&last_count, d_.hit_count, std::size_t(n_ - 1), 1);
    const std::int64_t total = last_offset + last_count;
    if (total == 0) return 0;  // every count is 0: nothing to drain, nothing to reset
    const std::int64_t full =
        thrust::count(thrust::device, d_.hit_count.begin(), d_.hit_count.end(), std::int32_t(cap));

    const std::size_t width = std::size_t(kDim + 1);
    const std::size_t max_hits = std::size_t(n_) * std::size_t(cap);
    reserve(d_dense_trajectory_, std::size_t(total), max_hits);
    reserve(d_dense_values_, std::size_t(total) * width, max_hits * width);
    kernels::launch_compact_hits<kDim, Real>(raw(d_.hits), raw(d_.hit_count), raw(d_offset_), n_,
                                             cap, raw(d_dense_values_), raw(d_dense_trajectory_));
    VIGOR_CUDA_CHECK(cudaDeviceSynchronize());

    // The compaction wrote doubles: both arrays go straight into the block's tails, one copy
    // each, no per-value work on the host (a survey of 10^6 trajectories drains ~10^7 hits).
    const std::size_t old_hits = out.trajectory.size();
    const std::size_t old_values = out.values.size();
    out.trajectory.resize(old_hits + std::size_t(total));
    out.values.resize(old_values + std::size_t(total) * width);
    copy_to_host(out.trajectory.data() + old_hits, d_dense_trajectory_, 0, std::size_t(total));
    copy_to_host(out.values.data() + old_values, d_dense_values_, 0, std::size_t(total) * width);
    return full;
  }

  FinalData download() override {
    require_upload("download");
    bind();
    FinalData f;
    f.state = to_double(d_.state);
    f.energy0 = to_double(d_.energy0);
    f.energy_error = to_double(d_.energy_error);
    f.momentum_error = to_double(d_.momentum_error);
    f.newton_residual = to_double(d_.newton_residual);
    f.step = to_host_vector(d_.step);
    f.crossings = to_host_vector(d_.crossings);
    f.recorded = to_host_vector(d_.recorded);
    f.status = to_host_vector(d_.status);
    if (integration_.tangent) f.tangent_out = to_double(d_.tangent_out);
    return f;
  }

  std::vector<double> energy_error_snapshot() override {
    require_upload("energy_error_snapshot");
    bind();
    return to_double(d_.energy_error);
  }

  std::size_t free_memory() const override {
    bind();
    std::size_t free = 0, total = 0;
    VIGOR_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free;
  }

  std::vector<StateArray> save_state() override {
    require_upload("save_state");
    bind();
    return d_.save();
  }

  void restore_state(const std::vector<StateArray>& arrays) override {
    require_upload("restore_state");
    bind();
    d_.restore(arrays);
  }

  std::vector<double> tangent_snapshot() override {
    require_upload("tangent_snapshot");
    bind();
    return integration_.tangent ? to_double(d_.tangent_out) : std::vector<double>{};
  }

 private:
  template <class T>
  static T* raw(thrust::device_vector<T>& v) {
    return thrust::raw_pointer_cast(v.data());
  }
  template <class T>
  static const T* raw(const thrust::device_vector<T>& v) {
    return thrust::raw_pointer_cast(v.data());
  }

  template <class T>
  static void copy_to_device(thrust::device_vector<T>& d, const T* h, std::size_t count) {
    if (count == 0) return;
    VIGOR_CUDA_CHECK(cudaMemcpy(raw(d), h, count * sizeof(T), cudaMemcpyHostToDevice));
  }
  /// Copy `count` elements starting at element `first` of d into h.
  template <class T>
  static void copy_to_host(T* h, const thrust::device_vector<T>& d, std::size_t first,
                           std::size_t count) {
    if (count == 0) return;
    VIGOR_CUDA_CHECK(cudaMemcpy(h, raw(d) + first, count * sizeof(T), cudaMemcpyDeviceToHost));
  }
  template <class T>
  static std::vector<T> to_host_vector(const thrust::device_vector<T>& d) {
    std::vector<T> h(d.size());
    copy_to_host(h.data(), d, 0, h.size());
    return h;
  }
  static std::vector<double> to_double(const thrust::device_vector<Real>& d) {
    const std::vector<Real> h = to_host_vector(d);
    return std::vector<double>(h.begin(), h.end());
  }

  /// Make v hold at least `need` elements (growing geometrically, never beyond `limit`); the
  /// contents are not preserved.
  template <class T>
  static void reserve(thrust::device_vector<T>& v, std::size_t need, std::size_t limit) {
    if (v.size() >= need) return;
    const std::size_t grown = std::min(std::max(need, 2 * v.size()), std::max(need, limit));
    release(v);
    v.resize(grown);
  }
  template <class T>
  static void release(thrust::device_vector<T>& v) {
    v.clear();
    v.shrink_to_fit();
  }

  void bind() const { VIGOR_CUDA_CHECK(cudaSetDevice(device_)); }

  void require_upload(const char* what) const {
    if (!setup_)
      throw std::logic_error(std::string("CudaEngine::") + what + " called before upload");
  }

  kernels::EnsembleArrays<Real> arrays() { return d_.arrays(); }

  Integration integration_;
  EngineResources resources_;
  std::size_t hit_budget_ = resources_.hit_buffer_bytes;
  EngineTestHooks hooks_ = engine_test_hooks();  ///< as the engine was constructed with
  int device_ = 0;
  std::string device_name_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  std::unique_ptr<EngineSetup<M, I, Real>> setup_;
  std::int64_t n_ = 0;
  EnsembleStorage<Real, thrust::device_vector> d_;          ///< the ensemble, on the device
  thrust::device_vector<std::int64_t> d_offset_;            ///< exclusive scan of hit counts
  thrust::device_vector<double> d_dense_values_;            ///< [hit][1 + dim]: t, state
  thrust::device_vector<std::int64_t> d_dense_trajectory_;  ///< [hit]
};

}  // namespace vigor::host
