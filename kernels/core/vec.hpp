/// @file vec.hpp
/// @brief Fixed-size vector for per-trajectory state held in registers.
///
/// Dimensions are compile-time so that loops unroll and the whole state stays in registers on the
/// GPU. Deliberately minimal: element access, element-wise +/-, scaling, dot product.
#pragma once

#include "config.hpp"

namespace vigor::kernels {

template <class T, int N>
struct Vec {
  static_assert(N >= 1, "Vec needs at least one component");
  T v[N];

  static constexpr int size = N;

  VIGOR_HD VIGOR_INLINE T& operator[](int i) { return v[i]; }
  VIGOR_HD VIGOR_INLINE const T& operator[](int i) const { return v[i]; }

  /// A vector with every component equal to `x` (zero by default).
  VIGOR_HD VIGOR_INLINE static Vec filled(T x = T(0)) {
    Vec r;
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) r.v[i] = x;
    return r;
  }

  VIGOR_HD VIGOR_INLINE Vec& operator+=(const Vec& o) {
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) v[i] += o.v[i];
    return *this;
  }
  VIGOR_HD VIGOR_INLINE Vec& operator-=(const Vec& o) {
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) v[i] -= o.v[i];
    return *this;
  }
  template <class S>
  VIGOR_HD VIGOR_INLINE Vec& operator*=(const S& s) {
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) v[i] = v[i] * s;
    return *this;
  }
  VIGOR_HD VIGOR_INLINE friend Vec operator+(Vec a, const Vec& b) { return a += b; }
  VIGOR_HD VIGOR_INLINE friend Vec operator-(Vec a, const Vec& b) { return a -= b; }
  VIGOR_HD VIGOR_INLINE friend Vec operator*(Vec a, const T& s) { return a *= s; }
  VIGOR_HD VIGOR_INLINE friend Vec operator*(const T& s, Vec a) { return a *= s; }
};

template <class T, int N>
VIGOR_HD VIGOR_INLINE T dot(const Vec<T, N>& a, const Vec<T, N>& b) {
  T s = a[0] * b[0];
  VIGOR_UNROLL
  for (int i = 1; i < N; ++i) s = s + a[i] * b[i];
  return s;
}

template <class T, int N>
VIGOR_HD VIGOR_INLINE T norm2(const Vec<T, N>& a) {
  return dot(a, a);
}

}  // namespace vigor::kernels
