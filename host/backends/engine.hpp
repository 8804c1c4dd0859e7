/// @file engine.hpp
/// @brief The backend-neutral interface the run loop drives (upload, launch, drain, download), and
/// what an engine is built from: the job's Integration and the run's EngineResources.
///
/// An Engine owns one ensemble in one precision on one backend, for one (model, integrator) pair
/// fixed at compile time. The run loop (host/run/) calls launch(end_step) and drain() until no
/// trajectory is paused on a full section buffer, once per segment, then download() at the end.
///
/// Settings travel in one struct: the job parser (host/job/) fills an Integration once, the run
/// hands it to the engine factory unchanged, and the engine makes the kernels' SegmentParams from
/// it in one place (segment_params, host/backends/engine_common.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "host/backends/uninitialized_vector.hpp"

namespace vigor::host {

enum class Precision { kDouble, kFloat };
enum class BackendKind { kAuto, kCpu, kCuda };

/// Section settings (see kernels/sections.hpp for the codes); kind 0 when there is no section.
struct SectionConfig {
  int kind = 0;        ///< kernels::SectionKind
  int coordinate = 0;  ///< state component index
  int direction = 0;   ///< kernels::SectionDirection
  double value = 0.0;
  std::int64_t every = 1;             ///< stroboscopic period in steps
  std::int64_t max_crossings = 1000;  ///< recorded per trajectory over the whole run
};

/// What is integrated and how: everything of a job an engine needs, validated by the job parser
/// (host/job/job.cpp) and carried unchanged to the engines.
struct Integration {
  std::string model;
  std::vector<double> params;  ///< every parameter, in the model's kParams order, defaults filled
  std::string integrator;
  std::vector<double> options;  ///< every option, in the integrator's kOptions order
  double dt = 0.0;              ///< the time step
  int newton_iterations = 0;    ///< implicit integrators; 0: the integrator's default
  Precision precision = Precision::kDouble;
  SectionConfig section;          ///< kind 0 when there is no section
  double escape_radius = 0.0;     ///< <= 0: none
  double newton_tolerance = 0.0;  ///< <= 0: none; else status newton-not-converged above it
  bool tangent = false;           ///< diagnostics.tangent: carry tangent maps (kernels/tangent.hpp)
  /// integrator.compensated: sum the state's updates with compensation (kernels::Compensated)
  bool compensated = false;
  /// diagnostics.conservation_every: |H - H0| and the momentum maps after every K-th step
  std::int64_t conservation_every = 1;
};

/// The section buffers' byte budget when nothing else sets it, and the least a budget drawn from
/// a GPU's memory gets.
inline constexpr std::size_t kDefaultHitBudget = std::size_t(256) << 20;

/// What a run gives an engine besides the Integration: host threads and section-buffer memory.
struct EngineResources {
  int threads = 0;  ///< CPU threads; 0: OpenMP default
  /// Bytes the per-trajectory section buffers may take; the capacity per trajectory follows.
  std::size_t hit_buffer_bytes = kDefaultHitBudget;
  /// This process's rank among the ranks of its node (-1: not started as ranks). A CUDA engine
  /// uses GPU node_rank mod the number the node exposes, so ranks share GPUs rather than fall
  /// back to the CPU.
  int node_rank = -1;
  /// A GPU engine sizes its section buffers from its free memory and host_available instead
  /// (hit_budget_from_memory below); a run sets this when no --memory-limit bounds it. CPU engines
  /// keep hit_buffer_bytes: their buffers are host memory, paged in only where the kernel writes.
  bool hit_budget_from_memory = false;
  /// The host's available memory in bytes (0: unknown), which receives every drain.
  std::size_t host_available = 0;
};

/// Hits drained from the buffers, in trajectory order, chronological within a trajectory.
struct HitBlock {
  int dim = 0;  ///< state components per hit
  /// Sized by an engine's drain without zero-filling; the drain writes every element.
  UninitializedVector<std::int64_t> trajectory;
  UninitializedVector<double> values;  ///< (1 + dim) per hit: t, then the state
  void clear() {
    trajectory.clear();
    values.clear();
  }
};

/// Per-trajectory results, state in SoA layout [c * n + i].
struct FinalData {
  std::vector<double> state;
  std::vector<double> energy0;
  std::vector<double> energy_error;
  std::vector<double> momentum_error;   ///< max drift of the momentum maps (0 without maps)
  std::vector<double> newton_residual;  ///< max final Newton residual (0 for explicit steps)
  std::vector<std::int64_t> step;
  std::vector<std::int64_t> crossings;
  std::vector<std::int64_t> recorded;
  std::vector<std::int32_t> status;
  /// Tangent-map diagnostics [slot * n + i], slots kernels::TangentOut; empty without them.
  std::vector<double> tangent_out;
};

/// One per-trajectory array of an engine as raw bytes, slot-major ([slot * n + i]) with
/// `elem_bytes` per value: what checkpoints are made of (host/run/checkpoint.hpp).
struct StateArray {
  std::string name;
  int elem_bytes = 0;
  std::vector<unsigned char> bytes;
};

class Engine {
 public:
  virtual ~Engine() = default;
  /// Number of state components (2 dof for (q, p) models).
  virtual int dim() const = 0;
  /// Copy the initial states (SoA, n trajectories) in and compute the initial energies.
  virtual void upload(const std::vector<double>& state_soa, std::int64_t n) = 0;
  /// Advance every active trajectory towards end_step; trajectories pause on a full buffer.
  virtual void launch(std::int64_t end_step) = 0;
  /// Append the buffered hits to `out`; returns how many trajectories filled their buffer (and so
  /// may be paused short of end_step: launch again with the same end_step).
  virtual std::int64_t drain(HitBlock& out) = 0;
  virtual FinalData download() = 0;
  virtual std::string backend_name() const = 0;
  virtual std::string device_name() const = 0;
  /// The tangent-map diagnostics as of the last launch ([slot * n + i], kernels::TangentOut),
  /// empty when the request did not ask for them. The run loop samples them per segment.
  virtual std::vector<double> tangent_snapshot() = 0;
  /// Each trajectory's max |H - H0| so far, as of the last launch (n values). The run loop
  /// samples it per segment for energy_series.csv; engines copy just this array.
  virtual std::vector<double> energy_error_snapshot() { return download().energy_error; }
  /// Every array a later launch reads (states, steps, statuses, crossing counters, energies,
  /// momentum maps, residuals, tangent maps and their accumulators), bit for bit. Valid between
  /// segments, after the last drain: the section buffers are empty then and are not included.
  virtual std::vector<StateArray> save_state() = 0;
  /// Overwrites, after upload() of the same number of trajectories, every array save_state()
  /// returns. Throws std::runtime_error when a name, value size or length does not match.
  virtual void restore_state(const std::vector<StateArray>& arrays) = 0;
  /// Bytes the engine's memory (device memory for a GPU engine; 0: unknown, the host's) has free
  /// for arrays now: what ensemble chunks are sized from.
  virtual std::size_t free_memory() const { return 0; }
  /// Trajectories advanced side by side per CPU thread (1: one at a time; GPU engines: 1).
  virtual int simd_lanes() const { return 1; }
  /// Hit slots per trajectory per drain.
  virtual int hit_capacity() const = 0;
  /// Bytes the section buffers may take (EngineResources::hit_buffer_bytes, or what a GPU engine
  /// drew from its memory); the capacity per trajectory follows. Runs reserve twice this (buffers,
  /// and their compaction or the drained block) when they size chunks.
  virtual std::size_t hit_budget() const = 0;
  /// Seconds spent inside launch() (the compute, without transfers).
  double kernel_seconds() const { return kernel_seconds_; }

