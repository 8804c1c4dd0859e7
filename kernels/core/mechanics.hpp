/// @file mechanics.hpp
/// @brief What every (q, p) model gives the integrators, whatever its kind: the Lagrangian, its
/// derivatives, the Legendre transform, the energy, constraints, forcing and momentum maps.
///
/// A model is a class template on its Real with `dof` degrees of freedom. It is one of
///
///  * separable (canonical): a diagonal mass `inv_mass(i)` and a potential `potential<T>(q)`,
///        L(q, v) = 1/2 sum_i v_i^2 / inv_mass(i) - V(q),     H = 1/2 sum_i p_i^2 inv_mass(i) +
///        V(q);
///    the explicit integrators need this kind (kernels/core/hamiltonian.hpp);
///  * Lagrangian: a general, possibly non-separable `lagrangian<T>(q, v)`, regular in v
///    (d^2 L / dv^2 invertible). The implicit integrators handle it, and rk4 on Hamilton's
///    equations (phase_rates); every derivative comes from forward-mode AD (kernels/core/dual.hpp)
///    of the one templated function.
///
/// and may add, each detected by its presence:
///  * holonomic constraints: `static constexpr int kConstraints = m;` and
///    `Vec<T, m> constraints<T>(q)` (g(q) = 0; the Jacobian G = dg/dq comes from AD);
///  * a time-dependent external (non-conservative) force `Vec<T, dof> external_force<T>(q, v, t)`,
///    entering the discrete Lagrange–d'Alembert principle;
///  * momentum maps: `static constexpr int kMomentumMaps = k;`, `kMomentumNames` (k names) and
///    `Vec<T, k> momentum_map<T>(q, p)` — quantities the model's symmetry conserves (discrete
///    Noether), whose drift the driver reports per trajectory.
///
/// Models whose state is not (q, p) — the rigid body on SO(3) — bring their own state operations
/// (kernels/state.hpp) and name the integrators that handle them.
#pragma once

#include "config.hpp"
#include "dual.hpp"
#include "hamiltonian.hpp"
#include "lu.hpp"
#include "math.hpp"
#include "vec.hpp"

namespace vigor::kernels {

template <class M>
concept SeparableModel = requires(const M& m) {
  m.inv_mass(0);
};

template <class M>
concept LagrangianModel = requires(const M& m, const Vec<real_t<M>, M::dof>& q) {
  m.template lagrangian<real_t<M>>(q, q);
};

template <class M>
concept ForcedModel = requires(const M& m, const Vec<real_t<M>, M::dof>& q, real_t<M> t) {
  m.template external_force<real_t<M>>(q, q, t);
};

/// Number of holonomic constraints (0 when the model declares none).
template <class M>
inline constexpr int constraint_count = [] {
  if constexpr (requires { M::kConstraints; })
    return int(M::kConstraints);
  else
    return 0;
}();

template <class M>
concept ConstrainedModel = (constraint_count<M> > 0);

/// Number of momentum-map components (0 when the model declares none).
template <class M>
inline constexpr int momentum_map_count = [] {
  if constexpr (requires { M::kMomentumMaps; })
    return int(M::kMomentumMaps);
  else
    return 0;
}();

/// A model whose state is the canonical pair (q, p) held in a Phase.
template <class M>
concept PhaseModel = SeparableModel<M> || LagrangianModel<M>;

/// A model whose state lies on a Lie group (an attitude matrix and body momenta, not a (q, p)
/// pair), tagged by the header that specialises its StateOps (models/rigid_body_so3.hpp,
/// models/kirchhoff_se3.hpp).
template <class M>
concept LieGroupStateModel =
    !PhaseModel<M> && (
                          requires { M::kLieGroupSO3; } || requires { M::kLieGroupSE3; });

/// Separable, unconstrained, unforced: what explicit splitting methods integrate.
template <class M>
concept PlainSeparableModel = SeparableModel<M> && !ConstrainedModel<M> && !ForcedModel<M>;

/// Iterations of the Legendre solve v(q, p). For L quadratic in v (every mechanical system) the
/// first Newton step from v = 0 is exact up to round-off and the second removes that round-off.
inline constexpr int kLegendreIterations = 2;

/// L(q, v) in scalar type T (T may be a dual number over Real).
template <class T, class M>
VIGOR_HD VIGOR_INLINE T lagrangian(const M& m, const Vec<T, M::dof>& q, const Vec<T, M::dof>& v) {
  if constexpr (LagrangianModel<M>) {
    return m.template lagrangian<T>(q, v);
  } else {
    T t = v[0] * v[0] / m.inv_mass(0);
    VIGOR_UNROLL
    for (int i = 1; i < M::dof; ++i) t += v[i] * v[i] / m.inv_mass(i);
    return T(0.5) * t - m.template potential<T>(q);
  }
}

/// dL/dq and dL/dv at (q, v), by forward AD over the 2 dof inputs (for separable models, from the
/// potential's gradient and the diagonal mass).
template <class M, class T>
VIGOR_HD VIGOR_INLINE void lagrangian_gradient(const M& m, const Vec<T, M::dof>& q,
                                               const Vec<T, M::dof>& v, Vec<T, M::dof>& Lq,
                                               Vec<T, M::dof>& Lv) {
  constexpr int n = M::dof;
  if constexpr (LagrangianModel<M>) {
    using D = Dual<T, 2 * n>;
    Vec<D, n> qd, vd;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      qd[i] = D::variable(q[i], i);
      vd[i] = D::variable(v[i], n + i);
    }
    const D L = m.template lagrangian<D>(qd, vd);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      Lq[i] = L.d[i];
      Lv[i] = L.d[n + i];
    }
  } else {
    potential_gradient(m, q, Lq);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      Lq[i] = -Lq[i];
      Lv[i] = v[i] / m.inv_mass(i);
    }
  }
}

