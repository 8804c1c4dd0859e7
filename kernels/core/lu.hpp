/// @file lu.hpp
/// @brief Small dense LU factorisation with partial pivoting, device-safe, fixed size.
///
/// For the Newton solves of implicit steps (N <= ~12). Eigen's decompositions are host-only in
/// device code, so vigor carries its own: Doolittle LU with row pivoting, in place, no allocation,
/// no early exit (a zero pivot yields inf/NaN, which the driver flags as non-finite).
#pragma once

#include "config.hpp"
#include "math.hpp"
#include "vec.hpp"

namespace vigor::kernels {

/// Row-major N x N matrix.
template <class T, int N>
struct Mat {
  T a[N][N];
  VIGOR_HD VIGOR_INLINE T* operator[](int i) { return a[i]; }
  VIGOR_HD VIGOR_INLINE const T* operator[](int i) const { return a[i]; }
  VIGOR_HD VIGOR_INLINE static Mat identity() {
    Mat m;
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) {
      VIGOR_UNROLL
      for (int j = 0; j < N; ++j) m.a[i][j] = T(i == j ? 1 : 0);
    }
    return m;
  }
};

/// A B.
template <class T, int N>
VIGOR_HD VIGOR_INLINE Mat<T, N> matmul(const Mat<T, N>& A, const Mat<T, N>& B) {
  Mat<T, N> C;
  VIGOR_UNROLL
  for (int i = 0; i < N; ++i) {
    VIGOR_UNROLL
    for (int j = 0; j < N; ++j) {
      T s = A[i][0] * B[0][j];
      VIGOR_UNROLL
      for (int k = 1; k < N; ++k) s += A[i][k] * B[k][j];
      C[i][j] = s;
    }
  }
  return C;
}

/// A^T B.
template <class T, int N>
VIGOR_HD VIGOR_INLINE Mat<T, N> matmul_tn(const Mat<T, N>& A, const Mat<T, N>& B) {
  Mat<T, N> C;
  VIGOR_UNROLL
  for (int i = 0; i < N; ++i) {
    VIGOR_UNROLL
    for (int j = 0; j < N; ++j) {
      T s = A[0][i] * B[0][j];
      VIGOR_UNROLL
      for (int k = 1; k < N; ++k) s += A[k][i] * B[k][j];
      C[i][j] = s;
    }
  }
  return C;
}

/// LU factors of a matrix: L (unit lower) and U packed in `lu`, row permutation in `perm`.
template <class T, int N>
struct LU {
  Mat<T, N> lu;
  int perm[N];
  T sign = T(1);  ///< parity of the row permutation (for the determinant)

  /// Factorise A with partial pivoting.
  VIGOR_HD VIGOR_INLINE explicit LU(const Mat<T, N>& A) : lu(A) {
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) perm[i] = i;
    VIGOR_UNROLL
    for (int k = 0; k < N; ++k) {
      int piv = k;
      T best = abs(lu.a[k][k]);
      VIGOR_UNROLL
      for (int i = k + 1; i < N; ++i) {
        const T c = abs(lu.a[i][k]);
        if (c > best) {
          best = c;
          piv = i;
        }
      }
      if (piv != k) {
        VIGOR_UNROLL
        for (int j = 0; j < N; ++j) {
          const T tmp = lu.a[k][j];
          lu.a[k][j] = lu.a[piv][j];
          lu.a[piv][j] = tmp;
        }
        const int t = perm[k];
        perm[k] = perm[piv];
        perm[piv] = t;
        sign = -sign;
      }
      const T inv = T(1) / lu.a[k][k];
      VIGOR_UNROLL
      for (int i = k + 1; i < N; ++i) {
        const T l = lu.a[i][k] * inv;
        lu.a[i][k] = l;
        VIGOR_UNROLL
        for (int j = k + 1; j < N; ++j) lu.a[i][j] -= l * lu.a[k][j];
      }
    }
  }

  /// det A: the product of U's diagonal times the permutation's parity.
  VIGOR_HD VIGOR_INLINE T determinant() const {
    T d = sign;
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) d *= lu.a[i][i];
    return d;
  }

  /// Solve A x = b.
  VIGOR_HD VIGOR_INLINE Vec<T, N> solve(const Vec<T, N>& b) const {
    Vec<T, N> x;
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) {
      T s = b[perm[i]];
      VIGOR_UNROLL
      for (int j = 0; j < i; ++j) s -= lu.a[i][j] * x[j];
      x[i] = s;
    }
    VIGOR_UNROLL
    for (int i = N - 1; i >= 0; --i) {
      T s = x[i];
      VIGOR_UNROLL
      for (int j = i + 1; j < N; ++j) s -= lu.a[i][j] * x[j];
      x[i] = s / lu.a[i][i];
    }
    return x;
  }
};

/// Solve A x = b by LU with partial pivoting.
template <class T, int N>
VIGOR_HD VIGOR_INLINE Vec<T, N> lu_solve(const Mat<T, N>& A, const Vec<T, N>& b) {
  return LU<T, N>(A).solve(b);
}

}  // namespace vigor::kernels
