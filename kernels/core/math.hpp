/// @file math.hpp
/// @brief Device-safe scalar math for float and double, in namespace vigor::kernels.
///
/// Models and integrators call these unqualified (`sqrt(x)`) from inside vigor namespaces, and the
/// overloads for Dual numbers (dual.hpp) join them by argument-dependent lookup. The float
/// overloads call the float functions (sqrtf, sinf, ...) so that an FP32 build contains no FP64
/// instruction.
#pragma once

#include <math.h>

#include <cmath>

#include "config.hpp"

namespace vigor::kernels {

#define VIGOR_UNARY_MATH(fn)                                    \
  VIGOR_HD VIGOR_INLINE double fn(double x) { return ::fn(x); } \
  VIGOR_HD VIGOR_INLINE float fn(float x) { return ::fn##f(x); }

VIGOR_UNARY_MATH(sqrt)
VIGOR_UNARY_MATH(cbrt)
VIGOR_UNARY_MATH(asin)
VIGOR_UNARY_MATH(acos)
VIGOR_UNARY_MATH(atan)
VIGOR_UNARY_MATH(sinh)
VIGOR_UNARY_MATH(cosh)
VIGOR_UNARY_MATH(tanh)
VIGOR_UNARY_MATH(exp)
VIGOR_UNARY_MATH(log)
#undef VIGOR_UNARY_MATH

// Trigonometric functions. In double, and in float on the host, the C library's. In float on
// the device, CUDA's sinf/cosf/tanf carry a Payne–Hanek slow path for huge arguments written in
// FP64, which would put FP64 instructions into every FP32 kernel of an angle model. Instead the
// argument is reduced to [-pi, pi] with a three-part Cody–Waite split of 2 pi (exact to ~1e-7
// relative for |x| < 1e5, far beyond any angle a mechanical model reaches in float), and the fast
// hardware functions evaluate the reduced argument (absolute error ~2^-21.4 on [-pi, pi]).
VIGOR_HD VIGOR_INLINE double sin(double x) { return ::sin(x); }
VIGOR_HD VIGOR_INLINE double cos(double x) { return ::cos(x); }
VIGOR_HD VIGOR_INLINE double tan(double x) { return ::tan(x); }

#if VIGOR_DEVICE_PASS
VIGOR_HD VIGOR_INLINE float reduce_angle(float x) {
  const float k = rintf(x * 0.15915494309189535f);  // x / (2 pi)
  x = fmaf(-k, 6.28125f, x);                        // 2 pi = 6.28125 + 1.93500518798828125e-3
  x = fmaf(-k, 1.93500518798828125e-3f, x);         //        + 3.0199159795e-7 (rest)
  x = fmaf(-k, 3.0199159795074593e-07f, x);
  return x;
}
VIGOR_HD VIGOR_INLINE float sin(float x) { return __sinf(reduce_angle(x)); }
VIGOR_HD VIGOR_INLINE float cos(float x) { return __cosf(reduce_angle(x)); }
VIGOR_HD VIGOR_INLINE float tan(float x) {
  const float r = reduce_angle(x);
  return __sinf(r) / __cosf(r);
}
#else
VIGOR_HD VIGOR_INLINE float sin(float x) { return ::sinf(x); }
VIGOR_HD VIGOR_INLINE float cos(float x) { return ::cosf(x); }
VIGOR_HD VIGOR_INLINE float tan(float x) { return ::tanf(x); }
#endif

VIGOR_HD VIGOR_INLINE double abs(double x) { return ::fabs(x); }
VIGOR_HD VIGOR_INLINE float abs(float x) { return ::fabsf(x); }
VIGOR_HD VIGOR_INLINE double pow(double x, double y) { return ::pow(x, y); }
VIGOR_HD VIGOR_INLINE float pow(float x, float y) { return ::powf(x, y); }
VIGOR_HD VIGOR_INLINE double ldexp(double x, int e) { return ::ldexp(x, e); }
VIGOR_HD VIGOR_INLINE float ldexp(float x, int e) { return ::ldexpf(x, e); }
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

/// a where m, else b (both evaluated): the scalar form of the lane-wise select of SIMD packs
/// (kernels/simd/pack.hpp), so code written with it runs on either.
template <class T>
VIGOR_HD VIGOR_INLINE T select(bool m, T a, T b) {
  return m ? a : b;
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
