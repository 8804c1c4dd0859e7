/// @file job.cpp
/// @brief Job files (DESIGN.md §4): JSON text to a fully validated Job, or a JobError.
///
/// Every key is looked at: unknown keys are errors at every level (a typo must never be silently
/// ignored), every value is type- and range-checked, and every message names the full key path and
/// shows the offending value. The ensemble block is read and generated in host/job/ensemble_*.cpp.
#include "host/job/job.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "host/backends/registry.hpp"
#include "host/build_info.hpp"
#include "host/job/formula/formula_model.hpp"
#include "host/job/json_fields.hpp"
#include "kernels/sections.hpp"
#include "kernels/tangent.hpp"

namespace vigor::host {

namespace {

using namespace json;

/// Upper bound on step counts: far beyond any run, and exactly representable in a double, so
/// step * dt and step counters cannot overflow.
constexpr std::int64_t kMaxSteps = 1'000'000'000'000'000;
/// Default steps per segment: sections are drained and progress reported this often.
constexpr std::int64_t kDefaultSegmentSteps = 10'000;
constexpr std::int64_t kMaxNewtonIterations = 100;
/// Largest job file read: far beyond any hand-written job (about 700 000 explicit rows of a
/// two-degree-of-freedom model); larger ensembles are generated with box or random_box.
constexpr std::size_t kMaxJobBytes = std::size_t(64) << 20;

std::vector<std::string> spec_names(const std::vector<kernels::ParamSpec>& specs) {
  std::vector<std::string> names;
  for (const auto& s : specs) names.push_back(s.name);
  return names;
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& m : model_infos()) names.push_back(m.name);
  return names;
}

std::vector<std::string> integrator_names() {
  std::vector<std::string> names;
  for (const auto& i : integrator_infos()) names.push_back(i.name);
  return names;
}

std::vector<std::string> compensable_names() {
  std::vector<std::string> names;
  for (const auto& i : integrator_infos())
    if (i.compensable) names.push_back(i.name);
  return names;
}

/// Deepest nesting of arrays and objects a job file may use. Job files need four levels; the cap
/// keeps everything that walks the parsed value recursively (nlohmann's dump and copy, the
/// readers) far from the end of the stack.
constexpr std::size_t kMaxNesting = 64;

/// Checks the JSON while it is parsed: rejects duplicate object keys (nlohmann keeps only the last
/// one, so {"dt": 0.1, "dt": 1} would silently drop a value the user wrote) and nesting deeper than
/// kMaxNesting, and knows the key path being read, for the messages of parse errors.
class DuplicateKeyCheck {
 public:
  bool operator()(int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
        frames_.push_back({true, {}, 0, {}});
        check_depth();
        break;
      case Json::parse_event_t::array_start:
        frames_.push_back({false, {}, 0, {}});
        check_depth();
        break;
      case Json::parse_event_t::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second)
          fail(path(), "duplicate key (each key may appear once in an object)");
        break;
      }
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        frames_.pop_back();
        next_element();
        break;
      case Json::parse_event_t::value:
        next_element();
        break;
    }
    return true;
  }

  /// Key path of the value being parsed ("" at the top level).
  std::string path() const {
    std::string p;
    for (const auto& f : frames_) p = f.object ? join(p, f.key) : at(p, f.index);
    return p;
  }

 private:
  struct Frame {
    bool object;
    std::string key;    // objects: the key whose value is being read
    std::size_t index;  // arrays: the element being read
    std::set<std::string> keys;
  };

  void next_element() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }

  // Thrown from inside the parser, before the value is complete: nothing recursive has seen it.
  void check_depth() const {
    if (frames_.size() > kMaxNesting)
      fail("job", "nested deeper than " + std::to_string(kMaxNesting) + " levels");
  }

  std::vector<Frame> frames_;
};

/// The NaN / Infinity literal (any case, optionally signed) that the parser stopped in, or "".
/// `byte` is nlohmann's count of characters read: the offending one is text[byte - 1].
std::string non_finite_literal(const std::string& text, std::size_t byte) {
  if (byte == 0 || byte > text.size()) return {};
  auto word = [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '+' || ch == '-' || ch == '.';
  };
  std::size_t begin = byte - 1;
  if (!word(text[begin])) return {};
  while (begin > 0 && word(text[begin - 1])) --begin;
  std::size_t end = byte;
  while (end < text.size() && word(text[end])) ++end;
  const std::string literal = text.substr(begin, end - begin);
  std::string bare = literal;
  if (!bare.empty() && (bare[0] == '+' || bare[0] == '-')) bare.erase(0, 1);
  for (char& ch : bare) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (bare == "nan" || bare == "inf" || bare == "infinity") return literal;
  return {};
}