/// The momentum p = dL/dv and the mass matrix d^2L/dv^2 at (q, v).
template <class M, class T>
VIGOR_HD VIGOR_INLINE void momentum_and_mass(const M& m, const Vec<T, M::dof>& q,
                                             const Vec<T, M::dof>& v, Vec<T, M::dof>& p,
                                             Mat<T, M::dof>& mass) {
  constexpr int n = M::dof;
  if constexpr (LagrangianModel<M>) {
    using D1 = Dual<T, n>;
    using D2 = Dual<D1, n>;
    Vec<D2, n> qd, vd;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      qd[i] = D2(D1(q[i]));
      vd[i] = D2::variable(D1::variable(v[i], i), i);
    }
    const D2 L = m.template lagrangian<D2>(qd, vd);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      p[i] = L.v.d[i];
      VIGOR_UNROLL
      for (int j = 0; j < n; ++j) mass[i][j] = L.d[j].d[i];
    }
  } else {
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      p[i] = v[i] / m.inv_mass(i);
      VIGOR_UNROLL
      for (int j = 0; j < n; ++j) mass[i][j] = i == j ? T(1) / m.inv_mass(i) : T(0);
    }
  }
}

/// Solve A x = b by Gaussian elimination without pivoting: only arithmetic, so it runs unchanged
/// in SIMD lanes and never diverges a warp. Used where A is a small perturbation of a symmetric
/// positive (or negative) definite matrix — a mass matrix, I + O(h^2) Hessian terms, or a Schur
/// complement G M^{-1} G^T of independent constraints — whose leading minors stay away from zero,
/// so partial pivoting buys nothing. A singular A gives inf/NaN, which the driver flags.
template <class T, int N>
VIGOR_HD VIGOR_INLINE Vec<T, N> solve_nopivot(Mat<T, N> A, Vec<T, N> b) {
  VIGOR_UNROLL
  for (int k = 0; k < N; ++k) {
    const T inv = T(1) / A[k][k];
    VIGOR_UNROLL
    for (int i = k + 1; i < N; ++i) {
      const T f = A[i][k] * inv;
      VIGOR_UNROLL
      for (int j = k + 1; j < N; ++j) A[i][j] -= f * A[k][j];
      b[i] -= f * b[k];
    }
  }
  Vec<T, N> x;
  VIGOR_UNROLL
  for (int i = N - 1; i >= 0; --i) {
    T s = b[i];
    VIGOR_UNROLL
    for (int j = i + 1; j < N; ++j) s -= A[i][j] * x[j];
    x[i] = s / A[i][i];
  }
  return x;
}

