/// @file ulp_error.hpp
/// @brief Errors in ulps against a long-double reference, the bits of a float or double, and the
/// pack shapes whose lanes are checked, for the tests of vigor's own elementary functions
/// (test_trig.cpp, test_exp_log.cpp, ...).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/simd/pack.hpp"

namespace vigor_test {

/// |got - want| in units of the last place of T at want's magnitude (subnormal ulps below the
/// normal range); 0 for matching NaN, infinities and zeros, 1e30 for a mismatch among them.
template <class T>
double ulps(T got, long double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0.0 : 1e30;
  if (std::isinf(want)) return got == static_cast<T>(want) ? 0.0 : 1e30;
  if (want == 0) return got == 0 ? 0.0 : 1e30;
  int e;
  frexpl(want, &e);
  constexpr int digits = std::numeric_limits<T>::digits;
  constexpr int min_exp = std::numeric_limits<T>::min_exponent;
  const long double ulp = std::ldexp(1.0L, std::max(e, min_exp) - digits);
  return static_cast<double>(std::fabs((static_cast<long double>(got) - want) / ulp));
}

/// The bits of a float or double, widened to 64 bits.
template <class T>
std::uint64_t bits(T x) {
  std::uint64_t u = 0;
  std::memcpy(&u, &x, sizeof x);
  return u;
}

/// Calls f.template operator()<T, W>() for each pack shape the lane tests cover: the native width
/// and twice it (two registers per pack), in double and in float.
template <class F>
void for_each_pack_shape(F f) {
  using vigor::kernels::native_lanes;
  f.template operator()<double, native_lanes<double>()>();
  f.template operator()<double, 2 * native_lanes<double>()>();
  f.template operator()<float, native_lanes<float>()>();
  f.template operator()<float, 2 * native_lanes<float>()>();
}

}  // namespace vigor_test