BackendKind parse_backend(const std::string& s, const std::string& path, const std::string& shown) {
  if (s == "auto") return BackendKind::kAuto;
  if (s == "cpu") return BackendKind::kCpu;
  if (s == "cuda") return BackendKind::kCuda;
  fail(path, "must be \"auto\", \"cpu\" or \"cuda\", got " + shown);
}

Precision parse_precision(const std::string& s, const std::string& path, const std::string& shown) {
  if (s == "double") return Precision::kDouble;
  if (s == "float") return Precision::kFloat;
  fail(path, "must be \"double\" or \"float\", got " + shown);
}

/// A model written in the job (model.formula): read and checked, described without compiling
/// (host/job/formula/formula_model.hpp), and added to the models find_model knows.
const ModelInfo& parse_formula_model(const Json& m, Job& job) {
  if (find(m, "name"))
    fail("model", "give either name (a built-in or registered model) or formula, not both");
  auto spec = std::make_shared<const formula::ModelSpec>(formula::read_model_spec(m, "model"));
  const std::string name_path = "model.formula.name";
  for (const auto& known : model_infos())
    if (known.name == spec->name)
      fail(name_path, "\"" + spec->name + "\" is the name of a " +
                          (known.builtin ? "built-in" : "registered") +
                          " model; give the formula model another name");
  job.integration.model = spec->name;
  job.integration.params = spec->param_values;
  return add_job_model(formula::describe(std::move(spec)));
}

const ModelInfo& parse_model(const Json& top, Job& job) {
  const std::string path = "model";
  const Json& m = require(top, "", path, "an object such as {\"name\": \"henon_heiles\"}");
  if (m.is_string())
    fail(path, "must be an object such as {\"name\": " + show(m) + "}, got " + show(m));
  object(m, path);
  if (find(m, "formula")) return parse_formula_model(m, job);
  check_keys(m, path, {"name", "params", "formula"}, "key");
  const std::string name_path = join(path, "name");
  const Json& name_json = require(
      m, path, "name", "one of " + list(model_names()) + ", or a formula model: model.formula");
  const ModelInfo* info = find_model(string_value(name_json, name_path));
  if (!info)
    fail(name_path, "unknown model " + show(name_json) + " (known: " + list(model_names()) + ")");
  job.integration.model = info->name;

  job.integration.params.clear();
  for (const auto& spec : info->params) job.integration.params.push_back(spec.default_value);
  if (const Json* params = find(m, "params")) {
    const std::string params_path = join(path, "params");
    object(*params, params_path);
    check_keys(*params, params_path, spec_names(info->params), "parameter of model " + info->name);
    for (std::size_t i = 0; i < info->params.size(); ++i)
      if (const Json* v = find(*params, info->params[i].name))
        job.integration.params[i] =
            rule_value(*v, join(params_path, info->params[i].name), info->params[i].rule);
  }
  // Each parameter may be fine alone and still overflow in combination (m = 1e-320 makes
  // 1/(m l^2) infinite); the kernels divide by nothing else, so checking the masses suffices.
  for (int i = 0; info->inv_mass && i < info->dof; ++i) {
    const double w = info->inv_mass(job.integration.params.data(), i);
    if (!std::isfinite(w) || !(w > 0))
      fail(join(path, "params"), "give inverse mass " + format_number(w) + " for " +
                                     info->state_names[i] +
                                     " (it must be finite and > 0); check the parameter sizes");
  }
  return *info;
}

