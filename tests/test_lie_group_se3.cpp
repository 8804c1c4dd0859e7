// The rigid body in ideal fluid on SE(3) (models/kirchhoff_se3.hpp) and its Lie-group variational
// Euler integrator (kernels/integrators/variational_euler_se3.hpp): the Cayley chart of SE(3)
// against its 4x4 matrix definitions, the state operations the drivers use, the Newton solve
// (its Jacobian against AD, the iteration sweep), order 2 against an RK4 reference, the long run
// (spatial momenta, Casimirs, orthogonality, bounded energy), the driver and the float
// instantiation. The symplecticity of the map is in tests/test_tangent_se3.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "kernels/core/dual.hpp"
#include "kernels/core/lu.hpp"
#include "kernels/core/se3.hpp"
#include "kernels/driver/advance.hpp"
#include "kernels/integrators/protocol.hpp"
#include "kernels/integrators/stormer_verlet.hpp"
#include "kernels/integrators/variational_euler_se3.hpp"
#include "kernels/integrators/variational_euler_so3.hpp"
#include "lie_group_support.hpp"
#include "models/kirchhoff_se3.hpp"
#include "models/rigid_body_so3.hpp"

namespace {

namespace vk = vigor::kernels;
namespace so3 = vigor::kernels::so3;
namespace se3 = vigor::kernels::se3;

template <class R>
using Body = vigor::models::KirchhoffSE3<R>;
template <class R>
using Euler = vk::VariationalEulerSE3<R>;
template <class R>
using State = vk::SE3State<R>;
using Ops = vk::StateOps<Body<double>, double>;
using V3 = vk::Vec<double, 3>;
using M3 = vk::Mat<double, 3>;

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kFloatEps = std::numeric_limits<float>::epsilon();

template <class R = double>
Body<R> default_body() {
  double p[6];
  for (int i = 0; i < 6; ++i) p[i] = Body<double>::kParams[i].default_value;
  return Body<R>::from_params(p);
}

template <class R = double>
State<R> reference_state() {
  const std::array<double, 18> a = Body<double>::reference_state();
  State<R> s;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) s.B[i][j] = R(a[3 * i + j]);
    s.x[i] = R(a[9 + i]);
    s.Pi[i] = R(a[12 + i]);
    s.P[i] = R(a[15 + i]);
  }
  return s;
}

double max_diff(const M3& a, const M3& b) {
  double d = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) d = std::max(d, std::abs(a[i][j] - b[i][j]));
  return d;
}
double max_diff(const V3& a, const V3& b) { return vk::max_abs(a - b); }
double max_diff(const State<double>& a, const State<double>& b) {
  return std::max(
      {max_diff(a.B, b.B), max_diff(a.x, b.x), max_diff(a.Pi, b.Pi), max_diff(a.P, b.P)});
}

/// The 4x4 matrix [[hat w, u], [0, 0]] of (w, u) in se(3), scaled by s, plus d times E.
vk::Mat<double, 4> se3_matrix(const V3& w, const V3& u, double s, double d) {
  vk::Mat<double, 4> m;
  const M3 hw = so3::hat(w);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) m[i][j] = i == j ? d : 0.0;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) m[i][j] += s * hw[i][j];
    m[i][3] = s * u[i];
  }
  return m;
}

