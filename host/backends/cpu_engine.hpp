/// @file cpu_engine.hpp
/// @brief CPU backend: OpenMP threads over blocks of trajectories advanced side by side in SIMD
/// lanes, with the shared model and integrator code instantiated on Pack<Real, W> (one register).
///
/// The arrays have exactly the device layout (SoA), so a block of W consecutive trajectories is one
/// vector load per state component. Blocks run kernels::advance_lanes on kernels::PackLanes
/// (kernels/simd/pack_lanes.hpp), the last partial block too (its missing lanes start inactive);
/// pairs without a lane form run the same driver on kernels::ScalarLanes, one trajectory at a
/// time, as a GPU thread does. Every lane computes what the scalar lanes compute, bit for bit.
/// Trajectories are independent, so results do not depend on the thread count, the schedule or
/// the lane width.
///
/// kEventBursts: the driver's event bursts compiled into every lane type
/// (kernels::EventBurstLanes), run with EngineTestHooks::event_burst steps, or kGpuEventBurstSteps.
/// Runs never build it (the CPU's lanes are faster testing every step); the tests do, to hold the
/// bursts to per-step testing on the CPU's lanes.
///
/// kScalarReference: pairs with SIMD lanes also compile the scalar lanes, which only the tests run
/// (EngineTestHooks::scalar_lanes), to hold the lanes to them bit for bit. A build for testing
/// (CMake's VIGOR_TESTING_ENGINES) defines VIGOR_SCALAR_REFERENCE for its translation units, its
/// plugins and the programs built against it once installed; a program-only build (`make demo`)
/// leaves that copy of the driver out.
#pragma once

#include <omp.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "host/backends/cpu_info.hpp"
#include "host/backends/engine.hpp"
#include "host/backends/engine_common.hpp"
#include "host/backends/ensemble_storage.hpp"
#include "host/backends/uninitialized_vector.hpp"
#include "kernels/driver/advance.hpp"
#include "kernels/simd/pack_lanes.hpp"

namespace vigor::host {

#if defined(VIGOR_SCALAR_REFERENCE)
inline constexpr bool kScalarReference = true;
#else
inline constexpr bool kScalarReference = false;
#endif

template <class M, class I, class Real, bool kEventBursts = false>
class CpuEngine final : public Engine {
 public:
  static constexpr int kDim = kernels::StateOps<M, Real>::kDim;
  static constexpr int kMaps = kernels::StateOps<M, Real>::kMomentumMaps;
  /// Lanes need a model written for packs (kernels::model_on_lanes: a separable (q, p) model, or
  /// one that says so, such as a Lie-group body) and a step without data-dependent branches.
  /// Other pairs run one trajectory at a time on the scalar lanes: a general Lagrangian's
  /// nested-dual Jacobians on packs multiply compile time for little gain, unless its elementary
  /// functions dominate (the double pendulum in FP32).
  static constexpr bool kSimd = kernels::model_on_lanes<M> && kernels::integrator_lane_safe<I>;
  /// Tangent maps are built in FP64 only: FP32 round-off (~1e-7 per step) would hide the very
  /// defects they measure, and the instantiations double the build time.
  static constexpr bool kTangent = kernels::tangent_built<I, M> && std::is_same_v<Real, double>;
  /// The integrator of the tangent-map step (kernels::tangent_integrator_t).
  using TangentStep = kernels::tangent_integrator_t<I, M, Real>;
  /// Tangent maps in lanes too when the plain step takes a dual state (the explicit splitting
  /// schemes) of a (q, p) model; implicit steps on duals of packs and the Lie-group bodies'
  /// tangent maps stay scalar.
  static constexpr bool kSimdTangent = kSimd && kernels::SeparableModel<M> && kTangent &&
                                       !kernels::is_dual_v<kernels::real_t<TangentStep>>;
  /// The scalar lanes of a plain and of a tangent run: a run's path where the pair has no lanes
  /// for it, else only the tests' reference (kScalarReference).
  static constexpr bool kScalarPlain = !kSimd || kScalarReference;
  static constexpr bool kScalarTangent = !kSimdTangent || kScalarReference;
  /// A block is kLanes trajectories. Explicit steps take them as sub-blocks of one register each,
  /// stepped one after the other (kernels::advance_lanes says why). Implicit steps keep their
  /// registers side by side in one Pack unless the integrator or the model's Hessian asks
  /// otherwise (kernels::lane_sub_blocks).
  static constexpr int kLanes = kernels::block_lanes<Real>();
  static constexpr bool kExplicitStep = !kernels::integrator_solves<I>;
  static constexpr int kRegisterLanes =
      kernels::lane_sub_blocks<I, M, Real> ? kernels::native_lanes<Real>() : kLanes;
  /// Segments that run bursts (kernels::segment_allows_bursts; explicit steps only) take blocks
  /// of more sub-blocks: a burst keeps only the states live, so more chains fit in the registers
  /// (kernels::burst_block_lanes), where one sub-block's q, p and force fit them. Where
  /// kBurstLanes == kLanes the two are one instantiation. Where they differ, each is compiled
  /// without what it never runs: the blocks of kLanes without the quiet bursts, those of
  /// kBurstLanes without sections and escapes (kernels::WithoutQuietBursts, QuietSegmentLanes).
  static constexpr int kBurstLanes =
      kExplicitStep ? kernels::burst_block_lanes<Real>(kDim + kDim / 2) : kLanes;
  static constexpr bool kBurstBlocks = kBurstLanes != kLanes;
  template <class L>
  using WithEvents = std::conditional_t<kEventBursts, kernels::EventBurstLanes<L>, L>;
  template <class L, template <class> class Role>
  using InRole = std::conditional_t<kBurstBlocks, Role<L>, L>;
  using Lanes = WithEvents<InRole<kernels::PackLanes<Real, kRegisterLanes, kLanes / kRegisterLanes>,
                                  kernels::WithoutQuietBursts>>;
  using BurstLanes =
      WithEvents<InRole<kernels::PackLanes<Real, kRegisterLanes, kBurstLanes / kRegisterLanes>,
                        kernels::QuietSegmentLanes>>;
  using Pack = typename Lanes::Real;
  // Without lanes the pack types are the scalar ones (never used), so no Pack instantiation of
  // a model or integrator that does not support it is ever compiled.
  using ModelOnLanes = std::conditional_t<kSimd, kernels::rebind_t<M, Pack>, M>;
  using StepOnLanes = std::conditional_t<kSimd, kernels::rebind_t<I, Pack>, I>;
  /// Tangent blocks are one register wide: a dual number carries 1 + K packs (K = 2 dof), so
  /// Hénon–Heiles' dual Phase is 30 packs, which nearly fit AVX-512's 32 registers at one per
  /// pack and spill at two (docs/performance.md, tangent section).
  using TangentLanes = kernels::PackLanes<Real, kernels::native_lanes<Real>(), 1>;
  using TangentPack = typename TangentLanes::Real;
  using ModelOnTangentLanes =
      std::conditional_t<kSimdTangent, kernels::rebind_t<M, TangentPack>, M>;
  using StepOnTangentLanes = std::conditional_t<kSimdTangent, kernels::rebind_t<I, TangentPack>, I>;

