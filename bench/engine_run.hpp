/// @file engine_run.hpp
/// @brief Drive an engine the way the run loop does (host/run/segment_loop.cpp) (segments, relaunch
/// while trajectories are paused on full section buffers) and time it: shared by the benchmark
/// tables.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_util.hpp"
#include "host/backends/engine.hpp"
#include "host/backends/registry.hpp"

namespace vigor_bench {

inline constexpr std::int64_t kSegmentSteps = 10'000;  // the run loop's default segment

struct EngineRun {
  double seconds = 0;
  double kernel_seconds = 0;
  std::int64_t launches = 0;
  std::int64_t hits = 0;
  std::int64_t crossings = 0;
  std::int64_t unfinished = 0;  ///< trajectories not at `steps` with status ok
  double max_energy_error = 0;
  double max_newton_residual = 0;
  int simd_lanes = 1;
  std::string device;
  std::vector<double> state;
};

/// Upload `soa` (n trajectories), advance `steps` steps, download; timed from the first launch
/// to the last drain.
inline EngineRun run_engine(const vigor::host::Integration& integration,
                            vigor::host::BackendKind backend, const std::vector<double>& soa,
                            std::int64_t n, std::int64_t steps,
                            const vigor::host::EngineResources& resources = {}) {
  EngineRun r;
  auto engine = vigor::host::make_engine(integration, resources, backend);
  r.device = engine->device_name();
  r.simd_lanes = engine->simd_lanes();
  engine->upload(soa, n);
  vigor::host::HitBlock block;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::int64_t done = 0; done < steps;) {
    const std::int64_t end = std::min(steps, done + kSegmentSteps);
    for (;;) {
      engine->launch(end);
      ++r.launches;
      block.clear();
      const std::int64_t full = engine->drain(block);
      r.hits += std::int64_t(block.trajectory.size());
      if (full == 0) break;
    }
    done = end;
  }
  r.seconds = vigor_bench_util::seconds_since(t0);
  r.kernel_seconds = engine->kernel_seconds();
  vigor::host::FinalData f = engine->download();
  for (std::int64_t i = 0; i < n; ++i) {
    const auto ui = std::size_t(i);
    r.crossings += f.crossings[ui];
    r.max_energy_error = std::max(r.max_energy_error, f.energy_error[ui]);
    if (!f.newton_residual.empty())
      r.max_newton_residual = std::max(r.max_newton_residual, f.newton_residual[ui]);
    if (f.step[ui] != steps || f.status[ui] != 0) ++r.unfinished;
  }
  r.state = std::move(f.state);
  return r;
}

}  // namespace vigor_bench
