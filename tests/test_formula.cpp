// The formula language of model.formula (host/job/formula/): the parser's grammar and its errors,
// the reading of a formula model with every bad input named by its key, the interpreted energy,
// and what the code generator may and may not put into source.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>

#include "host/errors.hpp"
#include "host/job/formula/codegen.hpp"
#include "host/job/formula/evaluate.hpp"
#include "host/job/formula/formula.hpp"
#include "host/job/formula/model_spec.hpp"
#include "kernels/state.hpp"
#include "models/double_pendulum.hpp"
#include "models/henon_heiles.hpp"

namespace {

using namespace vigor::host;
namespace vf = vigor::host::formula;

vf::Scope scope(int dof, std::vector<std::string> params = {}) {
  vf::Scope s;
  s.dof = dof;
  s.params = std::move(params);
  s.what = "potential";
  return s;
}

double eval(const std::string& text, std::vector<double> q, std::vector<std::string> names = {},
            std::vector<double> values = {}) {
  const vf::Formula f = vf::parse(text, scope(int(q.size()), std::move(names)));
  vf::Point<double> at;
  at.q = q.data();
  return vf::evaluate(f, at, values.data());
}

/// The message of the FormulaError `text` raises (or "" when it parses).
std::string parse_error(const std::string& text, const vf::Scope& s) {
  try {
    vf::parse(text, s);
  } catch (const vf::FormulaError& e) {
    return e.what();
  }
  return "";
}
std::string parse_error(const std::string& text) { return parse_error(text, scope(2, {"a"})); }

TEST(FormulaParser, PrecedenceAndAssociativity) {
  EXPECT_EQ(eval("1 + 2*3", {0}), 7.0);
  EXPECT_EQ(eval("(1 + 2)*3", {0}), 9.0);
  EXPECT_EQ(eval("8/4/2", {0}), 1.0);       // left to right
  EXPECT_EQ(eval("2 - 3 - 4", {0}), -5.0);  // left to right
  EXPECT_EQ(eval("2^3^2", {0}), 512.0);     // right to left
  EXPECT_EQ(eval("-q0^2", {3}), -9.0);      // -(q0^2), as in mathematics
  EXPECT_EQ(eval("(-q0)^2", {3}), 9.0);
  EXPECT_EQ(eval("2^-1", {0}), 0.5);
  EXPECT_EQ(eval("- -q0", {3}), 3.0);
  EXPECT_EQ(eval("2*-q0", {3}), -6.0);
  EXPECT_EQ(eval("q0 * q1 + q1", {2, 5}), 15.0);
}

TEST(FormulaParser, NumbersNamesAndFunctions) {
  EXPECT_EQ(eval(".5 + 1.5e1 + 2E-1 + 3.", {0}), 0.5 + 15.0 + 0.2 + 3.0);
  EXPECT_EQ(eval("pi", {0}), std::numbers::pi);
  EXPECT_EQ(eval("a*q0 + b", {2}, {"a", "b"}, {3, 1}), 7.0);
  EXPECT_EQ(eval("  q0\t*\n2 ", {4}), 8.0);
  EXPECT_DOUBLE_EQ(eval("atan2(1, 1)", {0}), std::numbers::pi / 4);
  EXPECT_EQ(eval("min(q0, 2) + max(q0, 2)", {5}), 7.0);
  EXPECT_EQ(eval("pow(2, 10)", {0}), 1024.0);
  EXPECT_EQ(eval("abs(-q0)", {3}), 3.0);
  EXPECT_DOUBLE_EQ(eval("sqrt(q0) + exp(0) + log(1) + cos(0) + sin(0) + tan(0)", {4}), 4.0);
  EXPECT_DOUBLE_EQ(eval("asin(1) + acos(1) + atan(0) + sinh(0) + cosh(0) + tanh(0)", {0}),
                   std::numbers::pi / 2 + 1);
}

TEST(FormulaParser, IntegerPowersAreProductsLeftToRight) {
  // x^3 is x*x*x (two roundings), as models/henon_heiles.hpp writes y*y*y: not pow(x, 3).
  const double x = 1.1;
  EXPECT_EQ(eval("q0^3", {x}), x * x * x);
  EXPECT_EQ(eval("q0^-2", {x}), 1.0 / (x * x));
  EXPECT_EQ(eval("q0^0", {x}), 1.0);
  EXPECT_EQ(eval("q0^1.5", {x}), std::pow(x, 1.5));
}

TEST(FormulaParser, SyntaxErrorsNameTheColumn) {
  EXPECT_EQ(parse_error("(q0^2 + q1^2))"), "column 14: unexpected ')'");
  EXPECT_EQ(parse_error("q0 +"), "column 5: unexpected end of formula");
  EXPECT_EQ(parse_error(""), "column 1: empty formula");
  EXPECT_EQ(parse_error("   "), "column 1: empty formula");
  EXPECT_EQ(parse_error("q0 * * q1"), "column 6: unexpected '*'");
  EXPECT_EQ(parse_error("(q0"), "column 4: unexpected end of formula");
  EXPECT_EQ(parse_error("2q0"),
            "column 2: a number followed by a name: write the product with '*'");
  EXPECT_EQ(parse_error("1e+"), "column 4: exponent of a number needs digits");
  EXPECT_EQ(parse_error("1e999"), "column 1: number 1e999 is out of the range of a double");
  EXPECT_EQ(parse_error("."), "column 1: unexpected '.'");
  EXPECT_EQ(parse_error("q0 # q1"), "column 4: unexpected '#'");
  EXPECT_EQ(parse_error("q0 \xC3\xA9"), "column 4: unexpected \\xC3");
  EXPECT_EQ(parse_error("sin"), "column 1: sin is a function: write sin(...)");
  EXPECT_EQ(parse_error("sin(q0, q1)"), "column 1: sin takes 1 argument, got 2");
  EXPECT_EQ(parse_error("atan2(q0)"), "column 1: atan2 takes 2 arguments, got 1");
  EXPECT_EQ(parse_error("foo(q0)"), "column 1: unknown function 'foo'");
  EXPECT_EQ(parse_error("q0, q1"), "column 3: unexpected ','");
}

TEST(FormulaParser, NamesAreResolvedInTheirScope) {
  EXPECT_EQ(parse_error("q5 + q0", scope(2)),
            "column 1: q5: no such variable with dof 2 (q0 … q1)");
  EXPECT_EQ(parse_error("q0 + v0", scope(2)),
            "column 6: v0: velocities appear only in lagrangian and force formulas, not in "
            "potential");
  EXPECT_EQ(parse_error("p1", scope(2)),
            "column 1: p1: momenta appear only in momentum_maps formulas, not in potential");
  EXPECT_EQ(parse_error("t*q0", scope(2)),
            "column 1: t: the time appears only in force formulas, not in potential");
  EXPECT_EQ(parse_error("c*q0", scope(2, {"a", "b"})),
            "column 1: unknown name 'c' (parameters: a, b; give a parameter's value in "
            "model.params)");
  EXPECT_EQ(parse_error("q01", scope(2)),
            "column 1: unknown name 'q01' (parameters: none; give a parameter's value in "
            "model.params)");
  vf::Scope force = scope(1);
  force.velocities = force.time = true;
  EXPECT_EQ(parse_error("v0*t + q0", force), "");
  EXPECT_TRUE(vf::is_reserved_name("q0"));
  EXPECT_TRUE(vf::is_reserved_name("q01"));
  EXPECT_TRUE(vf::is_reserved_name("p12"));
  EXPECT_TRUE(vf::is_reserved_name("t"));
  EXPECT_TRUE(vf::is_reserved_name("pi"));
  EXPECT_TRUE(vf::is_reserved_name("atan2"));
  EXPECT_FALSE(vf::is_reserved_name("q"));
  EXPECT_FALSE(vf::is_reserved_name("qx"));
  EXPECT_FALSE(vf::is_reserved_name("omega"));
}

TEST(FormulaParser, LengthAndDepthAreBounded) {
  std::string sum = "q0";
  while (sum.size() + 5 <= vf::kMaxLength) sum += " + q0";
  EXPECT_EQ(parse_error(sum), "");  // a long flat sum is fine (no recursion per term)
  EXPECT_EQ(eval(sum, {1.0}), double((sum.size() + 3) / 5));
  EXPECT_EQ(parse_error(sum + "+q0+q0"),
            "column 10001: longer than 10000 characters (" + std::to_string(sum.size() + 6) + ")");
  const int depth = vf::kMaxDepth;
  EXPECT_EQ(parse_error(std::string(depth, '(') + "q0" + std::string(depth, ')')), "");
  EXPECT_EQ(parse_error(std::string(depth + 1, '(') + "q0" + std::string(depth + 1, ')')),
            "column 101: nested deeper than 100 levels");
  EXPECT_EQ(parse_error(std::string(depth + 1, '-') + "q0"),
            "column 101: nested deeper than 100 levels");
  std::string tower = "q0";
  for (int k = 0; k < depth + 1; ++k) tower += "^q0";
  EXPECT_NE(parse_error(tower).find("nested deeper than 100 levels"), std::string::npos);
  // Far past any bound: rejected by length, before any recursion.
  EXPECT_NE(parse_error(std::string(1 << 20, '(')).find("longer than"), std::string::npos);
}

/// The JobError message of reading `json`'s model, or "".
std::string spec_error(const std::string& json) {
  try {
    vf::read_model_spec(Json::parse(json));
  } catch (const JobError& e) {
    return e.what();
  }
  return "";
}

TEST(FormulaModelSpec, ReadsTheIssueExample) {
  const vf::ModelSpec s = vf::read_model_spec(Json::parse(R"({
      "formula": {"name": "my_henon_heiles", "dof": 2,
                  "potential": "(q0^2 + q1^2)/2 + a*q0^2*q1 + b*q1^3", "masses": [1, 1]},
      "params": {"a": 1.0, "b": -0.3333333333333333}})"));
  EXPECT_EQ(s.name, "my_henon_heiles");
  EXPECT_EQ(s.dof, 2);
  EXPECT_EQ(s.kind, vf::ModelSpec::Kind::kSeparable);
  EXPECT_EQ(s.params, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(s.state_names, (std::vector<std::string>{"q0", "q1", "p0", "p1"}));
  EXPECT_EQ(s.masses, (std::vector<double>{1, 1}));
}

TEST(FormulaModelSpec, BadInputNamesTheKey) {
  const auto err = [](const std::string& formula, const std::string& params = "{}") {
    return spec_error(R"({"formula": )" + formula + R"(, "params": )" + params + "}");
  };
  EXPECT_EQ(err(R"J({"dof": 2, "potential": "(q0^2 + q1^2))"})J"),
            "model.formula.potential: column 14: unexpected ')'");
  EXPECT_EQ(err(R"({"dof": 2, "potential": "q0 + q5"})"),
            "model.formula.potential: column 6: q5: no such variable with dof 2 (q0 … q1)");
  EXPECT_EQ(err(R"({"dof": 1, "potential": "a*q0"})"),
            "model.formula.potential: column 1: unknown name 'a' (parameters: none; give a "
            "parameter's value in model.params)");
  EXPECT_EQ(err(R"({"dof": 1, "potential": "q0"})", R"({"a": 2})"),
            "model.params.a: is not used by any formula of the model");
  EXPECT_EQ(err(R"({"dof": 1, "potential": "q0*sin"})", R"({"sin": 2})"),
            "model.params.sin: 'sin' is a name of the formula language (a variable, t, pi or a "
            "function); call the parameter something else");
  EXPECT_EQ(err(R"({"dof": 1, "potential": "a*q0"})", R"({"a": "x"})"),
            "model.params.a: must be a finite number, got \"x\"");
  EXPECT_EQ(err(R"({"dof": 1, "potential": "q0", "lagrangian": "v0"})"),
            "model.formula: give either potential or lagrangian, not both");
  EXPECT_EQ(err(R"({"dof": 1})"),
            "model.formula: needs a potential V(q) (with optional masses) or a lagrangian L(q, "
            "v)");
  EXPECT_EQ(err(R"({"dof": 0, "potential": "1"})").rfind("model.formula.dof: ", 0), 0u);
  EXPECT_EQ(err(R"({"dof": 33, "potential": "1"})").rfind("model.formula.dof: ", 0), 0u);
  EXPECT_EQ(err(R"({"dof": 2, "potential": "q0", "masses": [1]})"),
            "model.formula.masses: needs 2 masses (one per degree of freedom), got 1");
  EXPECT_EQ(err(R"({"dof": 2, "potential": "q0", "masses": [1, 0]})"),
            "model.formula.masses[1]: a mass must be > 0 (and its inverse finite), got 0");
  EXPECT_EQ(err(R"({"dof": 1, "potential": "q0", "masses": [1e-320]})"),
            "model.formula.masses[0]: a mass must be > 0 (and its inverse finite), got 1e-320");
  EXPECT_EQ(err(R"({"dof": 1, "lagrangian": "v0^2/2", "masses": [1]})"),
            "model.formula.masses: masses go with a potential; a lagrangian carries its own "
            "kinetic energy");
  EXPECT_EQ(err(R"({"dof": 1, "potential": 3})"),
            "model.formula.potential: must be a formula (a string), got 3");
  EXPECT_EQ(err(R"({"dof": 1, "potential": "q0", "colour": 1})")
                .rfind("model.formula.colour: unknown key of a formula model", 0),
            0u);
  EXPECT_EQ(err(R"({"dof": 1, "potential": "q0", "name": "My Model"})"),
            "model.formula.name: must be lower-case letters, digits and '_', starting with a "
            "letter (at most 64), got \"My Model\"");
  EXPECT_EQ(err(R"({"dof": 2, "potential": "q0", "constraints": ["q0", "q1"]})"),
            "model.formula.constraints: needs between 1 and dof - 1 = 1 constraints, got 2");
  EXPECT_EQ(err(R"({"dof": 2, "potential": "q0", "constraints": ["q0 + v1"]})"),
            "model.formula.constraints[0]: column 6: v1: velocities appear only in lagrangian "
            "and force formulas, not in constraints");
  EXPECT_EQ(err(R"({"dof": 2, "potential": "q0", "force": ["t"]})"),
            "model.formula.force: needs 2 generalised forces (one per degree of freedom), got 1");
  EXPECT_EQ(err(R"({"dof": 1, "potential": "q0", "momentum_maps": ["p0"]})")
                .rfind("model.formula.momentum_maps: must be an object", 0),
            0u);
  EXPECT_EQ(err(R"({"dof": 1, "potential": "q0", "momentum_maps": {"P": "p0 + v0"}})"),
            "model.formula.momentum_maps.P: column 6: v0: velocities appear only in lagrangian "
            "and force formulas, not in momentum_maps");
  EXPECT_EQ(err(R"({"dof": 1, "potential": "q0", "state_names": ["x"]})"),
            "model.formula.state_names: needs 2 names (the positions, then the momenta), got 1");
  EXPECT_EQ(err(R"({"dof": 1, "potential": "q0", "state_names": ["x", "x"]})"),
            "model.formula.state_names[1]: repeats the state name \"x\"");
  EXPECT_EQ(err(R"({"dof": 1, "potential": "q0", "state_names": ["x", "p\"); y"]})")
                .rfind("model.formula.state_names[1]: a state name must be", 0),
            0u);
  EXPECT_EQ(spec_error(R"({"name": "pendulum", "formula": {}})")
                .rfind("model.name: unknown key (a formula model has formula and params)", 0),
            0u);
}

