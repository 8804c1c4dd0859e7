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

#include <cstdio>
#include <string>
#include <type_traits>

#include "arith.hpp"
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

/// The functions of theta = |x| the exponential chart needs (Bou-Rabee 2007, thesis, §4.6 and
/// §6.4; the series from the Taylor and Bernoulli expansions):
///   sinc  = sin theta / theta,            cosc  = (1 - cos theta) / theta^2,
///   sinc3 = (theta - sin theta) / theta^3,
///   beta  = (1 - (theta/2) cot(theta/2)) / theta^2
///         = sum_{n>=1} (-1)^{n+1} B_2n theta^{2n-2} / (2n)!,
///   dbeta = beta'(theta) / theta.
/// For theta < 2 the power series in theta^2 (Horner; the last term kept is below 1e-17 of the
/// first at theta = 2: the Bernoulli series converge like (theta / 2 pi)^2k), beyond it the closed
/// forms from one sincos of theta/2, whose cancellation (dbeta divides by theta^4) then costs a
/// few ulps. Both are evaluated and one selected: no branch. Near theta = 2 pi the chart is
/// singular (cot(theta/2)); a step that far is far outside any accuracy anyway.
template <class T>
struct ExpCoefficients {
  T sinc, cosc, sinc3, beta, dbeta;
};

template <class T, int N>
VIGOR_HD VIGOR_INLINE T horner(const T& z, const double (&c)[N]) {
  T r = T(c[N - 1]);
  VIGOR_UNROLL
  for (int k = N - 2; k >= 0; --k) r = r * z + T(c[k]);
  return r;
}

template <class T>
VIGOR_HD VIGOR_INLINE ExpCoefficients<T> exp_coefficients(const T& theta2) {
  // (-1)^k / (2k+1)!, (-1)^k / (2k+2)!, (-1)^k / (2k+3)!; Bernoulli: see above.
  // clang-format off
  constexpr double kSinc[] = {1.0, -0.16666666666666666, 0.008333333333333333,
      -0.0001984126984126984, 2.7557319223985893e-06, -2.505210838544172e-08,
      1.6059043836821613e-10, -7.647163731819816e-13, 2.8114572543455206e-15, -8.22063524662433e-18,
      1.9572941063391263e-20, -3.868170170630684e-23, 6.446950284384474e-26};
  constexpr double kCosc[] = {0.5, -0.041666666666666664, 0.001388888888888889,
      -2.48015873015873e-05, 2.755731922398589e-07, -2.08767569878681e-09, 1.1470745597729725e-11,
      -4.779477332387385e-14, 1.5619206968586225e-16, -4.110317623312165e-19, 8.896791392450574e-22,
      -1.6117375710961184e-24, 2.4795962632247976e-27};
  constexpr double kSinc3[] = {0.16666666666666666, -0.008333333333333333, 0.0001984126984126984,
      -2.7557319223985893e-06, 2.505210838544172e-08, -1.6059043836821613e-10,
      7.647163731819816e-13, -2.8114572543455206e-15, 8.22063524662433e-18, -1.9572941063391263e-20,
      3.868170170630684e-23, -6.446950284384474e-26};
  constexpr double kBeta[] = {0.08333333333333333, 0.001388888888888889, 3.306878306878307e-05,
      8.267195767195768e-07, 2.08767569878681e-08, 5.284190138687493e-10, 1.3382536530684679e-11,
      3.3896802963225827e-13, 8.586062056277845e-15, 2.174868698558062e-16, 5.5090028283602295e-18,
      1.3954464685812522e-19, 3.534707039629467e-21, 8.953517427037546e-23, 2.267952452337683e-24,
      5.744790668872202e-26, 1.455172475614865e-27, 3.6859949406653103e-29};
  constexpr double kDbeta[] = {0.002777777777777778, 0.00013227513227513228, 4.96031746031746e-06,
      1.670140559029448e-07, 5.2841901386874934e-09, 1.6059043836821613e-10, 4.745552414851616e-12,
      1.3737699290044552e-13, 3.914763657404511e-15, 1.1018005656720459e-16, 3.069982230878755e-18,
      8.483296895110721e-20, 2.327914531029762e-21, 6.350266866545513e-23, 1.7234372006616606e-24,
      4.656551921967568e-26, 1.2532382798262054e-27, 3.3612243325542163e-29, 8.987085179662393e-31,
      2.3962687049928537e-32};
  // clang-format on
  ExpCoefficients<T> series{horner(theta2, kSinc), horner(theta2, kCosc), horner(theta2, kSinc3),
                            horner(theta2, kBeta), horner(theta2, kDbeta)};
  // Closed forms; theta2 is clamped to >= 4 so that the unselected lanes stay finite.
  const auto small = theta2 < T(4);  // a lane mask on packs
  const T t2 = select(small, T(4), theta2);
  const T t = sqrt(t2);
  T sh, ch;
  sincos(T(0.5) * t, sh, ch);
  const T s = T(2) * sh * ch;
  const T cot_term = T(0.5) * t * ch / sh;  // (theta/2) cot(theta/2)
  // d/dtheta of (theta/2) cot(theta/2) = cot(theta/2) / 2 - (theta/4) / sin^2(theta/2).
  const T dcot_term = T(0.5) * ch / sh - T(0.25) * t / (sh * sh);
  ExpCoefficients<T> closed{s / t, T(2) * sh * sh / t2, (t - s) / (t * t2), (T(1) - cot_term) / t2,
                            (T(-1) * dcot_term) / (t * t2) - T(2) * (T(1) - cot_term) / (t2 * t2)};
  return {select(small, series.sinc, closed.sinc), select(small, series.cosc, closed.cosc),
          select(small, series.sinc3, closed.sinc3), select(small, series.beta, closed.beta),
          select(small, series.dbeta, closed.dbeta)};
}