void parse_integrator(const Json& top, Job& job) {
  const std::string path = "integrator";
  const Json& in = require(top, "", path, "an object such as {\"name\": \"verlet\", \"dt\": 0.01}");
  object(in, path);
  const std::string name_path = join(path, "name");
  const Json& name_json = require(in, path, "name", "one of " + list(integrator_names()));
  const IntegratorInfo* info = find_integrator(string_value(name_json, name_path));
  if (!info)
    fail(name_path,
         "unknown integrator " + show(name_json) + " (known: " + list(integrator_names()) + ")");
  job.integration.integrator = info->name;

  std::vector<std::string> known{"name", "dt", "newton_iterations", "compensated"};
  for (const auto& o : info->options) known.push_back(o.name);
  check_keys(in, path, known, "key of integrator " + info->name);

  const std::string dt_path = join(path, "dt");
  const Json& dt = require(in, path, "dt", "the time step, a number > 0");
  job.integration.dt = number(dt, dt_path);
  if (!(job.integration.dt > 0)) fail(dt_path, "must be > 0, got " + show(dt));

  job.integration.newton_iterations = 0;
  if (const Json* n = find(in, "newton_iterations"))
    job.integration.newton_iterations =
        int(integer(*n, join(path, "newton_iterations"), 1, kMaxNewtonIterations));

  job.integration.compensated = false;
  if (const Json* c = find(in, "compensated")) {
    const std::string cpath = join(path, "compensated");
    if (!c->is_boolean()) fail(cpath, "must be true or false, got " + show(*c));
    job.integration.compensated = c->get<bool>();
    if (job.integration.compensated && !info->compensable)
      fail(cpath, "true, but " + info->name + " has no compensated form; it is offered by " +
                      list(compensable_names()));
  }

  job.integration.options.clear();
  for (const auto& o : info->options) {
    double x = o.default_value;
    if (const Json* v = find(in, o.name)) x = rule_value(*v, join(path, o.name), o.rule);
    job.integration.options.push_back(x);
  }
}

/// The model and the integrator must fit each other (an explicit splitting cannot integrate a
/// constrained or non-separable model; the SO(3) rigid body needs its Lie-group integrator).
void check_pairing(const ModelInfo& model, const Job& job) {
  const IntegratorInfo* integrator = find_integrator(job.integration.integrator);
  for (const auto& name : model.integrators)
    if (name == job.integration.integrator) return;
  fail("integrator.name", "integrator \"" + job.integration.integrator + "\" handles " +
                              integrator->requires_model + "; model \"" + model.name +
                              "\" needs one of: " + list(model.integrators));
}

/// integrator.compensated needs an engine compiled for it: built-in and formula models compile
/// one on first use; a model registered from C++ has only the engines its program compiled.
void check_compensated(const ModelInfo& model, const Job& job) {
  if (!job.integration.compensated || model.builtin || model.formula) return;
  fail("integrator.compensated",
       "true, but model \"" + model.name +
           "\" is registered by its program, which compiled its engines without compensated "
           "summation; run it with a built-in or a formula model, or drop the key");
}

void parse_section(const Json& top, const ModelInfo& model, Job& job) {
  job.integration.section = SectionConfig{};
  const Json* s = find(top, "section");
  if (!s) return;
  const std::string path = "section";
  object(*s, path);
  check_keys(*s, path, {"coordinate", "value", "direction", "max_crossings", "stroboscopic"},
             "key");
  const Json* coordinate = find(*s, "coordinate");
  const Json* strobe = find(*s, "stroboscopic");
  if (coordinate && strobe)
    fail(path, "has both \"coordinate\" (a plane) and \"stroboscopic\"; use one of them");
  if (!coordinate && !strobe)
    fail(path,
         "needs \"coordinate\" (a plane: {\"coordinate\": \"q0\", \"value\": 0}) or "
         "\"stroboscopic\": {\"every\": K}, got " +
             show(*s));

  SectionConfig& cfg = job.integration.section;
  if (coordinate) {
    const std::string cpath = join(path, "coordinate");
    const std::string name = string_value(*coordinate, cpath);
    const int c = model.state_index(name);
    if (c < 0)
      fail(cpath, "unknown state coordinate " + show(*coordinate) + " of model " + model.name +
                      " (known: " + list(model.state_names) + ")");
    cfg.kind = kernels::kSectionPlane;
    cfg.coordinate = c;
    if (const Json* v = find(*s, "value")) cfg.value = number(*v, join(path, "value"));
    cfg.direction = kernels::kDirBoth;
    if (const Json* d = find(*s, "direction")) {
      const std::string dpath = join(path, "direction");
      const std::string dir = string_value(*d, dpath);
      if (dir == "up") {
        cfg.direction = kernels::kDirUp;
      } else if (dir == "down") {
        cfg.direction = kernels::kDirDown;
      } else if (dir != "both") {
        fail(dpath, "must be \"up\", \"down\" or \"both\", got " + show(*d));
      }
    }
  } else {
    for (const char* plane_only : {"value", "direction"})
      if (find(*s, plane_only))
        fail(join(path, plane_only),
             "applies to a plane section (\"coordinate\"), not to a "
             "stroboscopic one");
    const std::string spath = join(path, "stroboscopic");
    object(*strobe, spath);
    check_keys(*strobe, spath, {"every"}, "key");
    cfg.kind = kernels::kSectionStroboscopic;
    cfg.every = integer(require(*strobe, spath, "every", "the sampling period in steps, >= 1"),
                        join(spath, "every"), 1, kMaxSteps);
  }
  if (const Json* mc = find(*s, "max_crossings"))
    cfg.max_crossings = integer(*mc, join(path, "max_crossings"), 0, kMaxSteps);
}

