/// @file codegen.cpp
/// @brief The model header of a formula model (see codegen.hpp).
#include "host/job/formula/codegen.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace vigor::host::formula {

namespace {

/// `prefix` followed by the decimal digits of i: "t3". Appended rather than written
/// `"t" + std::to_string(i)`, which GCC 12 warns about wrongly (-Wrestrict, its bug 105329).
template <class Int>
std::string numbered(const char* prefix, Int i) {
  std::string s(prefix);
  s += std::to_string(i);
  return s;
}

/// An exact literal of a double: hexadecimal, so no decimal rounding on either side. A number
/// folded at generation time may overflow (1/x of a tiny x): infinities and NaN are written as
/// the quotients that make them, since the hexadecimal form has no spelling for them.
std::string literal(double x) {
  if (std::isnan(x)) return "(Real(0) / Real(0))";
  if (std::isinf(x)) return x > 0 ? "(Real(1) / Real(0))" : "(Real(-1) / Real(0))";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", x);
  return std::string("Real(") + buf + ")";
}

/// What each function of the language calls: abs, min and max choose lane by lane on SIMD packs
/// (kernels/formula_math.hpp); the others are the functions of kernels/core/math.hpp.
const char* callee(Fn fn) {
  switch (fn) {
    case Fn::kAbs:
      return "formula_abs";
    case Fn::kMin:
      return "formula_min";
    case Fn::kMax:
      return "formula_max";
    default:
      return function_name(fn);
  }
}

/// The block-scope using-declarations every generated function starts with: the math of
/// kernels/core/math.hpp for float and double, with the Dual and Pack overloads found by
/// argument-dependent lookup (how the models in models/ call them).
const char* kUsings =
    "    using kernels::sin; using kernels::cos; using kernels::tan; using kernels::asin;\n"
    "    using kernels::acos; using kernels::atan; using kernels::sinh; using kernels::cosh;\n"
    "    using kernels::tanh; using kernels::exp; using kernels::log; using kernels::sqrt;\n"
    "    using kernels::atan2; using kernels::pow; using kernels::ipow;\n"
    "    using kernels::formula_abs; using kernels::formula_min; using kernels::formula_max;\n"
    "    using kernels::formula_abs_adjoint; using kernels::formula_min_adjoint;\n"
    "    using kernels::formula_max_adjoint;\n";

/// The names of the forward temporaries of a tree: <prefix>N for node N.
struct Temporaries {
  const Formula& f;
  std::string prefix;

