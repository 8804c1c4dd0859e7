// Every model in models/: hand-written gradients against AD, AD against finite differences, second
// derivatives through nested duals, energies at known points, symmetries and their momentum maps,
// parameter tables, and the float instantiation.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/integrators/stormer_verlet.hpp"
#include "kernels/simd/pack.hpp"
#include "models/harmonic_oscillator.hpp"
#include "models/henon_heiles.hpp"
#include "models/j2_satellite.hpp"
#include "models/kepler.hpp"
#include "models/outer_solar_system.hpp"
#include "models/pendulum.hpp"
#include "vigor/all_models.hpp"  // every registered model, for the registry test

namespace vigor::models {
namespace {

using kernels::Rule;
using kernels::Vec;

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kFloatEps = std::numeric_limits<float>::epsilon();

// Hand-written and AD gradients are two sequences of ~10-30 roundings of the same terms; each
// rounding costs <= eps of the term it touches, so they differ by <~ 30 eps (7e-15) of the size of
// the terms. 1e-13 leaves a factor 15; a wrong coefficient or sign errs at O(1) of a term.
constexpr double kHandVsAd = 1e-13;
// Central differences with step h = kFdStep * max(1, |q_i|): truncation h^2/6 |V'''| plus
// cancellation eps |V| / h, both ~1e-11 relative for O(1) scales. 1e-7 leaves room for third
// derivatives 1e3 times the first (near the singularities of the gravity models) and is still five
// decades below the O(1) error of a wrong derivative.
constexpr double kFdStep = 1e-5;
constexpr double kFdRel = 1e-7;
// A float potential or gradient is at most ~30 float roundings of its terms, each <= eps_f / 2
// (6e-8): 16 eps_f = 1.9e-6 of the size of the terms.
constexpr double kFloatRel = 16 * kFloatEps;

template <class M>
using QVec = Vec<double, M::dof>;

template <class M>
M WithParams(const std::vector<double>& v) {
  EXPECT_EQ(v.size(), M::kParams.size());
  return M::from_params(v.data());
}

template <class M>
std::vector<double> DefaultParams() {
  std::vector<double> v;
  for (const auto& p : M::kParams) v.push_back(p.default_value);
  return v;
}

template <class M>
QVec<M> AdGradient(const M& m, const QVec<M>& q) {
  QVec<M> g;
  kernels::potential_gradient_ad(m, q, g);
  return g;
}

template <class M>
QVec<M> HandGradient(const M& m, const QVec<M>& q) {
  QVec<M> g;
  m.potential_gradient(q, g);
  return g;
}

template <class M>
double FdStep(const QVec<M>& q, int i) {
  return kFdStep * std::max(1.0, std::abs(q[i]));
}

template <class M>
QVec<M> FdGradient(const M& m, const QVec<M>& q) {
  QVec<M> g;
  for (int i = 0; i < M::dof; ++i) {
    const double h = FdStep<M>(q, i);
    QVec<M> qp = q, qm = q;
    qp[i] += h;
    qm[i] -= h;
    g[i] = (m.template potential<double>(qp) - m.template potential<double>(qm)) / (qp[i] - qm[i]);
  }
  return g;
}

template <int N>
double MaxAbs(const Vec<double, N>& v) {
  double r = 0.0;
  for (int i = 0; i < N; ++i) r = std::max(r, std::abs(v[i]));
  return r;
}

// |got_i - want_i| <= rel * scale_i for every component.
template <int N>
void ExpectVecNear(const Vec<double, N>& got, const Vec<double, N>& want,
                   const Vec<double, N>& scale, double rel, const std::string& what) {
  for (int i = 0; i < N; ++i) {
    EXPECT_NEAR(got[i], want[i], rel * scale[i]) << what << ", component " << i;
  }
}

// Normwise version: every component measured against the largest one.
template <int N>
void ExpectVecNear(const Vec<double, N>& got, const Vec<double, N>& want, double rel,
                   const std::string& what) {
  ExpectVecNear(got, want, Vec<double, N>::filled(MaxAbs(want)), rel, what);
}

template <int N>
std::string Where(const Vec<double, N>& q) {
  std::string s = "at q = (";
  for (int i = 0; i < N; ++i) s += (i ? ", " : "") + std::to_string(q[i]);
  return s + ")";
}

template <class M>
void ExpectAdMatchesFiniteDifferences(const M& m, const QVec<M>& q) {
  ExpectVecNear(AdGradient(m, q), FdGradient(m, q), kFdRel, "AD vs FD " + Where(q));
}

// The Hessian from nested duals, one column per evaluation (inner duals carry the gradient, the
// outer one the direction e_j), against central differences of the AD gradient: the check that
// potential() works on nested duals, as the Newton Jacobians of implicit steps will need. Columns
// rather than Dual<Dual<double, n>, n>: at n = 18 the latter's fully unrolled code takes g++ -O2
// about ten minutes to compile.
template <class M>
void ExpectNestedHessianMatchesFiniteDifferences(const M& m, const QVec<M>& q) {
  constexpr int n = M::dof;
  using D1 = kernels::Dual<double, n>;
  using D2 = kernels::Dual<D1, 1>;
  const double V0 = m.template potential<double>(q);
  const QVec<M> g = AdGradient(m, q);
  std::vector<double> H(n * n), H_fd(n * n);
  for (int j = 0; j < n; ++j) {
    Vec<D2, n> qd;
    for (int i = 0; i < n; ++i) qd[i].v = D1::variable(q[i], i);
    qd[j].d[0] = D1(1.0);
    const D2 V = m.template potential<D2>(qd);
    // Not bit-identical to the plain evaluation: Dual division multiplies by a rounded reciprocal.
    EXPECT_NEAR(V.v.v, V0, kHandVsAd * std::abs(V0)) << Where(q);
    // Both levels apply the same chain rule: first derivatives from either agree to round-off.
    EXPECT_NEAR(V.d[0].v, g[j], kHandVsAd * MaxAbs(g)) << j << " " << Where(q);
    for (int i = 0; i < n; ++i) {
      EXPECT_NEAR(V.v.d[i], g[i], kHandVsAd * MaxAbs(g)) << i << " " << Where(q);
      H[i * n + j] = V.d[0].d[i];
    }
    const double h = FdStep<M>(q, j);
    QVec<M> qp = q, qm = q;
    qp[j] += h;
    qm[j] -= h;
    const QVec<M> gp = AdGradient(m, qp), gm = AdGradient(m, qm);
    for (int i = 0; i < n; ++i) H_fd[i * n + j] = (gp[i] - gm[i]) / (qp[j] - qm[j]);
  }
  double h_max = 0.0;
  for (double e : H) h_max = std::max(h_max, std::abs(e));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      EXPECT_NEAR(H[i * n + j], H_fd[i * n + j], kFdRel * h_max)
          << "H(" << i << "," << j << ") " << Where(q);
      EXPECT_NEAR(H[i * n + j], H[j * n + i], kHandVsAd * h_max) << "symmetry " << i << "," << j;
    }
  }
}

