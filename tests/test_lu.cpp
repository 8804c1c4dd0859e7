// Small dense LU with partial pivoting: backward stability on random systems, pivoting where it is
// needed, the factors themselves, singular input, float, and dual entries (differentiated solves).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <type_traits>

#include "kernels/core/dual.hpp"
#include "kernels/core/lu.hpp"

namespace vigor::kernels {
namespace {

template <class T, int N>
Mat<T, N> RandomMatrix(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Mat<T, N> A;
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < N; ++j) A[i][j] = T(u(rng));
  }
  return A;
}

template <class T, int N>
Vec<T, N> RandomVector(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Vec<T, N> x;
  for (int i = 0; i < N; ++i) x[i] = T(u(rng));
  return x;
}

// ||b - A x||_inf / (||A||_inf ||x||_inf), accumulated in long double so that the check itself
// adds no rounding of the size being tested.
template <class T, int N>
double RelativeResidual(const Mat<T, N>& A, const Vec<T, N>& x, const Vec<T, N>& b) {
  long double r_max = 0, a_max = 0, x_max = 0;
  for (int i = 0; i < N; ++i) {
    long double r = b[i], a = 0;
    for (int j = 0; j < N; ++j) {
      r -= static_cast<long double>(A[i][j]) * x[j];
      a += std::abs(static_cast<long double>(A[i][j]));
    }
    r_max = std::max(r_max, std::abs(r));
    a_max = std::max(a_max, a);
    x_max = std::max(x_max, std::abs(static_cast<long double>(x[i])));
  }
  return static_cast<double>(r_max / (a_max * x_max));
}

// Backward error of Gaussian elimination with partial pivoting (Higham, Accuracy and Stability of
// Numerical Algorithms, Thm 9.4 with (9.17)): ||b - A x|| <= gamma_3n ||L|| ||U|| ||x|| and
// ||L|| ||U|| <= n rho ||A||, rho the growth factor. For uniform random matrices rho stays below 8
// at these sizes, so the bound is 3n * eps * n * 8 (n = 10, double: 1.7e-13, inside the 1e-12 asked
// of the solver); a solve without pivoting or with a wrong substitution misses it by many decades.
template <class T, int N>
double ResidualBound() {
  constexpr double kGrowth = 8.0;
  return 3.0 * N * std::numeric_limits<T>::epsilon() * N * kGrowth;
}

template <class T, int N>
void CheckRandomSolves(std::uint64_t seed, int trials) {
  std::mt19937_64 rng(seed);
  for (int t = 0; t < trials; ++t) {
    const Mat<T, N> A = RandomMatrix<T, N>(rng);
    const Vec<T, N> b = RandomVector<T, N>(rng);
    const Vec<T, N> x = lu_solve(A, b);
    EXPECT_LE(RelativeResidual(A, x, b), (ResidualBound<T, N>())) << "N = " << N << ", trial " << t;
  }
}

TEST(Lu, RandomSystemsAreSolvedBackwardStably) {
  CheckRandomSolves<double, 3>(1, 200);
  CheckRandomSolves<double, 6>(2, 200);
  CheckRandomSolves<double, 10>(3, 200);
}

TEST(Lu, FloatSolvesAreBackwardStableInFloat) {
  CheckRandomSolves<float, 3>(4, 200);
  CheckRandomSolves<float, 6>(5, 200);
  static_assert(
      std::is_same_v<decltype(lu_solve(Mat<float, 6>{}, Vec<float, 6>{})), Vec<float, 6>>);
}

TEST(Lu, ZeroLeadingEntryNeedsAndGetsPivoting) {
  // Elimination without row exchanges divides by A[0][0] = 0.
  Mat<double, 3> A{{{0.0, 1.0, 2.0}, {1.0, 0.0, 3.0}, {4.0, -3.0, 8.0}}};
  const Vec<double, 3> x_true{{1.0, 2.0, 3.0}};
  Vec<double, 3> b;
  for (int i = 0; i < 3; ++i)
    b[i] = A[i][0] * x_true[0] + A[i][1] * x_true[1] + A[i][2] * x_true[2];
  const Vec<double, 3> x = lu_solve(A, b);
  // cond_inf(A) ~ 40, so the forward error is below cond * 3n eps ~ 1e-13.
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(x[i], x_true[i], 1e-13) << i;
}

TEST(Lu, TinyPivotIsExchangedForTheLargestOne) {
  // The textbook case (Golub & Van Loan §3.3): without pivoting on the 1e-20 the multiplier 1e20
  // swamps the second row and x0 comes out 0 instead of 1.
  Mat<double, 2> A{{{1e-20, 1.0}, {1.0, 1.0}}};
  const Vec<double, 2> b{{1.0, 2.0}};
  const Vec<double, 2> x = lu_solve(A, b);
  // Exact solution 1/(1 - 1e-20) and (1 - 2e-20)/(1 - 1e-20): both 1 to within half an ulp.
  EXPECT_NEAR(x[0], 1.0, 2 * std::numeric_limits<double>::epsilon());
  EXPECT_NEAR(x[1], 1.0, 2 * std::numeric_limits<double>::epsilon());
}