  std::string operator()(int i) const { return numbered(prefix.c_str(), i); }
  /// Node i as an operand of a two-argument function: made a T beside an operand that varies, so
  /// both have one type (pow(Real, T) has no overload).
  std::string as_t(int i, bool other_varies) const {
    return other_varies && !f.varies[i] ? "T(" + (*this)(i) + ")" : (*this)(i);
  }
};

/// The nodes that get no line of their own: the exponent of an integer power is part of the ipow
/// call, not a value of its own (a tree node has one parent, so nothing else reads it).
std::vector<bool> ipow_exponents(const Formula& f) {
  std::vector<bool> skip(f.nodes.size());
  for (const Node& n : f.nodes) {
    int e = 0;
    if (n.op == Op::kPow && integer_exponent(f, n.b, e)) {
      skip[n.b] = true;
      if (f.nodes[n.b].op == Op::kNeg) skip[f.nodes[n.b].a] = true;
    }
  }
  return skip;
}

/// The array a variable is read from: q, v or p.
const char* variable_array(Var var) { return var == Var::kQ ? "q" : var == Var::kV ? "v" : "p"; }

/// x^y: kernels::ipow for an integer literal exponent, else pow.
void write_power(std::ostringstream& o, const Formula& f, const Node& n, const Temporaries& name) {
  int e = 0;
  if (integer_exponent(f, n.b, e))
    o << "ipow(" << name(n.a) << ", " << e << ")";
  else
    o << "pow(" << name.as_t(n.a, f.varies[n.b]) << ", " << name(n.b) << ")";
}

/// A call of a function of one or two arguments.
void write_call(std::ostringstream& o, const Formula& f, const Node& n, const Temporaries& name) {
  if (n.b < 0)
    o << callee(n.fn) << "(" << name(n.a) << ")";
  else
    o << callee(n.fn) << "(" << name.as_t(n.a, f.varies[n.b]) << ", "
      << name.as_t(n.b, f.varies[n.a]) << ")";
}

/// The value of node `n`, from the temporaries of its operands.
void write_node(std::ostringstream& o, const Formula& f, const Node& n, const Temporaries& name) {
  static const char* kBinary[] = {"", "", "", "", "", " + ", " - ", " * ", " / "};
  switch (n.op) {
    case Op::kNumber:
      o << literal(n.value);
      break;
    case Op::kParam:
      o << "c[" << n.index << "]";
      break;
    case Op::kTime:
      o << "t";
      break;
    case Op::kVariable:
      o << variable_array(n.var) << "[" << n.index << "]";
      break;
    case Op::kNeg:
      o << "-" << name(n.a);
      break;
    case Op::kAdd:
    case Op::kSub:
    case Op::kMul:
    case Op::kDiv:
      o << name(n.a) << kBinary[int(n.op)] << name(n.b);
      break;
    case Op::kPow:
      write_power(o, f, n, name);
      break;
    case Op::kCall:
      write_call(o, f, n, name);
      break;
  }
}

/// One line per node of `f`, its temporaries named <prefix>N; returns the root's expression as
/// a T.
std::string emit(std::ostringstream& o, const Formula& f, const std::string& prefix) {
  const Temporaries name{f, prefix};
  const std::vector<bool> skip = ipow_exponents(f);
  for (std::size_t k = 0; k < f.nodes.size(); ++k) {
    const int i = int(k);
    if (skip[k]) continue;
    o << "    const " << (f.varies[i] ? "T " : "Real ") << name(i) << " = ";
    write_node(o, f, f.nodes[k], name);
    o << ";\n";
  }
  const std::string root = name(f.root());
  return f.varies[f.root()] ? root : "T(" + root + ")";
}

/// The adjoint of a node during the reverse sweep, kept as a product until a leaf (a q) takes it:
/// `scale` (the numbers met on the way — the 1/2 of q0^2/2, the 3 of q1^3 — multiplied at
/// generation time), the factors that do not vary (parameters: their product is loop-invariant and
/// the compiler hoists it) and those that do. So a term costs what a hand-written gradient's does
/// (2 a x y: one product of q's times the hoisted 2 a), and the seed, sums and negations emit
/// nothing. At most one adjoint per node: a tree node has one parent.
struct Adjoint {
  bool set = false;
  double scale = 1.0;
  std::vector<std::string> fixed;    ///< factors that do not vary (Real)
  std::vector<std::string> varying;  ///< factors that vary (T)
};

/// The adjoint's value as a T expression: the varying factors left to right (so the terms of
/// one subtree share their leading products), times the Real part.
std::string adjoint_value(const Adjoint& a) {
  std::string fixed;
  if (a.scale != 1.0 && a.scale != -1.0) fixed = literal(a.scale);
  for (const std::string& r : a.fixed) fixed += (fixed.empty() ? "" : " * ") + r;
  std::string v;
  for (const std::string& t : a.varying) v = v.empty() ? t : "(" + v + " * " + t + ")";
  const std::string sign = a.scale == -1.0 ? "-" : "";
  if (v.empty()) return sign + "T(" + (fixed.empty() ? std::string("Real(1)") : fixed) + ")";
  return sign + (fixed.empty() ? v : "(" + v + " * (" + fixed + "))");
}

/// adjoint * k. Numbers fold into the scale unless the product would leave the normal range (a
/// formula like 1e-300 * q0^2 / 1e-310 is finite, its folded factors are not): then k stays a
/// factor.
Adjoint scaled(Adjoint a, double k) {
  const double folded = a.scale * k;
  if (std::isnormal(folded) || k == 0)
    a.scale = folded;
  else
    a.fixed.push_back(literal(k));
  return a;
}

/// Whether `e` is a name (t3, a0), not an expression to compute once.
bool plain_name(const std::string& e) {
  for (char ch : e)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') return false;
  return true;
}

/// A node met by the reverse sweep: the node, its adjoint, and the temporaries of its operands
/// (x, y: "" where it has none) and of its own value (r).
struct Step {
  const Node& n;
  Adjoint adjoint;
  std::string x, y, r;
};

/// The gradient of the tree `f` (the potential) with respect to q into g, by reverse accumulation
/// over the tree after its forward lines (emit(), prefix `t`). Only what is not structurally zero
/// is emitted: no partial for a node that does not vary, no term for a q a subtree does not
/// contain, no product with a number that is known when generating — all of which forward-mode
/// duals, under IEEE arithmetic the compiler may not simplify, compute in full.
class ReverseSweep {
 public:
  ReverseSweep(std::ostringstream& o, const Formula& f, int dof)
      : o_(o), f_(f), name_{f, "t"}, adj_(f.nodes.size()), terms_(dof) {}

