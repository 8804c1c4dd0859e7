/// @file engine_hooks.hpp
/// @brief The engines' test hooks (host/backends/test_hooks.hpp) set for the engines constructed
/// in a scope, and restored at its end.
#pragma once

#include "host/backends/test_hooks.hpp"

namespace vigor_test {

struct ScopedEngineHooks {
  vigor::host::EngineTestHooks saved = vigor::host::engine_test_hooks();
  /// scalar_lanes: the CPU's scalar lanes instead of SIMD lanes; per_step: no bursts;
  /// event_burst: steps per event burst (0: the backend's own).
  ScopedEngineHooks(bool scalar_lanes, bool per_step, int event_burst = 0) {
    vigor::host::engine_test_hooks().scalar_lanes = scalar_lanes;
    vigor::host::engine_test_hooks().per_step = per_step;
    vigor::host::engine_test_hooks().event_burst = event_burst;
  }
  ~ScopedEngineHooks() { vigor::host::engine_test_hooks() = saved; }
  ScopedEngineHooks(const ScopedEngineHooks&) = delete;
  ScopedEngineHooks& operator=(const ScopedEngineHooks&) = delete;
};

}  // namespace vigor_test