TEST(FormulaModelSpec, EnergyOfAPotentialIsKineticPlusV) {
  const vf::ModelSpec s = vf::read_model_spec(Json::parse(R"({
      "formula": {"dof": 2, "potential": "(q0^2 + q1^2)/2 + a*q0^2*q1 + b*q1^3",
                  "masses": [1, 4]},
      "params": {"a": 1.0, "b": -0.3333333333333333}})"));
  const double x[4] = {0.1, -0.2, 0.3, 0.4};
  const double V = (0.01 + 0.04) / 2 + 0.1 * 0.1 * -0.2 - 0.3333333333333333 * -0.008;
  EXPECT_NEAR(vf::energy(s, s.param_values.data(), x), 0.3 * 0.3 / 2 + 0.4 * 0.4 / 8 + V, 1e-16);
  const double far[4] = {1e200, 0, 0, 0};
  EXPECT_TRUE(
      std::isnan(vf::energy(s, s.param_values.data(), far)));  // V overflows: not a finite energy
}

TEST(FormulaModelSpec, EnergyOfALagrangianIsItsLegendreTransform) {
  // The double pendulum's L is quadratic in v: H = v.p - L with p = dL/dv, compared with the
  // built-in model's energy (StateOps solves the same Legendre transform in its own way).
  const vf::ModelSpec s = vf::read_model_spec(Json::parse(R"J({
      "formula": {"dof": 2, "lagrangian": "(m1 + m2)*l1^2*v0^2/2 + m2*l2^2*v1^2/2 + m2*l1*l2*v0*v1*cos(q0 - q1) + (m1 + m2)*g*l1*cos(q0) + m2*g*l2*cos(q1)"},
      "params": {"m1": 1.0, "m2": 2.0, "l1": 1.5, "l2": 0.5, "g": 9.81}})J"));
  const double params[5] = {1.0, 2.0, 1.5, 0.5, 9.81};
  using M = vigor::models::DoublePendulum<double>;
  const M m = M::from_params(params);
  using Ops = vigor::kernels::StateOps<M, double>;
  for (const auto& x :
       {std::array<double, 4>{0.3, -1.2, 0.7, 2.5}, std::array<double, 4>{2.9, 0.1, -4.0, 1.0}}) {
    typename Ops::State st;
    Ops::load(m, x.data(), 1, st);
    const double ref = Ops::energy(m, st);
    // Both solve a 2x2 linear system for v: agreement to a few ulps of the largest term.
    EXPECT_NEAR(vf::energy(s, s.param_values.data(), x.data()), ref, 1e-13 * (1 + std::abs(ref)));
  }
}

