/// @file lie_group_support.hpp
/// @brief What the Lie-group tests (test_lie_group.cpp, test_lie_group_se3.cpp) share: the
/// Bernoulli numbers of the exponential chart's reference series, and one trajectory driven
/// through the segment driver.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/driver/advance.hpp"

namespace vigor_test {

/// Bernoulli numbers B_0 .. B_n (B_1 = -1/2) in long double, by the recursion
/// sum_{k<=m} C(m+1, k) B_k = 0.
inline std::vector<long double> bernoulli(int n) {
  std::vector<long double> b(std::size_t(n + 1), 0.0L);
  b[0] = 1.0L;
  for (int m = 1; m <= n; ++m) {
    long double s = 0.0L, c = 1.0L;  // c = C(m+1, k)
    for (int k = 0; k < m; ++k) {
      s += c * b[std::size_t(k)];
      c = c * (m + 1 - k) / (k + 1);
    }
    b[std::size_t(m)] = -s / (m + 1);
  }
  return b;
}

/// One trajectory of `state` advanced by the driver (kernels/driver/advance.hpp) for `steps`
/// steps of h, with its energy, momentum-map and Newton diagnostics.
struct DriverRun {
  std::vector<double> state;
  double energy0 = 0, energy_error = 0, momentum_error = 0, newton = 0;
  std::vector<double> momentum0;
  std::int64_t step = 0, crossings = 0, recorded = 0;
  std::int32_t status = 0, hit_count = 0;

  template <class M, class I>
  DriverRun(const M& m, const I& integ, std::vector<double> x0, double h, std::int64_t steps)
      : state(std::move(x0)), momentum0(8, 0.0) {
    vigor::kernels::EnsembleArrays<double> a;
    a.state = state.data();
    a.energy0 = &energy0;
    a.energy_error = &energy_error;
    a.momentum0 = momentum0.data();
    a.momentum_error = &momentum_error;
    a.newton_residual = &newton;
    a.step = &step;
    a.status = &status;
    a.crossings = &crossings;
    a.recorded = &recorded;
    a.hit_count = &hit_count;
    vigor::kernels::SegmentParams<double> sp;
    sp.n = 1;
    sp.h = h;
    sp.end_step = steps;
    vigor::kernels::initial_energy(m, a, 1, 0);
    vigor::kernels::advance_trajectory(m, integ, sp, a, 0);
  }
};

}  // namespace vigor_test