// A float model evaluated at float inputs against the double model at the same (exactly
// representable) inputs, so that only the model's float arithmetic is measured.
template <template <class> class Model>
void ExpectFloatAgreesWithDouble(const std::vector<double>& params,
                                 const Vec<double, Model<double>::dof>& q_in,
                                 const Vec<double, Model<double>::dof>& grad_scale) {
  constexpr int n = Model<double>::dof;
  const auto md = Model<double>::from_params(params.data());
  const auto mf = Model<float>::from_params(params.data());
  Vec<float, n> qf;
  Vec<double, n> q;
  for (int i = 0; i < n; ++i) {
    qf[i] = static_cast<float>(q_in[i]);
    q[i] = qf[i];
  }
  const float Vf = mf.template potential<float>(qf);
  const double Vd = md.template potential<double>(q);
  EXPECT_NEAR(Vf, Vd, kFloatRel * std::abs(Vd)) << Where(q);

  Vec<float, n> gf;
  Vec<double, n> gd;
  kernels::potential_gradient(mf, qf, gf);
  kernels::potential_gradient(md, q, gd);
  Vec<double, n> g;
  for (int i = 0; i < n; ++i) g[i] = gf[i];
  ExpectVecNear(g, gd, grad_scale, kFloatRel, "float gradient " + Where(q));
}

void ExpectParam(const kernels::ParamSpec& p, const char* name, double value, Rule rule) {
  EXPECT_STREQ(p.name, name);
  EXPECT_EQ(p.default_value, value) << name;
  EXPECT_EQ(p.rule, rule) << name;
  EXPECT_GT(std::string(p.description).size(), 0u) << name;
}

// ---------------------------------------------------------------------------------------------
// Registry