State<double> run(const Body<double>& m, State<double> s, double h, long steps,
                  const Euler<double>& integrator = {}) {
  for (long k = 0; k < steps; ++k) integrator.step(m, s, h, 0.0);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Reference solution: classical RK4 on Kirchhoff's equations with the reconstruction equations,
// the StateOps rates, at h = 1e-3 (|xi| <= 6 on the reference orbit, so the error
// ~ T (h |xi|)^4 / 120 stays below 1e-11, far under the variational errors measured).

State<double> rk4(const Body<double>& m, State<double> s, double h, long steps) {
  using Vd = vk::Vec<double, 18>;
  auto f = [&](const Vd& x) {
    State<double> t;
    Ops::load(m, x.v, 1, t);
    Vd y, d;
    Ops::rates(m, t, 0.0, y, d);
    return d;
  };
  Vd x = Ops::as_vector(s);
  for (long k = 0; k < steps; ++k) {
    const Vd k1 = f(x);
    const Vd k2 = f(x + (h / 2) * k1);
    const Vd k3 = f(x + (h / 2) * k2);
    const Vd k4 = f(x + h * k3);
    x = x + (h / 6) * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
  }
  Ops::load(m, x.v, 1, s);
  return s;
}

double casimir_pi_p(const State<double>& s) { return vk::dot(s.Pi, s.P); }
double casimir_p_p(const State<double>& s) { return vk::dot(s.P, s.P); }

// ---------------------------------------------------------------------------------------------

TEST(LieGroupSE3, OnlyTheSE3IntegratorTakesTheBodyInFluid) {
  static_assert(!vk::PhaseModel<Body<double>>);
  static_assert(vk::integrator_supports<Euler<double>, Body<double>>);
  static_assert(!vk::integrator_supports<vk::StormerVerlet<double>, Body<double>>);
  static_assert(!vk::integrator_supports<vk::VariationalEulerSO3<double>, Body<double>>);
  static_assert(!vk::integrator_supports<Euler<double>, vigor::models::RigidBodySO3<double>>);
  static_assert(Ops::kDim == 18 && Ops::kMomentumMaps == 6);
  EXPECT_STREQ(Body<double>::kName, "kirchhoff_se3");
}

TEST(LieGroupSE3, CayleyAndItsTangentMatchTheMatrixDefinitions) {
  const V3 ws[] = {{{0.3, -0.2, 0.5}}, {{1.5, 0.7, -2.0}}, {{1e-3, 0.0, 2e-3}}};
  const V3 us[] = {{{0.7, 0.1, -0.4}}, {{-1.2, 2.0, 0.5}}, {{0.0, 3e-3, 1e-3}}};
  const V3 om{{0.4, 1.1, -0.6}}, y{{-0.3, 0.2, 0.9}};
  const V3 pi{{-0.8, 0.3, 1.7}}, p{{0.5, -1.1, 0.6}};
  double worst_cay = 0, worst_pairing = 0;
  for (int c = 0; c < 3; ++c) {
    const V3 &w = ws[c], &u = us[c];
    const double scale = 1 + vk::dot(w, w) + vk::dot(u, u);
    // cay(xi) = (E - xi/2)^{-1} (E + xi/2), column by column with partial pivoting.
    const vk::LU<double, 4> lu(se3_matrix(w, u, -0.5, 1.0));
    const vk::Mat<double, 4> plus = se3_matrix(w, u, 0.5, 1.0);
    vk::Mat<double, 4> C;
    for (int j = 0; j < 4; ++j) {
      vk::Vec<double, 4> col;
      for (int i = 0; i < 4; ++i) col[i] = plus[i][j];
      const vk::Vec<double, 4> z = lu.solve(col);
      for (int i = 0; i < 4; ++i) C[i][j] = z[i];
    }
    const M3 R = so3::cayley(w);
    const V3 t = se3::cayley_translation(w, u);
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) worst_cay = std::max(worst_cay, std::abs(C[i][j] - R[i][j]));
      worst_cay = std::max(worst_cay, std::abs(C[i][3] - t[i]) / scale);
    }
    // dcay^{-1}_xi eta = (E - xi/2) eta (E + xi/2); its dual must satisfy
    // <(dcay^{-1}_xi)^* mu, eta> = <mu, dcay^{-1}_xi eta>.
    const vk::Mat<double, 4> Z =
        vk::matmul(vk::matmul(se3_matrix(w, u, -0.5, 1.0), se3_matrix(om, y, 1.0, 0.0)), plus);
    const V3 z_rot{{Z[2][1], Z[0][2], Z[1][0]}}, z_tr{{Z[0][3], Z[1][3], Z[2][3]}};
    EXPECT_NEAR(Z[0][1], -Z[1][0], 8 * kEps * scale * scale);  // so(3) part stays skew
    V3 a, b;
    se3::dcay_inv_dual(w, u, pi, p, a, b);
    const double lhs = vk::dot(a, om) + vk::dot(b, y);
    const double rhs = vk::dot(pi, z_rot) + vk::dot(p, z_tr);
    worst_pairing = std::max(worst_pairing, std::abs(lhs - rhs) / (scale * scale));
  }
  std::printf("SE(3) cay vs (E - xi/2)^-1 (E + xi/2): %.2e; dual pairing: %.2e\n", worst_cay,
              worst_pairing);
  // A 4x4 LU solve and a handful of products, each a few roundings of O(scale) terms.
  EXPECT_LE(worst_cay, 64 * kEps);
  EXPECT_LE(worst_pairing, 64 * kEps);
}

