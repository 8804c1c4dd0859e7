/// @file segment_loop.cpp
/// @brief run_ensemble: the segments of a run on one engine (DESIGN.md §5).
///
/// Per segment, every chunk of this rank's shard takes its turn on the engine: launch to the
/// segment's end, drain the section buffers, relaunch while any trajectory (of any rank) paused
/// on a full buffer. Then the per-segment series are sampled over all chunks and ranks, a
/// checkpoint is taken when one is due, and a stop signal ends the run there.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "host/backends/cpu_info.hpp"
#include "host/backends/registry.hpp"
#include "host/run/chunks.hpp"
#include "host/run/comm.hpp"
#include "host/run/progress.hpp"
#include "host/run/run.hpp"
#include "host/run/stop.hpp"

namespace vigor::host {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Trajectories per chunk for this rank's shard of `local_n`: the engine's memory budget (free
/// device memory, --memory-limit, the smaller of the two) over what one trajectory needs there,
/// measured by uploading the first one. All of them when no budget applies or they fit.
std::int64_t plan_chunk_size(const Job& job, const RunOptions& options, Engine& engine,
                             const std::vector<double>& mine, std::int64_t local_n) {
  std::size_t budget = options.memory_limit;
  if (const std::size_t free = engine.free_memory(); free > 0) {
    // Headroom for the runtime's own allocations and fragmentation.
    const std::size_t usable = free / 10 * 9;
    budget = budget > 0 ? std::min(budget, usable) : usable;
  }
  if (budget == 0 || local_n == 0) return std::max<std::int64_t>(1, local_n);
  const int dim = engine.dim();
  std::vector<double> first(static_cast<std::size_t>(dim));
  for (int c = 0; c < dim; ++c) first[std::size_t(c)] = mine[std::size_t(c) * std::size_t(local_n)];
  engine.upload(first, 1);
  std::size_t per = 0, real_bytes = 8;
  for (const auto& a : engine.save_state()) {
    per += a.bytes.size();
    if (a.name == "state") real_bytes = std::size_t(a.elem_bytes);
  }
  // Besides the arrays above: the section-buffer counter and scan offset, and the one buffer slot
  // every trajectory gets however small the budget (twice: buffers and their compaction).
  per += 16;
  if (job.has_section()) per += 2 * std::size_t(dim + 1) * real_bytes;
  // The section buffers take at most their byte budget, twice (buffers, and their compaction on a
  // GPU or the drained block on the CPU).
  const std::size_t fixed = 2 * engine.hit_budget();
  return chunk_size_for(local_n, budget, per, fixed);
}

/// One run of the segment loop; run() is the whole of it.
class SegmentLoop {
 public:
  SegmentLoop(const Job& job, const RunOptions& options, Engine& engine, const HitSink& sink,
              const Checkpointing& checkpointing)
      : job_(job),
        options_(options),
        engine_(engine),
        sink_(sink),
        checkpointing_(checkpointing),
        n_(job.ensemble.count),
        shard_(comm::my_shard(n_)),
        dim_(engine.dim()),
        tangent_slots_(job.integration.tangent ? int(kTangentColumns.size()) : 0),
        initial_(comm::distributed() ? shard_states(job.ensemble.state, n_, dim_, shard_)
                                     : std::vector<double>()),
        mine_(comm::distributed() ? initial_ : job.ensemble.state) {}

  RunResult run() {
    describe_engine();
    make_chunks();
    const std::int64_t start = begin();
    Progress progress(!options_.quiet && comm::root(), stderr, options_.progress_terminal);
    ProgressState ps = progress_state(start);
    for (std::int64_t done = start; done < job_.steps;) {
      done = run_segment(done);
      const int sig = stop_signal();
      if (checkpointing_.save && done < job_.steps && (sig != 0 || checkpoint_due()))
        checkpoint(done);
      if (sig != 0 && done < job_.steps) {  // after the last segment: finish, nothing is lost
        progress.finish(ps);
        throw Interrupted(sig, done, job_.steps);
      }
      ps.steps_done = done;
      ps.segments_done = res_.segments;
      ps.crossings = res_.hits;
      ps.elapsed = seconds_since(t0_);
      progress.update(ps);
      if (options_.on_segment && comm::root()) options_.on_segment(ps);
    }
    progress.finish(ps);
    collect_final();
    // The slowest rank's compute time: trajectory-steps per second are then the whole run's.
    res_.kernel_seconds = earlier_kernel_ + comm::max(engine_.kernel_seconds());
    res_.wall_seconds = earlier_wall_ + seconds_since(t0_);
    return std::move(res_);
  }

 private:
  void describe_engine() {
    res_.backend = engine_.backend_name();
    res_.device = engine_.device_name();
    res_.simd_lanes = engine_.simd_lanes();
    res_.threads = options_.threads;
    res_.mpi_ranks = comm::size();
    res_.memory_limit = options_.memory_limit;
  }

  /// Chunks when the shard does not fit the engine's memory; every rank makes as many turns.
  void make_chunks() {
    const std::int64_t chunk = plan_chunk_size(job_, options_, engine_, mine_, shard_.size());
    const int turns =
        int(comm::max(double((shard_.size() + chunk - 1) / std::max<std::int64_t>(1, chunk))));
    chunks_ = std::make_unique<Chunks>(engine_, mine_, shard_.size(), chunk, std::max(1, turns),
                                       checkpointing_.scratch);
    res_.chunks = chunks_->count();
    res_.chunk_trajectories = chunk;
    res_.hit_capacity = engine_.hit_capacity();
  }

  /// The step to start from: 0 with the series' t = 0 row, or the resumed checkpoint's with its
  /// counters and series.
  std::int64_t begin() {
    const Checkpoint* c = checkpointing_.resume;
    if (!c) {
      for_each_chunk(false, [&](int k, std::int64_t) { collect_series(k); });
      sample_series(0.0);
      return 0;
    }
    chunks_->restore_all(comm::distributed() ? slice_arrays(c->arrays, n_, shard_.begin, shard_.end)
                                             : c->arrays);
    res_.segments = c->cursor.segments;
    res_.launches = c->cursor.launches;
    res_.hits = c->cursor.hits;
    res_.energy_series = c->cursor.energy_series;
    res_.tangent_series = c->cursor.tangent_series;
    earlier_kernel_ = c->cursor.kernel_seconds;
    earlier_wall_ = c->cursor.wall_seconds;
    res_.resumed_at = c->resumed_at;
    res_.resumed_at.push_back(c->cursor.step);
    return c->cursor.step;
  }

  ProgressState progress_state(std::int64_t start) const {
    ProgressState ps;
    ps.steps_total = job_.steps;
    ps.segments_total =
        (job_.steps + job_.segment_steps - 1) / std::max<std::int64_t>(1, job_.segment_steps);
    ps.trajectories = n_;
    ps.steps_done = start;
    ps.segments_done = res_.segments;
    return ps;
  }

  /// f(c, first trajectory of the chunk in the shard) with chunk c on the engine, parked again
  /// afterwards when `park` is set.
  template <class F>
  void for_each_chunk(bool park, const F& f) {
    for (int c = 0; c < chunks_->count(); ++c) {
      chunks_->activate(c);
      f(c, chunks_->range(c).begin);
      if (park) chunks_->park(c);
    }
  }

  /// One segment from step `done`; returns the segment's end step.
  std::int64_t run_segment(std::int64_t done) {
    const std::int64_t end = std::min(job_.steps, done + job_.segment_steps);
    energy_parts_.clear();
    tangent_parts_.clear();
    for_each_chunk(true, [&](int c, std::int64_t first) {
      launch_and_drain(end, first);
      collect_series(c);
    });
    ++res_.segments;
    sample_series(double(end) * job_.integration.dt);
    return end;
  }

  /// Launches the active chunk to `end`, relaunching while any trajectory (of any rank) paused on
  /// a full section buffer; the others return at once.
  void launch_and_drain(std::int64_t end, std::int64_t first) {
    for (;;) {
      engine_.launch(end);
      ++res_.launches;
      block_.clear();
      const std::int64_t full = engine_.drain(block_);
      block_.dim = dim_;
      for (auto& id : block_.trajectory) id += shard_.begin + first;
      deliver(block_, sink_, res_.hits);
      if (!comm::any(full > 0)) break;
    }
  }

  /// Appends chunk c's per-trajectory series values (without a last chunk's padding).
  void collect_series(int c) {
    const std::int64_t real = chunks_->range(c).size();
    const auto e = engine_.energy_error_snapshot();
    energy_parts_.insert(energy_parts_.end(), e.begin(), e.begin() + std::ptrdiff_t(real));
    if (job_.integration.tangent)
      tangent_parts_.push_back(chunks_->trim(engine_.tangent_snapshot(), real, tangent_slots_));
  }

  /// The series' row at time t from the collected values, joined in trajectory order over the
  /// chunks (slot-major for the tangent diagnostics) and then over the ranks on rank 0.
  void sample_series(double t) {
    const auto energy = comm::gather(energy_parts_);
    if (comm::root()) res_.energy_series.add(t, {summarize(energy)});
    if (job_.integration.tangent) {
      const auto joined = join_slots(tangent_parts_, tangent_slots_);
      const auto tangent = gather_slots(joined, tangent_slots_, shard_.size());
      if (comm::root()) res_.tangent_series.add(t, tangent, n_);
    }
    energy_parts_.clear();
    tangent_parts_.clear();
  }

  /// A stop signal on any rank ends every rank, between segments, after a checkpoint.
  static int stop_signal() { return int(comm::max(double(stop_requested()))); }

  /// Rank 0's clock decides when a checkpoint is due, so all ranks take it together.
  bool checkpoint_due() const {
    const bool due = comm::root() && options_.checkpoint_every >= 0 &&
                     seconds_since(last_checkpoint_) >= options_.checkpoint_every;
    return comm::max(due ? 1.0 : 0.0) > 0;
  }

  void checkpoint(std::int64_t step) {
    RunCursor cursor;
    cursor.step = step;
    cursor.segments = res_.segments;
    cursor.launches = res_.launches;
    cursor.hits = res_.hits;
    cursor.kernel_seconds = earlier_kernel_ + comm::max(engine_.kernel_seconds());
    cursor.wall_seconds = earlier_wall_ + seconds_since(t0_);
    auto arrays = gather_arrays(chunks_->save_all(), shard_.size());
    together([&] {
      if (!comm::root()) return;
      cursor.energy_series = res_.energy_series;
      cursor.tangent_series = res_.tangent_series;
      checkpointing_.save(cursor, std::move(arrays));
    });
    last_checkpoint_ = Clock::now();
  }

  /// The final data of the shard (from every chunk), then of every rank on rank 0.
  void collect_final() {
    FinalData mine;
    if (chunks_->count() == 1) {
      mine = engine_.download();
    } else {
      for_each_chunk(false, [&](int c, std::int64_t first) {
        place_final(mine, engine_.download(), first, chunks_->range(c).size(), shard_.size(), dim_,
                    tangent_slots_);
      });
    }
    res_.final = comm::distributed() ? gather_final(mine, dim_, tangent_slots_, shard_.size())
                                     : std::move(mine);
  }

  const Job& job_;
  const RunOptions& options_;
  Engine& engine_;
  const HitSink& sink_;
  const Checkpointing& checkpointing_;
  const Clock::time_point t0_ = Clock::now();
  Clock::time_point last_checkpoint_ = Clock::now();
  const std::int64_t n_;
  const Shard shard_;  ///< this rank's trajectories
  const int dim_;
  const int tangent_slots_;
  const std::vector<double> initial_;  ///< this rank's initial states (MPI runs only)
  const std::vector<double>& mine_;    ///< the states this rank advances
  std::unique_ptr<Chunks> chunks_;
  RunResult res_;
  double earlier_kernel_ = 0.0, earlier_wall_ = 0.0;  ///< of the attempts before a resume
  std::vector<double> energy_parts_;                  ///< this segment's, chunk after chunk
  std::vector<std::vector<double>> tangent_parts_;
  HitBlock block_;
};

}  // namespace

EngineResources engine_resources(const RunOptions& options) {
  EngineResources r;
  r.threads = options.threads;
  r.node_rank = comm::node_local_rank();
  // Both backends take the default budget: on the CPU the buffers are allocated without being
  // zero-filled, so only the slots the kernel writes are ever paged in, and the larger budget
  // saves relaunches (docs/performance.md, "The section buffers without zero-filling").
  // Under a memory limit the section buffers take at most an eighth of it; without one, a GPU
  // engine sizes them from its free memory and the host's (hit_budget_from_memory).
  if (options.memory_limit > 0)
    r.hit_buffer_bytes = std::min(r.hit_buffer_bytes, options.memory_limit / 8);
  else
    r.hit_budget_from_memory = true;
  r.host_available = host_available_memory();
  return r;
}

std::unique_ptr<Engine> build_engine(const Job& job, const RunOptions& options) {
  const BackendKind backend = resolve_backend(job.backend);
  return make_engine(job.integration, engine_resources(options), backend);
}

RunResult run_ensemble(const Job& job, const RunOptions& options, Engine& engine,
                       const HitSink& sink, const Checkpointing& checkpointing) {
  return SegmentLoop(job, options, engine, sink, checkpointing).run();
}

RunResult run_ensemble(const Job& job, const RunOptions& options, HitStore* hits) {
  const auto t0 = Clock::now();
  auto engine = build_engine(job, options);
  if (hits && hits->dim == 0) hits->dim = engine->dim();
  HitSink sink;
  if (hits) sink = [hits](const HitBlock& b) { hits->append(b); };
  RunResult res = run_ensemble(job, options, *engine, sink);
  res.wall_seconds = seconds_since(t0);  // engine construction included, as before
  return res;
}

}  // namespace vigor::host
