// Tangent maps on T*SO(3) (kernels/tangent.hpp): the free rigid body's variational Euler steps,
// Cayley and exponential charts, preserve the symplectic form W(m), and the partials are the
// derivatives along left translations.
// Tolerances: tests/tangent_run.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "tests/tangent_run.hpp"

namespace {

using namespace tangent_test;

TEST(TangentDefect, LieGroupVariationalEulerPreservesTheFormOfTStarSO3) {
  // W(m) at the staggered momentum. |M| grows linearly on the free body's tori (|M|^2 ~ 1e4 at
  // t = 100), so the bound is on the defect relative to |M|^2: a few ulps (measured 1e-16).
  Run1<RB, VariationalEulerSO3<double>> r(reference_of<RB>(), 0.1, 5);
  r.tangent(1000);
  EXPECT_LT(r.out[kOutDefectRel], 1e-14);
  EXPECT_LT(std::abs(r.det_error()), 1e-12);
  // With one Newton iteration the map is off by the residual, far above round-off.
  Run1<RB, VariationalEulerSO3<double>> one(reference_of<RB>(), 0.1, 1);
  one.tangent(1000);
  EXPECT_GT(one.out[kOutDefectRel], 1e-10);
}

TEST(TangentDefect, ExponentialChartOnSO3PreservesTheSameForm) {
  // The same forms as the Cayley charts' (any chart with tau(-x) = tau(x)^-1 gives a discrete
  // Hamiltonian map); the Newton Jacobian is taken by AD, so the tangent map differentiates
  // through a nested dual.
  Run1<RB, VariationalEulerSO3Exp<double>> so3(reference_of<RB>(), 0.1, 5);
  so3.tangent(1000);
  EXPECT_LT(so3.out[kOutDefectRel], 1e-14);
  EXPECT_LT(std::abs(so3.det_error()), 1e-12);
}

TEST(TangentMap, SO3PartialsMatchDifferencesAlongLeftTranslations) {
  // Direction j < 3 moves R along R hat(e_j): perturb by R cay(+-eps e_j) (cay = exp to second
  // order, so the central difference still has O(eps^2) error); direction 3 + a moves m.
  using TOps = TangentOps<RB, double>;
  using I = VariationalEulerSO3<double>;
  const auto x = reference_of<RB>();
  Run1<RB, I> dual(x, 0.1, 5);
  dual.tangent(20);
  const double eps = 1e-5;
  double worst = 0.0;
  for (int j = 0; j < TOps::K; ++j) {
    auto moved = [&](double s) {
      std::vector<double> y(x);
      if (j < 3) {
        Vec<double, 3> v = Vec<double, 3>::filled(0.0);
        v[j] = s * eps;
        const Mat<double, 3> C = so3::cayley(v);
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b) {
            double r = 0;
            for (int c = 0; c < 3; ++c) r += x[std::size_t(3 * a + c)] * C[c][b];
            y[std::size_t(3 * a + b)] = r;
          }
      } else {
        y[std::size_t(9 + j - 3)] += s * eps;
      }
      return y;
    };
    Run1<RB, I> rp(moved(+1), 0.1, 5), rm(moved(-1), 0.1, 5);
    rp.plain(20);
    rm.plain(20);
    for (int c = 0; c < TOps::kStored; ++c)
      worst = std::max(worst,
                       std::abs((rp.state[std::size_t(c)] - rm.state[std::size_t(c)]) / (2 * eps) -
                                dual.partial(c, j)));
  }
  EXPECT_LT(worst, 1e-7);
}

}  // namespace
