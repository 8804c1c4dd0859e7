#include "host/run.hpp"

#include <sys/resource.h>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "host/chunks.hpp"
#include "host/cli.hpp"
#include "host/comm.hpp"
#include "host/hdf5_results.hpp"
#include "host/invariants.hpp"
#include "host/progress.hpp"
#include "host/registry.hpp"
#include "host/slots.hpp"
#include "host/stop.hpp"
#include "vigor/version.hpp"

namespace vigor::host {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// This rank's share of the ensemble's initial states (SoA: component c of trajectory i at
/// c n + i).
std::vector<double> shard_states(const std::vector<double>& soa, std::int64_t n, int dim, Shard s) {
  std::vector<double> out(std::size_t(s.size()) * std::size_t(dim));
  copy_slots(soa.data(), n, s.begin, out.data(), s.size(), 0, s.size(), dim);
  return out;
}

/// Slot-major arrays ([slot * local_n + i]) of every rank, joined on rank 0 into [slot * n + i]
/// in trajectory order. `slots` is the same on every rank (collective calls must match).
std::vector<double> gather_slots(const std::vector<double>& mine, int slots, std::int64_t local_n) {
  if (!comm::distributed()) return mine;
  std::vector<double> all;
  for (int k = 0; k < slots; ++k) {
    const auto first = mine.begin() + std::ptrdiff_t(k) * std::ptrdiff_t(local_n);
    const auto part = comm::gather(std::vector<double>(first, first + std::ptrdiff_t(local_n)));
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

/// Every rank's final data joined on rank 0, in trajectory order (other ranks get nothing).
FinalData gather_final(const FinalData& f, int dim, int tangent_slots, std::int64_t local_n) {
  FinalData all;
  all.state = gather_slots(f.state, dim, local_n);
  all.energy0 = comm::gather(f.energy0);
  all.energy_error = comm::gather(f.energy_error);
  all.momentum_error = comm::gather(f.momentum_error);
  all.newton_residual = comm::gather(f.newton_residual);
  all.step = comm::gather(f.step);
  all.crossings = comm::gather(f.crossings);
  all.recorded = comm::gather(f.recorded);
  all.status = comm::gather(f.status);
  if (tangent_slots > 0) all.tangent_out = gather_slots(f.tangent_out, tangent_slots, local_n);
  return all;
}

/// Every rank's engine arrays joined on rank 0 into whole-ensemble arrays in trajectory order.
/// Values are 4 or 8 bytes, so each slot travels as 32-bit words.
std::vector<StateArray> gather_arrays(std::vector<StateArray> mine, std::int64_t local_n) {
  if (!comm::distributed()) return mine;
  std::vector<StateArray> all;
  for (auto& a : mine) {
    const std::size_t slot_bytes = std::size_t(a.elem_bytes) * std::size_t(local_n);
    // Every rank must make the same number of collective calls: agree on the slot count.
    const int slots = int(comm::max(slot_bytes > 0 ? double(a.bytes.size() / slot_bytes) : 0.0));
    StateArray joined;
    joined.name = a.name;
    joined.elem_bytes = a.elem_bytes;
    for (int k = 0; k < slots; ++k) {
      std::vector<std::int32_t> words(slot_bytes / 4);
      if (slot_bytes > 0) std::memcpy(words.data(), a.bytes.data() + k * slot_bytes, slot_bytes);
      const auto part = comm::gather(words);
      const auto* p = reinterpret_cast<const unsigned char*>(part.data());
      joined.bytes.insert(joined.bytes.end(), p, p + part.size() * 4);
    }
    a.bytes.clear();
    a.bytes.shrink_to_fit();
    all.push_back(std::move(joined));
  }
  return all;
}

/// Slot-major arrays of consecutive chunks ([slot * size_c + i] each) joined into one
/// [slot * sum(size_c) + i]. A single part is returned as it is.
std::vector<double> join_slots(std::vector<std::vector<double>>& parts, int slots) {
  if (parts.size() == 1) return std::move(parts[0]);
  std::int64_t total = 0;
  for (const auto& p : parts) total += std::int64_t(p.size()) / slots;
  std::vector<double> all(std::size_t(total) * std::size_t(slots));
  std::int64_t at = 0;
  for (const auto& p : parts) {
    const std::int64_t len = std::int64_t(p.size()) / slots;
    copy_slots(p.data(), len, 0, all.data(), total, at, len, slots);
    at += len;
  }
  return all;
}

/// Adds the first `real` trajectories of a chunk's final data (the rest is padding) as
/// [begin, begin + real) of a shard of n to the shard's `all`: the slot-major state and tangent
/// columns go into place, the per-trajectory ones are appended.
void place_final(FinalData& all, FinalData&& part, std::int64_t begin, std::int64_t real,
                 std::int64_t n, int dim, int tangent_slots) {
  const auto m = std::int64_t(part.step.size());
  const auto place = [&](std::vector<double>& to, const std::vector<double>& from, int slots) {
    to.resize(std::size_t(slots) * std::size_t(n));
    copy_slots(from.data(), m, 0, to.data(), n, begin, real, slots);
  };
  place(all.state, part.state, dim);
  if (tangent_slots > 0) place(all.tangent_out, part.tangent_out, tangent_slots);
  const auto append = [real](auto& to, const auto& from) {
    if (!from.empty()) to.insert(to.end(), from.begin(), from.begin() + std::ptrdiff_t(real));
  };
  append(all.energy0, part.energy0);
  append(all.energy_error, part.energy_error);
  append(all.momentum_error, part.momentum_error);
  append(all.newton_residual, part.newton_residual);
  append(all.step, part.step);
  append(all.crossings, part.crossings);
  append(all.recorded, part.recorded);
  append(all.status, part.status);
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
  if (job.has_section) per += 2 * std::size_t(dim + 1) * real_bytes;
  // The section buffers take at most their byte budget, twice on a GPU (buffers + compaction).
  const BackendKind backend =
      engine.backend_name() == "cpu" ? BackendKind::kCpu : BackendKind::kCuda;
  const std::size_t fixed = 2 * make_request(job, options, backend).hit_buffer_bytes;
  return chunk_size_for(local_n, budget, per, fixed);
}

/// Hands a drained block to the sink: directly in one process; under MPI every rank's block of
/// this round goes to rank 0, which hands them on in rank order (= trajectory order).
void deliver(const HitBlock& block, const HitSink& sink, std::int64_t& delivered) {
  if (!comm::distributed()) {
    delivered += std::int64_t(block.trajectory.size());
    if (sink && !block.trajectory.empty()) sink(block);
    return;
  }
  const auto ids = comm::gather_parts(block.trajectory);
  const auto values = comm::gather_parts(block.values);
  if (!comm::root()) return;
  HitBlock b;
  b.dim = block.dim;
  for (std::size_t r = 0; r < ids.size(); ++r) {
    b.trajectory = ids[r];
    b.values = values[r];
    delivered += std::int64_t(b.trajectory.size());
    if (sink && !b.trajectory.empty()) sink(b);
  }
}

/// Runs f on every rank and fails on every rank when it failed on any: the rank that failed
/// rethrows its exception, the others throw PeerFailure with the largest exit code, so no rank
/// is left waiting in a collective call.
template <class F>
void together(F&& f) {
  std::exception_ptr error;
  int code = 0;
  try {
    f();
  } catch (const JobError&) {
    error = std::current_exception();
    code = kExitBadInput;
  } catch (...) {
    error = std::current_exception();
    code = kExitRuntime;
  }
  if (!comm::distributed()) {
    if (error) std::rethrow_exception(error);
    return;
  }
  const int worst = int(comm::max(double(code)));
  if (error) std::rethrow_exception(error);
  if (worst != 0) throw PeerFailure(worst);
}

}  // namespace

EngineRequest make_request(const Job& job, const RunOptions& options, BackendKind backend) {
  EngineRequest r;
  r.model = job.model;
  r.integrator = job.integrator;
  r.precision = job.precision;
  r.params = job.params;
  r.options = job.options;
  r.dt = job.dt;
  r.section = job.section;
  if (!job.has_section) r.section.kind = 0;
  r.escape_radius = job.escape_radius;
  r.newton_iterations = job.newton_iterations;
  r.newton_tolerance = job.newton_tolerance;
  r.tangent = job.tangent;
  r.conservation_every = job.conservation_every;
  r.threads = options.threads;
  // On the CPU the buffers are host memory the kernels write as trajectories cross: a quarter
  // GiB of them (64 slots for 10^5 Hénon–Heiles trajectories) costs its page faults and zeroing
  // in every run (0.18 s of 1.3 s measured, docs/performance.md), while a relaunch after a full
  // buffer costs little; GPUs keep the large buffers, which save whole relaunches and drains.
  if (backend == BackendKind::kCpu)
    r.hit_buffer_bytes = std::min(r.hit_buffer_bytes, kCpuHitBufferBytes);
  // Under a memory limit the section buffers take at most an eighth of it.
  if (options.memory_limit > 0)
    r.hit_buffer_bytes = std::min(r.hit_buffer_bytes, options.memory_limit / 8);
  return r;
}

std::unique_ptr<Engine> build_engine(const Job& job, const RunOptions& options) {
  const BackendKind backend = resolve_backend(job.backend);
  return make_engine(make_request(job, options, backend), backend);
}

RunResult run_ensemble(const Job& job, const RunOptions& options, Engine& engine,
                       const HitSink& sink, const Checkpointing& checkpointing) {
  const auto t0 = Clock::now();
  RunResult res;
  res.backend = engine.backend_name();
  res.device = engine.device_name();
  res.simd_lanes = engine.simd_lanes();
  const std::int64_t n = job.ensemble.count;
  // Under MPI this rank advances its shard; rank 0 receives everything else (host/comm.hpp).
  const Shard shard = comm::my_shard(n);
  const int dim = engine.dim();
  const int tangent_slots = job.tangent ? int(kTangentColumns.size()) : 0;
  const std::vector<double> initial =
      comm::distributed() ? shard_states(job.ensemble.state, n, dim, shard) : std::vector<double>();
  const std::vector<double>& mine = comm::distributed() ? initial : job.ensemble.state;
  // Chunks when the shard does not fit the engine's memory; every rank makes as many turns.
  const std::int64_t chunk = plan_chunk_size(job, options, engine, mine, shard.size());
  const int turns =
      int(comm::max(double((shard.size() + chunk - 1) / std::max<std::int64_t>(1, chunk))));
  Chunks chunks(engine, mine, shard.size(), chunk, std::max(1, turns), checkpointing.scratch);
  res.chunks = chunks.count();
  res.chunk_trajectories = chunk;
  res.hit_capacity = engine.hit_capacity();
  // One pass over the chunks: f(c, first trajectory of the chunk in the shard) with chunk c on
  // the engine, parked again afterwards when `park` is set.
  const auto for_each_chunk = [&](bool park, const auto& f) {
    for (int c = 0; c < chunks.count(); ++c) {
      chunks.activate(c);
      f(c, chunks.range(c).begin);
      if (park) chunks.park(c);
    }
  };
  // The series' per-trajectory values of every chunk, joined in trajectory order (slot-major for
  // the tangent diagnostics), then over the ranks on rank 0.
  std::vector<double> energy_parts;
  std::vector<std::vector<double>> tangent_parts;
  const auto collect_series = [&] {
    energy_parts.clear();
    tangent_parts.clear();
    return [&](int c, std::int64_t) {
      const std::int64_t real = chunks.range(c).size();  // without a last chunk's padding
      const auto e = engine.energy_error_snapshot();
      energy_parts.insert(energy_parts.end(), e.begin(), e.begin() + std::ptrdiff_t(real));
      if (job.tangent)
        tangent_parts.push_back(chunks.trim(engine.tangent_snapshot(), real, tangent_slots));
    };
  };
  const auto sample_series = [&](double t) {
    const auto energy = comm::gather(energy_parts);
    if (comm::root()) res.energy_series.add(t, {summarize(energy)});
    if (job.tangent) {
      const auto joined = join_slots(tangent_parts, tangent_slots);
      const auto tangent = gather_slots(joined, tangent_slots, shard.size());
      if (comm::root()) res.tangent_series.add(t, tangent, n);
    }
  };
  std::int64_t start = 0;
  double earlier_kernel = 0.0, earlier_wall = 0.0;  // of the attempts before a resume
  if (const Checkpoint* c = checkpointing.resume) {
    chunks.restore_all(comm::distributed() ? slice_arrays(c->arrays, n, shard.begin, shard.end)
                                           : c->arrays);
    start = c->cursor.step;
    res.segments = c->cursor.segments;
    res.launches = c->cursor.launches;
    res.hits = c->cursor.hits;
    res.energy_series = c->cursor.energy_series;
    res.tangent_series = c->cursor.tangent_series;
    earlier_kernel = c->cursor.kernel_seconds;
    earlier_wall = c->cursor.wall_seconds;
    res.resumed_at = c->resumed_at;
    res.resumed_at.push_back(start);
  } else {
    for_each_chunk(false, collect_series());
    sample_series(0.0);
  }
  auto last_checkpoint = Clock::now();
  const auto checkpoint = [&](std::int64_t step) {
    RunCursor cursor;
    cursor.step = step;
    cursor.segments = res.segments;
    cursor.launches = res.launches;
    cursor.hits = res.hits;
    cursor.kernel_seconds = earlier_kernel + comm::max(engine.kernel_seconds());
    cursor.wall_seconds = earlier_wall + seconds_since(t0);
    auto arrays = gather_arrays(chunks.save_all(), shard.size());
    together([&] {
      if (!comm::root()) return;
      cursor.energy_series = res.energy_series;
      cursor.tangent_series = res.tangent_series;
      checkpointing.save(cursor, std::move(arrays));
    });
    last_checkpoint = Clock::now();
  };

  Progress progress(!options.quiet && comm::root(), stderr, options.progress_terminal);
  ProgressState ps;
  ps.steps_total = job.steps;
  ps.segments_total =
      (job.steps + job.segment_steps - 1) / std::max<std::int64_t>(1, job.segment_steps);
  ps.trajectories = n;
  ps.steps_done = start;
  ps.segments_done = res.segments;
  HitBlock block;
  for (std::int64_t done = start; done < job.steps;) {
    const std::int64_t end = std::min(job.steps, done + job.segment_steps);
    const auto collect = collect_series();
    for_each_chunk(true, [&](int c, std::int64_t first) {
      // Relaunch while any trajectory (of any rank) paused on a full section buffer; the others
      // return at once.
      for (;;) {
        engine.launch(end);
        ++res.launches;
        block.clear();
        const std::int64_t full = engine.drain(block);
        block.dim = dim;
        for (auto& id : block.trajectory) id += shard.begin + first;
        deliver(block, sink, res.hits);
        if (!comm::any(full > 0)) break;
      }
      collect(c, first);
    });
    done = end;
    ++res.segments;
    sample_series(double(done) * job.dt);
    // A stop signal on any rank ends every rank here, between segments, after a checkpoint.
    // Rank 0's clock decides when one is due, so all ranks take it together.
    const int sig = int(comm::max(double(stop_requested())));
    if (checkpointing.save && done < job.steps) {
      const bool due = comm::root() && options.checkpoint_every >= 0 &&
                       seconds_since(last_checkpoint) >= options.checkpoint_every;
      if (sig != 0 || comm::max(due ? 1.0 : 0.0) > 0) checkpoint(done);
    }
    if (sig != 0 && done < job.steps) {  // after the last segment: finish, nothing is lost
      progress.finish(ps);
      throw Interrupted(sig, done, job.steps);
    }
    ps.steps_done = done;
    ps.segments_done = res.segments;
    ps.crossings = res.hits;
    ps.elapsed = seconds_since(t0);
    progress.update(ps);
  }
  progress.finish(ps);
  FinalData mine_final;
  if (chunks.count() == 1) {
    mine_final = engine.download();
  } else {
    for_each_chunk(false, [&](int c, std::int64_t first) {
      place_final(mine_final, engine.download(), first, chunks.range(c).size(), shard.size(), dim,
                  tangent_slots);
    });
  }
  res.final = comm::distributed() ? gather_final(mine_final, dim, tangent_slots, shard.size())
                                  : std::move(mine_final);
  // The slowest rank's compute time: trajectory-steps per second are then the whole run's.
  res.kernel_seconds = earlier_kernel + comm::max(engine.kernel_seconds());
  res.wall_seconds = earlier_wall + seconds_since(t0);
  return res;
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

nlohmann::ordered_json make_summary(const Job& job, const RunOptions& options, const RunResult& r) {
  const std::int64_t n = job.ensemble.count;
  std::int64_t traj_steps = 0, crossings = 0, recorded = 0;
  double emax = 0.0, jmax = 0.0, rmax = 0.0;
  std::int64_t by_status[4] = {0, 0, 0, 0};
  for (std::int64_t i = 0; i < n; ++i) {
    traj_steps += r.final.step[i];
    crossings += r.final.crossings[i];
    recorded += r.final.recorded[i];
    emax = std::max(emax, r.final.energy_error[i]);
    if (!r.final.momentum_error.empty()) jmax = std::max(jmax, r.final.momentum_error[i]);
    if (!r.final.newton_residual.empty()) rmax = std::max(rmax, r.final.newton_residual[i]);
    const auto s = r.final.status[i];
    if (s >= 0 && s < 4) ++by_status[s];
  }
  nlohmann::ordered_json s;
  s["vigor_version"] = kVersion;
  s["job"] = job.source;
  s["model"] = job.model;
  s["integrator"] = job.integrator;
  s["backend"] = r.backend;
  s["device"] = r.device;
  if (r.backend == "cpu") s["cpu_simd_lanes"] = r.simd_lanes;
  s["precision"] = job.precision == Precision::kFloat ? "float" : "double";
  if (options.threads > 0) s["threads"] = options.threads;
  if (comm::distributed()) s["mpi_ranks"] = comm::size();
  s["trajectories"] = n;
  s["ensemble_kind"] = job.ensemble.kind;
  s["ensemble_skipped"] = job.ensemble.skipped;
  s["steps"] = job.steps;
  s["dt"] = job.dt;
  s["segment_steps"] = job.segment_steps;
  s["segments"] = r.segments;
  s["launches"] = r.launches;
  s["section_buffer_per_trajectory"] = r.hit_capacity;
  if (options.memory_limit > 0) s["memory_limit_bytes"] = std::int64_t(options.memory_limit);
  if (r.chunks > 1) {
    s["chunks"] = r.chunks;
    s["chunk_trajectories"] = r.chunk_trajectories;
  }
  s["wall_seconds"] = r.wall_seconds;
  s["kernel_seconds"] = r.kernel_seconds;
  s["trajectory_steps"] = traj_steps;
  s["trajectory_steps_per_second"] =
      r.kernel_seconds > 0 ? double(traj_steps) / r.kernel_seconds : 0.0;
  s["trajectory_steps_per_second_wall"] =
      r.wall_seconds > 0 ? double(traj_steps) / r.wall_seconds : 0.0;
  s["crossings_total"] = crossings;
  s["crossings_recorded"] = recorded;
  s["crossings_dropped"] = crossings - recorded;
  s["energy_error_max"] = emax;
  // Maxima over the steps whose count is a multiple of this (1: every step).
  s["conservation_every"] = job.conservation_every;
  const ModelInfo* model = find_model(job.model);
  const IntegratorInfo* integrator = find_integrator(job.integrator);
  if (model && !model->momentum_names.empty()) {
    s["momentum_maps"] = model->momentum_names;
    s["momentum_error_max"] = jmax;
  }
  if (integrator && !integrator->is_explicit) {
    s["newton_iterations"] =
        job.newton_iterations > 0 ? job.newton_iterations : integrator->newton_iterations;
    s["newton_residual_max"] = rmax;
    if (job.newton_tolerance > 0) s["newton_tolerance"] = job.newton_tolerance;
  }
  if (!r.resumed_at.empty()) s["resumed_at_step"] = r.resumed_at;
  if (job.tangent) {
    s["tangent"] = tangent_summary(r.final.tangent_out, n);
    s["tangent_series"] = "tangent_series.csv";
  }
  // The process's peak resident memory so far (Linux reports ru_maxrss in KiB).
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) == 0)
    s["peak_host_memory_bytes"] = std::int64_t(usage.ru_maxrss) * 1024;
  s["status_counts"] = {{"ok", by_status[0]},
                        {"non-finite", by_status[1]},
                        {"escaped", by_status[2]},
                        {"newton-not-converged", by_status[3]}};
  return s;
}

namespace {

/// The shell command that continues an interrupted run of `target`.
std::string resume_command(const std::filesystem::path& target) {
  return "vigor run --resume " + target.string();
}

/// run_job, and resume_job with the directory and checkpoint of the interrupted run.
nlohmann::ordered_json run_job_in(const Job& job, const RunOptions& options, bool force,
                                  const std::filesystem::path* adopt, const Checkpoint* resume) {
  namespace fs = std::filesystem;
  // The engine before anything on disk: a missing device must not leave directories behind.
  // Under MPI every rank builds its own; rank 0 alone owns the output directory and the files.
  const auto t0 = Clock::now();
  std::unique_ptr<Engine> engine;
  together([&] { engine = build_engine(job, options); });
  std::unique_ptr<OutputDir> out;  // fails before any compute if the target is unusable
  std::unique_ptr<DirLock> lock;   // keeps a resume away while this run writes
  together([&] {
    if (!comm::root()) return;
    if (adopt) {
      // The lock first: the directory of a run that is still going is not touched.
      lock = std::make_unique<DirLock>(*adopt);
      out = std::make_unique<OutputDir>(job.output_dir, force, *adopt);
      return;
    }
    out = std::make_unique<OutputDir>(job.output_dir, force);
    lock = std::make_unique<DirLock>(out->temp());
    // Runs of this target killed before their first checkpoint left only a spill behind.
    for (const auto& d : remove_dead_runs(out->target()))
      std::fprintf(stderr,
                   "vigor: note: an interrupted run of %s is kept in %s (continue it with: %s)\n",
                   out->target().c_str(), d.c_str(), resume_command(out->target()).c_str());
  });
  const auto n = job.ensemble.count;
  const ModelInfo* model = find_model(job.model);
  const bool as_float = job.precision == Precision::kFloat;
  const bool cloud = !job.ensemble.sampling.kind.empty();  // loop and parallelepiped ensembles
  // Hits go to disk as they are drained: memory holds only the per-trajectory counts. The spill
  // feeds sections.csv (sorted by trajectory), results.h5's /sections (in drain order) and the
  // cloud invariants, all written at the end; a checkpoint counts its records, so a resumed run
  // cuts off what was spilled after it.
  std::unique_ptr<HitSpill> spill;
  const fs::path spill_file = comm::root() ? out->temp() / "hits.spill" : fs::path();
  together([&] {
    if (!comm::root() || !(job.csv || cloud || job.hdf5)) return;
    spill = resume ? std::make_unique<HitSpill>(spill_file, engine->dim(), n, resume->spill_records)
                   : std::make_unique<HitSpill>(spill_file, engine->dim(), n);
    if (resume) spill->keep();  // its checkpoint counts it
  });
  bool checkpointed = resume != nullptr;
  Checkpointing cp;
  cp.resume = resume;
  // Parked chunks: rank 0 in its temporary directory, the other ranks in the system's.
  const fs::path rank_scratch =
      fs::temp_directory_path() / ("vigor-chunks-" + std::to_string(::getpid()));
  struct ScratchDir {
    fs::path path;
    ~ScratchDir() {
      std::error_code ec;
      if (!path.empty()) fs::remove_all(path, ec);
    }
  } other_rank_scratch;
  // (Chunks creates the directory only when the run is chunked.)
  if (comm::root()) {
    cp.scratch = out->temp();
  } else {
    other_rank_scratch.path = cp.scratch = rank_scratch;
  }
  const std::uint64_t fingerprint = ensemble_fingerprint(job.ensemble);
  char cwd_buf[4096];
  const std::string cwd = ::getcwd(cwd_buf, sizeof cwd_buf) ? cwd_buf : "";
  cp.save = [&](const RunCursor& cursor, std::vector<StateArray>&& arrays) {
    Checkpoint c;
    c.job = job.source;
    c.overrides = job.overrides;
    // The backend `auto` chose, and the memory limit: a resume continues with the same ones.
    c.overrides.backend = engine->backend_name();
    c.memory_limit = options.memory_limit;
    c.cwd = cwd;
    c.trajectories = n;
    c.dim = engine->dim();
    c.ensemble_hash = fingerprint;
    if (spill) {
      spill->sync();  // on disk before the checkpoint that counts it
      c.spill_records = spill->total();
    }
    if (resume) c.resumed_at = resume->resumed_at;
    if (resume) c.resumed_at.push_back(resume->cursor.step);
    c.cursor = cursor;
    c.arrays = std::move(arrays);
    write_checkpoint(out->temp(), c);
    checkpointed = true;
    // From now on nothing that fails may remove what the checkpoint needs.
    out->keep();
    if (spill) spill->keep();
  };
  // What a failure message adds once a checkpoint exists: where it is and how to continue.
  auto kept_note = [&]() -> std::string {
    return checkpointed ? " (the last checkpoint is kept in " + out->temp().string() +
                              "; continue with: " + resume_command(out->target()) + ")"
                        : "";
  };
  RunResult r;
  try {
    r = run_ensemble(
        job, options, *engine,
        [&](const HitBlock& b) {
          if (spill) spill->append(b);
        },
        cp);
  } catch (const Interrupted& e) {
    // Every rank stops at the same segment end, after the checkpoint: nobody is left waiting.
    if (!comm::root()) throw;
    if (!checkpointed) throw;
    throw Interrupted(e.signal(), e.step(), e.steps(),
                      "checkpoint written; continue with: " + resume_command(out->target()));
  } catch (const std::exception& e) {
    const std::string kept = comm::root() ? kept_note() : "";
    // Mid-run, the other ranks wait in a collective call: end them all. Rank 0's temporary
    // directory stays beside the target (never the target itself).
    if (!comm::distributed()) {
      if (kept.empty()) throw;
      throw std::runtime_error(e.what() + kept);
    }
    std::fprintf(stderr, "error: rank %d of %d: run failed: %s%s\n", comm::rank(), comm::size(),
                 e.what(), kept.c_str());
    comm::abort_all(kExitRuntime);
  }
  engine.reset();  // device memory back before the outputs are written
  if (!comm::root()) return {};
  r.wall_seconds = (resume ? resume->cursor.wall_seconds : 0.0) + seconds_since(t0);
  nlohmann::ordered_json summary;
  // A write that fails here (a full disk) keeps the last checkpoint, when one was written (there
  // is none at the end of the run): --resume integrates again from it and writes the results.
  try {
    nlohmann::ordered_json invariants;  // cloud ensembles only
    if (spill) {
      spill->finish();
      // Always present with CSV output (header only without a section), so scripts can rely on it.
      if (job.csv)
        write_sections_csv(out->temp() / "sections.csv", *spill, model->state_names, as_float);
      if (cloud) invariants = write_invariants(out->temp() / "invariants.csv", job, *spill);
    }
    const bool implicit = !find_integrator(job.integrator)->is_explicit;
    const auto final_table = final_columns(r.final, job.dt, model->state_names, n,
                                           !model->momentum_names.empty(), implicit);
    if (job.csv) write_csv(out->temp() / "final.csv", final_table, as_float);
    r.energy_series.write_csv(out->temp() / "energy_series.csv");
    if (job.tangent) r.tangent_series.write_csv(out->temp() / "tangent_series.csv");
    summary = make_summary(job, options, r);
    if (!invariants.is_null()) summary["invariants"] = invariants;
    summary["energy_series"] = "energy_series.csv";
    summary["output_dir"] = out->target().string();
    if (job.hdf5) {
      summary["hdf5"] = "results.h5";
      std::error_code ec;
      fs::remove(out->temp() / "results.h5", ec);  // a partial one of an attempt killed here
      Hdf5Results h5(out->temp() / "results.h5", model->state_names, n, as_float);
      h5.write_table("initial", initial_columns(job.ensemble.state, model->state_names, n));
      // Blocks of 64 Ki records: memory stays bounded whatever the number of crossings.
      if (spill)
        for_each_spill_block(*spill, std::size_t(1) << 16,
                             [&](const HitBlock& b) { h5.append_sections(b); });
      h5.write_table("final", final_table);
      h5.write_series("energy_series", r.energy_series);
      if (job.tangent) h5.write_series("tangent_series", r.tangent_series);
      h5.write_summary(summary);
      h5.close();
    }
    write_json(out->temp() / "summary.json", summary);
  } catch (const std::exception& e) {
    const std::string kept = kept_note();
    if (kept.empty()) throw;
    throw std::runtime_error(e.what() + kept);
  }
  // The results are complete: the checkpoint first (a kill from here on leaves finished
  // results, which --resume just moves into place), then the spill and the other scratch files.
  std::error_code ec;
  fs::remove(out->temp() / kCheckpointFile, ec);
  if (spill) spill->remove();
  OutputDir::remove_scratch(out->temp());
  out->commit();
  return summary;
}

}  // namespace

nlohmann::ordered_json run_job(const Job& job, const RunOptions& options, bool force) {
  return run_job_in(job, options, force, nullptr, nullptr);
}

nlohmann::ordered_json resume_job(const std::string& out_dir, const RunOptions& options,
                                  bool force) {
  namespace fs = std::filesystem;
  if (out_dir.empty()) throw JobError("--resume", "needs the results directory of the run");
  // Absolute and without a trailing separator, as OutputDir names it ("res/" is "res").
  const auto absolute = [](const std::string& p) {
    fs::path a = fs::absolute(fs::path(p)).lexically_normal();
    return a.has_filename() ? a : a.parent_path();
  };
  const fs::path target = absolute(out_dir);
  // Every rank finds and checks the checkpoint itself (a shared file system, like the job's); a
  // rank that cannot fails them all instead of leaving the others waiting.
  fs::path dir;
  Checkpoint c;
  Job job;
  bool finished = false;
  together([&] {
    const auto found = find_interrupted_runs(target);
    if (found.empty())
      throw JobError("--resume", "no interrupted run of \"" + out_dir +
                                     "\" to resume (no temporary directory with a checkpoint "
                                     "beside it)");
    if (found.size() > 1) {
      std::string list;
      for (const auto& d : found) list += "\n  " + d.string();
      throw JobError("--resume", "several interrupted runs of \"" + out_dir +
                                     "\"; remove all but the one to resume:" + list);
    }
    dir = found.front();
    // Killed after its results were complete: only the final rename was missing.
    finished = !fs::exists(dir / kCheckpointFile);
    if (finished) return;
    try {
      c = read_checkpoint(dir);
    } catch (const std::runtime_error& e) {
      throw JobError("--resume", e.what());
    }
    // Relative paths in the job (ensemble.file, output.dir) meant what they meant at the start.
    std::error_code ec;
    fs::current_path(c.cwd, ec);
    if (ec)
      throw JobError("--resume", "cannot return to the run's working directory \"" + c.cwd +
                                     "\": " + ec.message());
    job = parse_job(c.job.dump(), c.overrides);
    if (absolute(job.output_dir) != target)
      throw JobError("--resume", "the checkpoint in " + dir.string() +
                                     " belongs to a run writing " + job.output_dir);
    if (job.ensemble.count != c.trajectories ||
        ensemble_fingerprint(job.ensemble) != c.ensemble_hash)
      throw JobError("--resume",
                     "the job's initial states differ from those the checkpoint was taken from "
                     "(was ensemble.file changed?)");
    if (c.cursor.step <= 0 || c.cursor.step > job.steps)
      throw JobError("--resume", "the checkpoint is at step " + std::to_string(c.cursor.step) +
                                     ", outside the job's " + std::to_string(job.steps) + " steps");
  });
  if (finished) {
    if (!comm::root()) return {};
    DirLock lock(dir);
    OutputDir out(target.string(), force, dir);
    nlohmann::ordered_json summary;
    {
      std::ifstream in(dir / "summary.json");
      summary = nlohmann::ordered_json::parse(in, nullptr, false);
    }
    if (summary.is_discarded())
      throw std::runtime_error("summary.json of " + dir.string() + " is unreadable");
    OutputDir::remove_scratch(dir);
    out.commit();
    return summary;
  }
  // The memory limit of the interrupted run unless another is given now.
  RunOptions opt = options;
  if (opt.memory_limit == 0) opt.memory_limit = std::size_t(c.memory_limit);
  return run_job_in(job, opt, force, &dir, &c);
}

}  // namespace vigor::host