TEST(Models, EveryRegisteredModelIsTestedHereUnderItsJobName) {
  // Every registered model, under its job name and with a description. The models of this file
  // are tested below; the constrained, Lagrangian and Lie-group models in test_constrained.cpp,
  // test_implicit.cpp and test_lie_group.cpp.
#define VIGOR_MODEL(job, Type, header)     \
  EXPECT_STREQ(Type<double>::kName, #job); \
  EXPECT_GT(std::string(Type<double>::kDescription).size(), 0u);
#include "models/models.def"
#undef VIGOR_MODEL
}

// ---------------------------------------------------------------------------------------------
// Harmonic oscillator

TEST(HarmonicOscillator, ParamsAndEnergy) {
  using M = HarmonicOscillator<double>;
  ASSERT_EQ(M::kParams.size(), 2u);
  ExpectParam(M::kParams[0], "m", 1.0, Rule::kPositive);
  ExpectParam(M::kParams[1], "k", 1.0, Rule::kPositive);
  const M m = WithParams<M>({2.0, 5.0});
  EXPECT_EQ(m.inv_mass(0), 0.5);
  // 3^2 / (2 * 2) + 5 * 2^2 / 2: every operation exact in binary.
  EXPECT_EQ(kernels::energy(m, Vec<double, 1>{{2.0}}, Vec<double, 1>{{3.0}}), 12.25);
}

TEST(HarmonicOscillator, GradientsAndFloat) {
  using M = HarmonicOscillator<double>;
  const M m = WithParams<M>({2.0, 5.0});
  for (double x : {-2.5, -0.3, 0.7, 4.0}) {
    const Vec<double, 1> q{{x}};
    EXPECT_NEAR(AdGradient(m, q)[0], 5.0 * x, kHandVsAd * 5.0 * std::abs(x));
    ExpectAdMatchesFiniteDifferences(m, q);
    ExpectNestedHessianMatchesFiniteDifferences(m, q);
    ExpectFloatAgreesWithDouble<HarmonicOscillator>({2.0, 5.0}, q, {{5.0 * std::abs(x)}});
  }
}

// ---------------------------------------------------------------------------------------------
// Pendulum

TEST(Pendulum, ParamsAndEnergy) {
  using M = Pendulum<double>;
  ASSERT_EQ(M::kParams.size(), 3u);
  ExpectParam(M::kParams[0], "m", 1.0, Rule::kPositive);
  ExpectParam(M::kParams[1], "l", 1.0, Rule::kPositive);
  ExpectParam(M::kParams[2], "g", 1.0, Rule::kNonNegative);

  const M d = WithParams<M>(DefaultParams<M>());
  const Vec<double, 1> zero{{0.0}};
  EXPECT_EQ(kernels::energy(d, zero, zero), -1.0);  // hanging at rest: -m g l
  EXPECT_NEAR(kernels::energy(d, Vec<double, 1>{{std::numbers::pi}}, zero), 1.0, kEps);  // inverted

  // m = 2, l = 3, g = 9.81: H = p^2 / (2 m l^2) - m g l cos(th) = 2.25 / 36 - 58.86 / 2.
  const M m = WithParams<M>({2.0, 3.0, 9.81});
  EXPECT_NEAR(m.inv_mass(0), 1.0 / 18.0, kEps / 18.0);
  EXPECT_NEAR(kernels::energy(m, Vec<double, 1>{{std::numbers::pi / 3.0}}, Vec<double, 1>{{1.5}}),
              0.0625 - 29.43, 8 * kEps * 29.43);  // a handful of roundings of 29.43
}

TEST(Pendulum, GradientsAndFloat) {
  using M = Pendulum<double>;
  const std::vector<double> params = {2.0, 3.0, 9.81};
  const M m = WithParams<M>(params);
  const double mgl = 2.0 * 9.81 * 3.0;
  // Away from cos th = 0, where the potential itself cancels to zero.
  for (double x : {-2.5, -0.3, 0.7, 3.0}) {
    const Vec<double, 1> q{{x}};
    EXPECT_NEAR(AdGradient(m, q)[0], mgl * std::sin(x), kHandVsAd * mgl);
    ExpectAdMatchesFiniteDifferences(m, q);
    ExpectNestedHessianMatchesFiniteDifferences(m, q);
    ExpectFloatAgreesWithDouble<Pendulum>(params, q, {{mgl}});
  }
}

// ---------------------------------------------------------------------------------------------
// Hénon–Heiles

TEST(HenonHeiles, ParamsAndEnergy) {
  using M = HenonHeiles<double>;
  ASSERT_EQ(M::kParams.size(), 2u);
  ExpectParam(M::kParams[0], "a", 1.0, Rule::kFinite);
  ExpectParam(M::kParams[1], "b", -1.0 / 3.0, Rule::kFinite);
  const M m = WithParams<M>(DefaultParams<M>());
  // (x, y, px, py) = (0, 0.1, 0.35, 0): 0.35^2/2 + 0.1^2/2 - 0.1^3/3.
  EXPECT_NEAR(kernels::energy(m, Vec<double, 2>{{0.0, 0.1}}, Vec<double, 2>{{0.35, 0.0}}),
              0.06125 + 0.005 - 1.0 / 3000.0, 8 * kEps * 0.07);
  // (0.2, -0.1, 0.1, 0.3): T = 0.05; V = 0.025 + 0.2^2 (-0.1) + 0.1^3 / 3.
  EXPECT_NEAR(kernels::energy(m, Vec<double, 2>{{0.2, -0.1}}, Vec<double, 2>{{0.1, 0.3}}),
              0.05 + 0.025 - 0.004 + 1.0 / 3000.0, 8 * kEps * 0.08);
  // The escape saddle (0, 1) of the classic parameters lies at energy 1/6.
  EXPECT_NEAR(m.potential<double>(Vec<double, 2>{{0.0, 1.0}}), 1.0 / 6.0, 4 * kEps);
  const Vec<double, 2> g = HandGradient(m, Vec<double, 2>{{0.0, 1.0}});
  EXPECT_EQ(g[0], 0.0);
  EXPECT_NEAR(g[1], 0.0, 4 * kEps);
}

TEST(HenonHeiles, GradientsAndFloat) {
  using M = HenonHeiles<double>;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-0.6, 0.6);
  for (const std::vector<double>& params : {DefaultParams<M>(), std::vector<double>{0.7, 0.4}}) {
    const M m = WithParams<M>(params);
    for (int t = 0; t < 6; ++t) {
      const Vec<double, 2> q{{u(rng), u(rng)}};
      const Vec<double, 2> g = AdGradient(m, q);
      // Terms of the gradient (x, 2 a x y, y, a x^2, 3 b y^2) are all O(|q|): compare normwise.
      ExpectVecNear(HandGradient(m, q), g, kHandVsAd, "hand vs AD " + Where(q));
      ExpectAdMatchesFiniteDifferences(m, q);
      ExpectNestedHessianMatchesFiniteDifferences(m, q);
      // Inside |q| <= 0.3 the quadratic part dominates V, so |V| measures its terms.
      const Vec<double, 2> qs{{0.5 * q[0], 0.5 * q[1]}};
      ExpectFloatAgreesWithDouble<HenonHeiles>(params, qs,
                                               Vec<double, 2>::filled(MaxAbs(qs) * 2.0));
    }
  }
}

// The hand-written force folds the sign into each term's last multiply-add (negated_fma). It gives
// the bits of the negated gradient the steps used before, but for an exactly zero component
// (kernels/core/arith.hpp): +0 where a negation done as written gives -0. And it gives the same
// bits on the scalar path and in the pack lanes, zeros included: the negated gradient did not (the
// packs' negation kept -0, GCC's scalar code folded it into vfnmsub and gave +0).
template <class Real>
void ExpectForceIsNegatedGradientBitForBit(const HenonHeiles<Real>& m, const Vec<Real, 2>& q,
                                           const std::string& where) {
  Vec<Real, 2> g, f;
  m.potential_gradient(q, g);
  m.force(q, f);
  const Vec<Real, 2> through_kernels = kernels::force(m, q);
  for (int i = 0; i < 2; ++i) {
    if (g[i] == Real(0)) {
      EXPECT_EQ(f[i], Real(0)) << where << " component " << i;
    } else {
      EXPECT_EQ(kernels::bits_of(f[i]), kernels::bits_of(Real(-g[i])))
          << where << " component " << i;
    }
    EXPECT_EQ(kernels::bits_of(through_kernels[i]), kernels::bits_of(f[i])) << where;
  }
}

