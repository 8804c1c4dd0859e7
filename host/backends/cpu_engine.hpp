/// @file cpu_engine.hpp
/// @brief CPU backend: OpenMP threads over blocks of trajectories advanced side by side in SIMD
/// lanes, with the shared model and integrator code instantiated on Pack<Real, W> (one register).
///
/// The arrays have exactly the device layout (SoA), so a block of W consecutive trajectories is one
/// vector load per state component. Blocks run kernels::advance_block (kernels/simd/), the last
/// partial block too (its missing lanes start inactive); pairs without a lane path run the scalar
/// kernels::advance_trajectory the CUDA kernel calls. Every lane computes what the scalar path
/// computes, bit for bit. Trajectories are independent, so results
/// do not depend on the thread count, the schedule or the lane width.
#pragma once

#include <omp.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "host/backends/engine_common.hpp"
#include "host/backends/ensemble_storage.hpp"
#include "host/engine.hpp"
#include "kernels/driver.hpp"
#include "kernels/simd/driver_block.hpp"

namespace vigor::host {

template <class M, class I, class Real>
class CpuEngine final : public Engine {
 public:
  static constexpr int kDim = kernels::StateOps<M, Real>::kDim;
  static constexpr int kMaps = kernels::StateOps<M, Real>::kMomentumMaps;
  /// Lanes need a separable (q, p) model and a step without data-dependent branches. Other pairs
  /// run one trajectory per thread iteration through the scalar driver: the rigid body on SO(3)
  /// has no Phase, and a general Lagrangian's nested-dual Jacobians on 16-lane packs would spill
  /// registers and multiply compile time for little gain.
  static constexpr bool kSimd = kernels::SeparableModel<M> && kernels::integrator_lane_safe<I>;
  /// Tangent maps are built in FP64 only: FP32 round-off (~1e-7 per step) would hide the very
  /// defects they measure, and the instantiations double the build time.
  static constexpr bool kTangent = kernels::tangent_built<I, M> && std::is_same_v<Real, double>;
  /// Tangent maps in lanes too when the plain step takes a dual state (the explicit splitting
  /// schemes: kernels::tangent_integrator_t); implicit steps on duals of packs stay scalar.
  static constexpr bool kSimdTangent =
      kSimd && kTangent &&
      !kernels::is_dual_v<kernels::real_t<kernels::tangent_integrator_t<I, M, Real>>>;
  /// A block is kLanes trajectories. Explicit steps take them as kLanes / kPackLanes sub-blocks
  /// of one register each, stepped one after the other (kernels/simd/driver_block.hpp says why).
  /// Implicit steps keep their registers side by side in one Pack: a step of Newton iterations is
  /// longer than the core's out-of-order window, so sub-blocks stepped in turn no longer overlap
  /// (midpoint with 3 iterations on Hénon–Heiles, FP64: 2.85e8 -> 1.99e8 trajectory-steps/s).
  static constexpr int kLanes = kernels::block_lanes<Real>();
  static constexpr bool kExplicitStep = kernels::default_newton_iterations<I> == 0;
  static constexpr int kPackLanes = kExplicitStep ? kernels::native_lanes<Real>() : kLanes;
  /// Segments that run bursts (kernels::segment_allows_bursts; explicit steps only) take blocks
  /// of more sub-blocks: a burst keeps only the states live, so more chains fit in the registers
  /// (kernels::burst_block_lanes). The per-step iterations of such a segment (its conservation
  /// checks) then spill, which costs little at one check in K steps. Where kBurstLanes == kLanes
  /// there is no second instantiation of the block driver.
  static constexpr int kBurstLanes = kExplicitStep ? kernels::burst_block_lanes<Real>() : kLanes;
  using P = kernels::Pack<Real, kPackLanes>;
  // Without lanes the pack types are the scalar ones (never used), so no Pack instantiation of
  // a model or integrator that does not support it is ever compiled.
  using MP = std::conditional_t<kSimd, kernels::rebind_t<M, P>, M>;
  using IP = std::conditional_t<kSimd, kernels::rebind_t<I, P>, I>;
  /// Tangent blocks are one register wide: a dual number carries 1 + K packs (K = 2 dof), so
  /// Hénon–Heiles' dual Phase is 30 packs — 60 registers at two per pack, spilled to the stack
  /// every step, 30 at one, which nearly fit AVX-512's 32 (docs/performance.md, tangent section).
  static constexpr int kTangentLanes = kernels::native_lanes<Real>();
  using PT = kernels::Pack<Real, kTangentLanes>;
  using MPT = std::conditional_t<kSimdTangent, kernels::rebind_t<M, PT>, M>;
  using IPT = std::conditional_t<kSimdTangent, kernels::rebind_t<I, PT>, I>;

