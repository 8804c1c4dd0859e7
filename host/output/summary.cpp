/// @file summary.cpp
/// @brief summary.json (DESIGN.md §4, docs/output.md).
#include "host/output/summary.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>

#include "host/backends/registry.hpp"
#include "host/output/tangent_report.hpp"
#include "vigor/version.hpp"

namespace vigor::host {

namespace {

/// Sums and maxima over the trajectories of a finished run.
struct Totals {
  std::int64_t trajectory_steps = 0, crossings = 0, recorded = 0;
  double energy_error_max = 0.0, momentum_error_max = 0.0, newton_residual_max = 0.0;
  std::int64_t by_status[4] = {0, 0, 0, 0};  ///< ok, non-finite, escaped, newton-not-converged
};

Totals totals_of(const FinalData& f, std::int64_t n) {
  Totals t;
  for (std::int64_t i = 0; i < n; ++i) {
    t.trajectory_steps += f.step[i];
    t.crossings += f.crossings[i];
    t.recorded += f.recorded[i];
    t.energy_error_max = std::max(t.energy_error_max, f.energy_error[i]);
    if (!f.momentum_error.empty())
      t.momentum_error_max = std::max(t.momentum_error_max, f.momentum_error[i]);
    if (!f.newton_residual.empty())
      t.newton_residual_max = std::max(t.newton_residual_max, f.newton_residual[i]);
    const auto s = f.status[i];
    if (s >= 0 && s < 4) ++t.by_status[s];
  }
  return t;
}

/// What ran, and where.
void add_run_identity(nlohmann::ordered_json& s, const Job& job, const RunResult& r) {
  s["vigor_version"] = kVersion;
  s["job"] = job.source;
  s["model"] = job.integration.model;
  s["integrator"] = job.integration.integrator;
  s["backend"] = r.backend;
  s["device"] = r.device;
  if (r.backend == "cpu") s["cpu_simd_lanes"] = r.simd_lanes;
  s["precision"] = job.integration.precision == Precision::kFloat ? "float" : "double";
  if (r.threads > 0) s["threads"] = r.threads;
  if (r.mpi_ranks > 1) s["mpi_ranks"] = r.mpi_ranks;
}

void add_sizes(nlohmann::ordered_json& s, const Job& job, const RunResult& r) {
  s["trajectories"] = job.ensemble.count;
  s["ensemble_kind"] = job.ensemble.kind;
  s["ensemble_skipped"] = job.ensemble.skipped;
  s["steps"] = job.steps;
  s["dt"] = job.integration.dt;
  s["segment_steps"] = job.segment_steps;
  s["segments"] = r.segments;
  s["launches"] = r.launches;
  s["section_buffer_per_trajectory"] = r.hit_capacity;
  if (r.memory_limit > 0) s["memory_limit_bytes"] = std::int64_t(r.memory_limit);
  if (r.chunks > 1) {
    s["chunks"] = r.chunks;
    s["chunk_trajectories"] = r.chunk_trajectories;
  }
}

void add_timings(nlohmann::ordered_json& s, const RunResult& r, std::int64_t traj_steps) {
  s["wall_seconds"] = r.wall_seconds;
  s["kernel_seconds"] = r.kernel_seconds;
  s["trajectory_steps"] = traj_steps;
  s["trajectory_steps_per_second"] =
      r.kernel_seconds > 0 ? double(traj_steps) / r.kernel_seconds : 0.0;
  s["trajectory_steps_per_second_wall"] =
      r.wall_seconds > 0 ? double(traj_steps) / r.wall_seconds : 0.0;
}

/// The energy, momentum and Newton maxima, with what they depend on.
void add_conservation(nlohmann::ordered_json& s, const Job& job, const Totals& t) {
  s["energy_error_max"] = t.energy_error_max;
  // Maxima over the steps whose count is a multiple of this (1: every step).
  s["conservation_every"] = job.integration.conservation_every;
  if (job.integration.compensated) s["compensated"] = true;
  const ModelInfo* model = find_model(job.integration.model);
  const IntegratorInfo* integrator = find_integrator(job.integration.integrator);
  if (model && !model->momentum_names.empty()) {
    s["momentum_maps"] = model->momentum_names;
    s["momentum_error_max"] = t.momentum_error_max;
  }
  if (integrator && !integrator->is_explicit) {
    s["newton_iterations"] = job.integration.newton_iterations > 0
                                 ? job.integration.newton_iterations
                                 : integrator->newton_iterations;
    s["newton_residual_max"] = t.newton_residual_max;
    if (job.integration.newton_tolerance > 0)
      s["newton_tolerance"] = job.integration.newton_tolerance;
  }
}

/// The process's peak resident memory so far (Linux reports ru_maxrss in KiB).
void add_peak_host_memory(nlohmann::ordered_json& s) {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) == 0)
    s["peak_host_memory_bytes"] = std::int64_t(usage.ru_maxrss) * 1024;
}

}  // namespace

nlohmann::ordered_json make_summary(const Job& job, const RunResult& r) {
  const std::int64_t n = job.ensemble.count;
  const Totals t = totals_of(r.final, n);
  nlohmann::ordered_json s;
  add_run_identity(s, job, r);
  add_sizes(s, job, r);
  add_timings(s, r, t.trajectory_steps);
  s["crossings_total"] = t.crossings;
  s["crossings_recorded"] = t.recorded;
  s["crossings_dropped"] = t.crossings - t.recorded;
  add_conservation(s, job, t);
  if (!r.resumed_at.empty()) s["resumed_at_step"] = r.resumed_at;
  if (job.integration.tangent) {
    s["tangent"] = tangent_summary(r.final.tangent_out, n);
    s["tangent_series"] = "tangent_series.csv";
  }
  add_peak_host_memory(s);
  s["status_counts"] = {{"ok", t.by_status[0]},
                        {"non-finite", t.by_status[1]},
                        {"escaped", t.by_status[2]},
                        {"newton-not-converged", t.by_status[3]}};
  return s;
}

}  // namespace vigor::host
