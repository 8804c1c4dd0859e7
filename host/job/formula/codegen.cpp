/// @file codegen.cpp
/// @brief The model header of a formula model (see codegen.hpp).
#include "host/job/formula/codegen.hpp"

#include <cstdio>
#include <sstream>

namespace vigor::host::formula {

namespace {

/// An exact literal of a double: hexadecimal, so no decimal rounding on either side.
std::string literal(double x) {
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
    "    using kernels::formula_abs; using kernels::formula_min; using kernels::formula_max;\n";

/// One line per node of `f`, its temporaries named <prefix>N; returns the root's expression as
/// a T.
std::string emit(std::ostringstream& o, const Formula& f, const std::string& prefix) {
  const auto name = [&](int i) { return prefix + std::to_string(i); };
  // An operand of a two-argument function beside one that varies is made a T, so both have one
  // type (pow(Real, T) has no overload).
  const auto as_t = [&](int i, bool other_varies) {
    return other_varies && !f.varies[i] ? "T(" + name(i) + ")" : name(i);
  };
  static const char* kBinary[] = {"", "", "", "", "", " + ", " - ", " * ", " / "};
  // The exponent of an integer power is part of the ipow call, not a value of its own (a tree
  // node has one parent, so nothing else reads it).
  std::vector<bool> skip(f.nodes.size());
  for (const Node& n : f.nodes) {
    int e = 0;
    if (n.op == Op::kPow && integer_exponent(f, n.b, e)) {
      skip[n.b] = true;
      if (f.nodes[n.b].op == Op::kNeg) skip[f.nodes[n.b].a] = true;
    }
  }
  for (std::size_t k = 0; k < f.nodes.size(); ++k) {
    const int i = int(k);
    const Node& n = f.nodes[k];
    if (skip[k]) continue;
    o << "    const " << (f.varies[i] ? "T " : "Real ") << name(i) << " = ";
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
        o << (n.var == Var::kQ ? "q" : n.var == Var::kV ? "v" : "p") << "[" << n.index << "]";
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
      case Op::kPow: {
        int e = 0;
        if (integer_exponent(f, n.b, e))
          o << "ipow(" << name(n.a) << ", " << e << ")";
        else
          o << "pow(" << as_t(n.a, f.varies[n.b]) << ", " << name(n.b) << ")";
        break;
      }
      case Op::kCall:
        if (n.b < 0)
          o << callee(n.fn) << "(" << name(n.a) << ")";
        else
          o << callee(n.fn) << "(" << as_t(n.a, f.varies[n.b]) << ", " << as_t(n.b, f.varies[n.a])
            << ")";
        break;
    }
    o << ";\n";
  }
  const std::string root = name(f.root());
  return f.varies[f.root()] ? root : "T(" + root + ")";
}

/// `count` results of the formulas `fs` into a kernels::Vec<T, size> named r.
void emit_vector(std::ostringstream& o, const std::vector<Formula>& fs, const std::string& size) {
  o << "    kernels::Vec<T, " << size << "> r;\n";
  for (std::size_t j = 0; j < fs.size(); ++j) {
    const std::string root = emit(o, fs[j], "f" + std::to_string(j) + "_");
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

std::string model_header(const ModelSpec& spec, const std::string& struct_name) {
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
  if (spec.kind == ModelSpec::Kind::kSeparable) emit_inv_mass(o, spec);
  emit_functions(o, spec);
  o << "};\n\n}  // namespace vigor::formula_models\n";
  return o.str();
}

}  // namespace vigor::host::formula