  explicit CpuEngine(const EngineRequest& r)
      : request_(r),
        model_pack_(MP::from_params(r.params.data())),
        integrator_pack_(IP::from_options(r.options.data())),
        model_tangent_pack_(MPT::from_params(r.params.data())),
        integrator_tangent_pack_(IPT::from_options(r.options.data())) {
    kernels::set_newton_iterations(integrator_pack_, r.newton_iterations);
    kernels::set_newton_iterations(integrator_tangent_pack_, r.newton_iterations);
  }

  int simd_lanes() const override {
    if (!request_.cpu_simd) return 1;
    if (request_.tangent) return kSimdTangent ? kTangentLanes : 1;
    if (!kSimd) return 1;
    return bursts(EngineSetup<M, I, Real>(request_, 0, 0).params) ? kBurstLanes : kLanes;
  }

  int dim() const override { return kDim; }
  std::string backend_name() const override { return "cpu"; }
  std::string device_name() const override;
  int hit_capacity() const override { return setup_ ? setup_->params.hit_capacity : 0; }

  void upload(const std::vector<double>& state_soa, std::int64_t n) override {
    if (n < 0 || state_soa.size() != std::size_t(n) * kDim)
      throw std::invalid_argument("CpuEngine::upload: expected " + std::to_string(kDim) + " x " +
                                  std::to_string(n) + " state values, got " +
                                  std::to_string(state_soa.size()));
    setup_ = std::make_unique<Setup>(request_, n, request_.hit_buffer_bytes);
    n_ = n;
    store_.allocate(n, kDim, kMaps, setup_->params.hit_capacity);
    if (request_.tangent && !kTangent)
      throw std::invalid_argument("CpuEngine: tangent maps of this pair are not built");
    if (request_.tangent) store_.allocate_tangent(n, kDim, Setup::kPartials);
    for (std::size_t k = 0; k < state_soa.size(); ++k) store_.state[k] = Real(state_soa[k]);
    const auto a = store_.arrays();
    const M model = setup_->model;
    if constexpr (kTangent) {
      if (request_.tangent) {
        const auto integrator_d = setup_->integrator_d;
        const Real h = setup_->params.h;
#pragma omp parallel for schedule(static) num_threads(threads())
        for (std::int64_t i = 0; i < n; ++i)
          kernels::initial_energy_tangent(model, integrator_d, h, a, n, i);
        return;
      }
    }
    {
#pragma omp parallel for schedule(static) num_threads(threads())
      for (std::int64_t i = 0; i < n; ++i) kernels::initial_energy(model, a, n, i);
    }
  }

