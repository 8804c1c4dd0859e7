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

nlohmann::ordered_json make_summary(const Job& job, const RunResult& r) {
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
  s["model"] = job.integration.model;
  s["integrator"] = job.integration.integrator;
  s["backend"] = r.backend;
  s["device"] = r.device;
  if (r.backend == "cpu") s["cpu_simd_lanes"] = r.simd_lanes;
  s["precision"] = job.integration.precision == Precision::kFloat ? "float" : "double";
  if (r.threads > 0) s["threads"] = r.threads;
  if (r.mpi_ranks > 1) s["mpi_ranks"] = r.mpi_ranks;
  s["trajectories"] = n;
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
  s["conservation_every"] = job.integration.conservation_every;
  if (job.integration.compensated) s["compensated"] = true;
  const ModelInfo* model = find_model(job.integration.model);
  const IntegratorInfo* integrator = find_integrator(job.integration.integrator);
  if (model && !model->momentum_names.empty()) {
    s["momentum_maps"] = model->momentum_names;
    s["momentum_error_max"] = jmax;
  }
  if (integrator && !integrator->is_explicit) {
    s["newton_iterations"] = job.integration.newton_iterations > 0
                                 ? job.integration.newton_iterations
                                 : integrator->newton_iterations;
    s["newton_residual_max"] = rmax;
    if (job.integration.newton_tolerance > 0)
      s["newton_tolerance"] = job.integration.newton_tolerance;
  }
  if (!r.resumed_at.empty()) s["resumed_at_step"] = r.resumed_at;
  if (job.integration.tangent) {
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

}  // namespace vigor::host