TEST(LieGroupSE3, StateOpsLoadStoreRatesMomentaAndManifoldCheck) {
  const Body<double> m = default_body();
  const std::array<double, 18> x0 = Body<double>::reference_state();
  State<double> s;
  Ops::load(m, x0.data(), 1, s);
  std::array<double, 18> back{};
  Ops::store(s, back.data(), 1);
  EXPECT_EQ(back, x0);
  for (int c = 0; c < 18; ++c) EXPECT_EQ(Ops::component(s, c), x0[c]) << c;
  // The reference state lies on the thesis's level set.
  EXPECT_NEAR(casimir_pi_p(s), 0.0, 0.0);
  EXPECT_NEAR(casimir_p_p(s), 5.22, 4 * kEps * 5.22);
  EXPECT_NEAR(Ops::energy(m, s), 4.0, 8 * kEps * 4.0);
  // Momenta of a moved body: L = B Pi + x × B P, p = B P.
  s.B = so3::cayley(V3{{0.3, -0.5, 0.2}});
  s.x = V3{{1.0, -2.0, 0.5}};
  const auto J = Ops::momentum(m, s);
  const V3 p = so3::mul(s.B, s.P), L = so3::mul(s.B, s.Pi) + so3::cross(s.x, p);
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(J[a], L[a]);
    EXPECT_EQ(J[3 + a], p[a]);
  }
  // Rates: dx/dt = B v and dP/dt = P × Omega.
  vk::Vec<double, 18> x, xdot;
  Ops::rates(m, s, 0.0, x, xdot);
  const V3 dx = so3::mul(s.B, m.linear_velocity(s.P));
  const V3 dp = so3::cross(s.P, m.angular_velocity(s.Pi));
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(xdot[9 + a], dx[a]);
    EXPECT_EQ(xdot[15 + a], dp[a]);
  }
  EXPECT_EQ(Ops::manifold_defect(m, s), "");
  State<double> bad = s;
  bad.B[0][0] += 1e-6;
  EXPECT_NE(Ops::manifold_defect(m, bad).find("not a rotation"), std::string::npos);
  bad = s;
  for (int j = 0; j < 3; ++j) bad.B[2][j] = -bad.B[2][j];
  EXPECT_NE(Ops::manifold_defect(m, bad).find("reflection"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// The Newton solve.

TEST(LieGroupSE3, NewtonJacobianIsTheDerivativeOfTheResidual) {
  using D = vk::Dual<double, 6>;
  const Body<double> m = default_body();
  const State<double> s = reference_state();
  const V3 omega = m.angular_velocity(s.Pi) + V3{{0.1, -0.2, 0.3}};
  const V3 v = m.linear_velocity(s.P) + V3{{-0.4, 0.1, 0.2}};
  const double h = 0.05;
  vk::Vec<D, 3> od, vd, mpi, mp, fpi, fp;
  for (int i = 0; i < 3; ++i) {
    od[i] = D::variable(omega[i], i);
    vd[i] = D::variable(v[i], 3 + i);
    mpi[i] = D(s.Pi[i]);
    mp[i] = D(s.P[i]);
  }
  Euler<D>::residual(m, od, vd, mpi, mp, D(h), fpi, fp);
  const vk::Mat<double, 6> J = Euler<double>::jacobian(m, omega, v, h);
  double worst = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 6; ++j) {
      worst = std::max(worst, std::abs(J[i][j] - fpi[i].d[j]));
      worst = std::max(worst, std::abs(J[3 + i][j] - fp[i].d[j]));
    }
  std::printf("Jacobian vs AD: %.2e\n", worst);
  // Entries are O(M) = O(1) sums of a few products of O(|xi|, |mu|) <= 6 terms.
  EXPECT_LE(worst, 64 * kEps);
}

TEST(LieGroupSE3, NewtonSweepReachesRoundOffAtTheDefaultCount) {
  const Body<double> m = default_body();
  const double hs[] = {0.0125, 0.025, 0.05, 0.1};
  // Residual terms are O(|mu|) = O(2.3): round-off is a few eps of that.
  const double roundoff = 16 * kEps * 2.3;
  std::printf("max residual over 400 steps (reference orbit, |xi| <= 6)\n");
  for (const double h : hs) {
    std::printf("h=%6.4f", h);
    double prev = 1e300;
    for (int it = 1; it <= 5; ++it) {
      Euler<double> integ;
      integ.newton_iterations = it;
      State<double> s = reference_state();
      double r = 0;
      for (int k = 0; k < 400; ++k) r = std::max(r, integ.step(m, s, h, 0.0));
      std::printf(" %.2e", r);
      if (prev > roundoff) {
        EXPECT_LT(r, prev) << "h " << h << " iterations " << it;
      }
      if (it >= Euler<double>::kNewtonIterations && h <= 0.05) {
        EXPECT_LE(r, roundoff) << h;
      }
      prev = r;
    }
    std::printf("\n");
  }
}

// ---------------------------------------------------------------------------------------------
// Accuracy and conservation.

TEST(LieGroupSE3, SecondOrderInTheGroupAndInTheMomenta) {
  const Body<double> m = default_body();
  const double T = 2.0;
  const State<double> exact = rk4(m, reference_state(), 1e-3, 2000);
  const double hs[] = {0.02, 0.01, 0.005};
  double err[3];
  for (int i = 0; i < 3; ++i) {
    const State<double> s = run(m, reference_state(), hs[i], std::lround(T / hs[i]));
    err[i] = max_diff(s, exact);
  }
  std::printf("max state error at t = 2, h = 0.02, 0.01, 0.005: %.3e %.3e %.3e\n", err[0], err[1],
              err[2]);
  // Order 2: the ratio tends to 4; at these steps the next term shifts it by O(h^2 |xi|^2).
  EXPECT_NEAR(std::log2(err[0] / err[1]), 2.0, 0.15);
  EXPECT_NEAR(std::log2(err[1] / err[2]), 2.0, 0.1);
}

TEST(LieGroupSE3, LongRunConservesMomentaCasimirsOrthogonalityAndBoundsEnergy) {
  const Body<double> m = default_body();
  const double h = 0.05;
  const long n = 20000;  // t = 1000, the thesis's largest step
  State<double> s = reference_state();
  const auto J0 = Ops::momentum(m, s);
  const double e0 = Ops::energy(m, s), c1 = casimir_pi_p(s), c2 = casimir_p_p(s);
  double dJ = 0, dc1 = 0, dc2 = 0, de_first = 0, de_second = 0, newton = 0;
  const Euler<double> integ{};
  for (long k = 1; k <= n; ++k) {
    newton = std::max(newton, integ.step(m, s, h, 0.0));
    const auto J = Ops::momentum(m, s);
    for (int a = 0; a < 6; ++a) dJ = std::max(dJ, std::abs(J[a] - J0[a]));
    dc1 = std::max(dc1, std::abs(casimir_pi_p(s) - c1));
    dc2 = std::max(dc2, std::abs(casimir_p_p(s) - c2));
    const double de = std::abs(Ops::energy(m, s) - e0);
    (k <= n / 2 ? de_first : de_second) = std::max(k <= n / 2 ? de_first : de_second, de);
  }
  const double orth = Ops::orthogonality_defect(s);
  const double xmax = vk::max_abs(s.x);
  std::printf(
      "t = 1000, h = 0.05: |x| %.1f, momenta %.2e, Pi.P %.2e, P.P %.2e, |B^T B - E| %.2e, "
      "energy error %.3e (first half) %.3e (second half), Newton %.2e\n",
      xmax, dJ, dc1, dc2, orth, de_first, de_second, newton);
  // Round-off per step is a few eps of each quantity's terms, |L| ~ |x| |p| grows with the
  // drift; a random walk of n steps stays far below n * 16 eps * scale.
  const double scale = (1 + xmax) * std::sqrt(5.22);
  EXPECT_LE(dJ, double(n) * 16 * kEps * scale);
  EXPECT_LE(dc1, double(n) * 16 * kEps * 5.22);
  EXPECT_LE(dc2, double(n) * 16 * kEps * 5.22);
  EXPECT_LE(orth, double(n) * 4 * kEps);
  // The energy error is O(h^2) and bounded: no growth from the first half to the second.
  EXPECT_LE(de_first, 0.05 * e0);
  EXPECT_LE(de_second, 1.5 * de_first);
}

// ---------------------------------------------------------------------------------------------
// The exponential chart (variational_euler_se3_exp).

using EulerExp = vk::VariationalEulerSE3Exp<double>;

TEST(LieGroupSE3Exp, ExpChartIsTheMatrixExponentialAndItsTangentTheBernoulliSeries) {
  // Both sides of the coefficients' series / closed-form switch at |w| = 2.
  const V3 ws[] = {{{0.3, -0.2, 0.5}}, {{1.0, 0.5, -0.9}}, {{1e-3, 0.0, 2e-3}}, {{1.5, 1.2, -1.0}}};
  const V3 us[] = {{{0.7, 0.1, -0.4}}, {{-1.2, 2.0, 0.5}}, {{0.0, 3e-3, 1e-3}}, {{0.4, -0.8, 1.1}}};
  const V3 om{{0.4, 1.1, -0.6}}, y{{-0.3, 0.2, 0.9}};
  const V3 pi{{-0.8, 0.3, 1.7}}, p{{0.5, -1.1, 0.6}};
  const std::vector<long double> B = vigor_test::bernoulli(48);
  double worst_exp = 0, worst_pairing = 0;
  for (int c = 0; c < 4; ++c) {
    const V3 &w = ws[c], &u = us[c];
    // exp of the 4x4 matrix by its Taylor series in long double (|xi| <= 3: 48 terms).
    const vk::Mat<double, 4> X = se3_matrix(w, u, 1.0, 0.0);
    long double P[4][4], E[4][4];
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) P[i][j] = E[i][j] = i == j;
    for (int n = 1; n < 48; ++n) {
      long double Q[4][4] = {};
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          for (int k = 0; k < 4; ++k) Q[i][j] += P[i][k] * X[k][j] / n;
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          P[i][j] = Q[i][j];
          E[i][j] += Q[i][j];
        }
    }
    const M3 R = so3::expm(w);
    const V3 t = se3::exp_translation(w, u);
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j)
        worst_exp = std::max(worst_exp, double(std::abs(R[i][j] - E[i][j])));
      worst_exp = std::max(worst_exp, double(std::abs(t[i] - E[i][3])));
    }
    // dexp^{-1}_xi eta = sum_n B_n / n! ad_xi^n eta, ad_(w,u) (om, y) = (w × om, w × y - om × u).
    long double z[6] = {om[0], om[1], om[2], y[0], y[1], y[2]};
    long double term[6] = {om[0], om[1], om[2], y[0], y[1], y[2]};
    long double fact = 1;
    for (int n = 1; n <= 48; ++n) {
      const long double a0 = term[0], a1 = term[1], a2 = term[2], b0 = term[3], b1 = term[4],
                        b2 = term[5];
      term[0] = w[1] * a2 - w[2] * a1;
      term[1] = w[2] * a0 - w[0] * a2;
      term[2] = w[0] * a1 - w[1] * a0;
      term[3] = (w[1] * b2 - w[2] * b1) - (a1 * u[2] - a2 * u[1]);
      term[4] = (w[2] * b0 - w[0] * b2) - (a2 * u[0] - a0 * u[2]);
      term[5] = (w[0] * b1 - w[1] * b0) - (a0 * u[1] - a1 * u[0]);
      fact *= n;
      for (int i = 0; i < 6; ++i) z[i] += B[n] / fact * term[i];
    }
    V3 a, b;
    se3::dexp_inv_dual(w, u, pi, p, a, b);
    long double lhs = 0;
    for (int i = 0; i < 3; ++i) lhs += pi[i] * z[i] + p[i] * z[3 + i];
    const double rhs = vk::dot(a, om) + vk::dot(b, y);
    worst_pairing = std::max(worst_pairing, double(std::abs(lhs - rhs)));
  }
  std::printf("SE(3) exp chart vs Taylor: %.2e; dual pairing vs Bernoulli series: %.2e\n",
              worst_exp, worst_pairing);
  // Entries are sums of a few O(|xi|^2) products; the pairing sums O(10) such terms.
  EXPECT_LE(worst_exp, 32 * kEps);
  EXPECT_LE(worst_pairing, 64 * kEps);
}

