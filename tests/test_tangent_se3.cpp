// Tangent maps on T*SE(3) (kernels/tangent.hpp): the body in fluid's variational Euler steps,
// Cayley and exponential charts, preserve the symplectic form W(mu). A unit apart from SO(3)'s: the
// nested duals of the exponential chart are the slowest of the tangent tests to compile.
// Tolerances: tests/tangent_run.hpp.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/tangent_run.hpp"

namespace {

using namespace tangent_test;

TEST(TangentDefect, LieGroupVariationalEulerPreservesTheFormOfTStarSE3) {
  // W(mu) = [[A(mu), E], [-E, 0]] with A(mu) = [[-hat Pi, -hat P], [-hat P, 0]] at the staggered
  // momenta (models/kirchhoff_se3.hpp). The reference orbit is chaotic and x drifts, so |M|
  // grows fast: the bound is on the defect relative to |M|^2, a few ulps per step.
  Run1<KS, VariationalEulerSE3<double>> r(reference_of<KS>(), 0.025, 3);
  r.tangent(400);
  EXPECT_LT(r.out[kOutDefectRel], 1e-14);
  EXPECT_LT(std::abs(r.det_error()), 1e-10);
  // With one Newton iteration the map is off by the residual (~1e-5 here), far above round-off.
  Run1<KS, VariationalEulerSE3<double>> one(reference_of<KS>(), 0.025, 1);
  one.tangent(400);
  EXPECT_GT(one.out[kOutDefectRel], 1e-10);
}

TEST(TangentDefect, ExponentialChartOnSE3PreservesTheSameForm) {
  // As on SO(3) (test_tangent_so3.cpp): the Newton Jacobian by AD, a nested dual.
  Run1<KS, VariationalEulerSE3Exp<double>> se3(reference_of<KS>(), 0.025, 3);
  se3.tangent(400);
  EXPECT_LT(se3.out[kOutDefectRel], 1e-14);
  EXPECT_LT(std::abs(se3.det_error()), 1e-10);
}

}  // namespace
