/// @file math.hpp
/// @brief Device-safe scalar math for float and double, in namespace vigor::kernels.
///
/// Models and integrators call these unqualified (`sqrt(x)`) from inside vigor namespaces, and the
/// overloads for Dual numbers (dual.hpp) join them by argument-dependent lookup. The float overloads
/// call the float functions (sqrtf, sinf, ...) so that an FP32 build contains no FP64 instruction.
#pragma once

#include <math.h>

#include <cmath>

#include "config.hpp"

namespace vigor::kernels {

#define VIGOR_UNARY_MATH(fn)                                              \
  VIGOR_HD VIGOR_INLINE double fn(double x) { return ::fn(x); }          \
  VIGOR_HD VIGOR_INLINE float fn(float x) { return ::fn##f(x); }

VIGOR_UNARY_MATH(sqrt)
VIGOR_UNARY_MATH(cbrt)
VIGOR_UNARY_MATH(sin)
VIGOR_UNARY_MATH(cos)
VIGOR_UNARY_MATH(tan)
VIGOR_UNARY_MATH(asin)
VIGOR_UNARY_MATH(acos)
VIGOR_UNARY_MATH(atan)
VIGOR_UNARY_MATH(sinh)
VIGOR_UNARY_MATH(cosh)
VIGOR_UNARY_MATH(tanh)
VIGOR_UNARY_MATH(exp)
VIGOR_UNARY_MATH(log)
#undef VIGOR_UNARY_MATH

VIGOR_HD VIGOR_INLINE double abs(double x) { return ::fabs(x); }
VIGOR_HD VIGOR_INLINE float abs(float x) { return ::fabsf(x); }
VIGOR_HD VIGOR_INLINE double pow(double x, double y) { return ::pow(x, y); }
VIGOR_HD VIGOR_INLINE float pow(float x, float y) { return ::powf(x, y); }
VIGOR_HD VIGOR_INLINE double atan2(double y, double x) { return ::atan2(y, x); }
VIGOR_HD VIGOR_INLINE float atan2(float y, float x) { return ::atan2f(y, x); }

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

/// The value of a scalar, whether plain or dual (overloaded for Dual in dual.hpp).
VIGOR_HD VIGOR_INLINE double value_of(double x) { return x; }
VIGOR_HD VIGOR_INLINE float value_of(float x) { return x; }

}  // namespace vigor::kernels
