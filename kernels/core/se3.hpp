/// @file se3.hpp
/// @brief The special Euclidean group SE(3) in the form its variational integrator needs: the
/// Cayley map and the dual of its inverse right-trivialised tangent, on top of so3.hpp.
///
/// An element g = (B, x) acts as y -> B y + x; se(3) holds xi = (Omega, v) as the 4x4 matrix
/// [[hat Omega, v], [0, 0]], with bracket [xi1, xi2] = (Omega1 × Omega2, Omega1 × v2 - Omega2 × v1)
/// and the pairing <(Pi, P), (Omega, v)> = Pi·Omega + P·v with se(3)*.
///
/// Cayley map (Bou-Rabee 2007, thesis, (6.4.1)): cay(xi) = (E - xi/2)^{-1} (E + xi/2) is
///     cay(Omega, v) = (cay(Omega), (E - hat Omega / 2)^{-1} v),
///     (E - hat w / 2)^{-1} = E + c (hat w / 2 + hat w^2 / 4),   c = 4 / (4 + |w|^2)
/// (multiply out: (E - a)(E + c a + c a^2) = E with a = hat w / 2, a^3 = -|w|^2/4 a).
///
/// Inverse right-trivialised tangent dcay^{-1}_xi eta = (E - xi/2) eta (E + xi/2) as matrices:
/// for xi = (w, u), eta = (omega, y) its rotational part is so(3)'s and its translational part
/// (E - hat w / 2)(y + omega × u / 2) (the thesis's 6x6 form). Its dual under the pairing is
///     (dcay^{-1}_xi)^* (Pi, P) = (a, b),   b = P + (1/2) w × P,
///                                          a = (dcay^{-1}_w)^*_{so(3)} Pi + (1/2) u × b,
/// (move each term of Pi·rot + P·trans onto omega and y with a·(b × c) = b·(c × a)). With it the
/// variational step's momentum equations are the thesis's (6.4.5)-(6.4.6) exactly (written out in
/// kernels/integrators/variational_euler_se3.hpp). tests/test_lie_group_se3.cpp checks the map
/// against the 4x4 matrix definitions and the Noether identity
///     Ad*_{cay(xi)^{-1}} (dcay^{-1}_{-xi})^* mu = (dcay^{-1}_xi)^* mu.
#pragma once

#include "config.hpp"
#include "so3.hpp"
#include "vec.hpp"

