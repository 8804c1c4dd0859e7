/// @file evaluate.hpp
/// @brief A formula's value at given variables, by one forward pass over its tree: what
/// `vigor validate` uses to check formulas (finite energy at the initial states) without
/// compiling anything, and the reference the tests compare generated code with.
///
/// T is double or a kernels::Dual on double (nested for second derivatives): the pass applies
/// the same functions the generated code calls (kernels/core/math.hpp and their Dual overloads),
/// in the same order.
#pragma once

#include <vector>

#include "host/job/formula/formula.hpp"
#include "kernels/core/dual.hpp"
#include "kernels/core/math.hpp"

namespace vigor::host::formula {

/// The variables a formula reads: q, v, p (nullptr where the scope has none) and t.
template <class T>
struct Point {
  const T* q = nullptr;
  const T* v = nullptr;
  const T* p = nullptr;
  T t{};
};

template <class T>
T apply_function(Fn fn, const T& x, const T& y) {
  using namespace vigor::kernels;
  switch (fn) {
    case Fn::kSin:
      return sin(x);
    case Fn::kCos:
      return cos(x);
    case Fn::kTan:
      return tan(x);
    case Fn::kAsin:
      return asin(x);
    case Fn::kAcos:
      return acos(x);
    case Fn::kAtan:
      return atan(x);
    case Fn::kSinh:
      return sinh(x);
    case Fn::kCosh:
      return cosh(x);
    case Fn::kTanh:
      return tanh(x);
    case Fn::kExp:
      return exp(x);
    case Fn::kLog:
      return log(x);
    case Fn::kSqrt:
      return sqrt(x);
    case Fn::kAbs:
      return abs(x);
    case Fn::kAtan2:
      return atan2(x, y);
    case Fn::kPow:
      return pow(x, y);
    case Fn::kMin:
      return min_of(x, y);
    case Fn::kMax:
      return max_of(x, y);
  }
  return x;
}

/// The value of `f` at `at`, with parameter values `params` (Scope::params order).
template <class T>
T evaluate(const Formula& f, const Point<T>& at, const double* params) {
  std::vector<T> val(f.nodes.size());
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    const Node& n = f.nodes[i];
    const T& a = n.a >= 0 ? val[n.a] : val[i];
    const T& b = n.b >= 0 ? val[n.b] : val[i];
    switch (n.op) {
      case Op::kNumber:
        val[i] = T(n.value);
        break;
      case Op::kParam:
        val[i] = T(params[n.index]);
        break;
      case Op::kTime:
        val[i] = at.t;
        break;
      case Op::kVariable:
        val[i] = (n.var == Var::kQ ? at.q : n.var == Var::kV ? at.v : at.p)[n.index];
        break;
      case Op::kNeg:
        val[i] = -a;
        break;
      case Op::kAdd:
        val[i] = a + b;
        break;
      case Op::kSub:
        val[i] = a - b;
        break;
      case Op::kMul:
        val[i] = a * b;
        break;
      case Op::kDiv:
        val[i] = a / b;
        break;
      case Op::kPow: {
        int k = 0;
        val[i] = integer_exponent(f, n.b, k) ? kernels::ipow(a, k) : apply_function(Fn::kPow, a, b);
        break;
      }
      case Op::kCall:
        val[i] = apply_function(n.fn, a, b);
        break;
    }
  }
  return val.back();
}

}  // namespace vigor::host::formula
