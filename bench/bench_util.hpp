/// @file bench_util.hpp
/// @brief Small helpers the benchmark programs share: timing, dates, argument parsing, machine.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>

#include "host/backends/cpu_info.hpp"  // host::cpu_model_name

namespace vigor_bench_util {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// "2026-11-21T12:00:00Z".
inline std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

/// A whole number in [1, 1e12] written as an integer or in exponent form ("1e6"); -1 otherwise.
inline std::int64_t positive_count(const std::string& s) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    return -1;
  }
  if (used != s.size() || !(v >= 1) || v > 1e12 || v != std::floor(v)) return -1;
  return std::int64_t(v);
}

/// A number with printf's format `f` ("%.3g": three significant digits, as the tables print rates).
inline std::string format_number(double x, const char* f = "%.3g") {
  char buf[48];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

inline std::string cpu_model() { return vigor::host::cpu_model_name(); }

}  // namespace vigor_bench_util