  void run() {
    adj_[f_.root()] = Adjoint{true, 1.0, {}, {}};
    for (int i = f_.root(); i >= 0; --i)
      if (f_.varies[i] && adj_[i].set) visit(i);
    write_gradient();
  }

 private:
  std::ostringstream& o_;
  const Formula& f_;
  const Temporaries name_;  ///< the forward lines' temporaries
  int count_ = 0;           ///< the sweep's own temporaries, a0, a1, … written so far
  std::vector<Adjoint> adj_;
  std::vector<std::vector<std::string>> terms_;  ///< the terms of each q's partial

  /// A line computing `expr` into the next temporary aN; returns its name.
  std::string temp(const std::string& expr) {
    const std::string n = numbered("a", count_++);
    o_ << "    const T " << n << " = " << expr << ";\n";
    return n;
  }
  /// adjoint * factor (varying or not) * k; a varying factor that is not a plain name is
  /// computed once, into a temporary, however many terms it reaches.
  Adjoint times(Adjoint a, const std::string& factor, bool varies, double k = 1.0) {
    a = scaled(a, k);
    if (!varies)
      a.fixed.push_back(factor);
    else
      a.varying.push_back(plain_name(factor) ? factor : temp(factor));
    return a;
  }
  /// A new adjoint k * temp(expr): for the rules that are not products (divisions, choices).
  Adjoint fresh(const std::string& expr, double k = 1.0) {
    return scaled(Adjoint{true, 1.0, {}, {temp(expr)}}, k);
  }
  Adjoint divided(const Adjoint& a, const std::string& divisor, double k = 1.0) {
    return fresh(adjoint_value(a) + " / " + divisor, k);
  }
  /// Whether node i is a number, and which (into v).
  bool number(int i, double& v) const {
    if (f_.nodes[i].op != Op::kNumber) return false;
    v = f_.nodes[i].value;
    return true;
  }
  /// Passes an adjoint down to a child; one that does not vary needs none.
  void give(int child, const Adjoint& a) {
    if (f_.varies[child]) adj_[child] = a;
  }

  /// Passes node i's adjoint to its operands by the node's derivative rule.
  void visit(int i) {
    const Node& n = f_.nodes[i];
    const Step s{n, adj_[i], n.a >= 0 ? name_(n.a) : "", n.b >= 0 ? name_(n.b) : "", name_(i)};
    switch (n.op) {
      case Op::kVariable:
        if (n.var == Var::kQ) terms_[n.index].push_back(adjoint_value(s.adjoint));
        break;
      case Op::kNumber:
      case Op::kParam:
      case Op::kTime:
        break;
      case Op::kNeg:
        give(n.a, scaled(s.adjoint, -1));
        break;
      case Op::kAdd:
        give(n.a, s.adjoint);
        give(n.b, s.adjoint);
        break;
      case Op::kSub:
        give(n.a, s.adjoint);
        give(n.b, scaled(s.adjoint, -1));
        break;
      case Op::kMul:
        product_rule(s);
        break;
      case Op::kDiv:
        quotient_rule(s);
        break;
      case Op::kPow:
        power_rule(s);
        break;
      case Op::kCall:
        function_rule(s, n.fn);
        break;
    }
  }

  /// d(x y) = y dx + x dy; a number operand folds into the scale.
  void product_rule(const Step& s) {
    const Node& n = s.n;
    double v = 0;
    if (f_.varies[n.a])
      give(n.a, number(n.b, v) ? scaled(s.adjoint, v) : times(s.adjoint, s.y, f_.varies[n.b]));
    if (f_.varies[n.b])
      give(n.b, number(n.a, v) ? scaled(s.adjoint, v) : times(s.adjoint, s.x, f_.varies[n.a]));
  }

