/// @file compensated.hpp
/// @brief An integrator run with compensated summation (integrator.compensated): the same step
/// on a state that carries the round-off terms of q and p (kernels/core/compensated.hpp).
///
/// Compensated<I> is I itself — its name, options, order and step — with kCompensated set; the
/// drivers then hold each trajectory's state as a CompensatedPhase and store its terms between
/// launches (EnsembleArrays::state_lo). Only integrators that declare kCompensable (their step
/// adds through add_to_q, add_to_p and their add_product_ forms) may be wrapped. What it buys: the
/// round-off of a step is that of its increments, ε |d|, rather than ε |q| per substep, so the
/// error of the conserved quantities grows like ε √n with a constant smaller by about |q| / |d|
/// (Brouwer's law for the force evaluations' round-off, which no summation removes);
/// tests/test_compensated.cpp measures both. What it costs: three more additions per update and the
/// terms' registers, and these engines are compiled on first use (host/backends/first_use.hpp).
/// References: Kahan 1965, Comm. ACM 8, 40; Hairer, Lubich & Wanner, GNI, VIII.5; Hairer,
/// McLachlan & Razakarivony 2008, BIT 48, 231 (Brouwer's law for implicit Runge–Kutta methods).
#pragma once

#include "kernels/core/compensated.hpp"
#include "kernels/integrators/protocol.hpp"

namespace vigor::kernels {

template <class I>
struct Compensated : I {
  static_assert(integrator_compensable<I>,
                "Compensated<I>: I's step must add through add_to_q / add_to_p (kCompensable)");
  static constexpr bool kCompensated = true;

  static Compensated from_options(const double* v) { return Compensated{I::from_options(v)}; }
};

/// Its Real is I's, and it rebinds as I does (the CPU lanes run Compensated<I on a Pack>).
template <class I>
struct real_of<Compensated<I>> {
  using type = real_t<I>;
};
template <class I, class R>
struct rebind<Compensated<I>, R> {
  using type = Compensated<rebind_t<I, R>>;
};

/// Compensated<IntegratorT<Real>> as a template on Real, the shape the engine factories and the
/// plugin entry take (VIGOR_PLUGIN_ENGINE).
template <template <class> class IntegratorT>
struct CompensatedOf {
  template <class Real>
  using type = Compensated<IntegratorT<Real>>;
};

/// The state the drivers hold for integrator I, given the model's StateOps state: a
/// CompensatedPhase for a compensated integrator (its models are canonical (q, p) models).
template <class I, class State>
struct DriverState {
  using type = State;
};
template <class I, class Real, int N>
requires integrator_compensated<I>
struct DriverState<I, Phase<Real, N>> {
  using type = CompensatedPhase<Real, N>;
};
template <class I, class State>
using driver_state_t = typename DriverState<I, State>::type;

}  // namespace vigor::kernels
