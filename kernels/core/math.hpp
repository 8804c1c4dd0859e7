/// @file math.hpp
/// @brief Device-safe scalar math for float and double, in namespace vigor::kernels.
///
/// Models and integrators call these unqualified (`sqrt(x)`) from inside vigor namespaces, and the
/// overloads for Dual numbers (dual.hpp) join them by argument-dependent lookup. The float
/// overloads call the float functions (sqrtf, sinf, ...) so that an FP32 build contains no FP64
/// instruction. sin, cos, tan, exp, log, atan, atan2, asin, acos, sinh, cosh, tanh and pow are
/// vigor's own (trig.hpp, exp_log.hpp, inverse_trig.hpp, hyperbolic.hpp, pow.hpp); sqrt, abs, fma,
/// ldexp and select live in arith.hpp.
#pragma once

#include <math.h>

#include <cmath>

#include "arith.hpp"
#include "config.hpp"
#include "exp_log.hpp"
#include "hyperbolic.hpp"
#include "inverse_trig.hpp"
#include "pow.hpp"
#include "trig.hpp"

namespace vigor::kernels {

#define VIGOR_UNARY_MATH(fn)                                    \
  VIGOR_HD VIGOR_INLINE double fn(double x) { return ::fn(x); } \
  VIGOR_HD VIGOR_INLINE float fn(float x) { return ::fn##f(x); }

VIGOR_UNARY_MATH(cbrt)
#undef VIGOR_UNARY_MATH

// sin, cos and tan are vigor's own (trig.hpp): the same bits on the scalar CPU path, the SIMD
// lanes and the GPU.
VIGOR_HD VIGOR_INLINE double sin(double x) { return sin_of(x); }
VIGOR_HD VIGOR_INLINE double cos(double x) { return cos_of(x); }
VIGOR_HD VIGOR_INLINE float sin(float x) { return sin_of(x); }
VIGOR_HD VIGOR_INLINE float cos(float x) { return cos_of(x); }
VIGOR_HD VIGOR_INLINE void sincos(double x, double& s, double& c) { sincos_of(x, s, c); }
VIGOR_HD VIGOR_INLINE void sincos(float x, float& s, float& c) { sincos_of(x, s, c); }
/// sincos where a large nested dual takes it (dual.hpp, Dual::kTrigCalled): on a scalar, the
/// kernel inline as ever; only the CPU's packs call it (pack.hpp).
VIGOR_HD VIGOR_INLINE void sincos_called(double x, double& s, double& c) { sincos_of(x, s, c); }
VIGOR_HD VIGOR_INLINE void sincos_called(float x, float& s, float& c) { sincos_of(x, s, c); }
VIGOR_HD VIGOR_INLINE double tan(double x) { return tan_of(x); }
VIGOR_HD VIGOR_INLINE float tan(float x) { return tan_of(x); }
// exp and log likewise (exp_log.hpp).
VIGOR_HD VIGOR_INLINE double exp(double x) { return exp_of(x); }
VIGOR_HD VIGOR_INLINE float exp(float x) { return exp_of(x); }
VIGOR_HD VIGOR_INLINE double log(double x) { return log_of(x); }
VIGOR_HD VIGOR_INLINE float log(float x) { return log_of(x); }
// atan, atan2, asin and acos likewise (inverse_trig.hpp).
VIGOR_HD VIGOR_INLINE double atan(double x) { return atan_of(x); }
VIGOR_HD VIGOR_INLINE float atan(float x) { return atan_of(x); }
VIGOR_HD VIGOR_INLINE double atan2(double y, double x) { return atan2_of(y, x); }
VIGOR_HD VIGOR_INLINE float atan2(float y, float x) { return atan2_of(y, x); }
VIGOR_HD VIGOR_INLINE double asin(double x) { return asin_of(x); }
VIGOR_HD VIGOR_INLINE float asin(float x) { return asin_of(x); }
VIGOR_HD VIGOR_INLINE double acos(double x) { return acos_of(x); }
VIGOR_HD VIGOR_INLINE float acos(float x) { return acos_of(x); }
// sinh, cosh and tanh likewise (hyperbolic.hpp).
VIGOR_HD VIGOR_INLINE double sinh(double x) { return sinh_of(x); }
VIGOR_HD VIGOR_INLINE float sinh(float x) { return sinh_of(x); }
VIGOR_HD VIGOR_INLINE double cosh(double x) { return cosh_of(x); }
VIGOR_HD VIGOR_INLINE float cosh(float x) { return cosh_of(x); }
VIGOR_HD VIGOR_INLINE double tanh(double x) { return tanh_of(x); }
VIGOR_HD VIGOR_INLINE float tanh(float x) { return tanh_of(x); }
// pow likewise (pow.hpp). cbrt is still the C library's (the device library's on the GPU).
VIGOR_HD VIGOR_INLINE double pow(double x, double y) { return pow_of(x, y); }
VIGOR_HD VIGOR_INLINE float pow(float x, float y) { return pow_of(x, y); }

VIGOR_HD VIGOR_INLINE bool isfinite(double x) {
#if VIGOR_DEVICE_PASS
  return ::isfinite(x);
#else
  return std::isfinite(x);
#endif
}
VIGOR_HD VIGOR_INLINE bool isfinite(float x) {
#if VIGOR_DEVICE_PASS
  return ::isfinite(x);
#else
  return std::isfinite(x);
#endif
}

template <class T>
VIGOR_HD VIGOR_INLINE T max_of(T a, T b) {
  return a < b ? b : a;
}
template <class T>
VIGOR_HD VIGOR_INLINE T min_of(T a, T b) {
  return b < a ? b : a;
}

/// x^n for an integer n: the product x*x*...*x taken left to right for n >= 1, 1 for n = 0 and
/// 1/x^|n| for n < 0. How the models write small powers (`y * y * y`), and what the formula
/// language's `x^3` becomes (host/job/formula), so both give the same bits; with n a constant the
/// loop unrolls.
template <class T>
VIGOR_HD VIGOR_INLINE T ipow(const T& x, int n) {
  const int m = n < 0 ? -n : n;
  if (m == 0) return T(1);
  T r = x;
  for (int k = 1; k < m; ++k) r = r * x;
  return n < 0 ? T(1) / r : r;
}

/// The value of a scalar, whether plain or dual (overloaded for Dual in dual.hpp).
VIGOR_HD VIGOR_INLINE double value_of(double x) { return x; }
VIGOR_HD VIGOR_INLINE float value_of(float x) { return x; }

}  // namespace vigor::kernels