/// sum_i g_i x_i for a constraint-Jacobian row g.
template <class T, int N>
VIGOR_HD VIGOR_INLINE T dot_row(const T (&g)[N], const Vec<T, N>& x) {
  T r = g[0] * x[0];
  VIGOR_UNROLL
  for (int i = 1; i < N; ++i) r += g[i] * x[i];
  return r;
}

/// The Schur complement S = Gl A^{-1} Gr^T (K x K) of a constrained linear system, with the
/// columns Z_b = A^{-1} Gr_b it is made of. A is a (perturbed) mass matrix and S is definite for
/// independent constraints, so neither needs pivoting (see solve_nopivot).
template <class T, int N, int K>
VIGOR_HD VIGOR_INLINE Mat<T, K> schur_complement(const Mat<T, N>& A, const T (&Gl)[K][N],
                                                 const T (&Gr)[K][N], Vec<T, N> (&Z)[K]) {
  VIGOR_UNROLL
  for (int b = 0; b < K; ++b) {
    Vec<T, N> col;
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) col[i] = Gr[b][i];
    Z[b] = solve_nopivot(A, col);
  }
  Mat<T, K> S;
  VIGOR_UNROLL
  for (int a = 0; a < K; ++a) VIGOR_UNROLL
  for (int b = 0; b < K; ++b) S[a][b] = dot_row(Gl[a], Z[b]);
  return S;
}

/// max_i |x_i| (the norm Newton residuals are reported in).
template <class T, int N>
VIGOR_HD VIGOR_INLINE T max_abs(const Vec<T, N>& x) {
  T r = abs(x[0]);
  VIGOR_UNROLL
  for (int i = 1; i < N; ++i) r = max_of(r, abs(x[i]));
  return r;
}

/// The inverse Legendre transform: the velocity v with dL/dv(q, v) = p.
template <class M, class T>
VIGOR_HD VIGOR_INLINE Vec<T, M::dof> velocity_of(const M& m, const Vec<T, M::dof>& q,
                                                 const Vec<T, M::dof>& p) {
  constexpr int n = M::dof;
  Vec<T, n> v;
  if constexpr (LagrangianModel<M>) {
    v = Vec<T, n>::filled(T(0));
    VIGOR_UNROLL
    for (int it = 0; it < kLegendreIterations; ++it) {
      Vec<T, n> pv;
      Mat<T, n> mass;
      momentum_and_mass(m, q, v, pv, mass);
      const Vec<T, n> dv = solve_nopivot(mass, pv - p);
      v -= dv;
    }
  } else {
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) v[i] = m.inv_mass(i) * p[i];
  }
  return v;
}

/// The energy H(q, p) = p . v - L(q, v) at v = v(q, p).
template <class M, class T>
VIGOR_HD VIGOR_INLINE T mechanical_energy(const M& m, const Vec<T, M::dof>& q,
                                          const Vec<T, M::dof>& p) {
  if constexpr (LagrangianModel<M>) {
    const Vec<T, M::dof> v = velocity_of(m, q, p);
    return dot(p, v) - lagrangian<T>(m, q, v);
  } else {
    return energy(m, q, p);
  }
}

/// The external force F(q, v, t) (zero for unforced models).
template <class M, class T>
VIGOR_HD VIGOR_INLINE Vec<T, M::dof> external_force_of(const M& m, const Vec<T, M::dof>& q,
                                                       const Vec<T, M::dof>& v, T t) {
  if constexpr (ForcedModel<M>) {
    return m.template external_force<T>(q, v, t);
  } else {
    return Vec<T, M::dof>::filled(T(0));
  }
}

