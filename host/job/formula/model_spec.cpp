/// @file model_spec.cpp
/// @brief Reading `model.formula` and the interpreted energy of a formula model.
#include "host/job/formula/model_spec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "host/errors.hpp"
#include "host/job/formula/evaluate.hpp"

namespace vigor::host::formula {

namespace {

using namespace vigor::host::json;

bool is_identifier(const std::string& s, std::size_t max_length) {
  if (s.empty() || s.size() > max_length) return false;
  if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

/// A model's job name: lower-case letters, digits and underscores, starting with a letter.
bool is_model_name(const std::string& s) {
  if (s.empty() || s.size() > 64 || !(s[0] >= 'a' && s[0] <= 'z')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

Formula parse_at(const Json& v, const std::string& path, const Scope& scope) {
  if (!v.is_string()) fail(path, "must be a formula (a string), got " + show(v));
  try {
    return parse(v.get<std::string>(), scope);
  } catch (const FormulaError& e) {
    fail(path, e.what());
  }
}

std::vector<Formula> parse_list(const Json& v, const std::string& path, const Scope& scope) {
  array(v, path);
  std::vector<Formula> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(parse_at(v[i], at(path, i), scope));
  return out;
}

void read_name(const Json& formula, const std::string& path, ModelSpec& spec) {
  const Json* name = find(formula, "name");
  if (!name) return;
  spec.name = string_value(*name, join(path, "name"));
  if (!is_model_name(spec.name))
    fail(join(path, "name"),
         "must be lower-case letters, digits and '_', starting with a "
         "letter (at most 64), got " +
             show(*name));
}

void read_params(const Json& model, const std::string& path, ModelSpec& spec) {
  const Json* params = find(model, "params");
  if (!params) return;
  const std::string ppath = join(path, "params");
  object(*params, ppath);
  for (const auto& [key, value] : params->items()) {
    const std::string kpath = join(ppath, key);
    if (!is_identifier(key, 64))
      fail(kpath,
           "a formula parameter's name must be a letter or '_' followed by letters, "
           "digits or '_' (at most 64)");
    if (is_reserved_name(key))
      fail(kpath, "'" + key +
                      "' is a name of the formula language (a variable, t, pi or a "
                      "function); call the parameter something else");
    spec.params.push_back(key);
    spec.param_values.push_back(number(value, kpath));
  }
}

/// The model's energy term: a potential V(q) (a separable model) or a lagrangian L(q, v), exactly
/// one of them.
void read_energy_term(const Json& formula, const std::string& path, const Scope& base,
                      ModelSpec& spec) {
  const Json* potential = find(formula, "potential");
  const Json* lagrangian = find(formula, "lagrangian");
  if (!potential == !lagrangian)
    fail(path, std::string(potential ? "give either potential or lagrangian, not both"
                                     : "needs a potential V(q) (with optional masses) or a "
                                       "lagrangian L(q, v)"));
  if (potential) {
    Scope ps = base;
    ps.what = "potential";
    spec.energy_term = parse_at(*potential, join(path, "potential"), ps);
  } else {
    spec.kind = ModelSpec::Kind::kLagrangian;
    Scope ls = base;
    ls.velocities = true;
    ls.what = "lagrangian";
    spec.energy_term = parse_at(*lagrangian, join(path, "lagrangian"), ls);
  }
}

void read_masses(const Json& formula, const std::string& path, ModelSpec& spec) {
  spec.masses.assign(spec.dof, 1.0);
  const Json* masses = find(formula, "masses");
  if (!masses) return;
  const std::string mpath = join(path, "masses");
  if (spec.kind != ModelSpec::Kind::kSeparable)
    fail(mpath, "masses go with a potential; a lagrangian carries its own kinetic energy");
  array(*masses, mpath);
  if (int(masses->size()) != spec.dof)
    fail(mpath, "needs " + std::to_string(spec.dof) + " masses (one per degree of freedom), got " +
                    std::to_string(masses->size()));
  for (int i = 0; i < spec.dof; ++i) {
    const double m = number((*masses)[i], at(mpath, i));
    if (!(m > 0) || !std::isfinite(1.0 / m))
      fail(at(mpath, i), "a mass must be > 0 (and its inverse finite), got " + show((*masses)[i]));
    spec.masses[i] = m;
  }
}

void read_constraints(const Json& formula, const std::string& path, const Scope& base,
                      ModelSpec& spec) {
  const Json* constraints = find(formula, "constraints");
  if (!constraints) return;
  const std::string cpath = join(path, "constraints");
  Scope cs = base;
  cs.what = "constraints";
  spec.constraints = parse_list(*constraints, cpath, cs);
  if (spec.constraints.empty() || int(spec.constraints.size()) >= spec.dof)
    fail(cpath, "needs between 1 and dof - 1 = " + std::to_string(spec.dof - 1) +
                    " constraints, got " + std::to_string(spec.constraints.size()));
}

void read_force(const Json& formula, const std::string& path, const Scope& base, ModelSpec& spec) {
  const Json* force = find(formula, "force");
  if (!force) return;
  const std::string force_path = join(path, "force");
  Scope fs = base;
  fs.velocities = fs.time = true;
  fs.what = "force";
  spec.force = parse_list(*force, force_path, fs);
  if (int(spec.force.size()) != spec.dof)
    fail(force_path, "needs " + std::to_string(spec.dof) +
                         " generalised forces (one per degree of "
                         "freedom), got " +
                         std::to_string(spec.force.size()));
}

void read_state_names(const Json& formula, const std::string& path, ModelSpec& spec) {
  const Json* names = find(formula, "state_names");
  if (!names) {
    for (const char* prefix : {"q", "p"})
      for (int i = 0; i < spec.dof; ++i) spec.state_names.push_back(prefix + std::to_string(i));
    return;
  }
  const std::string npath = join(path, "state_names");
  array(*names, npath);
  if (int(names->size()) != 2 * spec.dof)
    fail(npath, "needs " + std::to_string(2 * spec.dof) +
                    " names (the positions, then the "
                    "momenta), got " +
                    std::to_string(names->size()));
  for (std::size_t i = 0; i < names->size(); ++i) {
    const std::string s = string_value((*names)[i], at(npath, i));
    if (!is_identifier(s, 32))
      fail(at(npath, i),
           "a state name must be a letter or '_' followed by letters, digits or "
           "'_' (at most 32), got " +
               show((*names)[i]));
    if (std::find(spec.state_names.begin(), spec.state_names.end(), s) != spec.state_names.end())
      fail(at(npath, i), "repeats the state name \"" + s + "\"");
    spec.state_names.push_back(s);
  }
}

void read_momentum_maps(const Json& formula, const std::string& path, const Scope& base,
                        ModelSpec& spec) {
  const Json* maps = find(formula, "momentum_maps");
  if (!maps) return;
  const std::string mpath = join(path, "momentum_maps");
  if (!maps->is_object())
    fail(mpath,
         "must be an object of named formulas in q and p, such as {\"Lz\": \"q0*p1 - "
         "q1*p0\"}, got " +
             show(*maps));
  Scope scope = base;
  scope.momenta = true;
  scope.what = "momentum_maps";
  for (const auto& [key, value] : maps->items()) {
    const std::string kpath = join(mpath, key);
    if (!is_identifier(key, 32))
      fail(kpath,
           "a momentum map's name must be a letter or '_' followed by letters, digits or "
           "'_' (at most 32)");
    spec.momentum_names.push_back(key);
    spec.momentum_maps.push_back(parse_at(value, kpath, scope));
  }
}

/// Every parameter must be used by some formula: an unused one is most likely a typo.
void check_params_used(const std::string& path, const ModelSpec& spec) {
  std::vector<bool> used(spec.params.size());
  const auto mark = [&](const Formula& f) {
    for (int k : params_used(f)) used[k] = true;
  };
  mark(spec.energy_term);
  for (const auto* list : {&spec.constraints, &spec.force, &spec.momentum_maps})
    for (const Formula& f : *list) mark(f);
  for (std::size_t k = 0; k < used.size(); ++k)
    if (!used[k])
      fail(join(join(path, "params"), spec.params[k]), "is not used by any formula of the model");
}

}  // namespace

ModelSpec read_model_spec(const Json& model, const std::string& path) {
  ModelSpec spec;
  object(model, path);
  check_keys(model, path, {"formula", "params"}, "key (a formula model has formula and params)");
  const std::string fpath = join(path, "formula");
  const Json& formula = object(require(model, path, "formula", "an object"), fpath);
  check_keys(formula, fpath,
             {"name", "dof", "potential", "lagrangian", "masses", "constraints", "force",
              "momentum_maps", "state_names"},
             "key of a formula model");
  read_name(formula, fpath, spec);
  spec.dof = int(integer(require(formula, fpath, "dof", "the number of degrees of freedom"),
                         join(fpath, "dof"), 1, kMaxDof));
  read_params(model, path, spec);
  // The names every formula may use; the readers add velocities, time or momenta where theirs do.
  Scope scope;
  scope.dof = spec.dof;
  scope.params = spec.params;
  read_energy_term(formula, fpath, scope, spec);
  read_masses(formula, fpath, spec);
  read_constraints(formula, fpath, scope, spec);
  read_force(formula, fpath, scope, spec);
  read_momentum_maps(formula, fpath, scope, spec);
  read_state_names(formula, fpath, spec);
  check_params_used(path, spec);
  return spec;
}

namespace {

using D1 = kernels::Dual<double, 1>;
using D2 = kernels::Dual<D1, 1>;

/// dL/dv_i and d2L/dv_i dv_j at (q, v) by nested duals: the outer seed on v_i, the inner on v_j.
void velocity_derivatives(const ModelSpec& spec, const double* params, const double* q,
                          const std::vector<double>& v, std::vector<double>& grad,
                          std::vector<double>& hess) {
  const int n = spec.dof;
  std::vector<D2> qd(n), vd(n);
  for (int k = 0; k < n; ++k) qd[k] = D2(D1(q[k]));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      for (int k = 0; k < n; ++k) {
        vd[k].v = D1(v[k]);
        vd[k].v.d[0] = k == j ? 1.0 : 0.0;
        vd[k].d[0] = D1(k == i ? 1.0 : 0.0);
      }
      Point<D2> at;
      at.q = qd.data();
      at.v = vd.data();
      const D2 L = evaluate(spec.energy_term, at, params);
      grad[i] = L.d[0].v;
      hess[i * n + j] = L.d[0].d[0];
    }
  }
}

/// Solve A x = b in place (b becomes x) by Gaussian elimination with partial pivoting; false
/// when A is singular.
bool solve(int n, std::vector<double>& A, std::vector<double>& b) {
  for (int c = 0; c < n; ++c) {
    int piv = c;
    for (int r = c + 1; r < n; ++r)
      if (std::abs(A[r * n + c]) > std::abs(A[piv * n + c])) piv = r;
    if (!(std::abs(A[piv * n + c]) > 0)) return false;
    if (piv != c) {
      for (int k = 0; k < n; ++k) std::swap(A[c * n + k], A[piv * n + k]);
      std::swap(b[c], b[piv]);
    }
    for (int r = c + 1; r < n; ++r) {
      const double f = A[r * n + c] / A[c * n + c];
      for (int k = c; k < n; ++k) A[r * n + k] -= f * A[c * n + k];
      b[r] -= f * b[c];
    }
  }
  for (int c = n - 1; c >= 0; --c) {
    for (int k = c + 1; k < n; ++k) b[c] -= A[c * n + k] * b[k];
    b[c] /= A[c * n + c];
  }
  return true;
}

/// The velocities of a (q, p) state: p_i / m_i (separable), or v solved from p = dL/dv by
/// Newton's method (one step is exact for an L quadratic in v; a few more cover the rest). False
/// when the solve fails or does not converge.
bool velocities(const ModelSpec& spec, const double* params, const double* state,
                std::vector<double>& v) {
  const int n = spec.dof;
  const double* q = state;
  const double* p = state + n;
  v.assign(n, 0.0);
  if (spec.kind == ModelSpec::Kind::kSeparable) {
    for (int i = 0; i < n; ++i) v[i] = p[i] / spec.masses[i];
    return true;
  }
  std::vector<double> grad(n), hess(n * n);
  for (int iter = 0; iter < 50; ++iter) {
    velocity_derivatives(spec, params, q, v, grad, hess);
    for (int i = 0; i < n; ++i) grad[i] -= p[i];
    if (!solve(n, hess, grad)) return false;
    double step = 0.0, size = 0.0;
    for (int i = 0; i < n; ++i) {
      v[i] -= grad[i];
      step = std::max(step, std::abs(grad[i]));
      size = std::max(size, std::abs(v[i]));
    }
    if (!std::isfinite(step)) return false;
    if (step <= 1e-13 * (1.0 + size)) return true;
  }
  return false;
}

}  // namespace

double energy(const ModelSpec& spec, const double* params, const double* state) {
  const int n = spec.dof;
  const double* q = state;
  const double* p = state + n;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Point<double> at;
  at.q = q;
  if (spec.kind == ModelSpec::Kind::kSeparable) {
    double kinetic = 0.0;
    for (int i = 0; i < n; ++i) kinetic += p[i] * p[i] / spec.masses[i];
    const double h = 0.5 * kinetic + evaluate(spec.energy_term, at, params);
    return std::isfinite(h) ? h : nan;
  }
  std::vector<double> v;
  if (!velocities(spec, params, state, v)) return nan;
  at.v = v.data();
  double vp = 0.0;
  for (int i = 0; i < n; ++i) vp += v[i] * p[i];
  const double h = vp - evaluate(spec.energy_term, at, params);
  return std::isfinite(h) ? h : nan;
}

std::string manifold_defect(const ModelSpec& spec, const double* params, const double* state,
                            double tolerance) {
  const int n = spec.dof;
  std::vector<double> v;
  if (!velocities(spec, params, state, v))
    return "no finite velocities solve p = dL/dv at this state";
  double qmax = 0.0, vmax = 0.0;
  for (int i = 0; i < n; ++i) {
    qmax = std::max(qmax, std::abs(state[i]));
    vmax = std::max(vmax, std::abs(v[i]));
  }
  // g(q + e v) on duals in e: its value is g(q), its derivative G(q) v.
  std::vector<D1> qd(n);
  for (int i = 0; i < n; ++i) {
    qd[i] = D1(state[i]);
    qd[i].d[0] = v[i];
  }
  Point<D1> at;
  at.q = qd.data();
  const auto size = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", x);
    return std::string(buf);
  };
  for (std::size_t a = 0; a < spec.constraints.size(); ++a) {
    const D1 g = evaluate(spec.constraints[a], at, params);
    const std::string which = std::to_string(a);
    if (!(std::abs(g.v) <= tolerance * qmax))
      return "not on the constraint manifold: |g(q)| of constraint " + which + " is " +
             size(std::abs(g.v)) + ", above the tolerance " + size(tolerance * qmax) +
             " (give positions that satisfy the constraints)";
    if (!(std::abs(g.d[0]) <= tolerance * vmax))
      return "velocity not tangent to the constraint manifold: |G(q) v| of constraint " + which +
             " is " + size(std::abs(g.d[0])) + ", above the tolerance " + size(tolerance * vmax) +
             " (the momenta must satisfy the differentiated constraints)";
  }
  return {};
}

}  // namespace vigor::host::formula
