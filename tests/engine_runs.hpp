/// @file engine_runs.hpp
/// @brief A job through one engine as the run loop drives it (upload, then each segment launched
/// and drained until no trajectory is paused on a full hit buffer), and the bitwise comparison of
/// two such runs: for the tests that hold one engine to another (SIMD lanes to scalar lanes, bursts
/// to per-step testing, a plugin to the compiled-in engine).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "host/backends/engine.hpp"
#include "host/job/job.hpp"
#include "host/output/hits.hpp"

namespace vigor_test {

struct EngineRun {
  vigor::host::FinalData final;
  vigor::host::HitStore hits;
  int lanes = 0;  ///< the engine's simd_lanes()
};

inline EngineRun run_engine(vigor::host::Engine& e, const vigor::host::Job& job) {
  e.upload(job.ensemble.state, job.ensemble.count);
  EngineRun o;
  o.lanes = e.simd_lanes();
  vigor::host::HitBlock block;
  for (std::int64_t done = 0; done < job.steps;) {
    const std::int64_t end = std::min(job.steps, done + job.segment_steps);
    for (;;) {
      e.launch(end);
      block.clear();
      const auto full = e.drain(block);
      o.hits.append(block);
      if (full == 0) break;
    }
    done = end;
  }
  o.final = e.download();
  return o;
}

/// Hits per trajectory in order (drain order differs between paths only across trajectories).
inline std::vector<std::vector<double>> per_trajectory(const vigor::host::HitStore& s,
                                                       std::int64_t n) {
  std::vector<std::vector<double>> v{std::size_t(n)};
  const std::size_t w = std::size_t(s.dim + 1);
  for (std::size_t k = 0; k < s.size(); ++k)
    v[std::size_t(s.trajectory[k])].insert(v[std::size_t(s.trajectory[k])].end(),
                                           s.values.begin() + k * w,
                                           s.values.begin() + (k + 1) * w);
  return v;
}

/// Final states bit for bit, energy errors, steps, statuses, crossings and every hit.
inline void expect_identical(const EngineRun& a, const EngineRun& b, std::int64_t n) {
  ASSERT_EQ(a.final.state.size(), b.final.state.size());
  EXPECT_EQ(0, std::memcmp(a.final.state.data(), b.final.state.data(),
                           a.final.state.size() * sizeof(double)));
  EXPECT_EQ(a.final.energy_error, b.final.energy_error);
  EXPECT_EQ(a.final.step, b.final.step);
  EXPECT_EQ(a.final.status, b.final.status);
  EXPECT_EQ(a.final.crossings, b.final.crossings);
  EXPECT_EQ(a.final.recorded, b.final.recorded);
  EXPECT_EQ(per_trajectory(a.hits, n), per_trajectory(b.hits, n));
}

}  // namespace vigor_test
