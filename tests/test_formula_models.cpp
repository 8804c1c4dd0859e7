// Formula models against the built-in models they restate (tests/formula/*.json, compiled ahead
// of time by the code generator into generated/formula_tests/*.hpp; CMakeLists.txt): the
// generated code computes what the interpreter computes, bit for bit; it satisfies the model
// concepts the integrators dispatch on; it runs on SIMD packs lane for lane; and integrated, it
// follows the built-in model's trajectory to round-off.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <limits>
#include <string>

#include "formula_tests/double_pendulum.hpp"
#include "formula_tests/every_function.hpp"
#include "formula_tests/henon_heiles.hpp"
#include "formula_tests/kepler.hpp"
#include "formula_tests/pendulum.hpp"
#include "formula_tests/spherical_pendulum.hpp"
#include "host/job/formula/codegen.hpp"
#include "host/job/formula/evaluate.hpp"
#include "host/job/formula/model_spec.hpp"
#include "kernels/core/mechanics.hpp"
#include "kernels/formula_math.hpp"
#include "kernels/integrators/midpoint.hpp"
#include "kernels/integrators/protocol.hpp"
#include "kernels/integrators/rattle.hpp"
#include "kernels/integrators/stormer_verlet.hpp"
#include "kernels/simd/pack.hpp"
#include "kernels/state.hpp"
#include "kernels/tangent.hpp"
#include "models/double_pendulum.hpp"
#include "models/henon_heiles.hpp"
#include "models/kepler.hpp"
#include "models/pendulum.hpp"
#include "models/spherical_pendulum.hpp"

