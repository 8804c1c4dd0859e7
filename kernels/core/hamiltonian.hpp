/// @file hamiltonian.hpp
/// @brief The canonical (q, p) state and what every separable model gives the integrators.
///
/// A canonical model has `dof` degrees of freedom, a diagonal mass (`inv_mass(i)`) and a potential
/// V(q) written once as a template on the scalar type:
///
///     H(q, p) = 1/2 sum_i p_i^2 inv_mass(i) + V(q).
///
/// The force -grad V comes from the model's hand-written `force(q, f)` or
/// `potential_gradient(q, g)` when it has one, and from forward-mode AD of `potential` otherwise,
/// so a model only has to write V. The Hessian (for the Newton Jacobians of implicit steps)
/// likewise comes from a hand-written `potential_hessian(q, H)` or from nested-dual AD.
#pragma once

#include <type_traits>

#include "config.hpp"
#include "dual.hpp"
#include "lu.hpp"
#include "math.hpp"
#include "vec.hpp"

namespace vigor::kernels {

/// The Real a model or integrator class template was instantiated on.
template <class X>
struct real_of;
template <template <class> class Tmpl, class R>
struct real_of<Tmpl<R>> {
  using type = R;
};
template <class X>
using real_t = typename real_of<X>::type;

/// The same class template on another Real: rebind_t<HenonHeiles<double>, P> is HenonHeiles<P>.
template <class X, class R>
struct rebind;
template <template <class> class Tmpl, class T, class R>
struct rebind<Tmpl<T>, R> {
  using type = Tmpl<R>;
};
template <class X, class R>
using rebind_t = typename rebind<X, R>::type;

/// Phase-space point of a canonical model plus the force at q.
///
/// `f = -grad V(q)` is kept valid by every explicit step (it is the first force evaluation of the
/// next step, so caching it costs nothing); section location evaluates the field afresh instead.
template <class Real, int N>
struct Phase {
  Vec<Real, N> q;
  Vec<Real, N> p;
  Vec<Real, N> f;
};

template <class M, class Real>
concept HasHandGradient = requires(const M& m, const Vec<Real, M::dof>& q, Vec<Real, M::dof>& g) {
  m.potential_gradient(q, g);
};

/// grad V(q) by forward-mode AD of the model's templated potential.
template <class M, class Real>
VIGOR_HD VIGOR_INLINE void potential_gradient_ad(const M& m, const Vec<Real, M::dof>& q,
                                                 Vec<Real, M::dof>& g) {
  constexpr int n = M::dof;
  using D = Dual<Real, n>;
  Vec<D, n> qd;
  VIGOR_UNROLL
  for (int i = 0; i < n; ++i) qd[i] = D::variable(q[i], i);
  const D V = m.template potential<D>(qd);
  VIGOR_UNROLL
  for (int i = 0; i < n; ++i) g[i] = V.d[i];
}

/// grad V(q): the model's hand-written gradient when present, AD otherwise.
template <class M, class Real>
VIGOR_HD VIGOR_INLINE void potential_gradient(const M& m, const Vec<Real, M::dof>& q,
                                              Vec<Real, M::dof>& g) {
  if constexpr (HasHandGradient<M, Real>) {
    m.potential_gradient(q, g);
  } else {
    potential_gradient_ad(m, q, g);
  }
}

template <class M, class Real>
concept HasHandHessian = requires(const M& m, const Vec<Real, M::dof>& q, Mat<Real, M::dof>& H) {
  m.potential_hessian(q, H);
};

/// Largest dof whose Hessian comes from one evaluation on Dual<Dual<Real, n>, n> ((n+1)^2
/// components per number). Above it the nested type grows too large — an 18-dof model on a
/// 16-lane Pack would carry 46 KB per number, which explodes compile time and stack — so the
/// Hessian is assembled from n(n+1)/2 evaluations on Dual<Dual<Real, 1>, 1> (4 components).
inline constexpr int kNestedHessianMaxDof = 4;

/// grad V(q) and Hess V(q) by forward-mode AD of the templated potential.
template <class M, class Real>
VIGOR_HD VIGOR_INLINE void potential_gradient_hessian_ad(const M& m, const Vec<Real, M::dof>& q,
                                                         Vec<Real, M::dof>& g,
                                                         Mat<Real, M::dof>& H) {
  constexpr int n = M::dof;
  if constexpr (n <= kNestedHessianMaxDof) {
    using D1 = Dual<Real, n>;
    using D2 = Dual<D1, n>;
    Vec<D2, n> qd;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) qd[i] = D2::variable(D1::variable(q[i], i), i);
    const D2 V = m.template potential<D2>(qd);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      g[i] = V.v.d[i];
      VIGOR_UNROLL
      for (int j = 0; j < n; ++j) H[i][j] = V.d[j].d[i];
    }
  } else {
    // One second derivative per evaluation: inner seed e_i, outer seed e_j. Plain loops (not
    // unrolled): the potential is instantiated once.
    using E1 = Dual<Real, 1>;
    using E2 = Dual<E1, 1>;
    for (int i = 0; i < n; ++i) {
      for (int j = i; j < n; ++j) {
        Vec<E2, n> qd;
        VIGOR_UNROLL
        for (int k = 0; k < n; ++k) qd[k] = E2(E1(q[k]));
        qd[i].v.d[0] = Real(1);
        qd[j].d[0] = E1(Real(1));
        const E2 V = m.template potential<E2>(qd);
        H[i][j] = V.d[0].d[0];
        H[j][i] = V.d[0].d[0];
        if (i == j) g[i] = V.v.d[0];
      }
    }
  }
}