template <class Real>
void ExpectPackForceIsScalarForce(const std::vector<double>& params, std::mt19937_64& rng) {
  constexpr int W = kernels::native_lanes<Real>();
  using P = kernels::Pack<Real, W>;
  const auto ms = HenonHeiles<Real>::from_params(params.data());
  const auto mp = HenonHeiles<P>::from_params(params.data());
  std::uniform_real_distribution<double> u(-0.6, 0.6);
  // Lanes 0 and 1 on the section x = 0, on either side of y = 0 (an exactly zero f0 there).
  Vec<P, 2> q;
  for (int l = 0; l < W; ++l) {
    q[0].set(l, Real(l < 2 ? 0.0 : u(rng)));
    q[1].set(l, Real(l == 0 ? -0.2 : l == 1 ? 0.3 : u(rng)));
  }
  Vec<P, 2> f;
  mp.force(q, f);
  for (int l = 0; l < W; ++l) {
    Vec<Real, 2> fs;
    ms.force(Vec<Real, 2>{{q[0][l], q[1][l]}}, fs);
    for (int i = 0; i < 2; ++i)
      EXPECT_EQ(kernels::bits_of(f[i][l]), kernels::bits_of(fs[i]))
          << "lane " << l << " component " << i;
  }
}

TEST(HenonHeiles, HandForceIsTheNegatedGradientOnEveryLaneType) {
  std::mt19937_64 rng(29);
  std::uniform_real_distribution<double> u(-0.6, 0.6);
  for (const std::vector<double>& params :
       {DefaultParams<HenonHeiles<double>>(), std::vector<double>{0.7, 0.4}}) {
    const auto md = HenonHeiles<double>::from_params(params.data());
    const auto mf = HenonHeiles<float>::from_params(params.data());
    for (int t = 0; t < 200; ++t) {
      const double x = u(rng), y = u(rng);
      ExpectForceIsNegatedGradientBitForBit(md, Vec<double, 2>{{x, y}},
                                            Where(QVec<HenonHeiles<double>>{{x, y}}));
      ExpectForceIsNegatedGradientBitForBit(mf, Vec<float, 2>{{float(x), float(y)}}, "float");
    }
    // On the section x = 0 the first component is an exact zero, -0 from the negated gradient
    // where y < 0 (2a x y = -0, and -0 + 0 = +0 negates to -0), +0 from the force.
    ExpectForceIsNegatedGradientBitForBit(md, Vec<double, 2>{{0.0, -0.2}}, "x = 0, y < 0");
    Vec<double, 2> f;
    md.force(Vec<double, 2>{{0.0, -0.2}}, f);
    EXPECT_FALSE(std::signbit(f[0]));
    ExpectPackForceIsScalarForce<double>(params, rng);
    ExpectPackForceIsScalarForce<float>(params, rng);
  }
}

// ---------------------------------------------------------------------------------------------
// Kepler

TEST(Kepler, ParamsEnergyAndAngularMomentum) {
  using M = Kepler<double>;
  ASSERT_EQ(M::kParams.size(), 1u);
  ExpectParam(M::kParams[0], "mu", 1.0, Rule::kPositive);
  const M m = WithParams<M>(DefaultParams<M>());
  // The e = 0.6 orbit: H = |p|^2/2 - 1/|q| = 2 - 1/0.4 = -1/2 = -mu / (2 a) with a = 1.
  const Vec<double, 2> q{{0.4, 0.0}}, p{{0.0, 2.0}};
  EXPECT_NEAR(kernels::energy(m, q, p), -0.5, 4 * kEps * 2.5);
  EXPECT_NEAR(m.angular_momentum(q, p), 0.8, kEps);
}

TEST(Kepler, GradientsAndFloat) {
  using M = Kepler<double>;
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> radius(0.3, 3.0), angle(0.0, 2.0 * std::numbers::pi);
  const M m = WithParams<M>({1.3});
  for (int t = 0; t < 6; ++t) {
    const double r = radius(rng), a = angle(rng);
    const Vec<double, 2> q{{r * std::cos(a), r * std::sin(a)}};
    ExpectVecNear(HandGradient(m, q), AdGradient(m, q), kHandVsAd, "hand vs AD " + Where(q));
    ExpectAdMatchesFiniteDifferences(m, q);
    ExpectNestedHessianMatchesFiniteDifferences(m, q);
    ExpectFloatAgreesWithDouble<Kepler>({1.3}, q, Vec<double, 2>::filled(1.3 / (r * r)));
  }
}

// ---------------------------------------------------------------------------------------------
// J2 satellite

using J2 = J2Satellite<double>;

// Independent of the header: the nondimensional form of SCIENCE.md §4 scaled back by mu and R,
// V = mu/R [ -R/rho + J2 (R/rho)^3 ((3/2) z^2/rho^2 - 1/2) ].
double J2PotentialReference(double mu, double j2, double R, const Vec<double, 3>& q) {
  const double rho = std::hypot(q[0], q[1], q[2]);
  const double s = R / rho;
  return mu / R * (-s + j2 * s * s * s * (1.5 * q[2] * q[2] / (rho * rho) - 0.5));
}

TEST(J2Satellite, Params) {
  ASSERT_EQ(J2::kParams.size(), 3u);
  ExpectParam(J2::kParams[0], "mu", 1.0, Rule::kPositive);
  ExpectParam(J2::kParams[1], "J2", 0.05, Rule::kFinite);
  ExpectParam(J2::kParams[2], "R", 1.0, Rule::kPositive);
  EXPECT_EQ(J2::dof, 3);
}