/// " is 0 in float precision" style checks of one value converted to the run's float.
void check_float_value(double x, const std::string& path, bool positive) {
  const float f = float(x);
  if (!std::isfinite(f))
    fail(path, format_number(x) + " is beyond the range of a float (3.4e38) in float precision");
  if (positive && !(f > 0)) fail(path, format_number(x) + " is 0 in float precision");
}

/// Everything the kernels compute from the job must still be usable in the precision the run
/// will use (after --precision): a value that is fine in double may round to 0 or overflow in
/// float, and the kernels would then run on an infinite mass or a zero time step.
void check_run_precision(const ModelInfo& model, Job& job) {
  const bool as_float = job.integration.precision == Precision::kFloat;
  const char* precision = as_float ? "float" : "double";
  // The kernels compare |q|^2 with the squared radius, computed in double and then converted.
  if (job.integration.escape_radius > 0) {
    const double r2 = job.integration.escape_radius * job.integration.escape_radius;
    const double r2_run = as_float ? double(float(r2)) : r2;
    if (!std::isfinite(r2_run) || !(r2_run > 0))
      fail("escape_radius", format_number(job.integration.escape_radius) + " squared is " +
                                format_number(r2_run) + " in " + precision +
                                " precision; use a radius whose square is finite and > 0");
  }
  if (!as_float) return;

  check_float_value(job.integration.dt, "integrator.dt", true);
  for (std::size_t i = 0; i < model.params.size(); ++i)
    check_float_value(job.integration.params[i], join("model.params", model.params[i].name),
                      model.params[i].rule == kernels::Rule::kPositive ||
                          model.params[i].rule == kernels::Rule::kCount ||
                          model.params[i].rule == kernels::Rule::kStageCount);
  if (const IntegratorInfo* integrator = find_integrator(job.integration.integrator))
    for (std::size_t i = 0; i < integrator->options.size() && i < job.integration.options.size();
         ++i)
      check_float_value(job.integration.options[i], join("integrator", integrator->options[i].name),
                        integrator->options[i].rule == kernels::Rule::kPositive ||
                            integrator->options[i].rule == kernels::Rule::kCount ||
                            integrator->options[i].rule == kernels::Rule::kStageCount);
  for (int i = 0; model.inv_mass && i < model.dof; ++i) {
    const double w = model.inv_mass(job.integration.params.data(), i);
    if (!std::isfinite(float(w)) || !(float(w) > 0))
      fail("model.params", "give inverse mass " + format_number(w) + " for " +
                               model.state_names[i] +
                               ", beyond the range of a float (it must be finite and > 0 in float "
                               "precision); check the parameter sizes");
  }
  if (job.has_section() && job.integration.section.kind == kernels::kSectionPlane)
    check_float_value(job.integration.section.value, "section.value", false);
  if (job.integration.newton_tolerance > 0)
    check_float_value(job.integration.newton_tolerance, "newton_tolerance", true);
  check_initial_states(job.ensemble, model, job.integration.params, true);
}