/// exp(hat x) = E + sinc hat x + cosc hat x^2 (Rodrigues), entry by entry as cayley().
template <class T>
VIGOR_HD VIGOR_INLINE Mat3<T> expm(const Vec3<T>& x) {
  const T n2 = dot(x, x);
  const ExpCoefficients<T> k = exp_coefficients(n2);
  Mat3<T> r;
  VIGOR_UNROLL
  for (int i = 0; i < 3; ++i) {
    VIGOR_UNROLL
    for (int j = 0; j < 3; ++j) r[i][j] = k.cosc * x[i] * x[j];
  }
  const T diag = T(1) - k.cosc * n2;
  VIGOR_UNROLL
  for (int i = 0; i < 3; ++i) r[i][i] = r[i][i] + diag;
  r[0][1] = r[0][1] - k.sinc * x[2];
  r[0][2] = r[0][2] + k.sinc * x[1];
  r[1][0] = r[1][0] + k.sinc * x[2];
  r[1][2] = r[1][2] - k.sinc * x[0];
  r[2][0] = r[2][0] - k.sinc * x[1];
  r[2][1] = r[2][1] + k.sinc * x[0];
  return r;
}

/// (dexp^{-1}_x)^* mu = mu + (1/2) x × mu + beta x × (x × mu): the dual of the right-trivialised
/// dexp^{-1}_x = ad_x / (e^{ad_x} - 1) = E - (1/2) hat x + beta hat x^2 on so(3).
template <class T>
VIGOR_HD VIGOR_INLINE Vec3<T> dexp_inv_dual(const Vec3<T>& x, const Vec3<T>& mu) {
  const ExpCoefficients<T> k = exp_coefficients(dot(x, x));
  const Vec3<T> xm = cross(x, mu);
  const Vec3<T> xxm = cross(x, xm);
  Vec3<T> r;
  VIGOR_UNROLL
  for (int i = 0; i < 3; ++i) r[i] = mu[i] + T(0.5) * xm[i] + k.beta * xxm[i];
  return r;
}