  /// d(x / y) = dx / y - (x / y) dy / y; a number divisor folds in as its inverse, where that is
  /// normal.
  void quotient_rule(const Step& s) {
    const Node& n = s.n;
    double v = 0;
    if (f_.varies[n.a])
      give(n.a, number(n.b, v) && std::isnormal(1 / v) ? scaled(s.adjoint, 1 / v)
                                                       : divided(s.adjoint, s.y));
    if (f_.varies[n.b]) give(n.b, times(s.adjoint, "(" + s.r + " / " + s.y + ")", true, -1));
  }

  /// x^e for an integer literal e (written ipow): e x^(e-1), nothing for x^0; any other x^y is
  /// the function pow.
  void power_rule(const Step& s) {
    int e = 0;
    if (!integer_exponent(f_, s.n.b, e)) {
      function_rule(s, Fn::kPow);
      return;
    }
    if (e == 1)
      give(s.n.a, s.adjoint);
    else if (e == 2)
      give(s.n.a, times(s.adjoint, s.x, true, 2));
    else if (e != 0)
      give(s.n.a, times(s.adjoint, "ipow(" + s.x + ", " + std::to_string(e - 1) + ")", true, e));
  }

  /// The rules of the functions: one each for those of two arguments, one table for the others.
  void function_rule(const Step& s, Fn fn) {
    if (fn == Fn::kAtan2)
      atan2_rule(s);
    else if (fn == Fn::kPow)
      pow_rule(s);
    else if (fn == Fn::kMin || fn == Fn::kMax)
      min_max_rule(s, fn == Fn::kMin ? "formula_min_adjoint" : "formula_max_adjoint");
    else
      unary_function_rule(s, fn);
  }

  /// d f(x) = f'(x) dx for the functions of one argument; tan, tanh, exp and sqrt take their
  /// derivative from their value r.
  void unary_function_rule(const Step& s, Fn fn) {
    const Adjoint& A = s.adjoint;
    const std::string &x = s.x, &r = s.r;
    const int a = s.n.a;
    switch (fn) {
      case Fn::kSin:
        give(a, times(A, "cos(" + x + ")", true));
        break;
      case Fn::kCos:
        give(a, times(A, "sin(" + x + ")", true, -1));
        break;
      case Fn::kTan:
        give(a, times(A, "(Real(1) + " + r + " * " + r + ")", true));
        break;
      case Fn::kAsin:
        give(a, divided(A, "sqrt(Real(1) - " + x + " * " + x + ")"));
        break;
      case Fn::kAcos:
        give(a, divided(A, "sqrt(Real(1) - " + x + " * " + x + ")", -1));
        break;
      case Fn::kAtan:
        give(a, divided(A, "(Real(1) + " + x + " * " + x + ")"));
        break;
      case Fn::kSinh:
        give(a, times(A, "cosh(" + x + ")", true));
        break;
      case Fn::kCosh:
        give(a, times(A, "sinh(" + x + ")", true));
        break;
      case Fn::kTanh:
        give(a, times(A, "(Real(1) - " + r + " * " + r + ")", true));
        break;
      case Fn::kExp:
        give(a, times(A, r, true));
        break;
      case Fn::kLog:
        give(a, divided(A, x));
        break;
      case Fn::kSqrt:
        give(a, divided(A, r, 0.5));
        break;
      case Fn::kAbs:
        give(a, fresh("formula_abs_adjoint(" + x + ", " + adjoint_value(A) + ")"));
        break;
      default:  // the functions of two arguments: function_rule
        break;
    }
  }

  /// atan2(y = a, x = b): (x dy - y dx) / (x^2 + y^2).
  void atan2_rule(const Step& s) {
    const Node& n = s.n;
    const std::string ta = name_.as_t(n.a, true), tb = name_.as_t(n.b, true);
    const std::string d = temp(ta + " * " + ta + " + " + tb + " * " + tb);
    if (f_.varies[n.a]) give(n.a, times(s.adjoint, "(" + tb + " / " + d + ")", true));
    if (f_.varies[n.b]) give(n.b, times(s.adjoint, "(" + ta + " / " + d + ")", true, -1));
  }

