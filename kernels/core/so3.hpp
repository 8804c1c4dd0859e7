/// @file so3.hpp
/// @brief The rotation group SO(3) in the form its variational integrator needs: 3-vectors as
/// elements of so(3) (x <-> hat x, hat x y = x × y), 3x3 products, the Cayley map and its
/// inverse right-trivialised tangent.
///
/// Cayley map (Bou-Rabee 2007, (4.6.6)): cay(x) = (E - hat x / 2)^{-1} (E + hat x / 2)
///     = E + 4 / (4 + |x|^2) (hat x + hat x^2 / 2),      hat x^2 = x x^T - |x|^2 E.
/// It maps so(3) into SO(3) exactly (cay(x)^T = cay(-x) = cay(x)^{-1}), so a configuration
/// update R cay(x) keeps R orthogonal up to the round-off of the product alone.
///
/// Inverse right-trivialised tangent ((4.6.7)), as a matrix
///     dcay^{-1}_x y = (E - hat x / 2) hat y (E + hat x / 2),
/// i.e. y - (1/2) x × y + (1/4) (x·y) x (using [hat x, hat y] = hat(x × y) and
/// hat x hat y hat x = -(x·y) hat x). Its dual under the dot-product pairing is
///     (dcay^{-1}_x)^* mu = mu + (1/2) x × mu + (1/4) (x·mu) x.
/// Checks of the sign: tests/test_lie_group.cpp differentiates cay by AD against dcay, verifies
/// the Noether identity cay(x) (dcay^{-1}_{-x})^* mu = (dcay^{-1}_x)^* mu, and the continuous
/// limit of the integrator (Euler's equations dPi/dt = Pi × Omega).
#pragma once

#include "config.hpp"
#include "lu.hpp"
#include "math.hpp"
#include "vec.hpp"

namespace vigor::kernels::so3 {

template <class T>
using Vec3 = Vec<T, 3>;
template <class T>
using Mat3 = Mat<T, 3>;

template <class T>
VIGOR_HD VIGOR_INLINE Vec3<T> cross(const Vec3<T>& a, const Vec3<T>& b) {
  return Vec3<T>{{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}};
}

/// hat x: the skew matrix with hat(x) y = x × y.
template <class T>
VIGOR_HD VIGOR_INLINE Mat3<T> hat(const Vec3<T>& x) {
  Mat3<T> m;
  m[0][0] = T(0);
  m[0][1] = -x[2];
  m[0][2] = x[1];
  m[1][0] = x[2];
  m[1][1] = T(0);
  m[1][2] = -x[0];
  m[2][0] = -x[1];
  m[2][1] = x[0];
  m[2][2] = T(0);
  return m;
}

/// A B.
template <class T>
VIGOR_HD VIGOR_INLINE Mat3<T> mul(const Mat3<T>& a, const Mat3<T>& b) {
  Mat3<T> c;
  VIGOR_UNROLL
  for (int i = 0; i < 3; ++i) {
    VIGOR_UNROLL
    for (int j = 0; j < 3; ++j) c[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
  }
  return c;
}

/// A x.
template <class T>
VIGOR_HD VIGOR_INLINE Vec3<T> mul(const Mat3<T>& a, const Vec3<T>& x) {
  Vec3<T> y;
  VIGOR_UNROLL
  for (int i = 0; i < 3; ++i) y[i] = a[i][0] * x[0] + a[i][1] * x[1] + a[i][2] * x[2];
  return y;
}

/// A^T x.
template <class T>
VIGOR_HD VIGOR_INLINE Vec3<T> mul_transposed(const Mat3<T>& a, const Vec3<T>& x) {
  Vec3<T> y;
  VIGOR_UNROLL
  for (int j = 0; j < 3; ++j) y[j] = a[0][j] * x[0] + a[1][j] * x[1] + a[2][j] * x[2];
  return y;
}

/// cay(x) = E + c (hat x + hat x^2 / 2), c = 4 / (4 + |x|^2), written out entry by entry.
template <class T>
VIGOR_HD VIGOR_INLINE Mat3<T> cayley(const Vec3<T>& x) {
  const T n2 = dot(x, x);
  const T c = T(4) / (T(4) + n2);
  const T hc = T(0.5) * c;
  Mat3<T> r;
  VIGOR_UNROLL
  for (int i = 0; i < 3; ++i) {
    VIGOR_UNROLL
    for (int j = 0; j < 3; ++j) r[i][j] = hc * x[i] * x[j];
  }
  const T diag = T(1) - hc * n2;
  VIGOR_UNROLL
  for (int i = 0; i < 3; ++i) r[i][i] = r[i][i] + diag;
  r[0][1] = r[0][1] - c * x[2];
  r[0][2] = r[0][2] + c * x[1];
  r[1][0] = r[1][0] + c * x[2];
  r[1][2] = r[1][2] - c * x[0];
  r[2][0] = r[2][0] - c * x[1];
  r[2][1] = r[2][1] + c * x[0];
  return r;
}

/// (dcay^{-1}_x)^* mu = mu + (1/2) x × mu + (1/4) (x·mu) x.
template <class T>
VIGOR_HD VIGOR_INLINE Vec3<T> dcay_inv_dual(const Vec3<T>& x, const Vec3<T>& mu) {
  const Vec3<T> xm = cross(x, mu);
  const T q = T(0.25) * dot(x, mu);
  Vec3<T> r;
  VIGOR_UNROLL
  for (int i = 0; i < 3; ++i) r[i] = mu[i] + T(0.5) * xm[i] + q * x[i];
  return r;
}

/// max_ij |(R^T R - E)_ij|: how far R is from orthogonal.
template <class T>
VIGOR_HD VIGOR_INLINE T orthogonality_defect(const Mat3<T>& r) {
  T d = T(0);
  VIGOR_UNROLL
  for (int i = 0; i < 3; ++i) {
    VIGOR_UNROLL
    for (int j = 0; j < 3; ++j) {
      const T g = r[0][i] * r[0][j] + r[1][i] * r[1][j] + r[2][i] * r[2][j];
      d = max_of(d, abs(i == j ? g - T(1) : g));
    }
  }
  return d;
}

template <class T>
VIGOR_HD VIGOR_INLINE T determinant(const Mat3<T>& r) {
  return r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) -
         r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0]) +
         r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
}

}  // namespace vigor::kernels::so3

namespace vigor::kernels {

/// State of a body on SO(3): the attitude R (body to space, row-major) and a body angular
/// momentum Pi (for the variational integrator: its staggered discrete momentum, see
/// kernels/integrators/variational_euler_so3.hpp).
template <class Real>
struct SO3State {
  Mat<Real, 3> R;
  Vec<Real, 3> Pi;
};

}  // namespace vigor::kernels
