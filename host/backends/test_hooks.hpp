/// @file test_hooks.hpp
/// @brief Switches the test suite uses to hold the engines to their references, and a benchmark
/// uses to sweep a tuning constant. Nothing in a run sets them; an engine reads them when it is
/// constructed.
#pragma once

namespace vigor::host {

struct EngineTestHooks {
  /// CPU: every pair on the scalar lanes (kernels::ScalarLanes, the GPU thread's form of the
  /// driver) instead of SIMD lanes; the SIMD tests compare the two bit for bit.
  bool scalar_lanes = false;
  /// Every step tested on its own (kernels::SegmentParams::bursts = false), the reference the
  /// burst tests hold the bursts to.
  bool per_step = false;
  /// Steps per event burst instead of the engine's own (kGpuEventBurstSteps in
  /// host/backends/engine_common.hpp), where > 0, for engines whose lanes have them (the GPU's;
  /// CPU engines built with kEventBursts in the tests): `vigor-bench --event-burst` sweeps it.
  int event_burst = 0;
};

/// The process's hooks (all off unless a test sets them).
EngineTestHooks& engine_test_hooks();

}  // namespace vigor::host
