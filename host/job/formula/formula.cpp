/// @file formula.cpp
/// @brief The formula parser: recursive descent over the grammar
///
///     sum     := product (("+" | "-") product)*
///     product := unary (("*" | "/") unary)*
///     unary   := "-" unary | power
///     power   := primary ("^" unary)?
///     primary := number | name | name "(" sum ("," sum)* ")" | "(" sum ")"
///
/// Sums and products are loops (a long sum does not deepen the recursion); every other rule
/// opens a nesting level, bounded by kMaxDepth.
#include "host/job/formula/formula.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numbers>

namespace vigor::host::formula {

namespace {

constexpr std::array<const char*, kFunctionCount> kFunctionNames{
    "sin", "cos", "tan",  "asin", "acos",  "atan", "sinh", "cosh", "tanh",
    "exp", "log", "sqrt", "abs",  "atan2", "pow",  "min",  "max"};

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// A character as a message shows it: printable ASCII in quotes, anything else as \xNN.
std::string show_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02X", u);
  return buf;
}

/// q12 -> (kQ, 12); false for anything else ("q", "q01", "qx", indices past 9 digits).
bool variable_name(const std::string& s, Var& var, int& index) {
  if (s.size() < 2 || s.size() > 10) return false;
  switch (s[0]) {
    case 'q':
      var = Var::kQ;
      break;
    case 'v':
      var = Var::kV;
      break;
    case 'p':
      var = Var::kP;
      break;
    default:
      return false;
  }
  if (s[1] == '0' && s.size() > 2) return false;
  index = 0;
  for (std::size_t k = 1; k < s.size(); ++k) {
    if (!is_digit(s[k])) return false;
    index = index * 10 + (s[k] - '0');
  }
  return true;
}

int function_index(const std::string& s) {
  for (int k = 0; k < kFunctionCount; ++k)
    if (s == kFunctionNames[k]) return k;
  return -1;
}

class Parser {
 public:
  Parser(const std::string& text, const Scope& scope) : s_(text), scope_(scope) {}

  Formula run() {
    if (s_.size() > kMaxLength)
      throw FormulaError(int(kMaxLength) + 1, "longer than " + std::to_string(kMaxLength) +
                                                  " characters (" + std::to_string(s_.size()) +
                                                  ")");
    skip_space();
    if (pos_ == s_.size()) throw FormulaError(1, "empty formula");
    sum(0);
    skip_space();
    if (pos_ != s_.size()) unexpected();
    f_.varies.resize(f_.nodes.size());
    for (std::size_t i = 0; i < f_.nodes.size(); ++i) {
      const Node& n = f_.nodes[i];
      f_.varies[i] = n.op == Op::kVariable || n.op == Op::kTime || (n.a >= 0 && f_.varies[n.a]) ||
                     (n.b >= 0 && f_.varies[n.b]);
    }
    return std::move(f_);
  }

 private:
  const std::string& s_;
  const Scope& scope_;
  std::size_t pos_ = 0;
  Formula f_;

