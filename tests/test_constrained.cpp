// Holonomic constraints: the constrained models (Cartesian, spherical and double spherical
// pendulums, the rigid body as a unit quaternion) and the SHAKE / RATTLE integrators. Orders from
// error ratios against an independent reference, the constraint and its velocity form at every
// step, discrete Noether for J_z, bounded energy, agreement with the angle pendulum, the Newton
// iteration count, float and SIMD-lane instantiations, and the rigid body's kinematics.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "kernels/core/dual.hpp"
#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/mechanics.hpp"
#include "kernels/integrators/protocol.hpp"
#include "kernels/integrators/rattle.hpp"
#include "kernels/integrators/shake.hpp"
#include "kernels/integrators/stormer_verlet.hpp"
#include "kernels/simd/pack.hpp"
#include "kernels/state.hpp"
#include "models/double_spherical_pendulum.hpp"
#include "models/pendulum.hpp"
#include "models/pendulum_cartesian.hpp"
#include "models/rigid_body_quaternion.hpp"
#include "models/spherical_pendulum.hpp"

namespace {

namespace vk = vigor::kernels;
namespace vm = vigor::models;

using DSP = vm::DoubleSphericalPendulum<double>;
using Sph = vm::SphericalPendulum<double>;
using Cart = vm::PendulumCartesian<double>;
using Quat = vm::RigidBodyQuaternion<double>;

constexpr double kEps = std::numeric_limits<double>::epsilon();

template <class M>
M with_defaults() {
  std::vector<double> v;
  for (const auto& p : M::kParams) v.push_back(p.default_value);
  return M::from_params(v.data());
}

/// A Phase loaded the way the drivers load it (StateOps fills the force).
template <class M, class Real = double, std::size_t K>
vk::Phase<Real, M::dof> load(const M& m, const std::array<double, K>& x) {
  static_assert(K == 2 * M::dof);
  std::array<Real, K> xr;
  for (std::size_t i = 0; i < K; ++i) xr[i] = Real(x[i]);
  vk::Phase<Real, M::dof> s;
  vk::StateOps<M, Real>::load(m, xr.data(), 1, s);
  return s;
}

/// `steps` steps of size h through kernels::take_step; each(k, s) after step k (1-based).
/// Returns the largest final Newton residual the steps reported.
template <class I, class M, class Real, class F>
double integrate(const I& integrator, const M& m, vk::Phase<Real, M::dof>& s, double h, long steps,
                 F&& each) {
  double rmax = 0.0;
  for (long k = 1; k <= steps; ++k) {
    const Real r = vk::take_step(integrator, m, s, Real(h), Real(double(k - 1) * h));
    rmax = std::max(rmax, double(r));
    each(k, s);
  }
  return rmax;
}
template <class I, class M, class Real>
double integrate(const I& integrator, const M& m, vk::Phase<Real, M::dof>& s, double h,
                 long steps) {
  return integrate(integrator, m, s, h, steps, [](long, const vk::Phase<Real, M::dof>&) {});
}

/// max_a |g_a(q)| and max_a |(G(q) M^{-1} p)_a|: the constraint and its velocity form.
template <class M>
double constraint_defect(const M& m, const vk::Vec<double, M::dof>& q) {
  return vk::max_abs(m.template constraints<double>(q));
}
template <class M>
double velocity_defect(const M& m, const vk::Vec<double, M::dof>& q,
                       const vk::Vec<double, M::dof>& p) {
  constexpr int n = M::dof, k = vk::constraint_count<M>;
  vk::Vec<double, k> g;
  double G[k][n];
  vk::constraint_jacobian(m, q, g, G);
  const vk::Vec<double, n> v = vk::velocity_of(m, q, p);
  double d = 0.0;
  for (int a = 0; a < k; ++a) {
    double t = 0.0;
    for (int i = 0; i < n; ++i) t += G[a][i] * v[i];
    d = std::max(d, std::abs(t));
  }
  return d;
}

template <int N>
double distance(const vk::Vec<double, N>& a, const vk::Vec<double, N>& b) {
  double d = 0.0;
  for (int i = 0; i < N; ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

// ---------------------------------------------------------------------------------------------
// An independent reference: the index-1 form of the constrained equations,
//   M qdd = f(q) - G(q)^T lambda,   (G M^{-1} G^T) lambda = G M^{-1} f + c(q, v),
//   c_a = v^T (d^2 g_a / dq^2) v   (from d^2/dt^2 g(q(t)) = G qdd + c = 0),
// integrated by classical RK4 in (q, v). Nothing of SHAKE/RATTLE is used: c comes from nested
// duals along q + t v. RK4 does not keep g = 0 exactly, but its drift and error are O(h^4): at
// h = 1e-4 over T = 1 on the double spherical pendulum (angular rates ~4/s) about 1e-14, far below
// the RATTLE errors compared with it (> 1e-6).
// ---------------------------------------------------------------------------------------------

template <class M>
void index1_rates(const M& m, const vk::Vec<double, M::dof>& q, const vk::Vec<double, M::dof>& v,
                  vk::Vec<double, M::dof>& a) {
  constexpr int n = M::dof, k = vk::constraint_count<M>;
  vk::Vec<double, k> g;
  double G[k][n];
  vk::constraint_jacobian(m, q, g, G);
  using D1 = vk::Dual<double, 1>;
  using D2 = vk::Dual<D1, 1>;
  vk::Vec<D2, n> qt;
  for (int i = 0; i < n; ++i) {
    qt[i].v = D1::variable(q[i], 0);
    qt[i].v.d[0] = v[i];
    qt[i].d[0] = D1(v[i]);
  }
  const vk::Vec<D2, k> gt = m.template constraints<D2>(qt);
  const vk::Vec<double, n> f = vk::force(m, q);
  vk::Mat<double, k> A;
  vk::Vec<double, k> b;
  for (int x = 0; x < k; ++x) {
    b[x] = gt[x].d[0].d[0];
    for (int i = 0; i < n; ++i) b[x] += G[x][i] * m.inv_mass(i) * f[i];
    for (int y = 0; y < k; ++y) {
      A[x][y] = 0.0;
      for (int i = 0; i < n; ++i) A[x][y] += G[x][i] * m.inv_mass(i) * G[y][i];
    }
  }
  const vk::Vec<double, k> lambda = vk::lu_solve(A, b);
  for (int i = 0; i < n; ++i) {
    double gl = 0.0;
    for (int x = 0; x < k; ++x) gl += G[x][i] * lambda[x];
    a[i] = m.inv_mass(i) * (f[i] - gl);
  }
}

/// RK4 on the index-1 equations from the phase point s over `steps` steps of h; returns (q, p).
template <class M>
vk::Phase<double, M::dof> index1_reference(const M& m, vk::Phase<double, M::dof> s, double h,
                                           long steps) {
  constexpr int n = M::dof;
  using V = vk::Vec<double, n>;
  V q = s.q, v = vk::velocity_of(m, s.q, s.p);
  for (long k = 0; k < steps; ++k) {
    V a1, a2, a3, a4;
    index1_rates(m, q, v, a1);
    index1_rates(m, q + (0.5 * h) * v, v + (0.5 * h) * a1, a2);
    index1_rates(m, q + (0.5 * h) * (v + (0.5 * h) * a1), v + (0.5 * h) * a2, a3);
    index1_rates(m, q + h * (v + (0.5 * h) * a2), v + h * a3, a4);
    q += (h / 6.0) * (v + 2.0 * (v + (0.5 * h) * a1) + 2.0 * (v + (0.5 * h) * a2) + (v + h * a3));
    v += (h / 6.0) * (a1 + 2.0 * a2 + 2.0 * a3 + a4);
  }
  s.q = q;
  for (int i = 0; i < n; ++i) s.p[i] = v[i] / m.inv_mass(i);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------

TEST(ConstrainedModels, MetadataAndPairings) {
  EXPECT_STREQ(Cart::kName, "pendulum_cartesian");
  EXPECT_STREQ(Sph::kName, "spherical_pendulum");
  EXPECT_STREQ(DSP::kName, "double_spherical_pendulum");
  EXPECT_STREQ(Quat::kName, "rigid_body_quaternion");
  EXPECT_EQ(vk::constraint_count<Cart>, 1);
  EXPECT_EQ(vk::constraint_count<Sph>, 1);
  EXPECT_EQ(vk::constraint_count<DSP>, 2);
  EXPECT_EQ(vk::constraint_count<Quat>, 1);
  EXPECT_EQ(vk::momentum_map_count<Cart>, 0);
  EXPECT_EQ(vk::momentum_map_count<Sph>, 1);
  EXPECT_EQ(vk::momentum_map_count<DSP>, 1);
  EXPECT_EQ(vk::momentum_map_count<Quat>, 3);
  const double mw[5] = {2.0, 3.5, 4.0, 3.0, 9.81};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(DSP::kParams[i].default_value, mw[i]) << i;
  static_assert(vk::LagrangianModel<Quat> && !vk::SeparableModel<Quat>);

  using R = vk::Rattle<double>;
  using S = vk::Shake<double>;
  static_assert(vk::integrator_supports<R, DSP> && vk::integrator_supports<S, DSP>);
  static_assert(vk::integrator_supports<R, Sph> && vk::integrator_supports<R, Cart>);
  // Not for unconstrained models, nor for the Lagrangian rigid body (that is the midpoint rule's).
  static_assert(!vk::integrator_supports<R, vm::Pendulum<double>>);
  static_assert(!vk::integrator_supports<R, Quat> && !vk::integrator_supports<S, Quat>);
  // The explicit splitting methods refuse constrained models.
  static_assert(!vk::integrator_supports<vk::StormerVerlet<double>, DSP>);
  static_assert(vk::integrator_lane_safe<R> && vk::integrator_lane_safe<S>);
  EXPECT_EQ(vk::default_newton_iterations<R>, 4);
  EXPECT_EQ(vk::default_newton_iterations<S>, 4);
  EXPECT_STREQ(vk::integrator_requires<R>, "a separable model with holonomic constraints");
}

TEST(ConstrainedModels, HandGradientsMatchAd) {
  // The forces are constant: the hand-written gradients must equal AD's exactly.
  auto check = [](const auto& m, auto q) {
    auto a = q, b = q;
    m.potential_gradient(q, a);
    vk::potential_gradient_ad(m, q, b);
    for (int i = 0; i < q.size; ++i) EXPECT_EQ(a[i], b[i]) << i;
  };
  check(vm::PendulumCartesian<double>::from_params(std::array{2.0, 1.5, 9.81}.data()),
        vk::Vec<double, 2>{{0.3, -1.2}});
  check(vm::SphericalPendulum<double>::from_params(std::array{2.0, 1.5, 9.81}.data()),
        vk::Vec<double, 3>{{0.3, -1.2, 0.1}});
  check(with_defaults<DSP>(), vk::Vec<double, 6>{{1, 2, -3, 1.5, 2.5, -6}});
}

TEST(DoubleSphericalPendulum, ReferenceStateIsMarsdenWendlandtsOnTheManifold) {
  const DSP m = with_defaults<DSP>();
  const auto x = DSP::reference_state();
  const auto s = load(m, x);
  EXPECT_EQ(x[0], 2.820);
  EXPECT_EQ(x[4], 0.105);
  EXPECT_EQ(x[6], 2.0 * 3.381);
  EXPECT_EQ(x[10], 3.5 * 10.495);
  EXPECT_LT(x[2], 0.0);   // below the pivot
  EXPECT_LT(x[5], x[2]);  // second bob below the first
  // g is a handful of roundings of |q|^2 ~ l^2 (<= 16), divided by 2 l: ~ eps l; G v of products
  // of velocities <= 10.5 with unit-size G: ~ eps 10. Both within 8 eps x scale.
  const double g = constraint_defect(m, s.q), gv = velocity_defect(m, s.q, s.p);
  std::printf("  MW state: |g| = %.2e, |G v| = %.2e, E = %.12f, Jz = %.12f\n", g, gv,
              vk::energy(m, s.q, s.p), m.momentum_map<double>(s.q, s.p)[0]);
  EXPECT_LE(g, 8 * kEps * 4.0);
  EXPECT_LE(gv, 8 * kEps * 10.5);
}

TEST(PendulumCartesian, SameEnergyAndAngularMomentumAsTheAnglePendulum) {
  const std::array params{2.0, 1.5, 9.81};
  const auto c = vm::PendulumCartesian<double>::from_params(params.data());
  const auto a = vm::Pendulum<double>::from_params(params.data());
  const double m = 2.0, l = 1.5;
  for (double th : {-2.5, -0.4, 0.0, 1.0, 3.0}) {
    const double om = 0.7;
    const vk::Vec<double, 2> q{{l * std::sin(th), -l * std::cos(th)}};
    const vk::Vec<double, 2> p{{m * l * std::cos(th) * om, m * l * std::sin(th) * om}};
    const double ea = vk::energy(a, vk::Vec<double, 1>{{th}}, vk::Vec<double, 1>{{m * l * l * om}});
    // ~10 roundings of terms <= m g l = 29.4.
    EXPECT_NEAR(vk::energy(c, q, p), ea, 16 * kEps * 29.43) << th;
    EXPECT_NEAR(q[0] * p[1] - q[1] * p[0], m * l * l * om, 4 * kEps * m * l * l * om) << th;
    EXPECT_LE(constraint_defect(c, q), 4 * kEps * l);
  }
}

// ---------------------------------------------------------------------------------------------
// Rigid body as a unit quaternion (integrated by the midpoint rule; here its kinematics).
// ---------------------------------------------------------------------------------------------

/// Quaternion product a * b.
vk::Vec<double, 4> qmul(const vk::Vec<double, 4>& a, const vk::Vec<double, 4>& b) {
  return {{a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
           a[0] * b[1] + b[0] * a[1] + a[2] * b[3] - a[3] * b[2],
           a[0] * b[2] + b[0] * a[2] + a[3] * b[1] - a[1] * b[3],
           a[0] * b[3] + b[0] * a[3] + a[1] * b[2] - a[2] * b[1]}};
}

TEST(RigidBodyQuaternion, ReferenceStateHasEnergy33AndMomentum0_6_12) {
  const Quat m = with_defaults<Quat>();
  const auto x = Quat::reference_state();
  const auto s = load(m, x);
  // p from the closed form against p = dL/dv by AD at qdot = q * (0, Omega) / 2.
  const vk::Vec<double, 4> qdot = qmul(s.q, vk::Vec<double, 4>{{0.0, 0.0, 1.5, 2.0}});
  vk::Vec<double, 4> p_ad;
  vk::Mat<double, 4> mass;
  vk::momentum_and_mass(m, s.q, qdot, p_ad, mass);
  // Small integers times exact binary fractions: AD's sums are exact.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(p_ad[i], s.p[i]) << i;
  const double E = vk::mechanical_energy(m, s.q, s.p);
  const auto J = m.momentum_map<double>(s.q, s.p);
  std::printf("  quaternion reference: E = %.17g, J = (%.17g, %.17g, %.17g)\n", E, J[0], J[1],
              J[2]);
  // The Legendre solve (two Newton steps on a 4 x 4 system with entries <= 12) rounds at ~eps of
  // the products: 8 eps x 33.
  EXPECT_NEAR(E, 33.0, 8 * kEps * 33.0);
  EXPECT_EQ(J[0], 0.0);
  EXPECT_EQ(J[1], 6.0);
  EXPECT_EQ(J[2], 12.0);
  EXPECT_EQ(constraint_defect(m, s.q), 0.0);
  EXPECT_LE(velocity_defect(m, s.q, s.p), 8 * kEps * 2.0);
}

TEST(RigidBodyQuaternion, GeneralAttitudeEnergyAndSpatialMomentum) {
  // At random unit q and Omega: E = Omega . I Omega / 2 and J = R(q) I Omega, with R(q) from the
  // textbook formula (not from the model's quaternion algebra); J from (q, p) alone.
  const auto params = std::array{1.3, 2.1, 3.4};
  const Quat m = Quat::from_params(params.data());
  std::mt19937_64 rng(7);
  std::normal_distribution<double> N01;
  for (int trial = 0; trial < 20; ++trial) {
    vk::Vec<double, 4> q{{N01(rng), N01(rng), N01(rng), N01(rng)}};
    const double nq = std::sqrt(vk::norm2(q));
    for (int i = 0; i < 4; ++i) q[i] /= nq;
    const double Om[3] = {N01(rng), N01(rng), N01(rng)};
    const vk::Vec<double, 4> v =
        qmul(q, vk::Vec<double, 4>{{0.0, Om[0] / 2, Om[1] / 2, Om[2] / 2}});
    vk::Vec<double, 4> p;
    vk::Mat<double, 4> mass;
    vk::momentum_and_mass(m, q, v, p, mass);
    const double Pi[3] = {params[0] * Om[0], params[1] * Om[1], params[2] * Om[2]};
    const double E_want = 0.5 * (Om[0] * Pi[0] + Om[1] * Pi[1] + Om[2] * Pi[2]);
    const double w = q[0], a = q[1], b = q[2], c = q[3];
    const double R[3][3] = {{1 - 2 * (b * b + c * c), 2 * (a * b - w * c), 2 * (a * c + w * b)},
                            {2 * (a * b + w * c), 1 - 2 * (a * a + c * c), 2 * (b * c - w * a)},
                            {2 * (a * c - w * b), 2 * (b * c + w * a), 1 - 2 * (a * a + b * b)}};
    const auto J = m.momentum_map<double>(q, p);
    const double scale = 3.4 * (std::abs(Om[0]) + std::abs(Om[1]) + std::abs(Om[2]));
    for (int i = 0; i < 3; ++i) {
      const double Ji = R[i][0] * Pi[0] + R[i][1] * Pi[1] + R[i][2] * Pi[2];
      // Two routes of ~20 roundings each through terms <= scale.
      EXPECT_NEAR(J[i], Ji, 32 * kEps * scale) << trial << " " << i;
    }
    EXPECT_NEAR(vk::mechanical_energy(m, q, p), E_want, 64 * kEps * scale * scale) << trial;
    // On the manifold: the constraint, its velocity form.
    EXPECT_LE(constraint_defect(m, q), 4 * kEps);
    EXPECT_LE(velocity_defect(m, q, p), 16 * kEps * scale);
  }
}

TEST(RigidBodyQuaternion, LagrangianIsIndependentOfI0OnTheManifoldOnly) {
  Quat a = with_defaults<Quat>(), b = a;
  EXPECT_EQ(a.I0, 2.0);  // the mean of 1, 2, 3
  b.I0 = 50.0;
  std::mt19937_64 rng(11);
  std::normal_distribution<double> N01;
  for (int trial = 0; trial < 20; ++trial) {
    vk::Vec<double, 4> q{{N01(rng), N01(rng), N01(rng), N01(rng)}};
    const double nq = std::sqrt(vk::norm2(q));
    for (int i = 0; i < 4; ++i) q[i] /= nq;
    vk::Vec<double, 4> v{{N01(rng), N01(rng), N01(rng), N01(rng)}};
    const vk::Vec<double, 4> v_off = v;
    const double qv = vk::dot(q, v);
    for (int i = 0; i < 4; ++i) v[i] -= qv * q[i];  // tangent: q . v = 0 up to round-off
    const double La = a.lagrangian<double>(q, v), Lb = b.lagrangian<double>(q, v);
    // The I0 term is 1/2 I0 w0^2 with w0 = 2 q . v ~ eps |v|: (50 - 2)/2 * (4 eps |v|)^2 is
    // ~1e-29, so La and Lb agree to the rounding of L itself (~8 eps |L|).
    EXPECT_NEAR(La, Lb, 8 * kEps * std::abs(La)) << trial;
    // The control: off the tangent space the I0 term is there, 1/2 (50 - 2) (2 q.v)^2.
    const double La_off = a.lagrangian<double>(q, v_off), Lb_off = b.lagrangian<double>(q, v_off);
    EXPECT_NEAR(Lb_off - La_off, 0.5 * 48.0 * 4.0 * qv * qv, 1e-12 * (1 + std::abs(La_off)));
  }
}

// ---------------------------------------------------------------------------------------------
// RATTLE and SHAKE
// ---------------------------------------------------------------------------------------------

// Round-off levels on the double spherical pendulum at Marsden & Wendlandt's data: positions
// |q| <= l1 + l2 = 7, velocities |v| <= ~13 (measured maximum 12.4 over T = 1000), |G| rows of
// norm <= sqrt(2) (g written in position units). g is computed from a q1 that carries ~eps |q|
// of rounding per component and from |q|^2 - l^2 (a few eps l^2, divided by 2l): a few eps x 7.
// G M^{-1} p after the projection: rounding of p - G^T mu, ~eps |v| per component, times |G|.
constexpr double kPositionScale = 7.0;
constexpr double kVelocityScale = 13.0 * 1.5;
constexpr double kGTol = 8 * kEps * kPositionScale;   // 1.2e-14
constexpr double kGvTol = 8 * kEps * kVelocityScale;  // 3.5e-14

TEST(Rattle, OrderTwoAgainstAnIndexOneReference) {
  // T = 1 from the MW state; reference: RK4 on the index-1 equations, h = 1e-4 (error ~1e-14, see
  // index1_reference). RATTLE is symmetric, so its global error is C h^2 + O(h^4): halving h
  // divides it by 4 (1 + O(h^2)) (measured 4.000..4.007), and [3.7, 4.3] separates order 2 from
  // orders 1 (ratio 2) and 3 (ratio 8). Error: max over q, and p / m2 (velocity units).
  const DSP m = with_defaults<DSP>();
  const auto s0 = load(m, DSP::reference_state());
  const double T = 1.0;
  const auto ref = index1_reference(m, s0, 1e-4, 10000);
  std::printf("  reference: |g| = %.1e, |G v| = %.1e\n", constraint_defect(m, ref.q),
              velocity_defect(m, ref.q, ref.p));
  double prev = 0.0;
  for (long n : {50, 100, 200, 400}) {
    auto s = s0;
    const double h = T / double(n);
    const double r = integrate(vk::Rattle<double>{}, m, s, h, n);
    const double err = std::max(distance(s.q, ref.q), distance(s.p, ref.p) / 3.5);
    std::printf("  rattle h = %.4f: error %.4e%s", h, err, prev > 0 ? "" : "\n");
    if (prev > 0) {
      std::printf("  ratio %.3f\n", prev / err);
      EXPECT_GT(prev / err, 3.7) << h;
      EXPECT_LT(prev / err, 4.3) << h;
    }
    EXPECT_GT(err, 1e4 * 1e-14);  // far above the reference's own error
    EXPECT_LE(r, kGTol);
    prev = err;
  }
}

TEST(Shake, SamePositionsAsRattleOrderTwoMomentaNotTangent) {
  // SHAKE's positions are RATTLE's (its momenta differ by G^T terms that the next multiplier
  // absorbs), so they converge at order 2 too; its momenta miss the hidden constraint by
  // (h/2) G M^{-1} G^T mu = O(h): the defect ratio under halving h is ~2; yet the energy error
  // stays O(h^2) (the normal part of p enters H at second order). The positions of the two runs
  // differ by round-off amplified by the dynamics over T = 1 (measured <= 1.1e-14; allowed 1e-11).
  const DSP m = with_defaults<DSP>();
  const auto s0 = load(m, DSP::reference_state());
  const double T = 1.0;
  const auto ref = index1_reference(m, s0, 1e-4, 10000);
  double prev_err = 0.0, prev_gv = 0.0, prev_e = 0.0;
  for (long n : {50, 100, 200, 400}) {
    const double h = T / double(n);
    auto sh = s0, ra = s0;
    double gv_max = 0.0, same = 0.0, e_max = 0.0;
    const double E0 = vk::energy(m, s0.q, s0.p);
    const vk::Shake<double> shake;
    const vk::Rattle<double> rattle;
    double r = 0.0;
    for (long k = 0; k < n; ++k) {
      r = std::max(r, vk::take_step(shake, m, sh, h, double(k) * h));
      vk::take_step(rattle, m, ra, h, double(k) * h);
      gv_max = std::max(gv_max, velocity_defect(m, sh.q, sh.p));
      same = std::max(same, distance(sh.q, ra.q));
      e_max = std::max(e_max, std::abs(vk::energy(m, sh.q, sh.p) - E0));
    }
    const double err = distance(sh.q, ref.q);
    std::printf(
        "  shake h = %.4f: q error %.4e, |q_shake - q_rattle| %.1e, max |G v| %.3e, "
        "max |E - E0| %.3e",
        h, err, same, gv_max, e_max);
    if (prev_err > 0) {
      std::printf("  ratios %.3f, %.3f, %.3f\n", prev_err / err, prev_gv / gv_max, prev_e / e_max);
      EXPECT_GT(prev_err / err, 3.7) << h;
      EXPECT_LT(prev_err / err, 4.3) << h;
      EXPECT_GT(prev_gv / gv_max, 1.8) << h;  // order 1: ratio 2 (1 + O(h))
      EXPECT_LT(prev_gv / gv_max, 2.2) << h;
      EXPECT_GT(prev_e / e_max, 3.7) << h;  // energy still O(h^2)
      EXPECT_LT(prev_e / e_max, 4.3) << h;
    } else {
      std::printf("\n");
    }
    EXPECT_LE(same, 1e-11);
    EXPECT_LE(r, kGTol);
    prev_err = err;
    prev_gv = gv_max;
    prev_e = e_max;
  }
}

TEST(Rattle, LongRunOnTheManifoldJzConservedEnergyBounded) {
  // 1e5 steps of h = 0.01 (T = 1000) from the MW state. At EVERY step: |g| and |G v| at round-off
  // (kGTol, kGvTol: with 4 Newton iterations the residual is round-off for h <= 0.1, see
  // NewtonSweep). J_z: the constraint forces are central, so J_z is conserved whatever the
  // multipliers; only rounding of the bilinear J = x p_y - y p_x (terms up to |J| ~ 200) changes
  // it, a random walk of ~eps |J| per step: eps |J| sqrt(N) = 1.4e-11; allow 10x that. Energy: the
  // error oscillates at O(h^2) (~2e-2 here) without drift: the largest error over the last tenth
  // of the run (T = 100, many oscillations of the chaotic motion) must not exceed that over the
  // first tenth by more than half.
  const DSP m = with_defaults<DSP>();
  auto s = load(m, DSP::reference_state());
  const double h = 0.01;
  const long N = 100000;
  const double E0 = vk::energy(m, s.q, s.p);
  const double J0 = m.momentum_map<double>(s.q, s.p)[0];
  double g_max = 0.0, gv_max = 0.0, j_max = 0.0, e_first = 0.0, e_last = 0.0;
  const double r = integrate(vk::Rattle<double>{}, m, s, h, N, [&](long k, const auto& x) {
    g_max = std::max(g_max, constraint_defect(m, x.q));
    gv_max = std::max(gv_max, velocity_defect(m, x.q, x.p));
    j_max = std::max(j_max, std::abs(m.momentum_map<double>(x.q, x.p)[0] - J0));
    const double de = std::abs(vk::energy(m, x.q, x.p) - E0);
    if (k <= N / 10) e_first = std::max(e_first, de);
    if (k > N - N / 10) e_last = std::max(e_last, de);
  });
  std::printf(
      "  T = 1000, h = 0.01: max residual %.2e, |g| %.2e, |G v| %.2e, |dJz| %.2e "
      "(Jz = %.3f), max |dE| first tenth %.4e, last tenth %.4e (E0 = %.4f)\n",
      r, g_max, gv_max, j_max, J0, e_first, e_last, E0);
  EXPECT_LE(r, kGTol);
  EXPECT_LE(g_max, kGTol);
  EXPECT_LE(gv_max, kGvTol);
  EXPECT_LE(j_max, 10 * kEps * std::abs(J0) * std::sqrt(double(N)));
  EXPECT_LE(e_last, 1.5 * e_first);
  EXPECT_GT(e_first, 0.0);
}

TEST(Rattle, CartesianPendulumAgreesWithTheAnglePendulumToOrderTwo) {
  // The same pendulum (m = 2, l = 1.5, g = 9.81, released at th = 1 with p_th = 3) by RATTLE in
  // (x, y) and by Verlet in th, over T = 5 (~2 periods). Both are O(h^2) accurate with different
  // error constants, so their difference is O(h^2): its max over the run (th and p_th/(m l^2))
  // divides by 4 (1 + O(h)) when h halves.
  const std::array params{2.0, 1.5, 9.81};
  const auto c = vm::PendulumCartesian<double>::from_params(params.data());
  const auto a = vm::Pendulum<double>::from_params(params.data());
  const double ml2 = 2.0 * 1.5 * 1.5, l = 1.5, th0 = 1.0, pth0 = 3.0;
  const double om0 = pth0 / ml2;
  const std::array<double, 4> xc{l * std::sin(th0), -l * std::cos(th0),
                                 2.0 * l * std::cos(th0) * om0, 2.0 * l * std::sin(th0) * om0};
  double prev = 0.0;
  for (long n : {250, 500, 1000, 2000}) {
    const double h = 5.0 / double(n);
    auto sc = load(c, xc);
    auto sa = load(a, std::array{th0, pth0});
    double d = 0.0;
    const vk::Rattle<double> rattle;
    const vk::StormerVerlet<double> verlet;
    for (long k = 0; k < n; ++k) {
      vk::take_step(rattle, c, sc, h, double(k) * h);
      vk::take_step(verlet, a, sa, h, double(k) * h);
      const double th = std::atan2(sc.q[0], -sc.q[1]);
      const double pth = sc.q[0] * sc.p[1] - sc.q[1] * sc.p[0];
      d = std::max({d, std::abs(th - sa.q[0]), std::abs(pth - sa.p[0]) / ml2});
    }
    std::printf("  h = %.4f: max |angle - cartesian| %.4e", h, d);
    if (prev > 0) {
      std::printf("  ratio %.3f\n", prev / d);
      EXPECT_GT(prev / d, 3.7) << h;
      EXPECT_LT(prev / d, 4.3) << h;
    } else {
      std::printf("\n");
    }
    prev = d;
  }
}

TEST(Rattle, EnergyErrorOfTheDoubleSphericalPendulumIsOrderTwo) {
  // max |E - E0| over T = 5 from the MW state: the modified-energy argument gives C h^2 + O(h^4)
  // (RATTLE is symmetric), so halving h divides it by 4 (1 + O(h^2)).
  const DSP m = with_defaults<DSP>();
  const auto s0 = load(m, DSP::reference_state());
  const double E0 = vk::energy(m, s0.q, s0.p);
  double prev = 0.0;
  for (long n : {250, 500, 1000, 2000}) {
    const double h = 5.0 / double(n);
    auto s = s0;
    double e = 0.0;
    integrate(vk::Rattle<double>{}, m, s, h, n, [&](long, const auto& x) {
      e = std::max(e, std::abs(vk::energy(m, x.q, x.p) - E0));
    });
    std::printf("  h = %.4f: max |E - E0| %.4e", h, e);
    if (prev > 0) {
      std::printf("  ratio %.3f\n", prev / e);
      EXPECT_GT(prev / e, 3.7) << h;
      EXPECT_LT(prev / e, 4.3) << h;
    } else {
      std::printf("\n");
    }
    prev = e;
  }
}

TEST(Rattle, NewtonSweepReachesRoundOffAndTheDefaultDoes) {
  // The predictor misses the manifold by O(h^2) and Newton squares the error each iteration:
  // r_{i+1} ~ C r_i^2 with C ~ the constraints' curvature over |G|^2, ~1/l (measured 0.2-0.33 for
  // l2 = 3). Asserted: r_{i+1} <= max(kGTol, r_i^2 / 1 length unit), a 3x margin on C that a merely
  // linear rate fails by decades. At h = 0.01, 1 iteration leaves ~4e-7, 2 leave ~4e-14, 3 reach
  // round-off; at h = 0.1 (the top of MW's range) 3 leave ~2e-11 and 4 reach round-off. Max
  // residual over T = 10 from the MW state; the default count must reach kGTol at h <= 0.1.
  const DSP m = with_defaults<DSP>();
  const auto s0 = load(m, DSP::reference_state());
  for (double h : {0.01, 0.05, 0.1}) {
    std::printf("  h = %.2f:", h);
    double prev = 0.0;
    for (int it = 1; it <= 6; ++it) {
      vk::Rattle<double> rattle;
      vk::set_newton_iterations(rattle, it);
      auto s = s0;
      double g_max = 0.0;
      const double r = integrate(
          rattle, m, s, h, long(std::lround(10.0 / h)),
          [&](long, const auto& x) { g_max = std::max(g_max, constraint_defect(m, x.q)); });
      std::printf(" %d: %.1e", it, r);
      EXPECT_EQ(r, g_max);  // the reported residual is |g| at the state the step returns
      if (it > 1) {
        EXPECT_LE(r, std::max(kGTol, prev * prev)) << h << " " << it;
      }
      if (it >= vk::Rattle<double>::kNewtonIterations) {
        EXPECT_LE(r, kGTol) << h << " " << it;
      }
      prev = r;
    }
    std::printf("\n");
  }
}

TEST(Rattle, SphericalPendulumJzAndFloat) {
  // Spherical pendulum (m = l = g = 1) from (sin 1, 0, -cos 1) with horizontal velocity (0, 0.8,
  // 0): 2e4 steps of h = 0.01. In double: |g| and J_z at round-off (J_z ~ 0.67, random walk ~ eps J
  // sqrt(N) = 2e-14; allow 10x). In float the same run stays on the sphere to float round-off
  // (8 eps_f x l) at every step.
  const Sph m = with_defaults<Sph>();
  const std::array<double, 6> x0{std::sin(1.0), 0.0, -std::cos(1.0), 0.0, 0.8, 0.0};
  const long N = 20000;
  auto s = load(m, x0);
  const double J0 = m.momentum_map<double>(s.q, s.p)[0];
  double j = 0.0, g = 0.0;
  integrate(vk::Rattle<double>{}, m, s, 0.01, N, [&](long, const auto& x) {
    j = std::max(j, std::abs(m.momentum_map<double>(x.q, x.p)[0] - J0));
    g = std::max(g, constraint_defect(m, x.q));
  });
  const auto mf = with_defaults<vm::SphericalPendulum<float>>();
  auto sf = load<vm::SphericalPendulum<float>, float>(mf, x0);
  double gf = 0.0, jf = 0.0;
  const double rf = integrate(vk::Rattle<float>{}, mf, sf, 0.01, N, [&](long, const auto& x) {
    const auto gx = mf.constraints<float>(x.q);
    gf = std::max(gf, double(std::abs(gx[0])));
    jf = std::max(jf, std::abs(double(mf.momentum_map<float>(x.q, x.p)[0]) - J0));
  });
  const double kFloatEps = std::numeric_limits<float>::epsilon();
  std::printf(
      "  spherical pendulum: |dJz| %.2e (Jz = %.4f), |g| %.2e; float: |g| %.2e, "
      "residual %.2e, |dJz| %.2e\n",
      j, J0, g, gf, rf, jf);
  EXPECT_LE(j, 10 * kEps * J0 * std::sqrt(double(N)));
  EXPECT_LE(g, 8 * kEps);
  EXPECT_LE(gf, 8 * kFloatEps);
  EXPECT_LE(rf, 8 * kFloatEps);
  EXPECT_LE(jf, 10 * kFloatEps * J0 * std::sqrt(double(N)));
}

TEST(Rattle, SymplecticOnTheConstraintManifold) {
  // RATTLE is symplectic on T*N = {g(q) = 0, G(q) M^{-1} p = 0} (HLW Thm VII.1.3): for two vectors
  // xi, eta tangent to T*N, omega(xi, eta) = xi_q . eta_p - xi_p . eta_q is the same after the step
  // (SCIENCE.md §2: test on the manifold, not in R^12). Tangent vectors: dual numbers with two
  // directions seeded in R^12 and carried through a smooth retraction onto T*N (rescale the rods,
  // project p), then through the computed step (Newton iterations included). Round-off: omega is a
  // sum of 12 products of entries up to ~10, each carrying ~50 ops of eps: 1e-12 is ~100x above
  // that. The same test with ONE Newton iteration (residual ~4e-7 at h = 0.01) must fail it: the
  // map actually computed is symplectic only to the Newton residual (SCIENCE.md §1).
  using D = vk::Dual<double, 2>;
  using MD = vm::DoubleSphericalPendulum<D>;
  const auto params = std::array{2.0, 3.5, 4.0, 3.0, 9.81};
  const MD md = MD::from_params(params.data());
  const auto x0 = DSP::reference_state();
  std::mt19937_64 rng(3);
  std::normal_distribution<double> N01;
  auto omega = [](const vk::Phase<D, 6>& s) {
    double w = 0.0;
    for (int i = 0; i < 6; ++i) w += s.q[i].d[0] * s.p[i].d[1] - s.p[i].d[0] * s.q[i].d[1];
    return w;
  };
  for (int it : {vk::Rattle<double>::kNewtonIterations, 1}) {
    double worst = 0.0, scale = 0.0;
    for (int trial = 0; trial < 5; ++trial) {
      vk::Phase<D, 6> s;
      for (int i = 0; i < 6; ++i) {
        s.q[i] = D(x0[i]);
        s.p[i] = D(x0[6 + i]);
        for (int d = 0; d < 2; ++d) {
          s.q[i].d[d] = N01(rng);
          s.p[i].d[d] = N01(rng);
        }
      }
      // Retraction onto N (values unchanged: x0 is on N), then p onto the tangent space.
      const vk::Vec<D, 3> q1{{s.q[0], s.q[1], s.q[2]}};
      const vk::Vec<D, 3> d{{s.q[3] - s.q[0], s.q[4] - s.q[1], s.q[5] - s.q[2]}};
      const D k1 = 4.0 / sqrt(vk::norm2(q1)), k2 = 3.0 / sqrt(vk::norm2(d));
      for (int i = 0; i < 3; ++i) {
        s.q[i] = k1 * q1[i];
        s.q[3 + i] = s.q[i] + k2 * d[i];
      }
      vk::Vec<D, 2> g;
      D G[2][6];
      vk::constraint_jacobian(md, s.q, g, G);
      vk::project_momentum(md, G, s.p);
      vk::refresh_force(md, s);
      const double w0 = omega(s);
      vk::Rattle<D> rattle;
      rattle.newton_iterations = it;
      for (int k = 0; k < 10; ++k) vk::take_step(rattle, md, s, D(0.01), D(0.01 * k));
      worst = std::max(worst, std::abs(omega(s) - w0));
      scale = std::max(scale, std::abs(w0));
    }
    std::printf("  %d Newton iteration(s): max |omega(T) - omega(0)| = %.2e (|omega| ~ %.1f)\n", it,
                worst, scale);
    if (it == 1) {
      EXPECT_GT(worst, 1e-9);
    } else {
      EXPECT_LE(worst, 1e-12);
    }
  }
}

TEST(Rattle, SimdLanesEqualScalarBitForBit) {
  // The CPU backend runs RATTLE in Pack lanes (kLaneSafe): each lane must do the scalar arithmetic
  // exactly (no transcendental in the step). Lanes: the MW state rotated about z by different
  // angles (still on the manifold), 200 steps of h = 0.01.
  constexpr int W = 8;
  using P = vk::Pack<double, W>;
  const DSP m = with_defaults<DSP>();
  const auto mp =
      vm::DoubleSphericalPendulum<P>::from_params(std::array{2.0, 3.5, 4.0, 3.0, 9.81}.data());
  const auto x0 = DSP::reference_state();
  std::array<std::array<double, 12>, W> lanes;
  std::array<double, 12 * W> soa;
  for (int l = 0; l < W; ++l) {
    const double c = std::cos(0.3 * l), sn = std::sin(0.3 * l);
    auto& x = lanes[l];
    x = x0;
    for (int b : {0, 3, 6, 9}) {
      x[b] = c * x0[b] - sn * x0[b + 1];
      x[b + 1] = sn * x0[b] + c * x0[b + 1];
    }
    for (int i = 0; i < 12; ++i) soa[i * W + l] = x[i];
  }
  std::array<P, 12> packs;
  for (int i = 0; i < 12; ++i) packs[i] = P::load(&soa[i * W]);
  vk::Phase<P, 6> sp;
  vk::StateOps<vm::DoubleSphericalPendulum<P>, P>::load(mp, packs.data(), 1, sp);
  const vk::Rattle<P> rp;
  for (long k = 0; k < 200; ++k) vk::take_step(rp, mp, sp, P(0.01), P(double(k) * 0.01));
  for (int l = 0; l < W; ++l) {
    auto s = load(m, lanes[l]);
    integrate(vk::Rattle<double>{}, m, s, 0.01, 200);
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(sp.q[i][l], s.q[i]) << l << " " << i;
      EXPECT_EQ(sp.p[i][l], s.p[i]) << l << " " << i;
    }
  }
}

}  // namespace
