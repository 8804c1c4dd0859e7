/// @file formula.hpp
/// @brief The formula language of `model.formula` (DESIGN.md §4): its expression tree and its
/// parser.
///
/// A formula is parsed by this parser into a tree of nodes; code is generated from the tree
/// (host/job/formula/codegen.hpp) and never from the text, so a job file cannot put anything but
/// arithmetic into the generated source: every name is resolved here to a variable index, a
/// parameter index, `t` or `pi`, and every number to a double.
///
/// The language: numbers (`2`, `0.5`, `.5`, `1e-3`), the binary operators `+ - * / ^` (`^` binds
/// tighter than unary minus and groups to the right: `-x^2` is -(x^2), `2^3^2` is 2^9), unary
/// minus, parentheses, and the functions sin cos tan asin acos atan sinh cosh tanh exp log sqrt
/// abs (one argument) and atan2 pow min max (two). Names: q0 … q(n-1); v0 … (where the scope
/// allows velocities), p0 … (momenta), t (time), pi, and the model's parameters.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace vigor::host::formula {

/// Longest formula text, in characters, and deepest nesting (parentheses, function calls, unary
/// minus and `^` each open one level). Generous for any mechanical system written by hand; they
/// bound the parser's recursion and the generated code's size.
inline constexpr std::size_t kMaxLength = 10000;
inline constexpr int kMaxDepth = 100;

enum class Op { kNumber, kVariable, kParam, kTime, kNeg, kAdd, kSub, kMul, kDiv, kPow, kCall };

/// The functions of the language; kFunctionNames (formula.cpp) spells them in this order.
enum class Fn {
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kTanh,
  kExp,
  kLog,
  kSqrt,
  kAbs,  // unary
  kAtan2,
  kPow,
  kMin,
  kMax,  // binary
};
inline constexpr int kFunctionCount = int(Fn::kMax) + 1;
const char* function_name(Fn f);
int function_arity(Fn f);

/// A state variable's kind: position q, velocity v, momentum p.
enum class Var { kQ, kV, kP };

/// One node of a tree. Children precede their parents in Formula::nodes, so one forward pass
/// evaluates or translates a tree without recursion.
struct Node {
  Op op = Op::kNumber;
  Fn fn = Fn::kSin;    ///< kCall
  Var var = Var::kQ;   ///< kVariable
  int index = 0;       ///< kVariable: the variable's index; kParam: the parameter's
  double value = 0.0;  ///< kNumber (pi is the number pi)
  int a = -1, b = -1;  ///< operands (b: binary operators and two-argument functions)
  int column = 0;      ///< where the node starts in the text, from 1
};

struct Formula {
  std::vector<Node> nodes;  ///< the root is the last node
  /// Whether node i depends on a variable or t (otherwise on numbers and parameters only).
  std::vector<bool> varies;
  int root() const { return int(nodes.size()) - 1; }
};

/// What a formula may name.
struct Scope {
  int dof = 0;
  bool velocities = false;  ///< v0 … (lagrangian, force)
  bool momenta = false;     ///< p0 … (momentum maps)
  bool time = false;        ///< t (force)
  std::vector<std::string> params;
  /// Where the formula sits in the job, for the hint of a velocity or momentum used out of place.
  std::string what = "this formula";
};

/// A syntax or name error at `column` (from 1; one past the end for a formula that ends early).
class FormulaError : public std::runtime_error {
 public:
  FormulaError(int column, const std::string& what)
      : std::runtime_error("column " + std::to_string(column) + ": " + what), column_(column) {}
  int column() const { return column_; }

 private:
  int column_;
};

/// Parse `text` within `scope`; throws FormulaError.
Formula parse(const std::string& text, const Scope& scope);

/// Whether `name` is reserved by the language (a variable, t, pi or a function): a parameter may
/// not take it.
bool is_reserved_name(const std::string& name);

/// Integer powers up to this size are written as products (kernels::ipow); others call pow.
inline constexpr int kMaxIntegerPower = 64;

/// Whether node `e` (an exponent) is an integer literal n with |n| <= kMaxIntegerPower, written
/// `3` or `-3`: `x^n` is then kernels::ipow(x, n), the product the built-in models write.
bool integer_exponent(const Formula& f, int e, int& n);

/// The parameters a tree names (their indices in Scope::params, ascending, once each).
std::vector<int> params_used(const Formula& f);

}  // namespace vigor::host::formula