TEST(J2Satellite, PotentialIsAttractiveWithTheCorrectedSign) {
  const J2 m = WithParams<J2>(DefaultParams<J2>());
  // Equator and pole at rho = 1.5: V = -1/rho - J2/(2 rho^3) = -2/3 - 1/135 and
  // V = -1/rho + J2/rho^3 = -2/3 + 2/135. The misprinted Kepler sign would give +2/3.
  EXPECT_NEAR(m.potential<double>(Vec<double, 3>{{1.5, 0.0, 0.0}}), -2.0 / 3.0 - 1.0 / 135.0,
              4 * kEps);
  EXPECT_NEAR(m.potential<double>(Vec<double, 3>{{0.0, 0.0, 1.5}}), -2.0 / 3.0 + 2.0 / 135.0,
              4 * kEps);
  std::mt19937_64 rng(21);
  std::normal_distribution<double> n01;
  for (int t = 0; t < 20; ++t) {
    Vec<double, 3> q{{n01(rng), n01(rng), n01(rng)}};
    q *= 1.5 / std::sqrt(kernels::norm2(q));
    EXPECT_LT(m.potential<double>(q), 0.0) << Where(q);
    const Vec<double, 3> f = kernels::force(m, q);
    EXPECT_LT(kernels::dot(f, q), 0.0) << "force not inward " << Where(q);
    EXPECT_NEAR(m.potential<double>(q), J2PotentialReference(1.0, 0.05, 1.0, q), 8 * kEps)
        << Where(q);
  }
}

TEST(J2Satellite, EnergyOfTheSuggestedInitialCondition) {
  const J2 m = WithParams<J2>(DefaultParams<J2>());
  const double a = 1.5, inc = 20.0 * std::numbers::pi / 180.0;
  const Vec<double, 3> q{{a, 0.0, 0.0}};
  const Vec<double, 3> p{{0.0, std::cos(inc) / std::sqrt(a), std::sin(inc) / std::sqrt(a)}};
  // T = 1/(2a) = 1/3, V = -2/3 - 1/135 (equator): H = -46/135.
  EXPECT_NEAR(kernels::energy(m, q, p), -46.0 / 135.0, 8 * kEps);
  EXPECT_NEAR(m.angular_momentum_z(q, p), std::sqrt(a) * std::cos(inc), 2 * kEps);
}

TEST(J2Satellite, ParametersEnterAsTheDocumentedFormula) {
  const double mu = 2.0, j2 = -0.2, R = 1.1;
  const J2 m = WithParams<J2>({mu, j2, R});
  std::mt19937_64 rng(22);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (int t = 0; t < 10; ++t) {
    const Vec<double, 3> q{{u(rng), u(rng), u(rng) + 3.5}};  // rho >= 1.5
    const double ref = J2PotentialReference(mu, j2, R, q);
    // |J2 term| <= |J2| (R/rho)^2 = 0.11 of the Kepler term here: a few roundings of |V|.
    EXPECT_NEAR(m.potential<double>(q), ref, 16 * kEps * std::abs(ref)) << Where(q);
  }
}

TEST(J2Satellite, ZeroJ2IsKeplerIn3D) {
  const double mu = 1.7;
  const J2 m = WithParams<J2>({mu, 0.0, 1.3});
  const Kepler<double> k = WithParams<Kepler<double>>({mu});
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  for (int t = 0; t < 10; ++t) {
    const Vec<double, 3> q{{u(rng), u(rng), u(rng)}};
    const double rho = std::sqrt(kernels::norm2(q));
    // One or two roundings apart: 1/sqrt then times mu, against mu/sqrt.
    EXPECT_NEAR(m.potential<double>(q), -mu / rho, 4 * kEps * mu / rho) << Where(q);
    const Vec<double, 3> g = HandGradient(m, q);
    for (int i = 0; i < 3; ++i) {
      EXPECT_NEAR(g[i], mu * q[i] / (rho * rho * rho), 8 * kEps * mu / (rho * rho)) << i;
    }
    // In the plane z = 0 it is the planar Kepler model itself.
    const Vec<double, 3> qp{{q[0], q[1], 0.0}};
    const Vec<double, 2> q2{{q[0], q[1]}};
    const double V2 = k.potential<double>(q2);
    EXPECT_NEAR(m.potential<double>(qp), V2, 4 * kEps * std::abs(V2));
    const Vec<double, 3> g3 = HandGradient(m, qp);
    const Vec<double, 2> g2 = HandGradient(k, q2);
    ExpectVecNear(Vec<double, 2>{{g3[0], g3[1]}}, g2, 8 * kEps, "planar gradient");
    EXPECT_EQ(g3[2], 0.0);
  }
}

TEST(J2Satellite, AxialSymmetry) {
  const J2 m = WithParams<J2>(DefaultParams<J2>());
  std::mt19937_64 rng(24);
  std::uniform_real_distribution<double> u(-2.0, 2.0), phi(0.0, 2.0 * std::numbers::pi);
  for (int t = 0; t < 10; ++t) {
    const Vec<double, 3> q{{u(rng), u(rng), u(rng) + 2.5}};
    const double angle = phi(rng), c = std::cos(angle), s = std::sin(angle);
    const Vec<double, 3> rq{{c * q[0] - s * q[1], s * q[0] + c * q[1], q[2]}};
    const Vec<double, 3> mq{{q[0], q[1], -q[2]}};
    const double V = m.potential<double>(q);
    // Rotating q rounds each coordinate once: a few eps of |V| (|V| ~ its Kepler term here).
    EXPECT_NEAR(m.potential<double>(rq), V, 8 * kEps * std::abs(V)) << Where(q);
    EXPECT_EQ(m.potential<double>(mq), V) << "not even in z " << Where(q);
  }
}