/// States a program gave in place of the job's ensemble, checked as explicit rows are (finite
/// energy, on the model's manifold); errors name ensemble.states[i].
Ensemble given_states(Ensemble&& given, const ModelInfo& model, const std::vector<double>& params) {
  if (given.count < 1)
    fail("states", "must hold at least one state (a row of " + std::to_string(model.dim) +
                       " values), got none");
  if (given.state.size() != std::size_t(given.count) * std::size_t(model.dim))
    fail("states", "must hold rows of " + std::to_string(model.dim) + " values (the state of " +
                       model.name + "), got " + std::to_string(given.state.size()) +
                       " values for " + std::to_string(given.count) + " rows");
  Ensemble e;
  e.kind = "states";
  e.count = given.count;
  e.state = std::move(given.state);
  check_initial_states(e, model, params, false);
  return e;
}

/// The JSON text, parsed with DuplicateKeyCheck; JSON errors name the key being read.
Json parse_text(const std::string& text) {
  DuplicateKeyCheck check;
  try {
    return Json::parse(text, [&check](int depth, Json::parse_event_t event, Json& parsed) {
      return check(depth, event, parsed);
    });
  } catch (const nlohmann::json::out_of_range& e) {
    // nlohmann refuses a literal beyond the double range (1e999) mid-parse with error 406; the
    // checker still knows which key was being read, so the message can name it.
    const std::string what = e.what();
    const auto open = what.find('\'');
    const auto close = what.rfind('\'');
    const std::string literal =
        open != std::string::npos && close > open ? what.substr(open + 1, close - open - 1) : what;
    fail(check.path().empty() ? "job" : check.path(),
         "must be a finite number, got " + literal + " (beyond the range of a double)");
  } catch (const nlohmann::json::parse_error& e) {
    // NaN and Infinity are what people (and other tools) write for non-finite numbers; nlohmann
    // only sees an invalid literal, but the checker knows which key was being read.
    const std::string literal = non_finite_literal(text, e.byte);
    if (!literal.empty())
      fail(check.path().empty() ? "job" : check.path(),
           "must be a finite number; NaN and Infinity are not JSON numbers, got " + literal);
    // Keep nlohmann's position and reason; drop its internal "[json.exception.parse_error.101] ".
    std::string what = e.what();
    if (!what.empty() && what[0] == '[') {
      const auto close = what.find("] ");
      if (close != std::string::npos) what.erase(0, close + 2);
    }
    fail("job", "invalid JSON: " + what);
  }
}

void parse_steps(const Json& top, Job& job) {
  job.steps = integer(require(top, "", "steps", "the number of time steps, an integer >= 1"),
                      "steps", 1, kMaxSteps);
  job.segment_steps = std::min(job.steps, kDefaultSegmentSteps);
  if (const Json* seg = find(top, "segment_steps"))
    // A segment longer than the run is simply the whole run.
    job.segment_steps = std::min(job.steps, integer(*seg, "segment_steps", 1, kMaxSteps));
}

/// escape_radius and newton_tolerance: what stops a trajectory besides a non-finite step.
void parse_stops(const Json& top, const ModelInfo& model, Integration& s) {
  s.escape_radius = 0.0;
  if (const Json* r = find(top, "escape_radius")) {
    s.escape_radius = number(*r, "escape_radius");
    if (!(s.escape_radius > 0)) fail("escape_radius", "must be > 0, got " + show(*r));
    if (model.kind == "lie_group")
      fail("escape_radius",
           "model " + model.name +
               " has no bound position to escape (its state lies on a Lie group: an "
               "attitude, or an attitude and a freely drifting position); drop "
               "the key, got " +
               show(*r));
  }
  s.newton_tolerance = 0.0;
  if (const Json* t = find(top, "newton_tolerance")) {
    s.newton_tolerance = number(*t, "newton_tolerance");
    if (!(s.newton_tolerance > 0)) fail("newton_tolerance", "must be > 0, got " + show(*t));
    if (find_integrator(s.integrator)->is_explicit)
      fail("newton_tolerance", "integrator \"" + s.integrator +
                                   "\" is explicit and solves nothing; drop the key or use an "
                                   "implicit integrator");
  }
}