/// The two charts of the variational integrator on SO(3), as policies: the group update and the
/// dual of the inverse right-trivialised tangent.
struct CayleyChart {
  static constexpr bool kAnalyticJacobian = true;
  template <class T>
  VIGOR_HD VIGOR_INLINE static Mat3<T> map(const Vec3<T>& x) {
    return cayley(x);
  }
  template <class T>
  VIGOR_HD VIGOR_INLINE static Vec3<T> inv_tangent_dual(const Vec3<T>& x, const Vec3<T>& mu) {
    return dcay_inv_dual(x, mu);
  }
};

struct ExpChart {
  static constexpr bool kAnalyticJacobian = false;
  template <class T>
  VIGOR_HD VIGOR_INLINE static Mat3<T> map(const Vec3<T>& x) {
    return expm(x);
  }
  template <class T>
  VIGOR_HD VIGOR_INLINE static Vec3<T> inv_tangent_dual(const Vec3<T>& x, const Vec3<T>& mu) {
    return dexp_inv_dual(x, mu);
  }
};

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

/// Host only: "" when r is a rotation (orthogonal to `tolerance`, det +1), else what is wrong,
/// for the job checker's message; `name` is the matrix's letter (its components name00..name22).
template <class T>
std::string rotation_defect(const Mat3<T>& r, double tolerance, char name) {
  const double d = double(orthogonality_defect(r));
  char buf[200];
  if (!(d <= tolerance)) {
    std::snprintf(buf, sizeof buf,
                  "not a rotation: max |%c^T %c - I| is %.3g, above the tolerance %.3g (give an "
                  "orthogonal attitude matrix %c00..%c22 with determinant +1)",
                  name, name, d, tolerance, name, name);
    return buf;
  }
  // Orthogonal with det -1 is a reflection: no rotation reaches it.
  const double det = double(determinant(r));
  if (!(det > 0.0)) {
    std::snprintf(buf, sizeof buf,
                  "not a rotation: det %c is %.3g (%c is orthogonal but a reflection; flip the "
                  "sign of one row)",
                  name, det, name);
    return buf;
  }
  return {};
}

/// An attitude r carried as dual numbers, seeded in the left-trivialised directions j = 0, 1, 2:
/// value r, derivative r hat(e_j) ((r hat(e_j))_ab = sum_c r_ac hat(e_j)_cb). The tangent maps of
/// the bodies on SO(3) and SE(3) start from it (models/rigid_body_so3.hpp, kirchhoff_se3.hpp).
template <class T, class D>
VIGOR_HD VIGOR_INLINE void seed_attitude(const Mat3<T>& r, Mat3<D>& rd) {
  VIGOR_UNROLL
  for (int a = 0; a < 3; ++a) {
    VIGOR_UNROLL
    for (int b = 0; b < 3; ++b) {
      rd[a][b] = D(r[a][b]);
      VIGOR_UNROLL
      for (int j = 0; j < 3; ++j) {
        Vec3<T> e = Vec3<T>::filled(T(0));
        e[j] = T(1);
        const Mat3<T> E = hat(e);
        rd[a][b].d[j] = r[a][0] * E[0][b] + r[a][1] * E[1][b] + r[a][2] * E[2][b];
      }
    }
  }
}

/// Direction j of a dual attitude, left-trivialised: the vee of the skew part of r^T dr_j (r^T dr
/// is skew to first order on SO(3); the skew part discards the round-off off the group).
template <class D>
VIGOR_HD VIGOR_INLINE auto attitude_direction(const Mat3<D>& r, int j) {
  using T = std::remove_cvref_t<decltype(r[0][0].v)>;
  T A[3][3];
  VIGOR_UNROLL
  for (int a = 0; a < 3; ++a) {
    VIGOR_UNROLL
    for (int b = 0; b < 3; ++b) {
      T s = r[0][a].v * r[0][b].d[j];
      VIGOR_UNROLL
      for (int c = 1; c < 3; ++c) s += r[c][a].v * r[c][b].d[j];
      A[a][b] = s;
    }
  }
  Vec3<T> w;
  w[0] = T(0.5) * (A[2][1] - A[1][2]);
  w[1] = T(0.5) * (A[0][2] - A[2][0]);
  w[2] = T(0.5) * (A[1][0] - A[0][1]);
  return w;
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