  /// a^b = exp(b log a): d a^b = b a^(b-1) da + a^b log(a) db.
  void pow_rule(const Step& s) {
    const Node& n = s.n;
    if (f_.varies[n.a])
      give(n.a, times(s.adjoint,
                      "(" + s.y + " * pow(" + name_.as_t(n.a, f_.varies[n.b]) + ", " + s.y +
                          " - Real(1)))",
                      true));
    if (f_.varies[n.b]) give(n.b, times(s.adjoint, "(" + s.r + " * log(" + s.x + "))", true));
  }

  /// min and max pass the adjoint to the operand they choose, lane by lane (`which`, of
  /// kernels/formula_math.hpp, given the operand's position).
  void min_max_rule(const Step& s, const std::string& which) {
    const Node& n = s.n;
    const std::string ta = name_.as_t(n.a, f_.varies[n.b]), tb = name_.as_t(n.b, f_.varies[n.a]);
    for (int k = 0; k < 2; ++k)
      if (f_.varies[k == 0 ? n.a : n.b])
        give(k == 0 ? n.a : n.b, fresh(which + "(" + ta + ", " + tb + ", " +
                                       adjoint_value(s.adjoint) + ", " + std::to_string(k) + ")"));
  }

  /// g[j] = the sum of the terms q_j took (T(0) for a q the tree does not contain).
  void write_gradient() {
    for (int j = 0; j < int(terms_.size()); ++j) {
      std::string sum;
      for (const std::string& t : terms_[j]) sum += (sum.empty() ? "" : " + ") + t;
      o_ << "    g[" << j << "] = " << (sum.empty() ? "T(0)" : sum) << ";\n";
    }
  }
};

/// The lines of potential_gradient after the forward lines: see ReverseSweep.
void emit_gradient(std::ostringstream& o, const Formula& f, int dof) {
  ReverseSweep(o, f, dof).run();
}

/// `count` results of the formulas `fs` into a kernels::Vec<T, size> named r.
void emit_vector(std::ostringstream& o, const std::vector<Formula>& fs, const std::string& size) {
  o << "    kernels::Vec<T, " << size << "> r;\n";
  for (std::size_t j = 0; j < fs.size(); ++j) {
    const std::string root = emit(o, fs[j], numbered("f", j) + "_");
    o << "    r[" << j << "] = " << root << ";\n";
  }
  o << "    return r;\n";
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "\"" : ", \"") + n + "\"";
  return s;
}

void emit_traits(std::ostringstream& o, const ModelSpec& spec) {
  const bool separable = spec.kind == ModelSpec::Kind::kSeparable;
  o << "  static constexpr const char* kName = \"" << spec.name << "\";\n"
    << "  static constexpr const char* kDescription = \"model from formulas in the job file ("
    << (separable ? "potential" : "lagrangian") << ", dof " << spec.dof << ")\";\n"
    << "  static constexpr int dof = " << spec.dof << ";\n";
  o << "  static constexpr std::array<kernels::ParamSpec, " << spec.params.size()
    << "> kParams{{\n";
  for (const auto& p : spec.params)
    o << "      {\"" << p << "\", 0.0, kernels::Rule::kFinite, \"formula parameter\"},\n";
  o << "  }};\n";
  o << "  static constexpr std::array<const char*, " << 2 * spec.dof << "> kStateNames{{"
    << quoted_list(spec.state_names) << "}};\n";
  if (!spec.constraints.empty())
    o << "  static constexpr int kConstraints = " << spec.constraints.size() << ";\n";
  if (!spec.momentum_maps.empty())
    o << "  static constexpr int kMomentumMaps = " << spec.momentum_maps.size() << ";\n"
      << "  static constexpr std::array<const char*, kMomentumMaps> kMomentumNames{{"
      << quoted_list(spec.momentum_names) << "}};\n";
  const std::size_t k = spec.params.size();
  o << "\n  Real c[" << (k > 0 ? k : 1) << "];  ///< the parameters, in kParams order\n\n";
  o << "  static "
    << "Self"
    << " from_params([[maybe_unused]] const double* v) {\n"
    << "    Self m{};\n";
  for (std::size_t i = 0; i < k; ++i) o << "    m.c[" << i << "] = Real(v[" << i << "]);\n";
  o << "    return m;\n  }\n";
}

