/// @file run_result.hpp
/// @brief What a finished run produced (host/run/), as the writers (writers.hpp) and the summary
/// (summary.hpp) read it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "host/backends/engine.hpp"
#include "host/output/series.hpp"
#include "host/output/tangent_report.hpp"

namespace vigor::host {

struct RunResult {
  std::string backend;
  std::string device;
  int simd_lanes = 1;  ///< trajectories per SIMD block on the CPU backend (1 on the GPU)
  int threads = 0;     ///< --threads as given (0: the OpenMP default)
  int mpi_ranks = 1;
  std::size_t memory_limit = 0;  ///< --memory-limit as given (0: none)
  std::int64_t segments = 0;
  std::int64_t launches = 0;
  int hit_capacity = 0;
  int chunks = 1;  ///< turns the (largest) shard took on the engine per segment
  std::int64_t chunk_trajectories = 0;  ///< trajectories per chunk
  double wall_seconds = 0.0;
  double kernel_seconds = 0.0;
  std::int64_t hits = 0;                 ///< hits drained (and handed to the sink) over the run
  std::vector<std::int64_t> resumed_at;  ///< steps from which the run was resumed (if ever)
  FinalData final;
  TangentSeries tangent_series;  ///< per-segment tangent statistics (diagnostics.tangent only)
  /// Per-segment statistics of each trajectory's max |H - H0| so far (energy_series.csv).
  StatSeries energy_series{{"energy_error"}};
};

}  // namespace vigor::host