  CpuEngine(const Integration& s, const EngineResources& r)
      : integration_(s),
        resources_(r),
        hooks_(engine_test_hooks()),
        model_lanes_(ModelOnLanes::from_params(s.params.data())),
        step_lanes_(StepOnLanes::from_options(s.options.data())),
        model_tangent_lanes_(ModelOnTangentLanes::from_params(s.params.data())),
        step_tangent_lanes_(StepOnTangentLanes::from_options(s.options.data())) {
    kernels::set_newton_iterations(step_lanes_, s.newton_iterations);
    kernels::set_newton_iterations(step_tangent_lanes_, s.newton_iterations);
  }

  int simd_lanes() const override {
    if (!lanes_on()) return 1;
    if (integration_.tangent) return kSimdTangent ? TangentLanes::NB : 1;
    if (!kSimd) return 1;
    return bursts(segment_params<Real>(integration_, 0, 0, !hooks_.per_step)) ? kBurstLanes
                                                                              : kLanes;
  }

  int dim() const override { return kDim; }
  std::string backend_name() const override { return "cpu"; }
  std::string device_name() const override;
  int hit_capacity() const override { return setup_ ? setup_->params.hit_capacity : 0; }
  std::size_t hit_budget() const override { return resources_.hit_buffer_bytes; }