void emit_inv_mass(std::ostringstream& o, const ModelSpec& spec) {
  bool unit = true;
  for (double m : spec.masses) unit = unit && m == 1.0;
  if (unit) {
    o << "\n  VIGOR_HD VIGOR_INLINE Real inv_mass(int) const { return Real(1); }\n";
    return;
  }
  o << "\n  VIGOR_HD VIGOR_INLINE Real inv_mass(int i) const {\n    switch (i) {\n";
  for (int i = 0; i + 1 < spec.dof; ++i)
    o << "      case " << i << ": return " << literal(1.0 / spec.masses[i]) << ";\n";
  o << "      default: return " << literal(1.0 / spec.masses[spec.dof - 1]) << ";\n    }\n  }\n";
}

void emit_functions(std::ostringstream& o, const ModelSpec& spec) {
  const std::string vec = "const kernels::Vec<T, dof>& ";
  o << "\n  template <class T>\n";
  if (spec.kind == ModelSpec::Kind::kSeparable) {
    o << "  VIGOR_HD VIGOR_INLINE T potential(" << vec << "q) const {\n" << kUsings;
  } else {
    o << "  VIGOR_HD VIGOR_INLINE T lagrangian(" << vec << "q, " << vec << "v) const {\n"
      << kUsings << "    static_cast<void>(v);\n";
  }
  o << "    static_cast<void>(q);\n";
  const std::string root = emit(o, spec.energy_term, "t");
  o << "    return " << root << ";\n  }\n";
  if (spec.kind == ModelSpec::Kind::kSeparable) {
    // The force's gradient, written out (kernels/core/hamiltonian.hpp uses it in place of AD).
    o << "\n  template <class T>\n  VIGOR_HD VIGOR_INLINE void potential_gradient(" << vec
      << "q, kernels::Vec<T, dof>& g) const {\n"
      << kUsings << "    static_cast<void>(q);\n";
    const std::string value = emit(o, spec.energy_term, "t");
    o << "    static_cast<void>(" << value << ");\n";
    emit_gradient(o, spec.energy_term, spec.dof);
    o << "  }\n";
  }
  if (!spec.constraints.empty()) {
    o << "\n  template <class T>\n  VIGOR_HD VIGOR_INLINE kernels::Vec<T, kConstraints> "
         "constraints("
      << vec << "q) const {\n"
      << kUsings << "    static_cast<void>(q);\n";
    emit_vector(o, spec.constraints, "kConstraints");
    o << "  }\n";
  }
  if (!spec.force.empty()) {
    o << "\n  template <class T>\n  VIGOR_HD VIGOR_INLINE kernels::Vec<T, dof> external_force("
      << vec << "q, " << vec << "v, T t) const {\n"
      << kUsings << "    static_cast<void>(q); static_cast<void>(v); static_cast<void>(t);\n";
    emit_vector(o, spec.force, "dof");
    o << "  }\n";
  }
  if (!spec.momentum_maps.empty()) {
    o << "\n  template <class T>\n  VIGOR_HD VIGOR_INLINE kernels::Vec<T, kMomentumMaps> "
         "momentum_map("
      << vec << "q, " << vec << "p) const {\n"
      << kUsings << "    static_cast<void>(q); static_cast<void>(p);\n";
    emit_vector(o, spec.momentum_maps, "kMomentumMaps");
    o << "  }\n";
  }
}

}  // namespace

std::string model_header(const ModelSpec& spec, const std::string& struct_name, bool tangent_maps) {
  std::ostringstream o;
  o << "// Generated by vigor from the formula model \"" << spec.name
    << "\" of a job file (host/job/formula/codegen.cpp); do not edit.\n"
    << "#pragma once\n\n#include <array>\n\n"
    << "#include \"kernels/core/hamiltonian.hpp\"\n#include \"kernels/core/math.hpp\"\n"
    << "#include \"kernels/core/specs.hpp\"\n#include \"kernels/core/vec.hpp\"\n"
    << "#include \"kernels/formula_math.hpp\"\n\n"
    << "namespace vigor::formula_models {\n\n"
    << "template <class Real>\nstruct " << struct_name << " {\n"
    << "  using Self = " << struct_name << ";\n";
  emit_traits(o, spec);
  if (!tangent_maps)
    o << "  static constexpr bool kTangentMaps = false;  ///< the job does not ask for them\n";
  if (spec.kind == ModelSpec::Kind::kSeparable) emit_inv_mass(o, spec);
  emit_functions(o, spec);
  o << "};\n\n}  // namespace vigor::formula_models\n";
  return o.str();
}

}  // namespace vigor::host::formula