/// g(q) and its Jacobian G = dg/dq (m x dof, row-major) by forward AD.
template <class M, class T>
VIGOR_HD VIGOR_INLINE void constraint_jacobian(const M& m, const Vec<T, M::dof>& q,
                                               Vec<T, constraint_count<M>>& g,
                                               T (&G)[constraint_count<M>][M::dof]) {
  constexpr int n = M::dof;
  constexpr int k = constraint_count<M>;
  using D = Dual<T, n>;
  Vec<D, n> qd;
  VIGOR_UNROLL
  for (int i = 0; i < n; ++i) qd[i] = D::variable(q[i], i);
  const Vec<D, k> gd = m.template constraints<D>(qd);
  VIGOR_UNROLL
  for (int a = 0; a < k; ++a) {
    g[a] = gd[a].v;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) G[a][i] = gd[a].d[i];
  }
}

/// Subtract the constraint force G^T lambda from pdot, with lambda such that the flow
/// qdot = v(q, p), pdot - G^T lambda keeps the velocity constraint c(q, p) = G(q) v(q, p) = 0
/// (the index-1 form of the constrained equations). c is affine in lambda along the flow:
/// dc/dt = b + A lambda with b its derivative along (qdot, pdot) and A its derivatives along the
/// momentum directions -G^T e_a (A = -G M^{-1} G^T, definite for independent constraints: no
/// pivoting needed). Both come from one forward-AD pass with 1 + k directions.
template <class M, class T>
VIGOR_HD VIGOR_INLINE void subtract_constraint_force(const M& m, const Vec<T, M::dof>& q,
                                                     const Vec<T, M::dof>& p,
                                                     const Vec<T, M::dof>& qdot,
                                                     Vec<T, M::dof>& pdot) {
  constexpr int n = M::dof;
  constexpr int k = constraint_count<M>;
  Vec<T, k> g;
  T G[k][n];
  constraint_jacobian(m, q, g, G);
  using D = Dual<T, 1 + k>;
  Vec<D, n> qd, pd;
  VIGOR_UNROLL
  for (int i = 0; i < n; ++i) {
    qd[i] = D(q[i]);
    qd[i].d[0] = qdot[i];
    pd[i] = D(p[i]);
    pd[i].d[0] = pdot[i];
    VIGOR_UNROLL
    for (int a = 0; a < k; ++a) pd[i].d[1 + a] = -G[a][i];
  }
  Vec<D, k> gd;
  D Gd[k][n];
  constraint_jacobian(m, qd, gd, Gd);
  const Vec<D, n> vd = velocity_of(m, qd, pd);
  Mat<T, k> A;
  Vec<T, k> minus_b;
  VIGOR_UNROLL
  for (int a = 0; a < k; ++a) {
    const D c = dot_row(Gd[a], vd);
    minus_b[a] = -c.d[0];
    VIGOR_UNROLL
    for (int b = 0; b < k; ++b) A[a][b] = c.d[1 + b];
  }
  const Vec<T, k> lambda = solve_nopivot(A, minus_b);
  VIGOR_UNROLL
  for (int i = 0; i < n; ++i) VIGOR_UNROLL
  for (int a = 0; a < k; ++a) pdot[i] -= G[a][i] * lambda[a];
}

/// The equations of motion at (q, p, t): qdot = v(q, p), pdot = dL/dq(q, v) + F(q, v, t), minus
/// the constraint force for constrained models (so section interpolation follows the manifold).
template <class M, class T>
VIGOR_HD VIGOR_INLINE void phase_rates(const M& m, const Vec<T, M::dof>& q, const Vec<T, M::dof>& p,
                                       T t, Vec<T, M::dof>& qdot, Vec<T, M::dof>& pdot) {
  qdot = velocity_of(m, q, p);
  Vec<T, M::dof> Lv;
  lagrangian_gradient(m, q, qdot, pdot, Lv);
  if constexpr (ForcedModel<M>) pdot += external_force_of(m, q, qdot, t);
  if constexpr (ConstrainedModel<M>) subtract_constraint_force(m, q, p, qdot, pdot);
}

}  // namespace vigor::kernels
