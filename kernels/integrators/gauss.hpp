/// @file gauss.hpp
/// @brief Gauss–Legendre collocation with s stages (option `stages`, 1 … 8): the symplectic,
/// symmetric Runge–Kutta method of order 2s, the highest order any s-stage Runge–Kutta method has.
///
/// For H = p^T M^-1 p / 2 + V(q), with F = -grad V, written in its Nyström form (the stages'
/// momenta eliminated, Hairer, Nørsett & Wanner I §II.14): with v0 = M^-1 p0,
///
///     Q_i = q0 + c_i h v0 + h^2 sum_j abar_ij M^-1 F(Q_j)                      (i = 1 … s)
///     q1  = q0 + h v0 + h^2 sum_i bbar_i M^-1 F(Q_i),   p1 = p0 + h sum_i b_i F(Q_i),
///
/// where c_i are the zeros of the shifted Legendre polynomial P_s(2x - 1), b_i the Gauss weights,
/// a_ij = int_0^{c_i} l_j (l_j the Lagrange basis on the nodes), abar = A^2 and bbar_i =
/// b_i (1 - c_i). It is the variational integrator of the discrete Lagrangian that collocates at
/// the Gauss nodes (Marsden & West 2001 §2.6; Hairer, Lubich & Wanner VI.6.4): symplectic and
/// symmetric, momentum maps of symmetries of V conserved, energy error bounded and O(h^2s). s = 1
/// is the implicit midpoint rule.
///
/// The stage equations are solved by fixed-point iteration on the stage forces (Jacobi sweeps:
/// each sweep evaluates F at all stages from the previous sweep's forces), started from F(q0) —
/// the cached Phase::f — at every stage. Each sweep multiplies the error by about
/// h^2 omega^2 max_i sum_j |abar_ij| <= (h omega)^2 / 2 (omega: the fastest linear frequency) and
/// raises the order of the iterate by two, so order 2s needs at least s sweeps and round-off a
/// few more: `newton_iterations` (the job key, here the sweep count) defaults to 12, enough for
/// round-off at h omega <= 0.3 for every s (tests/test_implicit.cpp measures it). No Jacobian:
/// the iteration needs only the force, which is what explicit methods need too, and each sweep's s
/// evaluations are independent. The returned residual is the last sweep's change of the stage
/// positions, max_i |h^2 sum_j abar_ij M^-1 dF_j| (units of position): with newton_tolerance set,
/// an unconverged step is flagged. Phase::f = F(q1) is kept valid (one more evaluation).
///
/// The tableau is computed on the host in long double when the integrator is built (nodes by
/// Newton's method on P_s, a_ij by the s-point Gauss rule on [0, c_i], exact for the degree-(s-1)
/// l_j), then rounded to double: every coefficient to within an ulp.
/// References: Butcher 1964; Hairer, Lubich & Wanner, Geometric Numerical Integration, II.1.3 and
/// VI.4; Antoñana, Makazaga & Murua, IRKGL16 (2017), for order 16 with fixed-point iterations.
#pragma once

#include <array>
#include <cmath>

#include "kernels/core/compensated.hpp"
#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/mechanics.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::kernels {

/// The Gauss–Legendre tableau of s stages, in double, in its Nyström form.
struct GaussTableau {
  static constexpr int kMaxStages = 8;
  int stages = 0;
  double c[kMaxStages] = {};
  double b[kMaxStages] = {};
  double bbar[kMaxStages] = {};              ///< b_i (1 - c_i)
  double abar[kMaxStages][kMaxStages] = {};  ///< (A^2)_ij
  double a[kMaxStages][kMaxStages] = {};     ///< A (kept for tests and the order checks)

  /// Host only: the tableau for 1 <= s <= kMaxStages.
  static GaussTableau make(int s) {
    using L = long double;
    const L pi = 3.14159265358979323846264338327950288L;
    GaussTableau t;
    t.stages = s;
    L x[kMaxStages], w[kMaxStages];
    for (int i = 0; i < s; ++i) {
      // Zero i of P_s on [-1, 1] by Newton's method from the Chebyshev-like guess.
      L z = std::cos(pi * (L(i) + 0.75L) / (L(s) + 0.5L)), dp = 1;
      for (int it = 0; it < 100; ++it) {
        L p0 = 1, p1 = z;  // P_0, P_1, then the three-term recurrence up to P_s
        for (int k = 2; k <= s; ++k) {
          const L pk = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
          p0 = p1;
          p1 = pk;
        }
        dp = L(s) * (z * p1 - p0) / (z * z - 1);  // P_s'
        const L dz = p1 / dp;
        z -= dz;
        if (std::fabs(dz) < 1e-30L) break;
      }
      x[i] = z;
      w[i] = 2 / ((1 - z * z) * dp * dp);
    }
    // Nodes ascending on [0, 1], weights for [0, 1].
    L cl[kMaxStages], bl[kMaxStages];
    for (int i = 0; i < s; ++i) {
      const int j = s - 1 - i;
      cl[i] = (1 + x[j]) / 2;
      bl[i] = w[j] / 2;
      t.c[i] = double(cl[i]);
    }
    // a_ij = int_0^{c_i} l_j = c_i sum_k b_k l_j(c_i c_k) (Gauss rule, exact for degree s - 1).
    L al[kMaxStages][kMaxStages];
    for (int i = 0; i < s; ++i)
      for (int j = 0; j < s; ++j) {
        L sum = 0;
        for (int k = 0; k < s; ++k) {
          const L tau = cl[i] * cl[k];
          L lj = 1;
          for (int m = 0; m < s; ++m)
            if (m != j) lj *= (tau - cl[m]) / (cl[j] - cl[m]);
          sum += bl[k] * lj;
        }
        al[i][j] = cl[i] * sum;
      }
    for (int i = 0; i < s; ++i) {
      t.b[i] = double(bl[i]);
      t.bbar[i] = double(bl[i] * (1 - cl[i]));
      for (int j = 0; j < s; ++j) {
        L sum = 0;
        for (int k = 0; k < s; ++k) sum += al[i][k] * al[k][j];
        t.abar[i][j] = double(sum);
        t.a[i][j] = double(al[i][j]);
      }
    }
    return t;
  }
};