TEST(J2Satellite, GradientsAndFloat) {
  std::mt19937_64 rng(25);
  std::normal_distribution<double> n01;
  std::uniform_real_distribution<double> radius(1.0, 3.0);
  for (const std::vector<double>& params :
       {DefaultParams<J2>(), std::vector<double>{2.0, -0.2, 1.1}}) {
    const J2 m = WithParams<J2>(params);
    for (int t = 0; t < 6; ++t) {
      Vec<double, 3> q{{n01(rng), n01(rng), n01(rng)}};
      q *= radius(rng) / std::sqrt(kernels::norm2(q));
      // At rho >= 1 the J2 terms never cancel the Kepler term (|g| >= 0.6 mu q/rho^3 for both
      // parameter sets), so |g| measures the terms.
      ExpectVecNear(HandGradient(m, q), AdGradient(m, q), kHandVsAd, "hand vs AD " + Where(q));
      ExpectAdMatchesFiniteDifferences(m, q);
      ExpectNestedHessianMatchesFiniteDifferences(m, q);
      ExpectFloatAgreesWithDouble<J2Satellite>(params, q,
                                               Vec<double, 3>::filled(MaxAbs(HandGradient(m, q))));
    }
  }
}

TEST(J2Satellite, VerletKeepsLzButNotLx) {
  const J2 m = WithParams<J2>(DefaultParams<J2>());
  const double a = 1.5, inc = 20.0 * std::numbers::pi / 180.0, h = 0.3;
  kernels::Phase<double, 3> s;
  s.q = Vec<double, 3>{{a, 0.0, 0.0}};
  s.p = Vec<double, 3>{{0.0, std::cos(inc) / std::sqrt(a), std::sin(inc) / std::sqrt(a)}};
  kernels::refresh_force(m, s);
  const kernels::StormerVerlet<double> verlet;
  const double lz0 = m.angular_momentum_z(s.q, s.p);
  const double lx0 = s.q[1] * s.p[2] - s.q[2] * s.p[1];
  constexpr int kSteps = 1000;  // t = 300, about 26 orbits
  double lz_err = 0.0, lx_change = 0.0;
  for (int k = 0; k < kSteps; ++k) {
    verlet.step(m, s, h);
    lz_err = std::max(lz_err, std::abs(m.angular_momentum_z(s.q, s.p) - lz0));
    lx_change = std::max(lx_change, std::abs(s.q[1] * s.p[2] - s.q[2] * s.p[1] - lx0));
  }
  // Verlet conserves L_z exactly in exact arithmetic; each step adds a few roundings of
  // |q||p| ~ 1.2, so after kSteps the drift is below kSteps * 4 eps * 1.2 (a random walk would
  // stay far below).
  EXPECT_LT(lz_err, kSteps * 4 * kEps * 1.2);
  // The J2 torque precesses the orbit plane (about 5 rad of node over t = 300), so L_x changes
  // at O(|L| sin i) ~ 0.4: this is what a wrong symmetry axis would conserve instead.
  EXPECT_GT(lx_change, 0.1);
}

// ---------------------------------------------------------------------------------------------
// Outer solar system

using Oss = OuterSolarSystem<double>;
constexpr int kB = Oss::kBodies;

// HLW §I.2.4, transcribed again here: positions (AU) and velocities (AU/day).
constexpr double kHlw[kB][6] = {
    {0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {-3.5023653, -3.8169847, -1.5507963, 0.00565429, -0.00412490, -0.00190589},
    {9.0755314, -3.0458353, -1.6483708, 0.00168318, 0.00483525, 0.00192462},
    {8.3101420, -16.2901086, -7.2521278, 0.00354178, 0.00137102, 0.00055029},
    {11.4707666, -25.7294829, -10.8169456, 0.00288930, 0.00114527, 0.00039677},
    {-15.5387357, -25.2225594, -3.1902382, 0.00276725, -0.00170702, -0.00136504},
};
constexpr double kG = 2.95912208286e-4;
constexpr double kMass[kB] = {1.00000597682,    0.000954786104043, 0.000285583733151,
                              4.37273164546e-5, 5.17759138449e-5,  1.0 / 1.3e8};

double Distance(const double* a, const double* b) {
  return std::hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
}

// Per component, the sum over pairs of |G m_a m_b (q_a - q_b)_c| / r^3: what the gradient's
// rounding errors are proportional to. Components of one body can cancel (the Sun is pulled every
// way), and bodies differ by ten decades (Pluto), so neither |g_i| nor |g| would do.
Vec<double, Oss::dof> PairwiseScale(const std::vector<double>& params, const Vec<double, 18>& q) {
  Vec<double, 18> s = Vec<double, 18>::filled(0.0);
  for (int a = 0; a < kB; ++a) {
    for (int b = 0; b < kB; ++b) {
      if (a == b) continue;
      const double r = Distance(&q[3 * a], &q[3 * b]);
      for (int c = 0; c < 3; ++c) {
        s[3 * a + c] += params[0] * params[1 + a] * params[1 + b] *
                        std::abs(q[3 * a + c] - q[3 * b + c]) / (r * r * r);
      }
    }
  }
  return s;
}

Vec<double, 18> ReferencePositions() {
  Vec<double, 18> q;
  for (int b = 0; b < kB; ++b) {
    for (int c = 0; c < 3; ++c) q[3 * b + c] = kHlw[b][c];
  }
  return q;
}

TEST(OuterSolarSystem, Params) {
  ASSERT_EQ(Oss::kParams.size(), 7u);
  EXPECT_EQ(Oss::dof, 18);
  ExpectParam(Oss::kParams[0], "G", kG, Rule::kPositive);
  const char* names[kB] = {"m0", "m1", "m2", "m3", "m4", "m5"};
  for (int b = 0; b < kB; ++b)
    ExpectParam(Oss::kParams[1 + b], names[b], kMass[b], Rule::kPositive);
  const Oss m = WithParams<Oss>(DefaultParams<Oss>());
  for (int i = 0; i < Oss::dof; ++i) {
    EXPECT_NEAR(m.inv_mass(i), 1.0 / kMass[i / 3], kEps / kMass[i / 3]) << i;
  }
}

TEST(OuterSolarSystem, ReferenceStateEnergyFromADirectComputation) {
  const Oss m = WithParams<Oss>(DefaultParams<Oss>());
  const std::array<double, 36> s = Oss::reference_state();
  Vec<double, 18> q, p;
  for (int i = 0; i < 18; ++i) {
    q[i] = s[i];
    p[i] = s[18 + i];
  }
  // Directly from positions and velocities, every ordered pair counted and halved.
  double T = 0.0, V = 0.0;
  for (int a = 0; a < kB; ++a) {
    const double* v = &kHlw[a][3];
    T += 0.5 * kMass[a] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int b = 0; b < kB; ++b) {
      if (b != a) V -= 0.5 * kG * kMass[a] * kMass[b] / Distance(kHlw[a], kHlw[b]);
    }
  }
  // T and V are sums of same-signed terms, each a few roundings: 16 eps of T + |V| covers both.
  EXPECT_NEAR(kernels::energy(m, q, p), T + V, 16 * kEps * (T - V));
  EXPECT_NEAR(m.potential<double>(q), V, 16 * kEps * -V);
  EXPECT_LT(T + V, 0.0);  // a bound system

  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(q[i], 0.0);
    EXPECT_EQ(p[i], 0.0);
  }
  for (int b = 1; b < kB; ++b) {
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(q[3 * b + c], kHlw[b][c]);
      EXPECT_NEAR(p[3 * b + c], kMass[b] * kHlw[b][3 + c], kEps * std::abs(p[3 * b + c]));
    }
  }
}

