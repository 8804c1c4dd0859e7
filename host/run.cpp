#include "host/run.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "host/cli.hpp"
#include "host/comm.hpp"
#include "host/hdf5_results.hpp"
#include "host/invariants.hpp"
#include "host/progress.hpp"
#include "host/stop.hpp"
#include "host/registry.hpp"
#include "vigor/version.hpp"

namespace vigor::host {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// This rank's share of the ensemble's initial states (SoA: component c of trajectory i at
/// c n + i).
std::vector<double> shard_states(const std::vector<double>& soa, std::int64_t n, int dim,
                                 Shard s) {
  std::vector<double> out;
  out.reserve(std::size_t(s.size()) * std::size_t(dim));
  for (int c = 0; c < dim; ++c) {
    const auto first = soa.begin() + std::ptrdiff_t(c * n + s.begin);
    out.insert(out.end(), first, first + std::ptrdiff_t(s.size()));
  }
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

EngineRequest make_request(const Job& job, const RunOptions& options) {
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
  r.threads = options.threads;
  return r;
}

std::unique_ptr<Engine> build_engine(const Job& job, const RunOptions& options) {
  return make_engine(make_request(job, options), resolve_backend(job.backend));
}

RunResult run_ensemble(const Job& job, const RunOptions& options, Engine& engine,
                       const HitSink& sink) {
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
  engine.upload(comm::distributed() ? shard_states(job.ensemble.state, n, dim, shard)
                                    : job.ensemble.state,
                shard.size());
  res.hit_capacity = engine.hit_capacity();
  const auto sample_series = [&](double t) {
    const auto energy = comm::gather(engine.energy_error_snapshot());
    if (comm::root()) res.energy_series.add(t, {summarize(energy)});
    if (job.tangent) {
      const auto tangent = gather_slots(engine.tangent_snapshot(), tangent_slots, shard.size());
      if (comm::root()) res.tangent_series.add(t, tangent, n);
    }
  };
  sample_series(0.0);

  Progress progress(!options.quiet && comm::root(), stderr, options.progress_terminal);
  ProgressState ps;
  ps.steps_total = job.steps;
  ps.segments_total = (job.steps + job.segment_steps - 1) / std::max<std::int64_t>(1, job.segment_steps);
  ps.trajectories = n;
  HitBlock block;
  for (std::int64_t done = 0; done < job.steps;) {
    const std::int64_t end = std::min(job.steps, done + job.segment_steps);
    // Relaunch while any trajectory (of any rank) paused on a full section buffer; the others
    // return at once.
    for (;;) {
      engine.launch(end);
      ++res.launches;
      block.clear();
      const std::int64_t full = engine.drain(block);
      block.dim = dim;
      for (auto& id : block.trajectory) id += shard.begin;
      deliver(block, sink, res.hits);
      if (!comm::any(full > 0)) break;
    }
    done = end;
    ++res.segments;
    sample_series(double(done) * job.dt);
    // A stop signal on any rank ends every rank here, between segments.
    if (const int sig = int(comm::max(double(stop_requested()))); sig != 0) {
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
  res.final = comm::distributed() ? gather_final(engine.download(), dim, tangent_slots, shard.size())
                                  : engine.download();
  // The slowest rank's compute time: trajectory-steps per second are then the whole run's.
  res.kernel_seconds = comm::max(engine.kernel_seconds());
  res.wall_seconds = seconds_since(t0);
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

nlohmann::ordered_json run_job(const Job& job, const RunOptions& options, bool force) {
  // The engine before anything on disk: a missing device must not leave directories behind.
  // Under MPI every rank builds its own; rank 0 alone owns the output directory and the files.
  const auto t0 = Clock::now();
  std::unique_ptr<Engine> engine;
  together([&] { engine = build_engine(job, options); });
  std::unique_ptr<OutputDir> out;  // fails before any compute if the target is unusable
  together([&] {
    if (comm::root()) out = std::make_unique<OutputDir>(job.output_dir, force);
  });
  const auto n = job.ensemble.count;
  const ModelInfo* model = find_model(job.model);
  const bool as_float = job.precision == Precision::kFloat;
  const bool cloud = !job.ensemble.sampling.kind.empty();  // loop and parallelepiped ensembles
  // Hits go to disk as they are drained: memory holds only the per-trajectory counts. The spill
  // feeds sections.csv (sorted by trajectory) and the cloud invariants; results.h5 takes each
  // block as it comes.
  std::unique_ptr<HitSpill> spill;
  std::unique_ptr<Hdf5Results> h5;
  together([&] {
    if (!comm::root()) return;
    if (job.csv || cloud)
      spill = std::make_unique<HitSpill>(out->temp() / "hits.spill", engine->dim(), n);
    if (job.hdf5) {
      h5 = std::make_unique<Hdf5Results>(out->temp() / "results.h5", model->state_names, n,
                                         as_float);
      h5->write_table("initial", initial_columns(job.ensemble.state, model->state_names, n));
    }
  });
  RunResult r;
  try {
    r = run_ensemble(job, options, *engine, [&](const HitBlock& b) {
      if (spill) spill->append(b);
      if (h5) h5->append_sections(b);
    });
  } catch (const Interrupted&) {
    throw;  // every rank stops at the same segment end: nobody is left waiting
  } catch (const std::exception& e) {
    // Mid-run, the other ranks wait in a collective call: end them all. Rank 0's temporary
    // directory stays beside the target (never the target itself).
    if (!comm::distributed()) throw;
    std::fprintf(stderr, "error: rank %d of %d: run failed: %s\n", comm::rank(), comm::size(),
                 e.what());
    comm::abort_all(kExitRuntime);
  }
  engine.reset();  // device memory back before the outputs are written
  if (!comm::root()) return {};
  r.wall_seconds = seconds_since(t0);
  nlohmann::ordered_json invariants;  // cloud ensembles only
  if (spill) {
    spill->finish();
    // Always present with CSV output (header only without a section), so scripts can rely on it.
    if (job.csv) write_sections_csv(out->temp() / "sections.csv", *spill, model->state_names, as_float);
    if (cloud) invariants = write_invariants(out->temp() / "invariants.csv", job, *spill);
    spill->remove();  // never part of the results
  }
  const bool implicit = !find_integrator(job.integrator)->is_explicit;
  const auto final_table = final_columns(r.final, job.dt, model->state_names, n,
                                         !model->momentum_names.empty(), implicit);
  if (job.csv) write_csv(out->temp() / "final.csv", final_table, as_float);
  r.energy_series.write_csv(out->temp() / "energy_series.csv");
  if (job.tangent) r.tangent_series.write_csv(out->temp() / "tangent_series.csv");
  auto summary = make_summary(job, options, r);
  if (!invariants.is_null()) summary["invariants"] = invariants;
  summary["energy_series"] = "energy_series.csv";
  summary["output_dir"] = out->target().string();
  if (h5) {
    summary["hdf5"] = "results.h5";
    h5->write_table("final", final_table);
    h5->write_series("energy_series", r.energy_series);
    if (job.tangent) h5->write_series("tangent_series", r.tangent_series);
    h5->write_summary(summary);
    h5->close();
  }
  write_json(out->temp() / "summary.json", summary);
  out->commit();
  return summary;
}

}  // namespace vigor::host