/// diagnostics.tangent: only for the pairs whose tangent map is built.
bool parse_tangent(const Json& t, const ModelInfo& model, const std::string& integrator) {
  if (!t.is_boolean()) fail("diagnostics.tangent", "must be true or false, got " + show(t));
  if (!t.get<bool>()) return false;
  const auto& ok = model.tangent_integrators;
  if (ok.empty() && model.dim > kernels::kTangentMaxDirections)
    fail("diagnostics.tangent",
         "tangent maps are built for up to " + std::to_string(kernels::kTangentMaxDirections) +
             " phase-space dimensions; model " + model.name + " has " + std::to_string(model.dim) +
             " (compile time and registers grow with the square)");
  if (std::find(ok.begin(), ok.end(), integrator) == ok.end())
    fail("diagnostics.tangent",
         "tangent maps of " + integrator + " on " + model.name +
             " are not built (the step already differentiates the Lagrangian twice by "
             "nested duals, and one more level is too large for " +
             std::to_string(model.dof) + " degrees of freedom); " +
             (ok.empty() ? "no integrator of this model has one" : "use one of: " + list(ok)));
  return true;
}

void parse_diagnostics(const Json& top, const ModelInfo& model, Integration& s) {
  s.tangent = false;
  s.conservation_every = 1;
  const Json* d = find(top, "diagnostics");
  if (!d) return;
  object(*d, "diagnostics");
  check_keys(*d, "diagnostics", {"tangent", "conservation_every"}, "diagnostic");
  if (const Json* e = find(*d, "conservation_every"))
    s.conservation_every = integer(*e, "diagnostics.conservation_every", 1, kMaxSteps);
  if (const Json* t = find(*d, "tangent")) s.tangent = parse_tangent(*t, model, s.integrator);
  if (s.tangent && s.compensated)
    fail("diagnostics.tangent",
         "true together with integrator.compensated: the tangent map is that of the plain step; "
         "measure symplecticity without compensation (the map is the same)");
}

void parse_output(const Json& top, Job& job) {
  job.output_dir = "results/" + job.integration.model;
  const Json* out = find(top, "output");
  if (!out) return;
  object(*out, "output");
  check_keys(*out, "output", {"dir", "hdf5", "csv"}, "key");
  if (const Json* dir = find(*out, "dir")) {
    job.output_dir = string_value(*dir, "output.dir");
    if (job.output_dir.empty()) fail("output.dir", "must be a non-empty path, got \"\"");
    // The system would cut the path at the NUL ("res\u0000x" would write into "res").
    if (job.output_dir.find('\0') != std::string::npos)
      fail("output.dir", "must not contain a NUL character, got " + show(*dir));
  }
  auto flag = [&](const char* key, bool& into) {
    if (const Json* v = find(*out, key)) {
      if (!v->is_boolean())
        fail(std::string("output.") + key, "must be true or false, got " + show(*v));
      into = v->get<bool>();
    }
  };
  flag("hdf5", job.hdf5);
  flag("csv", job.csv);
  if (job.hdf5 && !hdf5_available())
    fail("output.hdf5",
         "true, but this vigor was built without HDF5 (install libhdf5-dev and rebuild)");
  if (!job.csv && !job.hdf5)
    fail("output.csv",
         "false needs \"hdf5\": true (sections and final states must be written somewhere)");
}

/// A cloud (loop, parallelepiped) is sampled by a stroboscopic section of its own, every sample
/// of every point recorded, for host/output/invariants.cpp.
void sample_cloud(Job& job) {
  const InvariantSampling& sm = job.ensemble.sampling;
  if (sm.kind.empty()) return;
  const std::string every_path = "ensemble." + sm.kind + ".every";
  if (job.has_section())
    fail("section", "cannot be combined with ensemble." + sm.kind +
                        ": the cloud is sampled by its own stroboscopic section (every " +
                        every_path + " = " + std::to_string(sm.every) +
                        " steps); drop the section key");
  if (sm.every > job.steps)
    fail(every_path, "must be <= steps = " + std::to_string(job.steps) +
                         " (no sample would be taken after t = 0), got " +
                         std::to_string(sm.every));
  SectionConfig& section = job.integration.section;
  section = SectionConfig{};
  section.kind = kernels::kSectionStroboscopic;
  section.every = sm.every;
  section.max_crossings = job.steps / sm.every;
}