template <class Real>
struct Gauss {
  static constexpr const char* kName = "gauss";
  static constexpr const char* kDescription =
      "Gauss-Legendre collocation, s stages (option stages, 1-8; order 2s), fixed-point sweeps";
  static constexpr const char* kReference =
      "Hairer, Lubich & Wanner, GNI, II.1.3 and VI.4; Antonana, Makazaga & Murua 2017 (IRKGL16)";
  /// The order with the default stage count (4); 2s in general.
  static constexpr int kOrder = 8;
  static constexpr bool kSymplectic = true;
  static constexpr bool kExplicit = false;
  static constexpr bool kLaneSafe = true;  // the sweep count and the stages are uniform
  static constexpr bool kCompensable = true;
  static constexpr int kNewtonIterations = 12;
  static constexpr int kMaxStages = GaussTableau::kMaxStages;
  static constexpr std::array<ParamSpec, 1> kOptions{{
      {"stages", 4.0, Rule::kStageCount, "stages s = 1 ... 8; order 2s (s = 1: implicit midpoint)"},
  }};

  int newton_iterations = kNewtonIterations;  ///< fixed-point sweeps
  GaussTableau tableau;

  static Gauss from_options(const double* v) {
    Gauss g;
    const int s = v ? int(v[0]) : 4;
    g.tableau = GaussTableau::make(s < 1 ? 1 : (s > kMaxStages ? kMaxStages : s));
    return g;
  }

  /// One step; returns the last sweep's change of the stage positions. PS is a Phase of Real or a
  /// CompensatedPhase (integrator.compensated): the stages are formed from q0 and their
  /// increments (Nyström form above), and q1 - q0, p1 - p0 are summed before they are added,
  /// the implementation Hairer, McLachlan & Razakarivony (2008) recommend for Brouwer's law.
  template <class M, class PS>
  VIGOR_HD VIGOR_INLINE Real step(const M& m, PS& s, Real h, Real) const {
    constexpr int n = M::dof;
    const int st = tableau.stages;
    Vec<Real, n> v0, minv;
    VIGOR_UNROLL
    for (int c = 0; c < n; ++c) {
      minv[c] = Real(m.inv_mass(c));
      v0[c] = minv[c] * s.p[c];
    }
    const Real h2 = h * h;
    // Stage forces, all F(q0) to start; the next sweep's forces beside them (Jacobi).
    Vec<Real, n> F[kMaxStages], Fn[kMaxStages];
    for (int i = 0; i < st; ++i) F[i] = s.f;
    Real residual = Real(0);
    for (int it = 0; it < newton_iterations; ++it) {
      residual = Real(0);
      for (int i = 0; i < st; ++i) {
        Vec<Real, n> Q;
        VIGOR_UNROLL
        for (int c = 0; c < n; ++c) {
          Real acc = Real(0);
          for (int j = 0; j < st; ++j) acc += Real(tableau.abar[i][j]) * F[j][c];
          Q[c] = s.q[c] + Real(tableau.c[i]) * h * v0[c] + h2 * minv[c] * acc;
        }
        Fn[i] = force(m, Q);
      }
      for (int i = 0; i < st; ++i) {
        VIGOR_UNROLL
        for (int c = 0; c < n; ++c) {
          Real dq = Real(0);
          for (int j = 0; j < st; ++j) dq += Real(tableau.abar[i][j]) * (Fn[j][c] - F[j][c]);
          residual = max_of(residual, abs(h2 * minv[c] * dq));
        }
      }
      for (int i = 0; i < st; ++i) F[i] = Fn[i];
    }
    VIGOR_UNROLL
    for (int c = 0; c < n; ++c) {
      Real dq = Real(0), dp = Real(0);
      for (int i = 0; i < st; ++i) {
        dq += Real(tableau.bbar[i]) * F[i][c];
        dp += Real(tableau.b[i]) * F[i][c];
      }
      add_to_q(s, c, h * v0[c] + h2 * minv[c] * dq);
      add_to_p(s, c, h * dp);
    }
    s.f = force(m, s.q);
    return residual;
  }
};

}  // namespace vigor::kernels