TEST(LieGroupSE3Exp, NewtonWithTheADJacobianReachesRoundOff) {
  const Body<double> m = default_body();
  const double roundoff = 16 * kEps * 2.3;
  for (const double h : {0.025, 0.05}) {
    double r[4];
    for (int it = 1; it <= 4; ++it) {
      EulerExp integ;
      integ.newton_iterations = it;
      State<double> s = reference_state();
      r[it - 1] = 0;
      for (int k = 0; k < 400; ++k) r[it - 1] = std::max(r[it - 1], integ.step(m, s, h, 0.0));
    }
    std::printf("exp chart, h = %g: residual after 1..4 iterations %.2e %.2e %.2e %.2e\n", h, r[0],
                r[1], r[2], r[3]);
    EXPECT_LE(r[EulerExp::kNewtonIterations - 1], roundoff) << h;
    EXPECT_LT(r[1], r[0]);
  }
}

TEST(LieGroupSE3Exp, SecondOrderConservingWithAnErrorConstantOtherThanCayleys) {
  static_assert(vk::integrator_supports<EulerExp, Body<double>>);
  const Body<double> m = default_body();
  const double T = 2.0;
  const State<double> exact = rk4(m, reference_state(), 1e-3, 2000);
  const double hs[] = {0.02, 0.01, 0.005};
  double ee[3], ec[3];
  for (int i = 0; i < 3; ++i) {
    const long n = std::lround(T / hs[i]);
    State<double> s = reference_state();
    const EulerExp integ{};
    for (long k = 0; k < n; ++k) integ.step(m, s, hs[i], 0.0);
    ee[i] = max_diff(s, exact);
    ec[i] = max_diff(run(m, reference_state(), hs[i], n), exact);
  }
  std::printf(
      "t = 2, max state error: h = 0.02, 0.01, 0.005\n  exp    %.3e %.3e %.3e\n  Cayley "
      "%.3e %.3e %.3e\n  exp / Cayley %.3f %.3f %.3f\n",
      ee[0], ee[1], ee[2], ec[0], ec[1], ec[2], ee[0] / ec[0], ee[1] / ec[1], ee[2] / ec[2]);
  EXPECT_NEAR(std::log2(ee[1] / ee[2]), 2.0, 0.1);
  // Both O(h^2), different constants (the charts differ at third order): a settled ratio != 1.
  EXPECT_NEAR(ee[1] / ec[1], ee[2] / ec[2], 0.05 * ee[2] / ec[2]);
  EXPECT_GT(std::abs(ee[2] / ec[2] - 1.0), 0.05);
  // The long run keeps the momenta, the Casimirs and B's orthogonality as the Cayley chart does.
  State<double> s = reference_state();
  const auto J0 = Ops::momentum(m, s);
  const double c1 = casimir_pi_p(s), c2 = casimir_p_p(s);
  double dJ = 0, dc = 0;
  const EulerExp integ{};
  const long n = 20000;
  for (long k = 0; k < n; ++k) {
    integ.step(m, s, 0.05, 0.0);
    const auto J = Ops::momentum(m, s);
    for (int a = 0; a < 6; ++a) dJ = std::max(dJ, std::abs(J[a] - J0[a]));
    dc = std::max({dc, std::abs(casimir_pi_p(s) - c1), std::abs(casimir_p_p(s) - c2)});
  }
  const double scale = (1 + vk::max_abs(s.x)) * std::sqrt(5.22);
  std::printf("exp chart, t = 1000, h = 0.05: momenta %.2e, Casimirs %.2e, |B^T B - E| %.2e\n", dJ,
              dc, Ops::orthogonality_defect(s));
  EXPECT_LE(dJ, double(n) * 16 * kEps * scale);
  EXPECT_LE(dc, double(n) * 16 * kEps * 5.22);
  EXPECT_LE(Ops::orthogonality_defect(s), double(n) * 4 * kEps);
}