/// Hess V(q): the model's hand-written Hessian when present, nested-dual AD otherwise.
template <class M, class Real>
VIGOR_HD VIGOR_INLINE void potential_hessian(const M& m, const Vec<Real, M::dof>& q,
                                             Mat<Real, M::dof>& H) {
  if constexpr (HasHandHessian<M, Real>) {
    m.potential_hessian(q, H);
  } else {
    Vec<Real, M::dof> g;
    potential_gradient_hessian_ad(m, q, g, H);
  }
}

/// grad V(q) and Hess V(q) at one point (what a Newton iteration of an implicit step needs): the
/// hand-written hooks when the model has both, one nested-dual evaluation otherwise.
template <class M, class Real>
VIGOR_HD VIGOR_INLINE void potential_gradient_hessian(const M& m, const Vec<Real, M::dof>& q,
                                                      Vec<Real, M::dof>& g, Mat<Real, M::dof>& H) {
  if constexpr (HasHandGradient<M, Real> && HasHandHessian<M, Real>) {
    m.potential_gradient(q, g);
    m.potential_hessian(q, H);
  } else {
    potential_gradient_hessian_ad(m, q, g, H);
  }
}

/// grad V at a dual point of the model's own Real (a tangent-map step, kernels/tangent.hpp): the
/// value is the plain gradient (hand-written or AD, so the primal step is bit-identical to the
/// plain step) and the partials are Hess V(q) dq — one Hessian instead of carrying all K partials
/// through every operation of the potential, and no third derivative anywhere.
template <class M, class R, int K>
requires std::is_same_v<R, real_t<M>> VIGOR_HD VIGOR_INLINE void potential_gradient(
    const M& m, const Vec<Dual<R, K>, M::dof>& q, Vec<Dual<R, K>, M::dof>& g) {
  constexpr int n = M::dof;
  Vec<R, n> qv, gv;
  VIGOR_UNROLL
  for (int i = 0; i < n; ++i) qv[i] = q[i].v;
  potential_gradient(m, qv, gv);
  Mat<R, n> H;
  potential_hessian(m, qv, H);
  VIGOR_UNROLL
  for (int i = 0; i < n; ++i) {
    g[i].v = gv[i];
    VIGOR_UNROLL
    for (int j = 0; j < K; ++j) {
      R s = H[i][0] * q[0].d[j];
      VIGOR_UNROLL
      for (int k = 1; k < n; ++k) s += H[i][k] * q[k].d[j];
      g[i].d[j] = s;
    }
  }
}

template <class M, class Real>
concept HasHandForce = requires(const M& m, const Vec<Real, M::dof>& q, Vec<Real, M::dof>& f) {
  m.force(q, f);
};

/// The force -grad V(q): the model's hand-written force when present (a gradient that ends in a
/// multiply-add can fold the sign into it, kernels::negated_fma), the negated gradient otherwise.
template <class M, class Real>
VIGOR_HD VIGOR_INLINE Vec<Real, M::dof> force(const M& m, const Vec<Real, M::dof>& q) {
  Vec<Real, M::dof> g;
  if constexpr (HasHandForce<M, Real>) {
    m.force(q, g);
  } else {
    potential_gradient(m, q, g);
    VIGOR_UNROLL
    for (int i = 0; i < M::dof; ++i) g[i] = -g[i];
  }
  return g;
}

/// dq/dt = M^{-1} p.
template <class M, class Real>
VIGOR_HD VIGOR_INLINE Vec<Real, M::dof> velocity(const M& m, const Vec<Real, M::dof>& p) {
  Vec<Real, M::dof> v;
  VIGOR_UNROLL
  for (int i = 0; i < M::dof; ++i) v[i] = m.inv_mass(i) * p[i];
  return v;
}

template <class M, class Real>
VIGOR_HD VIGOR_INLINE Real kinetic_energy(const M& m, const Vec<Real, M::dof>& p) {
  // Start from the first term: 0 + x cannot be folded away (signed zeros), x * 1 can.
  Real t = p[0] * p[0] * m.inv_mass(0);
  VIGOR_UNROLL
  for (int i = 1; i < M::dof; ++i) t += p[i] * p[i] * m.inv_mass(i);
  return Real(0.5) * t;
}

template <class M, class Real>
VIGOR_HD VIGOR_INLINE Real energy(const M& m, const Vec<Real, M::dof>& q,
                                  const Vec<Real, M::dof>& p) {
  return kinetic_energy(m, p) + m.template potential<Real>(q);
}

/// Fill `s.f` from `s.q`; the driver calls it once before the first step.
template <class M, class Real>
VIGOR_HD VIGOR_INLINE void refresh_force(const M& m, Phase<Real, M::dof>& s) {
  s.f = force(m, s.q);
}

}  // namespace vigor::kernels