TEST(OuterSolarSystem, ReferenceStateGivesTheKnownOrbits) {
  // Osculating heliocentric semi-major axes from vis-viva, 1/a = 2/r - v^2 / (G (m0 + m)), against
  // the planets' mean values (AU). Heliocentric osculating elements swing by up to ~1% (Jupiter's
  // pull on the Sun; Pluto's eccentric orbit), so 2% catches a misplaced digit in the data, not
  // perturbation theory.
  const double a_known[kB] = {0.0, 5.203, 9.555, 19.22, 30.11, 39.48};
  const std::array<double, 36> s = Oss::reference_state();
  for (int b = 1; b < kB; ++b) {
    const double r = std::hypot(s[3 * b], s[3 * b + 1], s[3 * b + 2]);
    const double v = std::hypot(s[18 + 3 * b], s[18 + 3 * b + 1], s[18 + 3 * b + 2]) / kMass[b];
    const double a = 1.0 / (2.0 / r - v * v / (kG * (kMass[0] + kMass[b])));
    EXPECT_NEAR(a, a_known[b], 0.02 * a_known[b]) << "body " << b;
  }
}

TEST(OuterSolarSystem, MomentumHelpersAtTheReferenceState) {
  const Oss m = WithParams<Oss>(DefaultParams<Oss>());
  const std::array<double, 36> s = Oss::reference_state();
  Vec<double, 18> q, p;
  for (int i = 0; i < 18; ++i) {
    q[i] = s[i];
    p[i] = s[18 + i];
  }
  double P[3] = {}, L[3] = {}, P_scale = 0.0, L_scale = 0.0;
  for (int b = 0; b < kB; ++b) {
    const double* x = kHlw[b];
    const double* v = &kHlw[b][3];
    for (int c = 0; c < 3; ++c) P[c] += kMass[b] * v[c];
    L[0] += kMass[b] * (x[1] * v[2] - x[2] * v[1]);
    L[1] += kMass[b] * (x[2] * v[0] - x[0] * v[2]);
    L[2] += kMass[b] * (x[0] * v[1] - x[1] * v[0]);
    P_scale += kMass[b] * std::hypot(v[0], v[1], v[2]);
    L_scale += kMass[b] * std::hypot(x[0], x[1], x[2]) * std::hypot(v[0], v[1], v[2]);
  }
  const Vec<double, 3> Pm = m.total_linear_momentum(p), Lm = m.total_angular_momentum(q, p);
  for (int c = 0; c < 3; ++c) {
    // Sums of six products, the products formed in a different order: a few eps of the terms.
    EXPECT_NEAR(Pm[c], P[c], 8 * kEps * P_scale) << c;
    EXPECT_NEAR(Lm[c], L[c], 8 * kEps * L_scale) << c;
  }
  // The frame has the Sun at rest, so the planets' momentum is not zero (the centre of mass moves).
  EXPECT_GT(std::hypot(Pm[0], Pm[1], Pm[2]), 1e-3 * P_scale);
}

TEST(OuterSolarSystem, ForcesObeyActionReactionAndExertNoTorque) {
  // Sum_b grad_b V = 0 and sum_b q_b x grad_b V = 0: why total P and L are conserved.
  const std::vector<double> params = DefaultParams<Oss>();
  const Oss m = WithParams<Oss>(params);
  const Vec<double, 18> q = ReferencePositions();
  const Vec<double, 18> g = HandGradient(m, q), scale = PairwiseScale(params, q);
  double F[3] = {}, tau[3] = {}, F_scale = 0.0, tau_scale = 0.0;
  for (int b = 0; b < kB; ++b) {
    const int i = 3 * b;
    for (int c = 0; c < 3; ++c) F[c] += g[i + c];
    tau[0] += q[i + 1] * g[i + 2] - q[i + 2] * g[i + 1];
    tau[1] += q[i + 2] * g[i] - q[i] * g[i + 2];
    tau[2] += q[i] * g[i + 1] - q[i + 1] * g[i];
    F_scale = std::max({F_scale, scale[i], scale[i + 1], scale[i + 2]});
    tau_scale = std::max(tau_scale, std::hypot(q[i], q[i + 1], q[i + 2]) *
                                        std::max({scale[i], scale[i + 1], scale[i + 2]}));
  }
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(F[c], 0.0, 16 * kEps * F_scale) << c;
    EXPECT_NEAR(tau[c], 0.0, 32 * kEps * tau_scale) << c;
  }
}