// ---------------------------------------------------------------------------------------------
// Through the driver, and in float.

TEST(LieGroupSE3, DriverTracksMomentaResidualAndStoresTheState) {
  const Body<double> m = default_body();
  const Euler<double> integ{};
  const std::array<double, 18> x0 = Body<double>::reference_state();
  const vigor_test::DriverRun r(m, integ, std::vector<double>(x0.begin(), x0.end()), 0.025, 2000);
  const State<double> s = run(m, reference_state(), 0.025, 2000);
  const auto v = Ops::as_vector(s);
  for (int c = 0; c < 18; ++c) EXPECT_EQ(r.state[std::size_t(c)], v[c]) << c;
  std::printf("driver, 2000 steps: energy error %.3e, momentum error %.3e, residual %.2e\n",
              r.energy_error, r.momentum_error, r.newton);
  EXPECT_EQ(r.step, 2000);
  EXPECT_EQ(r.status, vk::kStatusOk);
  EXPECT_LE(r.momentum_error, 2000 * 16 * kEps * 10);
  EXPECT_LE(r.newton, 16 * kEps * 2.3);
  EXPECT_GT(r.energy_error, 0.0);
  EXPECT_LE(r.energy_error, 0.05);
}

TEST(LieGroupSE3, FloatAgreesWithDouble) {
  const long n = 400;
  const Body<float> mf = default_body<float>();
  State<float> sf = reference_state<float>();
  const Euler<float> integ{};
  for (long k = 0; k < n; ++k) integ.step(mf, sf, 0.025f, 0.0f);
  const State<double> sd = run(default_body(), reference_state(), 0.025, n);
  double d = 0;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) d = std::max(d, std::abs(double(sf.B[i][j]) - sd.B[i][j]));
    d = std::max({d, std::abs(double(sf.x[i]) - sd.x[i]), std::abs(double(sf.Pi[i]) - sd.Pi[i]),
                  std::abs(double(sf.P[i]) - sd.P[i])});
  }
  const double orth = vk::StateOps<Body<float>, float>::orthogonality_defect(sf);
  std::printf("float vs double after %ld steps: %.2e; float |B^T B - E| %.2e\n", n, d, orth);
  // Round-off of ~10 eps_f per step, amplified along the orbit (the reference orbit is chaotic:
  // over t = 10 the growth stays below e^(lambda t) ~ 10^2 for lambda ~ 0.5).
  EXPECT_LE(d, double(n) * 16 * kFloatEps * 100);
  EXPECT_LE(orth, double(n) * 8 * kFloatEps);
}

}  // namespace