TEST(FormulaCodegen, NoTextOfTheJobReachesTheSource) {
  // Attempts to break out of the generated C++: each is rejected by the parser or by the
  // reader of names, or becomes numbers and fixed operators only.
  for (const std::string bad :
       {R"("); system(\"touch x\"); //)", "#include <cstdlib>", "q0 \\\\ q1", "q0 // comment",
        "q0 /* c */", "q0; system(0)", "q0\\n#define x"}) {
    const std::string job = R"({"formula": {"dof": 1, "potential": )" + Json(bad).dump() + "}}";
    EXPECT_NE(spec_error(job), "") << bad;
  }
  const vf::ModelSpec s = vf::read_model_spec(Json::parse(R"J({
      "formula": {"name": "safe", "dof": 1, "potential": "k * q0^2 / 2 + 1e-3*sin(q0)",
                  "state_names": ["x", "px"]},
      "params": {"k": 2.5}})J"));
  const std::string src = vf::model_header(s);
  // Numbers appear as exact hexadecimal literals, never as the text the job wrote.
  EXPECT_EQ(src.find("1e-3"), std::string::npos);
  EXPECT_NE(src.find("Real(0x1.0624dd2f1a9fcp-10)"), std::string::npos);
  EXPECT_NE(src.find("ipow(t1, 2)"), std::string::npos) << src;
  EXPECT_NE(src.find("kName = \"safe\""), std::string::npos);
  EXPECT_NE(src.find("{{\"x\", \"px\"}}"), std::string::npos);
  EXPECT_EQ(src.find("2.5"), std::string::npos);  // parameter values are not compiled in
  EXPECT_EQ(src.find('\\'), std::string::npos);
}

}  // namespace