TEST(Lu, FactorsReproducePermutedMatrixWithBoundedMultipliers) {
  std::mt19937_64 rng(6);
  constexpr int kN = 6;
  const Mat<double, kN> A = RandomMatrix<double, kN>(rng);
  const LU<double, kN> f(A);
  bool seen[kN] = {};
  for (int i = 0; i < kN; ++i) {
    ASSERT_GE(f.perm[i], 0);
    ASSERT_LT(f.perm[i], kN);
    EXPECT_FALSE(seen[f.perm[i]]) << "perm is not a permutation";
    seen[f.perm[i]] = true;
  }
  for (int i = 0; i < kN; ++i) {
    for (int j = 0; j < kN; ++j) {
      // (L U)_ij with the unit diagonal of L implicit; |L||U| bounds its rounding (Higham Thm 9.3).
      double lu = 0.0, lu_abs = 0.0;
      for (int k = 0; k <= std::min(i, j); ++k) {
        const double l = k == i ? 1.0 : f.lu[i][k];
        lu += l * f.lu[k][j];
        lu_abs += std::abs(l * f.lu[k][j]);
      }
      EXPECT_NEAR(lu, A[f.perm[i]][j], kN * std::numeric_limits<double>::epsilon() * lu_abs)
          << i << "," << j;
      // Partial pivoting picks the largest candidate, so no multiplier exceeds 1 in magnitude.
      if (j < i) {
        EXPECT_LE(std::abs(f.lu[i][j]), 1.0) << i << "," << j;
      }
    }
  }
  // One factorisation, several right-hand sides.
  for (int t = 0; t < 3; ++t) {
    const Vec<double, kN> b = RandomVector<double, kN>(rng);
    EXPECT_LE(RelativeResidual(A, f.solve(b), b), (ResidualBound<double, kN>()));
  }
}

TEST(Lu, SingularMatrixGivesNonFiniteResult) {
  // Documented contract: no early exit, a zero pivot shows up as inf/NaN for the driver to flag.
  Mat<double, 2> A{{{1.0, 2.0}, {2.0, 4.0}}};
  const Vec<double, 2> x = lu_solve(A, Vec<double, 2>{{1.0, 1.0}});
  EXPECT_FALSE(std::isfinite(x[0]) && std::isfinite(x[1]));
}

TEST(Lu, IdentitySolvesToTheRightHandSide) {
  const Mat<double, 4> I = Mat<double, 4>::identity();
  const Vec<double, 4> b{{1.5, -2.0, 0.25, 7.0}};
  const Vec<double, 4> x = lu_solve(I, b);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(x[i], b[i]);
}

TEST(Lu, DualEntriesDifferentiateTheSolution) {
  // A(t) = A0 + t A1: d/dt A(t)^-1 b = -A0^-1 A1 x at t = 0. This is how tangent maps pass through
  // the Newton solves of implicit steps.
  constexpr int kN = 4;
  using D = Dual<double, 1>;
  std::mt19937_64 rng(7);
  const Mat<double, kN> A0 = RandomMatrix<double, kN>(rng), A1 = RandomMatrix<double, kN>(rng);
  const Vec<double, kN> b = RandomVector<double, kN>(rng);
  Mat<D, kN> A;
  Vec<D, kN> bd;
  for (int i = 0; i < kN; ++i) {
    bd[i] = D(b[i]);
    for (int j = 0; j < kN; ++j) {
      A[i][j] = D(A0[i][j]);
      A[i][j].d[0] = A1[i][j];
    }
  }
  const Vec<D, kN> xd = lu_solve(A, bd);
  const Vec<double, kN> x = lu_solve(A0, b);
  Vec<double, kN> y;
  for (int i = 0; i < kN; ++i) {
    y[i] = 0.0;
    for (int j = 0; j < kN; ++j) y[i] += A1[i][j] * x[j];
  }
  const Vec<double, kN> dx = lu_solve(A0, y);
  // The primal part is an ordinary backward-stable solve; not bit-identical to the plain double
  // solve, because Dual division multiplies by a rounded reciprocal.
  Vec<double, kN> xv;
  for (int i = 0; i < kN; ++i) xv[i] = xd[i].v;
  EXPECT_LE(RelativeResidual(A0, xv, b), (ResidualBound<double, kN>()));
  // Both routes are backward-stable solves with A0, so they agree to cond(A0) times the backward
  // error bound, for each of the two solves in a route.
  double a_norm = 0.0, inv_norm = 0.0, dx_max = 0.0;
  for (int i = 0; i < kN; ++i) {
    double a_row = 0.0, inv_row = 0.0;
    Vec<double, kN> e = Vec<double, kN>::filled(0.0);
    e[i] = 1.0;
    const Vec<double, kN> col = lu_solve(A0, e);  // column i of A0^-1
    for (int j = 0; j < kN; ++j) {
      a_row += std::abs(A0[i][j]);
      inv_row += std::abs(col[j]);
    }
    a_norm = std::max(a_norm, a_row);
    inv_norm = std::max(inv_norm, inv_row);  // the 1-norm of A0^-1 bounds the inf-norm within n
    dx_max = std::max(dx_max, std::abs(dx[i]));
  }
  const double tol = 2.0 * (a_norm * inv_norm * kN) * ResidualBound<double, kN>() * dx_max;
  for (int i = 0; i < kN; ++i) EXPECT_NEAR(xd[i].d[0], -dx[i], tol) << i;
}

}  // namespace
}  // namespace vigor::kernels
