/// @file test_support.hpp
/// @brief What the integrator tests share: phase points to start from, and the least-squares slope
/// of log(error) against log(h).
#pragma once

#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <vector>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/mechanics.hpp"

namespace vigor_test {

/// Least-squares slope of log(err) against log(h): the observed order of convergence.
inline double fitted_slope(const std::vector<double>& h, const std::vector<double>& err) {
  const std::size_t n = h.size();
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = std::log(h[i]), y = std::log(err[i]);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (double(n) * sxy - sx * sy) / (double(n) * sxx - sx * sx);
}

/// A phase point from positions and canonical momenta, with the force filled in for separable
/// models (the integrators' entry invariant; the driver's load does the same).
template <class M, class Real = double>
vigor::kernels::Phase<Real, M::dof> start(const M& m, std::initializer_list<double> q,
                                          std::initializer_list<double> p) {
  vigor::kernels::Phase<Real, M::dof> s{};
  int i = 0;
  for (double x : q) s.q[i++] = Real(x);
  i = 0;
  for (double x : p) s.p[i++] = Real(x);
  if constexpr (vigor::kernels::SeparableModel<M>) vigor::kernels::refresh_force(m, s);
  return s;
}

}  // namespace vigor_test