  void launch(std::int64_t end_step) override {
    setup_->params.end_step = end_step;
    const auto t0 = std::chrono::steady_clock::now();
    const auto a = store_.arrays();
    const M model = setup_->model;
    const I integrator = setup_->integrator;
    const kernels::SegmentParams<Real> sp = setup_->params;
    const MP model_pack = model_pack_;
    const IP integrator_pack = integrator_pack_;
    // Dynamic chunks: frozen or paused trajectories cost nothing, so work per index varies.
    if (request_.tangent) {
      if constexpr (kTangent) {
        const auto integrator_d = setup_->integrator_d;
        bool lanes = false;
        if constexpr (kSimdTangent) {
          if (request_.cpu_simd) {
            lanes = true;
            constexpr int W = kTangentLanes;
            const MPT model_tp = model_tangent_pack_;
            const IPT integrator_tp = integrator_tangent_pack_;
            const std::int64_t blocks = (n_ + W - 1) / W;
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads())
            for (std::int64_t b = 0; b < blocks; ++b) {
              const std::int64_t i0 = b * W;
              const int valid = int(n_ - i0 < W ? n_ - i0 : W);
              kernels::advance_block<MPT, M, IPT, Real, W, 1, true>(
                  model_tp, model, integrator_tp, sp, a, i0, valid, integrator_d);
            }
          }
        }
        if (!lanes) {
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads())
          for (std::int64_t i = 0; i < n_; ++i)
            kernels::advance_trajectory_tangent(model, integrator_d, sp, a, i);
        }
      }
    } else if (kSimd && request_.cpu_simd) {
      // Every trajectory, the last partial block's too, takes the lane path.
      if constexpr (kSimd) {
        if (bursts(sp))
          advance_blocks<kBurstLanes>(model_pack, model, integrator_pack, sp, a);
        else
          advance_blocks<kLanes>(model_pack, model, integrator_pack, sp, a);
      }
    } else {
#pragma omp parallel for schedule(dynamic, 64) num_threads(threads())
      for (std::int64_t i = 0; i < n_; ++i)
        kernels::advance_trajectory(model, integrator, sp, a, i);
    }
    kernel_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  /// Every thread unpacks a contiguous range of trajectories into its place in `out`, which is
  /// sized once from the hit counts: a serial loop of push_backs left the second thread idle for a
  /// tenth of a Hénon–Heiles FP32 run's wall time (docs/performance.md).
  std::int64_t drain(HitBlock& out) override {
    const int cap = setup_->params.hit_capacity;
    out.dim = kDim;
    if (cap == 0) return 0;
    const std::size_t base = out.trajectory.size();
    std::vector<std::int64_t> first(std::size_t(threads()) + 1, 0);
    std::int64_t full = 0;
#pragma omp parallel num_threads(threads()) reduction(+ : full)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const std::int64_t lo = n_ * t / nt, hi = n_ * (t + 1) / nt;
      std::int64_t count = 0;
      for (std::int64_t i = lo; i < hi; ++i) count += store_.hit_count[i];
      first[std::size_t(t) + 1] = count;
#pragma omp barrier
#pragma omp single
      {
        for (int k = 0; k < nt; ++k) first[std::size_t(k) + 1] += first[std::size_t(k)];
        out.trajectory.resize(base + std::size_t(first[std::size_t(nt)]));
        out.values.resize(out.trajectory.size() * std::size_t(kDim + 1));
      }
      std::size_t at = base + std::size_t(first[std::size_t(t)]);
      for (std::int64_t i = lo; i < hi; ++i) {
        const int c = store_.hit_count[i];
        if (c == 0) continue;
        unpack_hits(store_.hits.data(), n_, cap, kDim, i, c, out.trajectory.data() + at,
                    out.values.data() + at * std::size_t(kDim + 1));
        at += std::size_t(c);
        store_.hit_count[i] = 0;
        if (c == cap) ++full;
      }
    }
    return full;
  }

  FinalData download() override {
    FinalData f;
    f.state.assign(store_.state.begin(), store_.state.end());
    f.energy0.assign(store_.energy0.begin(), store_.energy0.end());
    f.energy_error.assign(store_.energy_error.begin(), store_.energy_error.end());
    f.momentum_error.assign(store_.momentum_error.begin(), store_.momentum_error.end());
    f.newton_residual.assign(store_.newton_residual.begin(), store_.newton_residual.end());
    f.step = store_.step;
    f.crossings = store_.crossings;
    f.recorded = store_.recorded;
    f.status = store_.status;
    f.tangent_out.assign(store_.tangent_out.begin(), store_.tangent_out.end());
    return f;
  }

  std::vector<double> energy_error_snapshot() override {
    return std::vector<double>(store_.energy_error.begin(), store_.energy_error.end());
  }

  std::vector<StateArray> save_state() override { return store_.save(); }
  void restore_state(const std::vector<StateArray>& arrays) override { store_.restore(arrays); }

  std::vector<double> tangent_snapshot() override {
    return std::vector<double>(store_.tangent_out.begin(), store_.tangent_out.end());
  }

 private:
  int threads() const { return request_.threads > 0 ? request_.threads : omp_get_max_threads(); }

  /// Whether a segment's blocks run bursts, and so take kBurstLanes lanes.
  static bool bursts(const kernels::SegmentParams<Real>& sp) {
    return kExplicitStep && kernels::segment_allows_bursts(sp);
  }

  /// Advance every block of NB lanes (NB / kPackLanes sub-blocks) to sp.end_step.
  template <int NB>
  void advance_blocks(const MP& model_pack, const M& model, const IP& integrator_pack,
                      const kernels::SegmentParams<Real>& sp,
                      const kernels::EnsembleArrays<Real>& a) {
    const std::int64_t blocks = (n_ + NB - 1) / NB;
    // Dynamic chunks: frozen or paused trajectories cost nothing, so work per block varies.
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads())
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::int64_t i0 = b * NB;
      const int valid = int(n_ - i0 < NB ? n_ - i0 : NB);
      kernels::advance_block<MP, M, IP, Real, kPackLanes, NB / kPackLanes>(
          model_pack, model, integrator_pack, sp, a, i0, valid);
    }
  }

  EngineRequest request_;
  MP model_pack_;
  IP integrator_pack_;
  MPT model_tangent_pack_;
  IPT integrator_tangent_pack_;
  using Setup = EngineSetup<M, I, Real>;
  std::unique_ptr<Setup> setup_;
  std::int64_t n_ = 0;
  EnsembleStorage<Real, std::vector> store_;
};

/// The CPU's model name from /proc/cpuinfo; defined in host/backends/cpu_info.cpp.
std::string cpu_model_name();
/// "<model name> (N threads)".
std::string cpu_device_name(int threads);

template <class M, class I, class Real>
std::string CpuEngine<M, I, Real>::device_name() const {
  return cpu_device_name(threads());
}

}  // namespace vigor::host