TEST(OuterSolarSystem, GradientsAtTheRealMasses) {
  const std::vector<double> params = DefaultParams<Oss>();
  const Oss m = WithParams<Oss>(params);
  std::mt19937_64 rng(31);
  std::normal_distribution<double> jitter(0.0, 0.5);
  for (int t = 0; t < 6; ++t) {
    Vec<double, 18> q = ReferencePositions();
    for (int i = 0; i < 18; ++i) q[i] += jitter(rng);
    // Per component against the pair sums: Pluto's gradient is 1e-7 of Jupiter's.
    ExpectVecNear(HandGradient(m, q), AdGradient(m, q), PairwiseScale(params, q), kHandVsAd,
                  "hand vs AD " + Where(q));
    ExpectFloatAgreesWithDouble<OuterSolarSystem>(params, q, PairwiseScale(params, q));
  }
}

TEST(OuterSolarSystem, GradientsAtComparableMasses) {
  // Finite differences of the full potential cannot resolve Pluto's 1e-16 share of V at the real
  // masses; with comparable masses they check that AD differentiates what potential() computes.
  std::mt19937_64 rng(32);
  std::uniform_real_distribution<double> mass(0.5, 2.0), box(-3.0, 3.0);
  for (int t = 0; t < 4; ++t) {
    std::vector<double> params = {1.0};
    for (int b = 0; b < kB; ++b) params.push_back(mass(rng));
    const Oss m = WithParams<Oss>(params);
    Vec<double, 18> q;
    bool separated = false;
    while (!separated) {  // keep pairs >= 0.5 apart, away from the singularities
      for (int i = 0; i < 18; ++i) q[i] = box(rng);
      separated = true;
      for (int a = 0; a < kB; ++a) {
        for (int b = a + 1; b < kB; ++b) separated &= Distance(&q[3 * a], &q[3 * b]) >= 0.5;
      }
    }
    ExpectVecNear(HandGradient(m, q), AdGradient(m, q), PairwiseScale(params, q), kHandVsAd,
                  "hand vs AD " + Where(q));
    ExpectAdMatchesFiniteDifferences(m, q);
    ExpectNestedHessianMatchesFiniteDifferences(m, q);
  }
}

TEST(OuterSolarSystem, VerletKeepsTotalMomentumAndAngularMomentum) {
  const Oss m = WithParams<Oss>(DefaultParams<Oss>());
  const std::array<double, 36> s0 = Oss::reference_state();
  kernels::Phase<double, 18> s;
  for (int i = 0; i < 18; ++i) {
    s.q[i] = s0[i];
    s.p[i] = s0[18 + i];
  }
  kernels::refresh_force(m, s);
  const kernels::StormerVerlet<double> verlet;
  const Vec<double, 3> P0 = m.total_linear_momentum(s.p), L0 = m.total_angular_momentum(s.q, s.p);
  double P_scale = 0.0, L_scale = 0.0;
  for (int b = 0; b < kB; ++b) {
    const double pb = std::hypot(s.p[3 * b], s.p[3 * b + 1], s.p[3 * b + 2]);
    P_scale += pb;
    L_scale += pb * std::hypot(s.q[3 * b], s.q[3 * b + 1], s.q[3 * b + 2]);
  }
  constexpr int kSteps = 1000;  // h = 10 days: 27 years, over two Jupiter orbits
  double P_err = 0.0, L_err = 0.0, sun_p_change = 0.0, jupiter_l_change = 0.0;
  const double jupiter_l0 = s.q[3] * s.p[4] - s.q[4] * s.p[3];
  for (int k = 0; k < kSteps; ++k) {
    verlet.step(m, s, 10.0);
    const Vec<double, 3> P = m.total_linear_momentum(s.p), L = m.total_angular_momentum(s.q, s.p);
    for (int c = 0; c < 3; ++c) {
      P_err = std::max(P_err, std::abs(P[c] - P0[c]));
      L_err = std::max(L_err, std::abs(L[c] - L0[c]));
    }
    sun_p_change = std::max(sun_p_change, std::hypot(s.p[0], s.p[1], s.p[2]));
    jupiter_l_change =
        std::max(jupiter_l_change, std::abs(s.q[3] * s.p[4] - s.q[4] * s.p[3] - jupiter_l0));
  }
  // Exactly conserved by Verlet up to round-off: each step adds a few roundings of the terms
  // (momenta change by O(1) of themselves over an orbit), so kSteps * 8 eps of the scale bounds it.
  EXPECT_LT(P_err, kSteps * 8 * kEps * P_scale);
  EXPECT_LT(L_err, kSteps * 8 * kEps * L_scale);
  // Controls: the parts are not conserved, far beyond those bounds. The Sun, at rest at first,
  // takes up momentum of order Jupiter's; Saturn's pull changes Jupiter's angular momentum.
  EXPECT_GT(sun_p_change, 0.1 * P_scale);
  EXPECT_GT(jupiter_l_change, 1e-8 * L_scale);
}

}  // namespace
}  // namespace vigor::models