 protected:
  double kernel_seconds_ = 0.0;
};

/// Builds an engine for an Integration on one backend (one per model: host/backends/registry.hpp);
/// nullptr when the integration's integrator is not among those compiled for the model.
using EngineFactory = std::unique_ptr<Engine> (*)(const Integration&, const EngineResources&);

/// A GPU engine's section-buffer budget drawn from memory: a sixteenth of the device's free memory,
/// and at most an eighth of the host's available memory (0: unknown), which receives every drain;
/// never below kDefaultHitBudget. Buffers large enough for a segment's crossings spare the
/// relaunches after which a paused lane resumes (a fixed 256 MiB gave 10^6 Hénon–Heiles
/// trajectories 6 slots, about three launches per segment; docs/performance.md).
inline std::size_t hit_budget_from_memory(std::size_t device_free, std::size_t host_available) {
  const std::size_t device = device_free / 16;
  const std::size_t host = host_available > 0 ? host_available / 8 : device;
  const std::size_t budget = device < host ? device : host;
  return budget > kDefaultHitBudget ? budget : kDefaultHitBudget;
}

/// Section-buffer slots per trajectory: as many as the byte budget allows, at most 64 and at
/// most max_crossings, at least 1 whenever anything is recorded.
inline int choose_hit_capacity(const SectionConfig& s, std::int64_t n, int dim,
                               std::size_t real_bytes, std::size_t budget) {
  if (s.kind == 0 || s.max_crossings == 0 || n == 0) return 0;
  const std::size_t per_slot = std::size_t(n) * std::size_t(dim + 1) * real_bytes;
  std::int64_t cap = std::int64_t(budget / per_slot);
  if (cap > 64) cap = 64;
  if (cap > s.max_crossings) cap = s.max_crossings;
  if (cap < 1) cap = 1;
  return int(cap);
}

}  // namespace vigor::host