namespace {

namespace vk = vigor::kernels;
namespace vm = vigor::models;
namespace vf = vigor::host::formula;
namespace fm = vigor::formula_models;

constexpr double kEps = std::numeric_limits<double>::epsilon();

vf::ModelSpec spec_of(const std::string& name) {
  std::ifstream in(std::string(VIGOR_SOURCE_DIR) + "/tests/formula/" + name + ".json");
  return vf::read_model_spec(vigor::host::Json::parse(in).at("model"));
}

/// A model from the parameter values its job file gives (the formula model's kParams order).
template <class M>
M model_of(const vf::ModelSpec& s) {
  return M::from_params(s.param_values.data());
}

static_assert(vk::SeparableModel<fm::Formula_henon_heiles<double>>);
static_assert(vk::LagrangianModel<fm::Formula_double_pendulum<double>>);
static_assert(!vk::SeparableModel<fm::Formula_double_pendulum<double>>);
static_assert(vk::ConstrainedModel<fm::Formula_spherical_pendulum<double>>);
static_assert(vk::ForcedModel<fm::Formula_every_function<double>>);
static_assert(vk::StateOps<fm::Formula_kepler<double>, double>::kMomentumMaps == 1);
static_assert(vk::integrator_supports<vk::Rattle<double>, fm::Formula_spherical_pendulum<double>>);
static_assert(!vk::integrator_supports<vk::StormerVerlet<double>,
                                       fm::Formula_every_function<double>>);  // forced

/// What the generator emits for a job without diagnostics.tangent (codegen.hpp).
template <class Real>
struct HenonHeilesWithoutTangentMaps : fm::Formula_henon_heiles<Real> {
  static constexpr bool kTangentMaps = false;
};
static_assert(vk::tangent_built<vk::StormerVerlet<double>, fm::Formula_henon_heiles<double>>);
static_assert(!vk::tangent_built<vk::StormerVerlet<double>, HenonHeilesWithoutTangentMaps<double>>);

TEST(FormulaModels, TangentMapCodeOnlyWhenTheJobAsksForIt) {
  const vf::ModelSpec s = spec_of("henon_heiles");
  const std::string with = vf::model_header(s, "M", true);
  const std::string without = vf::model_header(s, "M", false);
  EXPECT_EQ(with.find("kTangentMaps"), std::string::npos);
  EXPECT_NE(without.find("static constexpr bool kTangentMaps = false;"), std::string::npos);
}

TEST(FormulaModels, GeneratedCodeComputesWhatTheInterpreterComputes) {
  // One line per tree node, in the tree's order, with -ffp-contract=off: the same bits.
  const vf::ModelSpec s = spec_of("every_function");
  const auto m = model_of<fm::Formula_every_function<double>>(s);
  for (double x : {-0.7, 0.1, 0.9}) {
    for (double y : {-1.3, 0.4}) {
      const vk::Vec<double, 2> q{{x, y}};
      vf::Point<double> at;
      at.q = &q[0];
      EXPECT_EQ(m.potential(q), vf::evaluate(s.energy_term, at, s.param_values.data()))
          << x << " " << y;
      const vk::Vec<double, 2> v{{y, x}};
      at.v = &v[0];
      at.t = 0.3 * x;
      const auto F = m.external_force(q, v, at.t);
      for (int i = 0; i < 2; ++i)
        EXPECT_EQ(F[i], vf::evaluate(s.force[i], at, s.param_values.data()));
    }
  }
  const vf::ModelSpec k = spec_of("kepler");
  const auto mk = model_of<fm::Formula_kepler<double>>(k);
  const vk::Vec<double, 2> q{{0.6, -0.2}}, p{{0.3, 1.1}};
  vf::Point<double> at;
  at.q = &q[0];
  at.p = &p[0];
  EXPECT_EQ(mk.momentum_map(q, p)[0], vf::evaluate(k.momentum_maps[0], at, nullptr));
}

TEST(FormulaModels, EveryFunctionCompilesOnFloatAndDuals) {
  const vf::ModelSpec s = spec_of("every_function");
  const auto mf = model_of<fm::Formula_every_function<float>>(s);
  const auto md = model_of<fm::Formula_every_function<double>>(s);
  const vk::Vec<float, 2> qf{{0.3f, -0.2f}};
  const vk::Vec<double, 2> qd{{0.3, -0.2}};
  EXPECT_NEAR(mf.potential(qf), md.potential(qd), 1e-6);
  // Forced, separable: the implicit midpoint integrates it (Hessians by nested duals).
  using Ops = vk::StateOps<fm::Formula_every_function<double>, double>;
  const std::array<double, 4> x0{0.3, -0.2, 0.1, 0.05};
  typename Ops::State st;
  Ops::load(md, x0.data(), 1, st);
  double r = 0;
  for (int k = 0; k < 100; ++k)
    r = std::max(r, double(vk::take_step(vk::Midpoint<double>{}, md, st, 0.01, 0.01 * k)));
  EXPECT_LT(r, 1e-12);  // the Newton iteration converged: the derivatives are consistent
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(std::isfinite(st.q[i]) && std::isfinite(st.p[i]));
}

/// Max over points of |written-out gradient - dual-number gradient| / (1 + |gradient|), and the
/// same for the written-out gradient's own derivative (evaluated on duals) against the
/// nested-dual Hessian.
template <class M>
std::pair<double, double> gradient_vs_ad(const M& m) {
  constexpr int n = M::dof;
  using D = vk::Dual<double, n>;
  double dg = 0, dh = 0;
  for (double x : {-0.7, 0.1, 0.9}) {
    for (double y : {-1.3, 0.4, 0.05}) {
      vk::Vec<double, n> q;
      vk::Vec<D, n> qd;
      for (int i = 0; i < n; ++i) {
        q[i] = i == 0 ? x : y / i;
        qd[i] = D::variable(q[i], i);
      }
      vk::Vec<double, n> g, g_ad;
      vk::Mat<double, n> H;
      m.potential_gradient(q, g);
      vk::potential_gradient_hessian_ad(m, q, g_ad, H);
      vk::Vec<D, n> gd;
      m.potential_gradient(qd, gd);
      for (int i = 0; i < n; ++i) {
        dg = std::max(dg, std::abs(g[i] - g_ad[i]) / (1 + std::abs(g[i])));
        EXPECT_EQ(gd[i].v, g[i]);  // the value of the dual evaluation is the plain one
        for (int j = 0; j < n; ++j)
          dh = std::max(dh, std::abs(gd[i].d[j] - H[i][j]) / (1 + std::abs(H[i][j])));
      }
    }
  }
  return {dg, dh};
}

TEST(FormulaModels, TheWrittenOutGradientIsTheDualNumberGradient) {
  // The generator writes grad V out by reverse accumulation over the tree (codegen.cpp); forward
  // duals compute the same sums of products with other groupings. Every term of these gradients
  // is O(1) at O(1) points and passes through at most ~10 correctly rounded operations, so the
  // two agree to a few tens of ulps of (1 + |g|); the derivative of the written-out gradient (on
  // duals) is the Hessian likewise. A wrong rule (a sign, a missing chain factor) is O(1) off.
  const auto every = model_of<fm::Formula_every_function<double>>(spec_of("every_function"));
  const auto hh = model_of<fm::Formula_henon_heiles<double>>(spec_of("henon_heiles"));
  const auto kep = model_of<fm::Formula_kepler<double>>(spec_of("kepler"));
  const auto pen = model_of<fm::Formula_pendulum<double>>(spec_of("pendulum"));
  for (const auto& [what, d] : {std::pair{"every_function", gradient_vs_ad(every)},
                                {"henon_heiles", gradient_vs_ad(hh)},
                                {"kepler", gradient_vs_ad(kep)},
                                {"pendulum", gradient_vs_ad(pen)}}) {
    EXPECT_LE(d.first, 32 * kEps) << what << ": gradient";
    EXPECT_LE(d.second, 32 * kEps) << what << ": Hessian";
  }
}

/// Max over the state of |a - b| after `steps` steps of both models from x0, and max|x| seen.
template <class I, class MA, class MB, std::size_t K>
std::pair<double, double> trajectories_apart(const I& integ, const MA& a, const MB& b,
                                             const std::array<double, K>& x0, double h,
                                             long steps) {
  using OpsA = vk::StateOps<MA, double>;
  using OpsB = vk::StateOps<MB, double>;
  typename OpsA::State sa;
  typename OpsB::State sb;
  OpsA::load(a, x0.data(), 1, sa);
  OpsB::load(b, x0.data(), 1, sb);
  double size = 0;
  for (long k = 0; k < steps; ++k) {
    vk::take_step(integ, a, sa, h, double(k) * h);
    vk::take_step(integ, b, sb, h, double(k) * h);
  }
  std::array<double, K> xa, xb;
  OpsA::store(sa, xa.data(), 1);
  OpsB::store(sb, xb.data(), 1);
  double d = 0;
  for (std::size_t i = 0; i < K; ++i) {
    d = std::max(d, std::abs(xa[i] - xb[i]));
    size = std::max({size, std::abs(xa[i]), std::abs(x0[i])});
  }
  return {d, size};
}

// The formula models and the built-in ones compute the same forces with different roundings
// (dual-number gradients of the formula against hand-written gradients, products grouped
// differently): a few ulps of the force per step. On a regular orbit such differences add up
// linearly along the trajectory (a phase error), so after N steps the states differ by about
// N * (a few eps) * |x|. The bound used is 4 N eps max|x|; the orbits are regular (Hénon–Heiles
// at E ≈ 0.05, Kepler e ≈ 0.3, the pendulums at small amplitude) and short enough that no
// Lyapunov growth enters.
constexpr long kSteps = 2000;
constexpr double kBound = 4.0 * kSteps * kEps;

/// The states of formula model and built-in model `name` at most kBound max|x| apart.
void expect_follows(const char* name, std::pair<double, double> apart_and_size) {
  const auto [d, size] = apart_and_size;
  std::printf("  %s: |formula - built-in| = %.2e after %ld steps (bound %.2e)\n", name, d, kSteps,
              kBound * size);
  EXPECT_LE(d, kBound * size) << name;
}

TEST(FormulaModels, HenonHeilesFollowsTheBuiltInModel) {
  const auto s = spec_of("henon_heiles");
  expect_follows(
      "henon_heiles",
      trajectories_apart(vk::StormerVerlet<double>{}, model_of<fm::Formula_henon_heiles<double>>(s),
                         vm::HenonHeiles<double>::from_params(s.param_values.data()),
                         std::array<double, 4>{0.0, 0.1, 0.3, 0.0}, 0.01, kSteps));
}

TEST(FormulaModels, KeplerFollowsTheBuiltInModel) {
  const auto s = spec_of("kepler");
  expect_follows("kepler", trajectories_apart(
                               vk::StormerVerlet<double>{}, model_of<fm::Formula_kepler<double>>(s),
                               vm::Kepler<double>::from_params(s.param_values.data()),
                               std::array<double, 4>{1.0, 0.0, 0.0, 1.15}, 0.01, kSteps));
}

TEST(FormulaModels, PendulumFollowsTheBuiltInModel) {
  const auto s = spec_of("pendulum");
  // The built-in pendulum's parameters are m, l, g; the formula's m, g, l.
  const double mlg[3] = {1.0, 1.0, 1.0};
  expect_follows("pendulum", trajectories_apart(vk::StormerVerlet<double>{},
                                                model_of<fm::Formula_pendulum<double>>(s),
                                                vm::Pendulum<double>::from_params(mlg),
                                                std::array<double, 2>{0.5, 0.2}, 0.01, kSteps));
}

TEST(FormulaModels, DoublePendulumFollowsTheBuiltInModel) {
  // A Lagrangian, integrated by the implicit midpoint rule (3 Newton iterations, as the driver).
  const auto s = spec_of("double_pendulum");
  expect_follows(
      "double_pendulum",
      trajectories_apart(vk::Midpoint<double>{}, model_of<fm::Formula_double_pendulum<double>>(s),
                         vm::DoublePendulum<double>::from_params(s.param_values.data()),
                         std::array<double, 4>{0.2, -0.1, 0.1, 0.05}, 0.01, kSteps));
}

TEST(FormulaModels, SphericalPendulumFollowsTheBuiltInModel) {
  // A constraint, integrated by RATTLE; the state starts on the sphere |q| = 1 with p tangent.
  const auto s = spec_of("spherical_pendulum");
  const double r = std::sqrt(1.0 - 0.3 * 0.3);
  expect_follows(
      "spherical_pendulum",
      trajectories_apart(vk::Rattle<double>{}, model_of<fm::Formula_spherical_pendulum<double>>(s),
                         vm::SphericalPendulum<double>::from_params(s.param_values.data()),
                         std::array<double, 6>{0.3, 0.0, -r, 0.0, 0.4, 0.0}, 0.01, kSteps));
}

/// Max |lane - scalar| over the state after `steps` steps of integrator template IntegratorT on
/// formula model ModelT (from tests/formula/<name>.json): W lanes of a pack against W scalar
/// runs from the same states, lane l starting at q(l), p(l).
template <template <class> class ModelT, template <class> class IntegratorT, int W, class Q,
          class P>
double lanes_vs_scalar(const std::string& name, int steps, Q q, P p) {
  using Pk = vk::Pack<double, W>;
  const auto s = spec_of(name);
  const auto mp = model_of<ModelT<Pk>>(s);
  const auto ms = model_of<ModelT<double>>(s);
  vk::Phase<Pk, 2> sp{};
  vk::Phase<double, 2> ss[W];
  for (int l = 0; l < W; ++l) {
    for (int i = 0; i < 2; ++i) {
      ss[l].q[i] = q(l)[i];
      ss[l].p[i] = p(l)[i];
      sp.q[i].set(l, q(l)[i]);
      sp.p[i].set(l, p(l)[i]);
    }
    vk::refresh_force(ms, ss[l]);
  }
  vk::refresh_force(mp, sp);
  for (int k = 0; k < steps; ++k) {
    vk::take_step(IntegratorT<Pk>{}, mp, sp, Pk(0.01), Pk(0.01 * k));
    for (int l = 0; l < W; ++l) vk::take_step(IntegratorT<double>{}, ms, ss[l], 0.01, 0.01 * k);
  }
  double d = 0;
  for (int l = 0; l < W; ++l)
    for (int i = 0; i < 2; ++i) {
      EXPECT_TRUE(std::isfinite(ss[l].q[i]) && std::isfinite(ss[l].p[i]));
      d = std::max({d, std::abs(sp.q[i][l] - ss[l].q[i]), std::abs(sp.p[i][l] - ss[l].p[i])});
    }
  return d;
}

TEST(FormulaModels, PackLanesComputeTheScalarModel) {
  // The generated model on SIMD packs (the CPU engine's lanes): lane l computes what the
  // scalar model computes from lane l's state, bit for bit (a polynomial potential).
  const double d = lanes_vs_scalar<fm::Formula_henon_heiles, vk::StormerVerlet, 8>(
      "henon_heiles", 500,
      [](int l) {
        return std::array<double, 2>{0.01 * l, 0.1 - 0.02 * l};
      },
      [](int l) {
        return std::array<double, 2>{0.3 - 0.01 * l, 0.02 * l};
      });
  EXPECT_EQ(d, 0.0);
}

TEST(FormulaModels, EveryFunctionRunsOnPackLanes) {
  // A forced separable model runs the implicit midpoint on the CPU engine's lanes: its Hessians
  // are nested duals of packs, where abs, min and max choose lane by lane
  // (kernels/formula_math.hpp). Lanes give the scalar path's bits: sin, cos, exp and log are
  // vigor's own on both (kernels/core/), the rarer functions the scalar library's lane by lane.
  // The lanes lie on both sides of q0 = 0, q1 = 0 and q0 = -q1, so abs, min and max branch apart.
  const double d = lanes_vs_scalar<fm::Formula_every_function, vk::Midpoint, 4>(
      "every_function", 50,
      [](int l) {
        return std::array<double, 2>{0.2 - 0.15 * l, -0.1 + 0.08 * l};
      },
      [](int l) {
        return std::array<double, 2>{0.05 * l, 0.1 - 0.05 * l};
      });
  EXPECT_EQ(d, 0.0);
}

TEST(FormulaModels, AbsMinMaxChooseByValueOnEveryType) {
  using D = vk::Dual<double, 1>;
  using DD = vk::Dual<D, 1>;
  EXPECT_EQ(vk::formula_abs(-2.5), 2.5);
  EXPECT_EQ(vk::formula_min(1.0, -3.0), -3.0);
  EXPECT_EQ(vk::formula_max(1.0, -3.0), 1.0);
  D x = D::variable(-2.0, 0);
  EXPECT_EQ(vk::formula_abs(x).v, 2.0);
  EXPECT_EQ(vk::formula_abs(x).d[0], -1.0);  // d|x|/dx = -1 for x < 0
  DD y = DD::variable(D::variable(3.0, 0), 0);
  EXPECT_EQ(vk::formula_max(y, DD(D(1.0))).v.v, 3.0);
  EXPECT_EQ(vk::formula_min(y, DD(D(1.0))).v.v, 1.0);
  using Pk = vk::Pack<double, 4>;
  Pk a, b;
  for (int l = 0; l < 4; ++l) {
    a.set(l, l - 1.5);
    b.set(l, 1.5 - l);
  }
  const vk::Dual<Pk, 1> da(a), db(b);
  const auto mn = vk::formula_min(da, db);
  const auto ab = vk::formula_abs(da);
  for (int l = 0; l < 4; ++l) {
    EXPECT_EQ(mn.v[l], std::min(l - 1.5, 1.5 - l));
    EXPECT_EQ(ab.v[l], std::abs(l - 1.5));
  }
}

}  // namespace
