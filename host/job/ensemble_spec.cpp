/// @file ensemble_spec.cpp
/// @brief Reading and checking a job's "ensemble" block (DESIGN.md §4) into an EnsembleSpec:
/// every key, type, range and shape, with messages naming the key path. No state is generated
/// here (ensemble_generate.cpp), except the explicit rows of "states", which are the states.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "host/backends/registry.hpp"
#include "host/job/ensemble_spec.hpp"
#include "host/job/json_fields.hpp"
#include "kernels/sections.hpp"

namespace vigor::host {

namespace {

using namespace json;
using ensemble_limits::kMaxTrajectories;

/// Largest count accepted per axis before the product check (which gives the useful message).
constexpr std::int64_t kMaxAxisCount = 1'000'000'000'000'000;
/// Largest loop: the spectral quadrature costs O(N log N) per sample for a power of two and
/// O(N^2) otherwise, so other sizes are capped lower (kMaxDftPoints).
constexpr std::int64_t kMaxLoopPoints = std::int64_t(1) << 20;
constexpr std::int64_t kMaxDftPoints = 8192;
constexpr std::int64_t kMinLoopPoints = 16;
constexpr std::int64_t kMaxEvery = 1'000'000'000'000'000;

std::string state_list(const ModelInfo& model) { return list(model.state_names); }

/// Fail on `path` unless `total` trajectories are allowed. Computed in double so that a product of
/// large counts is compared, not overflowed.
void check_total(double total, const std::string& path) {
  if (total > double(kMaxTrajectories))
    fail(path, format_number(total) + " trajectories is more than the " +
                   std::to_string(kMaxTrajectories) + " allowed");
}

/// A row of exactly model.dim finite numbers (a state, or the lo / hi corner of a box).
std::vector<double> state_row(const Json& v, const std::string& path, const ModelInfo& model) {
  const std::string expected =
      "expected " + std::to_string(model.dim) + " values (" + state_list(model) + ")";
  if (!v.is_array()) fail(path, expected + ", got " + show(v));
  if (v.size() != std::size_t(model.dim))
    fail(path, expected + ", got " + std::to_string(v.size()));
  std::vector<double> row(model.dim);
  for (int c = 0; c < model.dim; ++c) row[c] = number(v[c], at(path, c));
  return row;
}

/// `hi[c] >= lo[c]` for every c, failing on hi's element.
void check_ordered(const std::vector<double>& lo, const std::vector<double>& hi,
                   const std::string& path) {
  for (std::size_t c = 0; c < lo.size(); ++c) {
    if (!(hi[c] >= lo[c]))
      fail(at(join(path, "hi"), c), "must be >= lo[" + std::to_string(c) + "] = " +
                                        format_number(lo[c]) + ", got " + format_number(hi[c]));
    // The points are lo + (hi - lo) * f: an infinite width would make them inf or NaN.
    if (!std::isfinite(hi[c] - lo[c]))
      fail(at(join(path, "hi"), c), "the width hi - lo overflows a double (lo[" +
                                        std::to_string(c) + "] = " + format_number(lo[c]) +
                                        "), got " + format_number(hi[c]));
  }
}

StatesSpec read_states(const Json& spec, const std::string& path, const ModelInfo& model) {
  array(spec, path);
  if (spec.empty())
    fail(path, "must hold at least one state (a row of " + state_list(model) + "), got []");
  check_total(double(spec.size()), path);
  StatesSpec s;
  s.count = std::int64_t(spec.size());
  s.soa = allocate_states(s.count, model.dim, path);
  for (std::int64_t i = 0; i < s.count; ++i) {
    const std::vector<double> row =
        state_row(spec[std::size_t(i)], at(path, std::size_t(i)), model);
    for (int c = 0; c < model.dim; ++c) s.soa[std::size_t(c) * s.count + i] = row[c];
  }
  return s;
}

FileSpec read_file(const Json& spec, const std::string& path) {
  object(spec, path);
  check_keys(spec, path, {"path"}, "key");
  FileSpec f;
  f.path = join(path, "path");
  const Json& fj = require(spec, path, "path", "a .npy or .csv file of initial states");
  if (!fj.is_string() || fj.get<std::string>().empty())
    fail(f.path, "expected the name of a .npy or .csv file, got " + show(fj));
  f.file = fj.get<std::string>();
  // The system would cut the name at the NUL ("a.csv\u0000.npy" would read a.csv as .npy).
  if (f.file.find('\0') != std::string::npos)
    fail(f.path, "must not contain a NUL character, got " + show(fj));
  return f;
}

/// The "lo" and "hi" state rows of a box or random_box, checked to be ordered.
std::pair<std::vector<double>, std::vector<double>> box_bounds(const Json& spec,
                                                               const std::string& path,
                                                               const ModelInfo& model) {
  const std::string row_hint = std::to_string(model.dim) + " numbers (" + state_list(model) + ")";
  const std::vector<double> lo =
      state_row(require(spec, path, "lo", row_hint), join(path, "lo"), model);
  const std::vector<double> hi =
      state_row(require(spec, path, "hi", row_hint), join(path, "hi"), model);
  check_ordered(lo, hi, path);
  return {lo, hi};
}

BoxSpec read_box(const Json& spec, const std::string& path, const ModelInfo& model) {
  object(spec, path);
  check_keys(spec, path, {"lo", "hi", "counts"}, "key");
  BoxSpec b;
  std::tie(b.lo, b.hi) = box_bounds(spec, path, model);
  b.path = join(path, "counts");
  const Json& cj = require(spec, path, "counts", std::to_string(model.dim) + " integers >= 1");
  if (!cj.is_array() || cj.size() != std::size_t(model.dim))
    fail(b.path, "expected " + std::to_string(model.dim) + " integers >= 1 (" + state_list(model) +
                     "), got " + show(cj));
  b.counts.resize(model.dim);
  double total = 1.0;
  for (int c = 0; c < model.dim; ++c) {
    b.counts[c] = integer(cj[c], at(b.path, c), 1, kMaxAxisCount);
    total *= double(b.counts[c]);
  }
  check_total(total, b.path);
  b.total = std::int64_t(total);
  return b;
}

RandomBoxSpec read_random_box(const Json& spec, const std::string& path, const ModelInfo& model) {
  object(spec, path);
  check_keys(spec, path, {"lo", "hi", "count", "seed"}, "key");
  RandomBoxSpec r;
  std::tie(r.lo, r.hi) = box_bounds(spec, path, model);
  r.path = join(path, "count");
  r.count = integer(require(spec, path, "count", "trajectories, an integer >= 1"), r.path, 1,
                    kMaxAxisCount);
  check_total(double(r.count), r.path);
  if (const Json* s = find(spec, "seed")) r.seed = unsigned_integer(*s, join(path, "seed"));
  return r;
}

/// The grid's plane: a plane section on a position coordinate of an unconstrained (q, p) model
/// with two coordinates besides q_c and p_c.
void check_grid_model(const std::string& path, const ModelInfo& model,
                      const SectionConfig& section) {
  // p_c is solved from H = E, which is quadratic in p_c for (q, p) models; a constrained model's
  // p_c would also have to satisfy the velocity form of the constraints.
  if (model.kind == "lie_group" || model.constraints > 0)
    fail(path, "model " + model.name + " is " +
                   (model.constraints > 0 ? std::string("constrained") : "not a (q, p) model") +
                   "; section_grid solves the conjugate momentum of an unconstrained (q, p) model "
                   "only; use states, box or random_box");
  // The grid lies on the section plane q_c = value, and p_c is what closes H = E; without a plane
  // on a position coordinate there is nothing to solve for.
  if (section.kind != kernels::kSectionPlane || section.coordinate >= model.dof)
    fail(path,
         "needs a plane section on a position coordinate (e.g. \"section\": "
         "{\"coordinate\": \"q0\", \"value\": 0, \"direction\": \"up\"}): the grid lies on "
         "that plane and the conjugate momentum is solved from H = E");
  const int qc = section.coordinate;
  if (model.dim - 2 < 2)
    fail(path, "model " + model.name + " has no two coordinates besides " + model.state_names[qc] +
                   " and " + model.state_names[model.dof + qc] +
                   " to span the grid; use states, box or random_box");
}

/// "energy": E, and E as written, for the message when no point of the grid is energetically
/// allowed (ensemble_generate.cpp).
void read_grid_energy(const Json& spec, const std::string& path, SectionGridSpec& g) {
  g.energy_path = join(path, "energy");
  const Json& energy_json = require(spec, path, "energy", "the energy E, a finite number");
  g.energy = number(energy_json, g.energy_path);
  g.energy_shown = show(energy_json);
}

/// The index of the state coordinate `name`, a key of "axes" or "fixed" at `key_path`. A
/// coordinate may be used once: as an axis or as a fixed value, never as q_c or p_c.
int free_grid_coordinate(const std::string& name, const std::string& key_path, const Json& value,
                         const SectionGridSpec& g, const ModelInfo& model,
                         const SectionConfig& section) {
  const int c = model.state_index(name);
  if (c < 0)
    fail(key_path, "unknown state coordinate \"" + name + "\" of model " + model.name +
                       " (known: " + state_list(model) + ")");
  if (c == g.qc)
    fail(key_path, "is the section coordinate, fixed at the section value " +
                       format_number(section.value) + ", got " + show(value));
  if (c == g.pc)
    fail(key_path, "is solved from H = E (the momentum conjugate to the section coordinate), got " +
                       show(value));
  const auto is_c = [c](const GridAxis& axis) { return axis.coordinate == c; };
  if (std::any_of(g.axes.begin(), g.axes.end(), is_c))
    fail(key_path, "is already an axis of the grid, got " + show(value));
  return c;
}

/// One axis, [lo, hi, count], of coordinate c.
GridAxis read_grid_axis(const Json& a, const std::string& key_path, int c) {
  if (!a.is_array() || a.size() != 3) fail(key_path, "expected [lo, hi, count], got " + show(a));
  const double lo = number(a[0], at(key_path, 0));
  const double hi = number(a[1], at(key_path, 1));
  if (!(hi >= lo))
    fail(at(key_path, 1), "must be >= lo = " + format_number(lo) + ", got " + show(a[1]));
  if (!std::isfinite(hi - lo))
    fail(at(key_path, 1), "the width hi - lo overflows a double (lo = " + format_number(lo) +
                              "), got " + show(a[1]));
  const std::int64_t n = integer(a[2], at(key_path, 2), 1, kMaxAxisCount);
  return {c, lo, hi, n};
}

/// "axes": exactly two coordinates, and the grid's total, checked against the allowed maximum.
void read_grid_axes(const Json& spec, const std::string& path, const ModelInfo& model,
                    const SectionConfig& section, SectionGridSpec& g) {
  g.axes_path = join(path, "axes");
  const std::string axis_example = model.state_names[g.qc == 0 ? 1 : 0];
  const Json& axes_json = require(
      spec, path, "axes",
      "two coordinates and their [lo, hi, count], e.g. {\"" + axis_example + "\": [-1, 1, 101]}");
  object(axes_json, g.axes_path);
  if (axes_json.size() != 2)
    fail(g.axes_path, "must name exactly two coordinates (the grid's axes), got " +
                          std::to_string(axes_json.size()) + ": " + show(axes_json));
  double total = 1.0;
  for (auto it = axes_json.begin(); it != axes_json.end(); ++it) {
    const std::string key_path = join(g.axes_path, it.key());
    const int c = free_grid_coordinate(it.key(), key_path, it.value(), g, model, section);
    g.axes.push_back(read_grid_axis(it.value(), key_path, c));
    total *= double(g.axes.back().count);
  }
  check_total(total, g.axes_path);
  g.total = std::int64_t(total);
}

/// The grid's base point: q_c on the plane, "fixed" coordinates at their values, the rest 0.
void read_grid_fixed(const Json& spec, const std::string& path, const ModelInfo& model,
                     const SectionConfig& section, SectionGridSpec& g) {
  g.base.assign(model.dim, 0.0);
  g.base[g.qc] = section.value;
  const Json* fixed = find(spec, "fixed");
  if (!fixed) return;
  const std::string fixed_path = join(path, "fixed");
  object(*fixed, fixed_path);
  for (auto it = fixed->begin(); it != fixed->end(); ++it) {
    const std::string key_path = join(fixed_path, it.key());
    const int c = free_grid_coordinate(it.key(), key_path, it.value(), g, model, section);
    g.base[c] = number(it.value(), key_path);
  }
}

SectionGridSpec read_section_grid(const Json& spec, const std::string& path, const ModelInfo& model,
                                  const SectionConfig& section) {
  object(spec, path);
  check_keys(spec, path, {"energy", "axes", "fixed"}, "key");
  check_grid_model(path, model, section);
  SectionGridSpec g;
  g.qc = section.coordinate;
  g.pc = model.dof + g.qc;
  read_grid_energy(spec, path, g);
  read_grid_axes(spec, path, model, section, g);
  read_grid_fixed(spec, path, model, section, g);
  g.sign = section.direction == kernels::kDirDown ? -1.0 : 1.0;
  return g;
}

// --- Clouds for the phase-space invariants (loop, parallelepiped) --------------------------------

/// Ambient (q, p) area and volume are the invariants only of unconstrained canonical models.
void require_canonical(const ModelInfo& model, const std::string& path) {
  if (model.kind == "lie_group")
    fail(path, "model " + model.name +
                   " is not a (q, p) model (its state is an element of a Lie group and body "
                   "momenta): the area and volume of a cloud in its ambient coordinates are not "
                   "invariants of its flow; use the tangent-map (symplecticity) diagnostics");
  if (model.constraints > 0)
    fail(path, "model " + model.name + " is constrained (" + std::to_string(model.constraints) +
                   " holonomic constraint" + (model.constraints > 1 ? "s" : "") +
                   "): the symplectic form lives on the constraint manifold, so the area and "
                   "volume of a cloud in the ambient (q, p) coordinates are not invariants; use "
                   "the tangent-map (symplecticity) diagnostics restricted to the manifold");
}

std::int64_t read_every(const Json& spec, const std::string& path) {
  return integer(require(spec, path, "every", "steps between samples, an integer >= 1"),
                 join(path, "every"), 1, kMaxEvery);
}

/// A [x, y] pair of finite numbers.
std::pair<double, double> plane_pair(const Json& v, const std::string& path,
                                     const std::string& what) {
  if (!v.is_array() || v.size() != 2) fail(path, "expected " + what + ", got " + show(v));
  return {number(v[0], at(path, 0)), number(v[1], at(path, 1))};
}

/// The loop's plane: two different state coordinates.
void read_loop_plane(const Json& spec, const std::string& path, const ModelInfo& model,
                     InvariantSampling& sm) {
  const std::string plane_path = join(path, "plane");
  const Json& plane = require(spec, path, "plane",
                              "two state coordinates, e.g. [\"" + model.state_names[0] + "\", \"" +
                                  model.state_names[model.dof] + "\"]");
  if (!plane.is_array() || plane.size() != 2)
    fail(plane_path,
         "expected two state coordinate names (" + state_list(model) + "), got " + show(plane));
  for (int k = 0; k < 2; ++k) {
    const std::string name = string_value(plane[std::size_t(k)], at(plane_path, std::size_t(k)));
    sm.plane[k] = model.state_index(name);
    if (sm.plane[k] < 0)
      fail(at(plane_path, std::size_t(k)), "unknown state coordinate " +
                                               show(plane[std::size_t(k)]) + " of model " +
                                               model.name + " (known: " + state_list(model) + ")");
  }
  if (sm.plane[0] == sm.plane[1])
    fail(plane_path, "must name two different coordinates, got " + show(plane));
}

/// Circle and ellipse: the semi-axes, large enough to be resolved at the center.
void read_loop_radii(const Json& spec, const std::string& path, LoopSpec& l) {
  const InvariantSampling& sm = l.sampling;
  if (sm.shape == "circle") {
    const std::string rpath = join(path, "radius");
    const Json& r = require(spec, path, "radius", "the radius, a number > 0");
    l.a = l.b = number(r, rpath);
    if (!(l.a > 0)) fail(rpath, "must be > 0, got " + show(r));
  } else {
    const std::string rpath = join(path, "radii");
    const auto [ra, rb] = plane_pair(
        require(spec, path, "radii", "[a, b], the semi-axes along the two plane coordinates"),
        rpath, "[a, b], the semi-axes along the two plane coordinates");
    if (!(ra > 0)) fail(at(rpath, 0), "must be > 0, got " + format_number(ra));
    if (!(rb > 0)) fail(at(rpath, 1), "must be > 0, got " + format_number(rb));
    l.a = ra;
    l.b = rb;
  }
  // A radius below the spacing of doubles at the center would give a loop of one point.
  const double cx = l.center[std::size_t(sm.plane[0])], cy = l.center[std::size_t(sm.plane[1])];
  if (!(cx + l.a != cx) || !(cy + l.b != cy))
    fail(join(path, sm.shape == "circle" ? "radius" : "radii"),
         "is below the resolution of a double at the center (" + format_number(cx) + ", " +
             format_number(cy) + "): the loop would collapse to a point");
}

/// Polygon: at least three vertices, no repeated one, a finite perimeter, an enclosed area.
void read_loop_vertices(const Json& spec, const std::string& path, LoopSpec& l) {
  const std::string vpath = join(path, "vertices");
  const Json& vj =
      require(spec, path, "vertices", "at least 3 points [x, y] in the plane's coordinates");
  if (!vj.is_array() || vj.size() < 3)
    fail(vpath, "expected at least 3 points [x, y] in the plane's coordinates, got " + show(vj));
  const std::size_t nv = vj.size();
  if (std::int64_t(nv) > l.sampling.points)
    fail(l.points_path, "must be >= the number of vertices (" + std::to_string(nv) +
                            ": every vertex is a point of the loop), got " +
                            std::to_string(l.sampling.points));
  l.vx.assign(nv, 0.0);
  l.vy.assign(nv, 0.0);
  l.len.assign(nv, 0.0);
  double lo_x = 0, hi_x = 0, lo_y = 0, hi_y = 0;
  for (std::size_t k = 0; k < nv; ++k) {
    std::tie(l.vx[k], l.vy[k]) = plane_pair(vj[k], at(vpath, k), "a point [x, y]");
    lo_x = k ? std::min(lo_x, l.vx[k]) : l.vx[k];
    hi_x = k ? std::max(hi_x, l.vx[k]) : l.vx[k];
    lo_y = k ? std::min(lo_y, l.vy[k]) : l.vy[k];
    hi_y = k ? std::max(hi_y, l.vy[k]) : l.vy[k];
  }
  double twice_area = 0.0;
  l.perimeter = 0.0;
  for (std::size_t k = 0; k < nv; ++k) {
    const std::size_t k1 = (k + 1) % nv;
    l.len[k] = std::hypot(l.vx[k1] - l.vx[k], l.vy[k1] - l.vy[k]);
    if (!(l.len[k] > 0))
      fail(at(vpath, k1), "repeats the previous vertex (" + format_number(l.vx[k]) + ", " +
                              format_number(l.vy[k]) + "): every edge must have a length");
    l.perimeter += l.len[k];
    twice_area += l.vx[k] * l.vy[k1] - l.vx[k1] * l.vy[k];
  }
  if (!std::isfinite(l.perimeter) || !std::isfinite(twice_area))
    fail(vpath, "is too large: its perimeter or area overflows a double");
  // Zero enclosed area (collinear vertices, or lobes that cancel): no relative change exists.
  const double box = std::max(hi_x - lo_x, hi_y - lo_y);
  if (!(std::fabs(twice_area) > 1e-12 * box * box))
    fail(vpath, "encloses no area (signed shoelace area " + format_number(0.5 * twice_area) +
                    "): the vertices are collinear or the polygon's lobes cancel");
}

LoopSpec read_loop(const Json& spec, const std::string& path, const ModelInfo& model) {
  object(spec, path);
  require_canonical(model, path);
  check_keys(spec, path,
             {"center", "plane", "shape", "radius", "radii", "vertices", "points", "every"}, "key");
  LoopSpec l;
  InvariantSampling& sm = l.sampling;
  sm.kind = "loop";
  l.center = state_row(require(spec, path, "center",
                               std::to_string(model.dim) + " numbers (" + state_list(model) + ")"),
                       join(path, "center"), model);
  read_loop_plane(spec, path, model, sm);

  const std::string shape_path = join(path, "shape");
  const Json& shape_json = require(spec, path, "shape", "\"circle\", \"ellipse\" or \"polygon\"");
  sm.shape = string_value(shape_json, shape_path);
  if (sm.shape != "circle" && sm.shape != "ellipse" && sm.shape != "polygon")
    fail(shape_path, "must be \"circle\", \"ellipse\" or \"polygon\", got " + show(shape_json));
  // Each shape takes exactly its own size key.
  const std::string own = sm.shape == "circle"    ? "radius"
                          : sm.shape == "ellipse" ? "radii"
                                                  : "vertices";
  for (const char* key : {"radius", "radii", "vertices"})
    if (key != own && find(spec, key))
      fail(join(path, key), std::string("does not apply to shape \"") + sm.shape +
                                "\" (it takes \"" + own + "\"), got " + show(*find(spec, key)));

  l.points_path = join(path, "points");
  sm.points =
      integer(require(spec, path, "points",
                      "points on the loop, an integer >= " + std::to_string(kMinLoopPoints)),
              l.points_path, kMinLoopPoints, kMaxLoopPoints);
  const bool power_of_two = (sm.points & (sm.points - 1)) == 0;
  if (sm.shape != "polygon" && !power_of_two && sm.points > kMaxDftPoints)
    fail(l.points_path, "above " + std::to_string(kMaxDftPoints) +
                            " points must be a power of two (the spectral quadrature then uses an "
                            "FFT; other sizes cost O(N^2) per sample), got " +
                            std::to_string(sm.points));
  sm.every = read_every(spec, path);
  if (sm.shape == "polygon")
    read_loop_vertices(spec, path, l);
  else
    read_loop_radii(spec, path, l);
  return l;
}

ParallelepipedSpec read_parallelepiped(const Json& spec, const std::string& path,
                                       const ModelInfo& model) {
  object(spec, path);
  require_canonical(model, path);
  check_keys(spec, path, {"center", "edge", "every"}, "key");
  ParallelepipedSpec p;
  p.path = path;
  InvariantSampling& sm = p.sampling;
  sm.kind = "parallelepiped";
  p.center = state_row(require(spec, path, "center",
                               std::to_string(model.dim) + " numbers (" + state_list(model) + ")"),
                       join(path, "center"), model);
  const std::string edge_path = join(path, "edge");
  const Json& edge =
      require(spec, path, "edge",
              "the edge length eps > 0, or one per state coordinate (" + state_list(model) + ")");
  if (edge.is_array()) {
    if (edge.size() != std::size_t(model.dim))
      fail(edge_path, "expected one number or " + std::to_string(model.dim) + " numbers (" +
                          state_list(model) + "), got " + show(edge));
    for (int c = 0; c < model.dim; ++c)
      sm.edge.push_back(number(edge[std::size_t(c)], at(edge_path, std::size_t(c))));
  } else {
    sm.edge.assign(std::size_t(model.dim), number(edge, edge_path));
  }
  for (int c = 0; c < model.dim; ++c) {
    const std::string epath = edge.is_array() ? at(edge_path, std::size_t(c)) : edge_path;
    const double eps = sm.edge[std::size_t(c)];
    if (!(eps > 0)) fail(epath, "must be > 0, got " + format_number(eps));
    // The edge vector is x_c - x_0: it must survive rounding at the center.
    if (!(p.center[std::size_t(c)] + eps != p.center[std::size_t(c)]))
      fail(epath, format_number(eps) + " is below the resolution of a double at " +
                      model.state_names[std::size_t(c)] + " = " +
                      format_number(p.center[std::size_t(c)]) +
                      " (center + edge rounds to center)");
  }
  sm.every = read_every(spec, path);
  return p;
}

}  // namespace

EnsembleSpec read_ensemble_spec(const Json& spec, const ModelInfo& model,
                                const SectionConfig& section) {
  const std::string path = "ensemble";
  const std::vector<std::string> kinds{
      "states", "box", "random_box", "section_grid", "loop", "parallelepiped", "file"};
  object(spec, path);
  check_keys(spec, path, kinds, "key");
  if (spec.size() != 1) {
    std::vector<std::string> given;
    for (auto it = spec.begin(); it != spec.end(); ++it) given.push_back(it.key());
    fail(path, "must hold exactly one of " + list(kinds) + ", got " +
                   (given.empty() ? std::string("none") : list(given)));
  }
  EnsembleSpec e;
  e.kind = spec.begin().key();
  const Json& body = spec.begin().value();
  const std::string body_path = join(path, e.kind);
  if (e.kind == "states")
    e.body = read_states(body, body_path, model);
  else if (e.kind == "file")
    e.body = read_file(body, body_path);
  else if (e.kind == "box")
    e.body = read_box(body, body_path, model);
  else if (e.kind == "random_box")
    e.body = read_random_box(body, body_path, model);
  else if (e.kind == "loop")
    e.body = read_loop(body, body_path, model);
  else if (e.kind == "parallelepiped")
    e.body = read_parallelepiped(body, body_path, model);
  else
    e.body = read_section_grid(body, body_path, model, section);
  return e;
}

}  // namespace vigor::host