  void upload(const std::vector<double>& state_soa, std::int64_t n) override {
    if (n < 0 || state_soa.size() != std::size_t(n) * kDim)
      throw std::invalid_argument("CpuEngine::upload: expected " + std::to_string(kDim) + " x " +
                                  std::to_string(n) + " state values, got " +
                                  std::to_string(state_soa.size()));
    setup_ = std::make_unique<Setup>(integration_, n, resources_.hit_buffer_bytes, hooks_,
                                     kEventBursts ? kGpuEventBurstSteps : 0);
    n_ = n;
    store_.allocate(n, kDim, kMaps, setup_->params.hit_capacity);
    if (integration_.tangent && !kTangent)
      throw std::invalid_argument("CpuEngine: tangent maps of this pair are not built");
    if (integration_.tangent) store_.allocate_tangent(n, kDim, Setup::kPartials);
    if constexpr (kernels::integrator_compensated<I>) store_.allocate_round_off(n, kDim);
    for (std::size_t k = 0; k < state_soa.size(); ++k) store_.state[k] = Real(state_soa[k]);
    const auto a = store_.arrays();
    const M model = setup_->model;
    if constexpr (kTangent) {
      if (integration_.tangent) {
        const auto tangent_step = setup_->tangent_step;
        const Real h = setup_->params.h;
#pragma omp parallel for schedule(static) num_threads(threads())
        for (std::int64_t i = 0; i < n; ++i)
          kernels::initial_energy_tangent(model, tangent_step, h, a, n, i);
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
    const Setup& setup = *setup_;
    const kernels::SegmentParams<Real>& sp = setup.params;
    // Dynamic chunks: frozen or paused trajectories cost nothing, so work per block varies.
    if (integration_.tangent) {
      if constexpr (kTangent) {
        if (kSimdTangent && lanes_on())
          advance<TangentLanes, true>(model_tangent_lanes_, step_tangent_lanes_, setup.tangent_step,
                                      8);
        else
          advance<Scalar, true>(setup.model, setup.tangent_step, setup.tangent_step, 16);
      }
    } else if (kSimd && lanes_on()) {
      // Every trajectory, the last partial block's too, takes the lane path.
      if (bursts(sp))
        advance<BurstLanes, false>(model_lanes_, step_lanes_, setup.integrator, 4);
      else
        advance<Lanes, false>(model_lanes_, step_lanes_, setup.integrator, 4);
    } else {
      advance<Scalar, false>(setup.model, setup.integrator, setup.integrator, 64);
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
  using Scalar = WithEvents<kernels::ScalarLanes<Real>>;

  /// SIMD lanes where the pair has them (the tests' scalar reference turns them off).
  bool lanes_on() const { return !hooks_.scalar_lanes; }

  int threads() const { return thread_count(resources_.threads); }

  /// Whether a segment's blocks run bursts, and so take kBurstLanes lanes.
  static bool bursts(const kernels::SegmentParams<Real>& sp) {
    return kExplicitStep && kernels::segment_allows_bursts(sp);
  }

  /// Advance every block of L::NB trajectories to the segment's end step on the lane type L, in
  /// dynamic chunks of `chunk` blocks. Only the pairs that have L are compiled: with no lane form
  /// (kSimd false), the pack lane types would be instantiated on the scalar model.
  template <class L, bool kT, class MP, class IP, class IDS>
  void advance(const MP& model_lanes, const IP& step_lanes, const IDS& tangent_step, int chunk) {
    constexpr bool kPacks = !std::is_same_v<L, Scalar>;
    if constexpr (kPacks ? (kT ? kSimdTangent : kSimd) : (kT ? kScalarTangent : kScalarPlain)) {
      const kernels::SegmentParams<Real> sp = setup_->params;
      const auto a = store_.arrays();
      const M model = setup_->model;
      const std::int64_t blocks = (n_ + L::NB - 1) / L::NB;
#pragma omp parallel for schedule(dynamic, chunk) num_threads(threads())
      for (std::int64_t b = 0; b < blocks; ++b) {
        const std::int64_t i0 = b * L::NB;
        const int valid = int(n_ - i0 < L::NB ? n_ - i0 : L::NB);
        kernels::advance_lanes<L, kT>(model_lanes, model, step_lanes, setup_->integrator,
                                      tangent_step, sp, a, i0, valid);
      }
    } else if constexpr (!kPacks) {
      // Only EngineTestHooks::scalar_lanes asks for the scalar reference of a pair with lanes.
      throw std::logic_error(
          "CpuEngine: the scalar reference lanes are not in this build (configure with "
          "-DVIGOR_TESTING_ENGINES=ON, as `make test` does)");
    }
  }

  Integration integration_;
  EngineResources resources_;
  EngineTestHooks hooks_;  ///< as the engine was constructed with (off in a run)
  ModelOnLanes model_lanes_;
  StepOnLanes step_lanes_;
  ModelOnTangentLanes model_tangent_lanes_;
  StepOnTangentLanes step_tangent_lanes_;
  using Setup = EngineSetup<M, I, Real>;
  std::unique_ptr<Setup> setup_;
  std::int64_t n_ = 0;
  EnsembleStorage<Real, std::vector, UninitializedVector> store_;
};

template <class M, class I, class Real, bool kEventBursts>
std::string CpuEngine<M, I, Real, kEventBursts>::device_name() const {
  return cpu_device_name(threads());
}

}  // namespace vigor::host