namespace vigor::kernels::se3 {

template <class T>
using Vec3 = Vec<T, 3>;
template <class T>
using Mat3 = Mat<T, 3>;

/// (E - hat w / 2)^{-1} v = v + c (w × v / 2 + w × (w × v) / 4), c = 4 / (4 + |w|^2): the
/// translational part of cay(w, v).
template <class T>
VIGOR_HD VIGOR_INLINE Vec3<T> cayley_translation(const Vec3<T>& w, const Vec3<T>& v) {
  const T c = T(4) / (T(4) + dot(w, w));
  const Vec3<T> wv = so3::cross(w, v);
  const Vec3<T> wwv = so3::cross(w, wv);
  Vec3<T> r;
  VIGOR_UNROLL
  for (int i = 0; i < 3; ++i) r[i] = v[i] + c * (T(0.5) * wv[i] + T(0.25) * wwv[i]);
  return r;
}

/// (dcay^{-1}_{(w, u)})^* (Pi, P) = (a, b) (see the file comment).
template <class T>
VIGOR_HD VIGOR_INLINE void dcay_inv_dual(const Vec3<T>& w, const Vec3<T>& u, const Vec3<T>& pi,
                                         const Vec3<T>& p, Vec3<T>& a, Vec3<T>& b) {
  const Vec3<T> wp = so3::cross(w, p);
  VIGOR_UNROLL
  for (int i = 0; i < 3; ++i) b[i] = p[i] + T(0.5) * wp[i];
  const Vec3<T> ub = so3::cross(u, b);
  a = so3::dcay_inv_dual(w, pi);
  VIGOR_UNROLL
  for (int i = 0; i < 3; ++i) a[i] = a[i] + T(0.5) * ub[i];
}

/// Exponential chart: exp(w, u) = (exp(w), V(w) u), V(w) = E + cosc hat w + sinc3 hat w^2
/// (so3::exp_coefficients), i.e. V(w) u = u + cosc w × u + sinc3 w × (w × u).
template <class T>
VIGOR_HD VIGOR_INLINE Vec3<T> exp_translation(const Vec3<T>& w, const Vec3<T>& u) {
  const so3::ExpCoefficients<T> k = so3::exp_coefficients(dot(w, w));
  const Vec3<T> wu = so3::cross(w, u);
  const Vec3<T> wwu = so3::cross(w, wu);
  Vec3<T> r;
  VIGOR_UNROLL
  for (int i = 0; i < 3; ++i) r[i] = u[i] + k.cosc * wu[i] + k.sinc3 * wwu[i];
  return r;
}

/// (dexp^{-1}_{(w, u)})^* (Pi, P) = (a, b). dexp^{-1}_xi = f(ad_xi), f(z) = z / (e^z - 1), and
/// ad_{(w,u)} = [[hat w, 0], [hat u, hat w]] is block triangular, so f(ad) = [[f(W), 0],
/// [Df(W)[U], f(W)]] with f(W) = E - W/2 + beta W^2 on so(3) and its Frechet derivative
///     Df(W)[U] = -U/2 + beta (W U + U W) + dbeta (w·u) W^2.
/// Transposed and applied to (Pi, P):
///     b = (dexp^{-1}_w)^* P,
///     a = (dexp^{-1}_w)^* Pi + u × P / 2 + beta (u × (w × P) + w × (u × P))
///         + dbeta (w·u) w × (w × P).
template <class T>
VIGOR_HD VIGOR_INLINE void dexp_inv_dual(const Vec3<T>& w, const Vec3<T>& u, const Vec3<T>& pi,
                                         const Vec3<T>& p, Vec3<T>& a, Vec3<T>& b) {
  const so3::ExpCoefficients<T> k = so3::exp_coefficients(dot(w, w));
  const Vec3<T> wp = so3::cross(w, p);
  const Vec3<T> wwp = so3::cross(w, wp);
  const Vec3<T> up = so3::cross(u, p);
  const Vec3<T> uwp = so3::cross(u, wp);
  const Vec3<T> wup = so3::cross(w, up);
  const Vec3<T> wpi = so3::cross(w, pi);
  const Vec3<T> wwpi = so3::cross(w, wpi);
  const T wu = dot(w, u);
  VIGOR_UNROLL
  for (int i = 0; i < 3; ++i) {
    b[i] = p[i] + T(0.5) * wp[i] + k.beta * wwp[i];
    a[i] = pi[i] + T(0.5) * wpi[i] + k.beta * wwpi[i] + T(0.5) * up[i] +
           k.beta * (uwp[i] + wup[i]) + k.dbeta * wu * wwp[i];
  }
}

/// The two charts of the variational integrator on SE(3) (the group update and the dual of the
/// inverse tangent), as policies.
struct CayleyChart {
  static constexpr bool kAnalyticJacobian = true;
  template <class T>
  VIGOR_HD VIGOR_INLINE static Mat3<T> rotation(const Vec3<T>& w) {
    return so3::cayley(w);
  }
  template <class T>
  VIGOR_HD VIGOR_INLINE static Vec3<T> translation(const Vec3<T>& w, const Vec3<T>& u) {
    return cayley_translation(w, u);
  }
  template <class T>
  VIGOR_HD VIGOR_INLINE static void inv_tangent_dual(const Vec3<T>& w, const Vec3<T>& u,
                                                     const Vec3<T>& pi, const Vec3<T>& p,
                                                     Vec3<T>& a, Vec3<T>& b) {
    dcay_inv_dual(w, u, pi, p, a, b);
  }
};

struct ExpChart {
  static constexpr bool kAnalyticJacobian = false;
  template <class T>
  VIGOR_HD VIGOR_INLINE static Mat3<T> rotation(const Vec3<T>& w) {
    return so3::expm(w);
  }
  template <class T>
  VIGOR_HD VIGOR_INLINE static Vec3<T> translation(const Vec3<T>& w, const Vec3<T>& u) {
    return exp_translation(w, u);
  }
  template <class T>
  VIGOR_HD VIGOR_INLINE static void inv_tangent_dual(const Vec3<T>& w, const Vec3<T>& u,
                                                     const Vec3<T>& pi, const Vec3<T>& p,
                                                     Vec3<T>& a, Vec3<T>& b) {
    dexp_inv_dual(w, u, pi, p, a, b);
  }
};

}  // namespace vigor::kernels::se3

namespace vigor::kernels {

/// State of a body on SE(3): attitude B (body to space, row-major), position x of the body
/// origin in space, and body momenta (Pi, P) — angular and linear, conjugate to (Omega, v); for
/// the variational integrator its staggered discrete momenta (see
/// kernels/integrators/variational_euler_se3.hpp).
template <class Real>
struct SE3State {
  Mat<Real, 3> B;
  Vec<Real, 3> x;
  Vec<Real, 3> Pi;
  Vec<Real, 3> P;
};

}  // namespace vigor::kernels