  int column() const { return int(pos_) + 1; }
  void skip_space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  [[noreturn]] void unexpected() const {
    if (pos_ >= s_.size()) throw FormulaError(column(), "unexpected end of formula");
    throw FormulaError(column(), "unexpected " + show_char(s_[pos_]));
  }
  void enter(int depth) const {
    if (depth > kMaxDepth)
      throw FormulaError(column(), "nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  int add(Node n) {
    f_.nodes.push_back(n);
    return int(f_.nodes.size()) - 1;
  }
  int binary(Op op, int a, int b, int col) {
    Node n;
    n.op = op;
    n.a = a;
    n.b = b;
    n.column = col;
    return add(n);
  }

  int sum(int depth) {
    const int col = (skip_space(), column());
    int left = product(depth);
    for (;;) {
      if (accept('+'))
        left = binary(Op::kAdd, left, product(depth), col);
      else if (accept('-'))
        left = binary(Op::kSub, left, product(depth), col);
      else
        return left;
    }
  }
  int product(int depth) {
    const int col = (skip_space(), column());
    int left = unary(depth);
    for (;;) {
      if (accept('*'))
        left = binary(Op::kMul, left, unary(depth), col);
      else if (accept('/'))
        left = binary(Op::kDiv, left, unary(depth), col);
      else
        return left;
    }
  }
  int unary(int depth) {
    skip_space();
    const int col = column();
    if (pos_ < s_.size() && s_[pos_] == '-') {
      enter(depth + 1);
      ++pos_;
      Node n;
      n.op = Op::kNeg;
      n.a = unary(depth + 1);
      n.column = col;
      return add(n);
    }
    return power(depth);
  }
  int power(int depth) {
    skip_space();
    const int col = column();
    const int base = primary(depth);
    if (accept('^')) {
      enter(depth + 1);
      return binary(Op::kPow, base, unary(depth + 1), col);
    }
    return base;
  }
  int primary(int depth) {
    skip_space();
    if (pos_ >= s_.size()) unexpected();
    const char c = s_[pos_];
    if (c == '(') {
      enter(depth + 1);
      ++pos_;
      const int e = sum(depth + 1);
      if (!accept(')')) unexpected();
      return e;
    }
    if (is_digit(c) || c == '.') return number();
    if (is_name_start(c)) return name(depth);
    unexpected();
  }
  int number() {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
    }
    if (pos_ - start == 1 && s_[start] == '.') {
      pos_ = start;
      unexpected();
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      std::size_t k = pos_ + 1;
      if (k < s_.size() && (s_[k] == '+' || s_[k] == '-')) ++k;
      if (k >= s_.size() || !is_digit(s_[k])) {
        pos_ = k;
        throw FormulaError(column(), "exponent of a number needs digits");
      }
      while (k < s_.size() && is_digit(s_[k])) ++k;
      pos_ = k;
    }
    if (pos_ < s_.size() && is_name_start(s_[pos_]))
      throw FormulaError(column(), "a number followed by a name: write the product with '*'");
    Node n;
    n.op = Op::kNumber;
    n.column = int(start) + 1;
    const auto r = std::from_chars(s_.data() + start, s_.data() + pos_, n.value);
    if (r.ec != std::errc() || !std::isfinite(n.value))
      throw FormulaError(n.column, "number " + s_.substr(start, pos_ - start) +
                                       " is out of the range of a double");
    return add(n);
  }
  int name(int depth) {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
    const std::string id = s_.substr(start, pos_ - start);
    const int col = int(start) + 1;
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == '(') return call(id, col, depth);
    if (function_index(id) >= 0)
      throw FormulaError(col, id + " is a function: write " + id + "(...)");
    Node n;
    n.column = col;
    if (id == "pi") {
      n.op = Op::kNumber;
      n.value = std::numbers::pi;
      return add(n);
    }
    if (id == "t") {
      if (!scope_.time)
        throw FormulaError(col,
                           "t: the time appears only in force formulas, not in " + scope_.what);
      n.op = Op::kTime;
      return add(n);
    }
    if (const auto it = std::find(scope_.params.begin(), scope_.params.end(), id);
        it != scope_.params.end()) {
      n.op = Op::kParam;
      n.index = int(it - scope_.params.begin());
      return add(n);
    }
    if (variable_name(id, n.var, n.index)) {
      const char* kinds[] = {"q", "v", "p"};
      const std::string k = kinds[int(n.var)];
      if (n.var == Var::kV && !scope_.velocities)
        throw FormulaError(col, id +
                                    ": velocities appear only in lagrangian and force formulas, "
                                    "not in " +
                                    scope_.what);
      if (n.var == Var::kP && !scope_.momenta)
        throw FormulaError(
            col, id + ": momenta appear only in momentum_maps formulas, not in " + scope_.what);
      if (n.index >= scope_.dof)
        throw FormulaError(col, id + ": no such variable with dof " + std::to_string(scope_.dof) +
                                    " (" + k + "0 … " + k + std::to_string(scope_.dof - 1) + ")");
      n.op = Op::kVariable;
      return add(n);
    }
    std::string known;
    for (const auto& p : scope_.params) known += (known.empty() ? "" : ", ") + p;
    throw FormulaError(col, "unknown name '" + id +
                                "' (parameters: " + (known.empty() ? std::string("none") : known) +
                                "; give a parameter's value in model.params)");
  }
  int call(const std::string& id, int col, int depth) {
    const int fi = function_index(id);
    if (fi < 0) throw FormulaError(col, "unknown function '" + id + "'");
    enter(depth + 1);
    ++pos_;  // '('
    std::vector<int> args{sum(depth + 1)};
    while (accept(',')) args.push_back(sum(depth + 1));
    if (!accept(')')) unexpected();
    const Fn fn = Fn(fi);
    const int arity = function_arity(fn);
    if (int(args.size()) != arity)
      throw FormulaError(col, id + " takes " + std::to_string(arity) + " argument" +
                                  (arity == 1 ? "" : "s") + ", got " + std::to_string(args.size()));
    Node n;
    n.op = Op::kCall;
    n.fn = fn;
    n.a = args[0];
    n.b = arity == 2 ? args[1] : -1;
    n.column = col;
    return add(n);
  }
};

}  // namespace

const char* function_name(Fn f) { return kFunctionNames[int(f)]; }
int function_arity(Fn f) { return int(f) >= int(Fn::kAtan2) ? 2 : 1; }

Formula parse(const std::string& text, const Scope& scope) { return Parser(text, scope).run(); }

bool is_reserved_name(const std::string& name) {
  // Every q, v or p followed by digits, q01 included: a parameter so named would read as a typo
  // of a variable.
  return name == "t" || name == "pi" || function_index(name) >= 0 ||
         ((name[0] == 'q' || name[0] == 'v' || name[0] == 'p') && name.size() > 1 &&
          std::all_of(name.begin() + 1, name.end(), is_digit));
}

bool integer_exponent(const Formula& f, int e, int& n) {
  const Node* x = &f.nodes[e];
  const bool negative = x->op == Op::kNeg;
  if (negative) x = &f.nodes[x->a];
  if (x->op != Op::kNumber || x->value != std::floor(x->value) || x->value > kMaxIntegerPower)
    return false;
  n = int(x->value) * (negative ? -1 : 1);
  return true;
}

std::vector<int> params_used(const Formula& f) {
  std::vector<int> used;
  for (const Node& n : f.nodes)
    if (n.op == Op::kParam) used.push_back(n.index);
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  return used;
}

}  // namespace vigor::host::formula