/// Command-line overrides win over the file, but the file must still be valid as written.
void apply_overrides(const Overrides& overrides, const ModelInfo& model, Job& job) {
  if (!overrides.out.empty()) job.output_dir = overrides.out;
  if (!overrides.backend.empty())
    job.backend = parse_backend(overrides.backend, "--backend", show(Json(overrides.backend)));
  if (!overrides.precision.empty())
    job.integration.precision =
        parse_precision(overrides.precision, "--precision", show(Json(overrides.precision)));
#if defined(VIGOR_HAVE_CUDA)
  // A model registered without CUDA engines (host/custom_model.hpp; they come from a .cu file,
  // host/custom_model_cuda.cuh) runs on the CPU only: auto picks the CPU, cuda is bad input.
  if (!model.make_cuda_engine) {
    if (job.backend == BackendKind::kCuda)
      fail(overrides.backend.empty() ? "backend" : "--backend",
           "model " + model.name +
               " has no CUDA engine in this program (it was registered without one); use "
               "\"cpu\" or \"auto\", got \"cuda\"");
    job.backend = BackendKind::kCpu;
  }
#else
  (void)model;
#endif
}

}  // namespace

Job parse_job(const std::string& text, const Overrides& overrides) {
  Job job;
  job.overrides = overrides;
  job.source = parse_text(text);
  const Json& top = job.source;
  if (!top.is_object()) fail("job", "must be a JSON object, got " + show(top));
  check_keys(top, "",
             {"model", "integrator", "steps", "segment_steps", "ensemble", "section",
              "escape_radius", "newton_tolerance", "diagnostics", "backend", "precision", "output"},
             "key");

  const ModelInfo& model = parse_model(top, job);
  parse_integrator(top, job);
  check_pairing(model, job);
  check_compensated(model, job);
  parse_steps(top, job);
  parse_section(top, model, job);
  parse_stops(top, model, job.integration);
  parse_diagnostics(top, model, job.integration);
  job.backend = BackendKind::kAuto;
  if (const Json* b = find(top, "backend"))
    job.backend = parse_backend(string_value(*b, "backend"), "backend", show(*b));
  job.integration.precision = Precision::kDouble;
  if (const Json* p = find(top, "precision"))
    job.integration.precision =
        parse_precision(string_value(*p, "precision"), "precision", show(*p));
  parse_output(top, job);

  // The ensemble last: it is the only expensive part, and it needs the section.
  if (overrides.ensemble)
    job.ensemble = given_states(std::move(*overrides.ensemble), model, job.integration.params);
  else
    job.ensemble =
        make_ensemble(require(top, "", "ensemble",
                              "one of states, box, random_box, section_grid, loop, parallelepiped"),
                      model, job.integration.params, job.integration.section);
  sample_cloud(job);
  apply_overrides(overrides, model, job);
  check_run_precision(model, job);
  if (job.integration.tangent && job.integration.precision == Precision::kFloat)
    fail(overrides.precision.empty() ? "precision" : "--precision",
         "diagnostics.tangent needs precision double: float round-off (~1e-7 per step) would "
         "hide the symplecticity defects the tangent map measures");
  if (overrides.ensemble) {
    // The job as run (summary.json echoes it): its states came from the program, not the job.
    Json given = Json::object();
    given["rows"] = job.ensemble.count;
    given["given_by"] = "the calling program (vigor.run states=)";
    job.source["ensemble"] = Json{{"states", given}};
  }
  return job;
}

Job load_job(const std::string& path, const Overrides& overrides) {
  namespace fs = std::filesystem;
  const std::string shown = "\"" + path + "\"";
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::is_directory(status))
    fail("job", "cannot read job file " + shown + ": it is a directory");
  // A device or a pipe (/dev/zero, /dev/stdin) would be read without end: only plain files.
  if (fs::exists(status) && !fs::is_regular_file(status))
    fail("job", shown + " is not a regular file");
  if (fs::is_regular_file(status)) {
    const std::uintmax_t size = fs::file_size(path, ec);
    if (!ec && size > kMaxJobBytes)
      fail("job", shown + " is larger than 64 MiB (" + std::to_string(size) +
                      " bytes); generate large ensembles with box or random_box");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("job", "cannot read job file " + shown + ": " + std::strerror(errno));
  // Chunked, and bounded again in case the file grew since it was looked at.
  std::string text;
  std::vector<char> chunk(std::size_t(1) << 20);
  while (in.read(chunk.data(), std::streamsize(chunk.size())) || in.gcount() > 0) {
    text.append(chunk.data(), std::size_t(in.gcount()));
    if (text.size() > kMaxJobBytes) fail("job", shown + " is larger than 64 MiB");
  }
  if (in.bad()) fail("job", "cannot read job file " + shown + ": read error");
  return parse_job(text, overrides);
}

}  // namespace vigor::host
