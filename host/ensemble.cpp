/// @file ensemble.cpp
/// @brief Initial conditions from a job's "ensemble" block (DESIGN.md §4).
///
/// Everything is generated on the host, once, in the state order of the model (q then p), and
/// stored in the SoA layout the engines upload (state[c * count + i]). Generation depends only on
/// the job: never on the backend, the thread count or the precision of the run.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <new>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "host/array_file.hpp"
#include "host/job.hpp"
#include "host/json_read.hpp"
#include "host/registry.hpp"
#include "kernels/sections.hpp"

namespace vigor::host {

namespace {

using namespace job_detail;

/// Most trajectories one job may hold: below 2^31 - 1 (engines index trajectories with int in
/// places) and 32 GB of initial states for a 2-dof model. Larger models are further limited by
/// the memory check in allocate_states(). The fuzz build (fuzz/CMakeLists.txt) lowers it so that
/// every input is parsed in milliseconds.
#if defined(VIGOR_FUZZ_MAX_TRAJECTORIES)
constexpr std::int64_t kMaxTrajectories = VIGOR_FUZZ_MAX_TRAJECTORIES;
#else
constexpr std::int64_t kMaxTrajectories = 1'000'000'000;
#endif
/// Largest count accepted per axis before the product check (which gives the useful message).
constexpr std::int64_t kMaxAxisCount = 1'000'000'000'000'000;

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

/// Point k of `count` points from lo to hi inclusive; one point is lo. The ends are exact.
double linspace_at(double lo, double hi, std::int64_t count, std::int64_t k) {
  return count == 1 ? lo
                    : (k == count - 1 ? hi : lo + (hi - lo) * (double(k) / double(count - 1)));
}

/// All `count` points of linspace_at.
std::vector<double> linspace(double lo, double hi, std::int64_t count) {
  std::vector<double> x(count);
  for (std::int64_t k = 0; k < count; ++k) x[k] = linspace_at(lo, hi, count, k);
  return x;
}

/// Physical memory in bytes, or 0 when the system does not say.
double physical_memory_bytes() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) return double(pages) * double(page);
#endif
  return 0.0;
}

/// The SoA state array, failing on `path` rather than aborting when it does not fit in memory.
/// Checked against physical memory first: with overcommit the allocation itself may succeed and
/// the process be killed later while the states are written.
std::vector<double> allocate_states(std::int64_t count, int dim, const std::string& path) {
  const double bytes = double(count) * double(dim) * double(sizeof(double));
  const double memory = physical_memory_bytes();
  if (memory > 0 && bytes > memory)
    fail(path, std::to_string(count) + " trajectories of " + std::to_string(dim) +
                   " doubles need " + format_number(std::round(bytes / 1e9)) +
                   " GB, more than the " + format_number(std::round(memory / 1e9)) +
                   " GB of memory of this machine");
  try {
    return std::vector<double>(std::size_t(count) * std::size_t(dim));
  } catch (const std::bad_alloc&) {
    fail(path, std::to_string(count) + " trajectories of " + std::to_string(dim) +
                   " doubles do not fit in memory");
  }
}

Ensemble from_states(const Json& spec, const std::string& path, const ModelInfo& model) {
  array(spec, path);
  if (spec.empty())
    fail(path, "must hold at least one state (a row of " + state_list(model) + "), got []");
  check_total(double(spec.size()), path);
  Ensemble e;
  e.count = std::int64_t(spec.size());
  e.state = allocate_states(e.count, model.dim, path);
  for (std::int64_t i = 0; i < e.count; ++i) {
    const std::vector<double> row =
        state_row(spec[std::size_t(i)], at(path, std::size_t(i)), model);
    for (int c = 0; c < model.dim; ++c) e.state[std::size_t(c) * e.count + i] = row[c];
  }
  return e;
}

/// States read from a .npy or .csv file (host/array_file.hpp), one row per trajectory. A CSV
/// header picks the state columns by name, in any order, other columns ignored (a previous run's
/// final.csv continues it); without a header, the row must be exactly the state. Relative paths
/// are relative to the working directory, like output.dir.
Ensemble from_file(const Json& spec, const std::string& path, const ModelInfo& model) {
  object(spec, path);
  check_keys(spec, path, {"path"}, "key");
  const std::string file_path = join(path, "path");
  const Json& fj = require(spec, path, "path", "a .npy or .csv file of initial states");
  if (!fj.is_string() || fj.get<std::string>().empty())
    fail(file_path, "expected the name of a .npy or .csv file, got " + show(fj));
  const std::string file = fj.get<std::string>();
  // The system would cut the name at the NUL ("a.csv\u0000.npy" would read a.csv as .npy).
  if (file.find('\0') != std::string::npos)
    fail(file_path, "must not contain a NUL character, got " + show(fj));
  ArrayFile t;
  try {
    t = read_array_file(file, kMaxTrajectories);
  } catch (const ArrayFileError& err) {
    fail(file_path, err.what());
  }
  std::vector<int> column(model.dim);
  if (!t.names.empty()) {
    for (int c = 0; c < model.dim; ++c) {
      const auto it = std::find(t.names.begin(), t.names.end(), model.state_names[c]);
      if (it == t.names.end())
        fail(file_path, "'" + file + "' has no column '" + model.state_names[c] +
                            "' (the header holds " + list(t.names) + "; the states need " +
                            state_list(model) + ")");
      column[c] = int(it - t.names.begin());
    }
  } else {
    if (t.cols != model.dim)
      fail(file_path, "'" + file + "' has " + std::to_string(t.cols) + " columns, expected " +
                          std::to_string(model.dim) + " (" + state_list(model) +
                          ") or a header row naming them");
    for (int c = 0; c < model.dim; ++c) column[c] = c;
  }
  if (t.rows == 0) fail(file_path, "'" + file + "' holds no states");
  check_total(double(t.rows), file_path);
  Ensemble e;
  e.count = t.rows;
  e.state = allocate_states(e.count, model.dim, path);
  for (std::int64_t i = 0; i < e.count; ++i)
    for (int c = 0; c < model.dim; ++c) {
      const std::size_t k = std::size_t(i) * std::size_t(t.cols) + std::size_t(column[c]);
      const double v = t.data[k];
      if (!std::isfinite(v)) {
        const auto txt = t.text.find(k);
        fail(file_path, "'" + file + "' row " + std::to_string(i) +
                            (t.line.empty() ? std::string()
                                            : " (line " + std::to_string(t.line[std::size_t(i)]) +
                                                  ")") +
                            ", " + model.state_names[c] +
                            (txt != t.text.end() ? ": not a number: '" + txt->second + "'"
                                                 : ": must be finite, got " + format_number(v)));
      }
      e.state[std::size_t(c) * e.count + i] = v;
    }
  return e;
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

Ensemble from_box(const Json& spec, const std::string& path, const ModelInfo& model) {
  object(spec, path);
  check_keys(spec, path, {"lo", "hi", "counts"}, "key");
  const auto [lo, hi] = box_bounds(spec, path, model);
  const std::string counts_path = join(path, "counts");
  const Json& cj = require(spec, path, "counts", std::to_string(model.dim) + " integers >= 1");
  if (!cj.is_array() || cj.size() != std::size_t(model.dim))
    fail(counts_path, "expected " + std::to_string(model.dim) + " integers >= 1 (" +
                          state_list(model) + "), got " + show(cj));
  std::vector<std::int64_t> counts(model.dim);
  double total = 1.0;
  for (int c = 0; c < model.dim; ++c) {
    counts[c] = integer(cj[c], at(counts_path, c), 1, kMaxAxisCount);
    total *= double(counts[c]);
  }
  check_total(total, counts_path);

  Ensemble e;
  e.count = std::int64_t(total);
  e.state = allocate_states(e.count, model.dim, counts_path);
  // Row-major over the coordinates: the first coordinate varies slowest, so coordinate c holds
  // runs of stride_c equal values (stride_c the product of the later counts), cycling through its
  // axis. Filled run by run: memory-bound, no per-element division.
  std::int64_t stride = e.count;
  for (int c = 0; c < model.dim; ++c) {
    stride /= counts[c];
    const std::vector<double> axis = linspace(lo[c], hi[c], counts[c]);
    double* out = e.state.data() + std::size_t(c) * e.count;
    for (std::int64_t start = 0; start < e.count; start += stride * counts[c])
      for (std::int64_t k = 0; k < counts[c]; ++k)
        std::fill(out + start + k * stride, out + start + (k + 1) * stride, axis[k]);
  }
  return e;
}

/// SplitMix64's output function (Steele, Lea & Flood, OOPSLA 2014): a bijective 64-bit mixer.
inline std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Uniform double in [0, 1) for counter n under `seed`: the n-th output of SplitMix64 started at
/// `seed` (its state after n + 1 steps is seed + (n + 1) * golden gamma), top 53 bits.
/// Counter-based, so any (trajectory, component) is computed on its own: results do not depend on
/// the order of generation, the thread count or how many trajectories the box holds.
inline double uniform01(std::uint64_t seed, std::uint64_t n) {
  const std::uint64_t z = splitmix64_mix(seed + (n + 1) * 0x9E3779B97F4A7C15ull);
  return double(z >> 11) * 0x1.0p-53;
}

Ensemble from_random_box(const Json& spec, const std::string& path, const ModelInfo& model) {
  object(spec, path);
  check_keys(spec, path, {"lo", "hi", "count", "seed"}, "key");
  const auto [lo, hi] = box_bounds(spec, path, model);
  const std::string count_path = join(path, "count");
  const std::int64_t count = integer(require(spec, path, "count", "trajectories, an integer >= 1"),
                                     count_path, 1, kMaxAxisCount);
  check_total(double(count), count_path);
  std::uint64_t seed = 0;
  if (const Json* s = find(spec, "seed")) seed = unsigned_integer(*s, join(path, "seed"));

  Ensemble e;
  e.count = count;
  e.state = allocate_states(count, model.dim, count_path);
  const std::uint64_t dim = std::uint64_t(model.dim);
  for (int c = 0; c < model.dim; ++c) {
    double* out = e.state.data() + std::size_t(c) * count;
    const double a = lo[c], w = hi[c] - lo[c];
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < count; ++i)
      out[i] = a + w * uniform01(seed, std::uint64_t(i) * dim + std::uint64_t(c));
  }
  return e;
}

/// An axis of a section grid: its points are computed when used, never stored, so that a huge
/// count is refused by check_total() before anything is allocated.
struct GridAxis {
  int coordinate;
  double lo, hi;
  std::int64_t count;
  double value(std::size_t k) const { return linspace_at(lo, hi, count, std::int64_t(k)); }
};

Ensemble from_section_grid(const Json& spec, const std::string& path, const ModelInfo& model,
                           const std::vector<double>& params, const SectionConfig& section,
                           bool has_section) {
  object(spec, path);
  check_keys(spec, path, {"energy", "axes", "fixed"}, "key");
  // p_c is solved from H = E, which is quadratic in p_c for (q, p) models; a constrained model's
  // p_c would also have to satisfy the velocity form of the constraints.
  if (model.kind == "lie_group" || model.constraints > 0)
    fail(path, "model " + model.name + " is " +
                   (model.constraints > 0 ? std::string("constrained") : "not a (q, p) model") +
                   "; section_grid solves the conjugate momentum of an unconstrained (q, p) model "
                   "only; use states, box or random_box");
  // The grid lies on the section plane q_c = value, and p_c is what closes H = E; without a plane
  // on a position coordinate there is nothing to solve for.
  if (!has_section || section.kind != kernels::kSectionPlane || section.coordinate >= model.dof)
    fail(path,
         "needs a plane section on a position coordinate (e.g. \"section\": "
         "{\"coordinate\": \"q0\", \"value\": 0, \"direction\": \"up\"}): the grid lies on "
         "that plane and the conjugate momentum is solved from H = E");
  const int qc = section.coordinate;
  const int pc = model.dof + qc;
  if (model.dim - 2 < 2)
    fail(path, "model " + model.name + " has no two coordinates besides " + model.state_names[qc] +
                   " and " + model.state_names[pc] +
                   " to span the grid; use states, box or random_box");

  const std::string energy_path = join(path, "energy");
  const Json& energy_json = require(spec, path, "energy", "the energy E, a finite number");
  const double energy = number(energy_json, energy_path);

  const std::string axes_path = join(path, "axes");
  const std::string axis_example = model.state_names[qc == 0 ? 1 : 0];
  const Json& axes_json = require(
      spec, path, "axes",
      "two coordinates and their [lo, hi, count], e.g. {\"" + axis_example + "\": [-1, 1, 101]}");
  object(axes_json, axes_path);
  if (axes_json.size() != 2)
    fail(axes_path, "must name exactly two coordinates (the grid's axes), got " +
                        std::to_string(axes_json.size()) + ": " + show(axes_json));

  // A coordinate may be used once: as an axis or as a fixed value, never as q_c or p_c.
  std::vector<int> role(model.dim, 0);  // 0 free (defaults to 0), 1 axis, 2 fixed
  auto check_coordinate = [&](const std::string& name, const std::string& key_path,
                              const Json& value) -> int {
    const int c = model.state_index(name);
    if (c < 0)
      fail(key_path, "unknown state coordinate \"" + name + "\" of model " + model.name +
                         " (known: " + state_list(model) + ")");
    if (c == qc)
      fail(key_path, "is the section coordinate, fixed at the section value " +
                         format_number(section.value) + ", got " + show(value));
    if (c == pc)
      fail(key_path,
           "is solved from H = E (the momentum conjugate to the section coordinate), got " +
               show(value));
    if (role[c] == 1) fail(key_path, "is already an axis of the grid, got " + show(value));
    return c;
  };

  std::vector<GridAxis> axes;
  double total = 1.0;
  for (auto it = axes_json.begin(); it != axes_json.end(); ++it) {
    const std::string key_path = join(axes_path, it.key());
    const int c = check_coordinate(it.key(), key_path, it.value());
    const Json& a = it.value();
    if (!a.is_array() || a.size() != 3) fail(key_path, "expected [lo, hi, count], got " + show(a));
    const double lo = number(a[0], at(key_path, 0));
    const double hi = number(a[1], at(key_path, 1));
    if (!(hi >= lo))
      fail(at(key_path, 1), "must be >= lo = " + format_number(lo) + ", got " + show(a[1]));
    if (!std::isfinite(hi - lo))
      fail(at(key_path, 1), "the width hi - lo overflows a double (lo = " + format_number(lo) +
                                "), got " + show(a[1]));
    const std::int64_t n = integer(a[2], at(key_path, 2), 1, kMaxAxisCount);
    total *= double(n);
    role[c] = 1;
    axes.push_back({c, lo, hi, n});
  }
  check_total(total, axes_path);

  std::vector<double> base(model.dim, 0.0);
  base[qc] = section.value;
  if (const Json* fixed = find(spec, "fixed")) {
    const std::string fixed_path = join(path, "fixed");
    object(*fixed, fixed_path);
    for (auto it = fixed->begin(); it != fixed->end(); ++it) {
      const std::string key_path = join(fixed_path, it.key());
      const int c = check_coordinate(it.key(), key_path, it.value());
      base[c] = number(it.value(), key_path);
      role[c] = 2;
    }
  }

  // Separable models: p_c = s sqrt(2 (E - H_rest) / M^{-1}_cc), H_rest = H with p_c = 0. Other
  // (q, p) models have H = 1/2 p^T M(q)^{-1} p + (terms linear in p) + V, a quadratic
  // a p_c^2 + b p_c + H_rest in p_c whose coefficients three evaluations give exactly; its roots
  // have dq_c/dt = dH/dp_c = +-sqrt(b^2 - 4 a (H_rest - E)). The sign makes q_c increase through
  // the plane for "up" and "both", decrease for "down".
  const double sign = section.direction == kernels::kDirDown ? -1.0 : 1.0;
  const bool separable = model.inv_mass != nullptr;
  const double w = separable ? model.inv_mass(params.data(), qc) : 0.0;
  const std::size_t n0 = std::size_t(axes[0].count), n1 = std::size_t(axes[1].count);
  auto solve = [&](std::size_t k0, std::size_t k1, std::vector<double>& s) -> bool {
    s = base;
    s[axes[0].coordinate] = axes[0].value(k0);
    s[axes[1].coordinate] = axes[1].value(k1);
    s[pc] = 0.0;
    const double h0 = model.energy(params.data(), s.data());
    const double excess = energy - h0;
    // NaN (a singular potential) counts as not allowed, like a negative kinetic energy.
    if (!(excess >= 0) && separable) return false;
    if (separable) {
      s[pc] = sign * std::sqrt(2.0 * excess / w);
      return std::isfinite(s[pc]);
    }
    s[pc] = 1.0;
    const double hp = model.energy(params.data(), s.data());
    s[pc] = -1.0;
    const double hm = model.energy(params.data(), s.data());
    const double a = 0.5 * (hp + hm) - h0, b = 0.5 * (hp - hm);
    const double disc = b * b + 4.0 * a * excess;
    if (!(a > 0) || !(disc >= 0)) return false;
    s[pc] = (-b + sign * std::sqrt(disc)) / (2.0 * a);
    return std::isfinite(s[pc]);
  };

  // Two passes (count, then fill) so that the SoA array is allocated once at its final size.
  std::vector<double> s;
  std::int64_t allowed = 0;
  for (std::size_t k0 = 0; k0 < n0; ++k0)
    for (std::size_t k1 = 0; k1 < n1; ++k1) allowed += solve(k0, k1, s) ? 1 : 0;
  if (allowed == 0)
    fail(energy_path, "no point of the grid is energetically allowed (H > E with " +
                          model.state_names[pc] + " = 0 everywhere), got " + show(energy_json));

  Ensemble e;
  e.count = allowed;
  e.skipped = std::int64_t(total) - allowed;
  e.state = allocate_states(allowed, model.dim, axes_path);
  std::int64_t i = 0;
  for (std::size_t k0 = 0; k0 < n0; ++k0)
    for (std::size_t k1 = 0; k1 < n1; ++k1) {
      if (!solve(k0, k1, s)) continue;
      for (int c = 0; c < model.dim; ++c) e.state[std::size_t(c) * allowed + i] = s[c];
      ++i;
    }
  return e;
}

// --- Clouds for the phase-space invariants (loop, parallelepiped) --------------------------------

/// Largest loop: the spectral quadrature costs O(N log N) per sample for a power of two and
/// O(N^2) otherwise, so other sizes are capped lower (kMaxDftPoints).
constexpr std::int64_t kMaxLoopPoints = std::int64_t(1) << 20;
constexpr std::int64_t kMaxDftPoints = 8192;
constexpr std::int64_t kMinLoopPoints = 16;
constexpr std::int64_t kMaxEvery = 1'000'000'000'000'000;

/// Ambient (q, p) area and volume are the invariants only of unconstrained canonical models.
void require_canonical(const ModelInfo& model, const std::string& path) {
  if (model.kind == "lie_group")
    fail(path, "model " + model.name +
                   " is not a (q, p) model (its state is an attitude and a body momentum on a Lie "
                   "group): the area and volume of a cloud in its ambient coordinates are not "
                   "invariants of its flow; use the tangent-map (symplecticity) diagnostics");
  if (model.constraints > 0)
    fail(path, "model " + model.name + " is constrained (" + std::to_string(model.constraints) +
                   " holonomic constraint" + (model.constraints > 1 ? "s" : "") +
                   "): the symplectic form lives on the constraint manifold, so the area and "
                   "volume of a cloud in the ambient (q, p) coordinates are not invariants; use "
                   "the tangent-map (symplecticity) diagnostics restricted to the manifold");
}

/// A JSON string (json_read.hpp declares no string reader).
std::string text_value(const Json& v, const std::string& path) {
  if (!v.is_string()) fail(path, "must be a string, got " + show(v));
  return v.get<std::string>();
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

Ensemble from_loop(const Json& spec, const std::string& path, const ModelInfo& model) {
  object(spec, path);
  require_canonical(model, path);
  check_keys(spec, path,
             {"center", "plane", "shape", "radius", "radii", "vertices", "points", "every"}, "key");
  InvariantSampling sm;
  sm.kind = "loop";
  const std::vector<double> center =
      state_row(require(spec, path, "center",
                        std::to_string(model.dim) + " numbers (" + state_list(model) + ")"),
                join(path, "center"), model);

  const std::string plane_path = join(path, "plane");
  const Json& plane = require(spec, path, "plane",
                              "two state coordinates, e.g. [\"" + model.state_names[0] + "\", \"" +
                                  model.state_names[model.dof] + "\"]");
  if (!plane.is_array() || plane.size() != 2)
    fail(plane_path,
         "expected two state coordinate names (" + state_list(model) + "), got " + show(plane));
  for (int k = 0; k < 2; ++k) {
    const std::string name = text_value(plane[std::size_t(k)], at(plane_path, std::size_t(k)));
    sm.plane[k] = model.state_index(name);
    if (sm.plane[k] < 0)
      fail(at(plane_path, std::size_t(k)), "unknown state coordinate " +
                                               show(plane[std::size_t(k)]) + " of model " +
                                               model.name + " (known: " + state_list(model) + ")");
  }
  if (sm.plane[0] == sm.plane[1])
    fail(plane_path, "must name two different coordinates, got " + show(plane));

  const std::string shape_path = join(path, "shape");
  const Json& shape_json = require(spec, path, "shape", "\"circle\", \"ellipse\" or \"polygon\"");
  sm.shape = text_value(shape_json, shape_path);
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

  const std::string points_path = join(path, "points");
  sm.points =
      integer(require(spec, path, "points",
                      "points on the loop, an integer >= " + std::to_string(kMinLoopPoints)),
              points_path, kMinLoopPoints, kMaxLoopPoints);
  const bool power_of_two = (sm.points & (sm.points - 1)) == 0;
  if (sm.shape != "polygon" && !power_of_two && sm.points > kMaxDftPoints)
    fail(points_path, "above " + std::to_string(kMaxDftPoints) +
                          " points must be a power of two (the spectral quadrature then uses an "
                          "FFT; other sizes cost O(N^2) per sample), got " +
                          std::to_string(sm.points));
  sm.every = read_every(spec, path);

  // (x, y) of every point in the plane, counterclockwise for circle and ellipse (theta_j =
  // 2 pi j / N from the +x axis); a polygon keeps the orientation of its vertices.
  const std::size_t n = std::size_t(sm.points);
  std::vector<double> x(n), y(n);
  const double cx = center[std::size_t(sm.plane[0])], cy = center[std::size_t(sm.plane[1])];
  if (sm.shape != "polygon") {
    double a = 0.0, b = 0.0;
    if (sm.shape == "circle") {
      const std::string rpath = join(path, "radius");
      const Json& r = require(spec, path, "radius", "the radius, a number > 0");
      a = b = number(r, rpath);
      if (!(a > 0)) fail(rpath, "must be > 0, got " + show(r));
    } else {
      const std::string rpath = join(path, "radii");
      const auto [ra, rb] = plane_pair(
          require(spec, path, "radii", "[a, b], the semi-axes along the two plane coordinates"),
          rpath, "[a, b], the semi-axes along the two plane coordinates");
      if (!(ra > 0)) fail(at(rpath, 0), "must be > 0, got " + format_number(ra));
      if (!(rb > 0)) fail(at(rpath, 1), "must be > 0, got " + format_number(rb));
      a = ra;
      b = rb;
    }
    // A radius below the spacing of doubles at the center would give a loop of one point.
    if (!(cx + a != cx) || !(cy + b != cy))
      fail(join(path, sm.shape == "circle" ? "radius" : "radii"),
           "is below the resolution of a double at the center (" + format_number(cx) + ", " +
               format_number(cy) + "): the loop would collapse to a point");
    constexpr double kTwoPi = 6.283185307179586476925286766559;
    for (std::size_t j = 0; j < n; ++j) {
      const double th = kTwoPi * double(j) / double(n);
      x[j] = cx + a * std::cos(th);
      y[j] = cy + b * std::sin(th);
    }
  } else {
    const std::string vpath = join(path, "vertices");
    const Json& vj =
        require(spec, path, "vertices", "at least 3 points [x, y] in the plane's coordinates");
    if (!vj.is_array() || vj.size() < 3)
      fail(vpath, "expected at least 3 points [x, y] in the plane's coordinates, got " + show(vj));
    const std::size_t nv = vj.size();
    if (std::int64_t(nv) > sm.points)
      fail(points_path, "must be >= the number of vertices (" + std::to_string(nv) +
                            ": every vertex is a point of the loop), got " +
                            std::to_string(sm.points));
    std::vector<double> vx(nv), vy(nv), len(nv);
    double lo_x = 0, hi_x = 0, lo_y = 0, hi_y = 0;
    for (std::size_t k = 0; k < nv; ++k) {
      std::tie(vx[k], vy[k]) = plane_pair(vj[k], at(vpath, k), "a point [x, y]");
      lo_x = k ? std::min(lo_x, vx[k]) : vx[k];
      hi_x = k ? std::max(hi_x, vx[k]) : vx[k];
      lo_y = k ? std::min(lo_y, vy[k]) : vy[k];
      hi_y = k ? std::max(hi_y, vy[k]) : vy[k];
    }
    double perimeter = 0.0, twice_area = 0.0;
    for (std::size_t k = 0; k < nv; ++k) {
      const std::size_t k1 = (k + 1) % nv;
      len[k] = std::hypot(vx[k1] - vx[k], vy[k1] - vy[k]);
      if (!(len[k] > 0))
        fail(at(vpath, k1), "repeats the previous vertex (" + format_number(vx[k]) + ", " +
                                format_number(vy[k]) + "): every edge must have a length");
      perimeter += len[k];
      twice_area += vx[k] * vy[k1] - vx[k1] * vy[k];
    }
    if (!std::isfinite(perimeter) || !std::isfinite(twice_area))
      fail(vpath, "is too large: its perimeter or area overflows a double");
    // Zero enclosed area (collinear vertices, or lobes that cancel): no relative change exists.
    const double box = std::max(hi_x - lo_x, hi_y - lo_y);
    if (!(std::fabs(twice_area) > 1e-12 * box * box))
      fail(vpath, "encloses no area (signed shoelace area " + format_number(0.5 * twice_area) +
                      "): the vertices are collinear or the polygon's lobes cancel");
    // Points per edge proportional to its length (largest remainder), at least one per edge (its
    // first vertex), so every vertex is a point of the loop.
    std::vector<std::int64_t> per(nv, 1);
    std::int64_t spare = sm.points - std::int64_t(nv);
    std::vector<std::pair<double, std::size_t>> remainder;
    std::int64_t given = 0;
    for (std::size_t k = 0; k < nv; ++k) {
      const double share = double(spare) * len[k] / perimeter;
      const auto whole = std::int64_t(std::floor(share));
      per[k] += whole;
      given += whole;
      remainder.push_back({share - double(whole), k});
    }
    std::stable_sort(remainder.begin(), remainder.end(),
                     [](const auto& l, const auto& r) { return l.first > r.first; });
    for (std::int64_t k = 0; given < spare; ++k, ++given) ++per[remainder[std::size_t(k)].second];
    std::size_t j = 0;
    for (std::size_t k = 0; k < nv; ++k) {
      const std::size_t k1 = (k + 1) % nv;
      for (std::int64_t m = 0; m < per[k]; ++m, ++j) {
        const double f = double(m) / double(per[k]);
        x[j] = m == 0 ? vx[k] : vx[k] + f * (vx[k1] - vx[k]);
        y[j] = m == 0 ? vy[k] : vy[k] + f * (vy[k1] - vy[k]);
      }
    }
  }

  Ensemble e;
  e.count = sm.points;
  e.state = allocate_states(e.count, model.dim, points_path);
  for (int c = 0; c < model.dim; ++c)
    for (std::size_t j = 0; j < n; ++j)
      e.state[std::size_t(c) * n + j] =
          c == sm.plane[0] ? x[j] : (c == sm.plane[1] ? y[j] : center[std::size_t(c)]);
  e.sampling = sm;
  return e;
}

Ensemble from_parallelepiped(const Json& spec, const std::string& path, const ModelInfo& model) {
  object(spec, path);
  require_canonical(model, path);
  check_keys(spec, path, {"center", "edge", "every"}, "key");
  InvariantSampling sm;
  sm.kind = "parallelepiped";
  const std::vector<double> center =
      state_row(require(spec, path, "center",
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
    if (!(center[std::size_t(c)] + eps != center[std::size_t(c)]))
      fail(epath, format_number(eps) + " is below the resolution of a double at " +
                      model.state_names[std::size_t(c)] + " = " +
                      format_number(center[std::size_t(c)]) + " (center + edge rounds to center)");
  }
  sm.every = read_every(spec, path);

  Ensemble e;
  e.count = 1 + model.dim;
  e.state = allocate_states(e.count, model.dim, path);
  const std::size_t n = std::size_t(e.count);
  for (int c = 0; c < model.dim; ++c)
    for (std::size_t i = 0; i < n; ++i)
      e.state[std::size_t(c) * n + i] =
          center[std::size_t(c)] + (i == std::size_t(c) + 1 ? sm.edge[std::size_t(c)] : 0.0);
  e.sampling = sm;
  return e;
}

/// Where trajectory i of the ensemble came from, for messages: the row of "states" (path
/// ensemble.states[i]), or the trajectory index of a generated ensemble (path ensemble.<kind>).
struct RowPlace {
  std::string path;
  std::string where;
};

RowPlace row_place(const Ensemble& e, std::int64_t i) {
  const std::string kind_path = join("ensemble", e.kind);
  if (e.kind == "states") return {at(kind_path, std::size_t(i)), "at this state"};
  return {kind_path, "at trajectory " + std::to_string(i)};
}

/// "(q0 = 0, q1 = 1.5, …)" for trajectory i.
std::string state_text(const Ensemble& e, const ModelInfo& model, std::int64_t i) {
  std::string s;
  for (int c = 0; c < model.dim; ++c)
    s += (c ? ", " : "(") + model.state_names[c] + " = " +
         format_number(e.state[std::size_t(c) * e.count + i]);
  return s + ")";
}

std::string energy_text(double x) { return std::isnan(x) ? "nan" : format_number(x); }

}  // namespace

namespace job_detail {

void check_initial_states(const Ensemble& e, const ModelInfo& model,
                          const std::vector<double>& params, bool float_range) {
  const std::int64_t n = e.count;
  const int dim = model.dim;
  const double* state = e.state.data();
  const double* p = params.data();
  const double float_max = double(std::numeric_limits<float>::max());
  auto bad = [&](std::int64_t i, double* row) {
    for (int c = 0; c < dim; ++c) {
      row[c] = state[std::size_t(c) * n + i];
      if (float_range && !std::isfinite(float(row[c]))) return true;
    }
    const double energy = model.energy(p, row);
    if (!std::isfinite(energy) || (float_range && !(std::fabs(energy) <= float_max))) return true;
    // Off the constraint manifold (checked once, in double, when the ensemble is made).
    return !float_range && !model.check_state(p, row).empty();
  };
  // One pass, in parallel; the first bad row (smallest index) is the one reported.
  std::int64_t first = n;
#pragma omp parallel
  {
    std::vector<double> row(std::size_t(dim), 0.0);
#pragma omp for schedule(static) reduction(min : first)
    for (std::int64_t i = 0; i < n; ++i)
      if (i < first && bad(i, row.data())) first = i;
  }
  if (first == n) return;

  const RowPlace place = row_place(e, first);
  std::vector<double> row(std::size_t(dim), 0.0);
  for (int c = 0; c < dim; ++c) {
    row[c] = state[std::size_t(c) * n + first];
    if (float_range && !std::isfinite(float(row[c])))
      fail(place.path, model.state_names[c] + " = " + format_number(row[c]) + " " + place.where +
                           " is beyond the range of a float (3.4e38) in this float-precision run");
  }
  const double energy = model.energy(p, row.data());
  const std::string shown = state_text(e, model, first);
  if (!float_range && std::isfinite(energy)) {
    const std::string off = model.check_state(p, row.data());
    if (!off.empty()) fail(place.path, place.where + " " + shown + ": " + off);
  }
  if (!std::isfinite(energy))
    fail(place.path, "energy is " + energy_text(energy) + " " + place.where + " " + shown);
  fail(place.path, "energy is " + format_number(energy) + " " + place.where + " " + shown +
                       ", beyond the range of a float (3.4e38) in this float-precision run");
}

}  // namespace job_detail

Ensemble make_ensemble(const nlohmann::ordered_json& spec, const ModelInfo& model,
                       const std::vector<double>& params, const SectionConfig& section,
                       bool has_section) {
  const std::string path = "ensemble";
  const std::vector<std::string> kinds{"states", "box",  "random_box",    "section_grid",
                                       "loop",   "parallelepiped", "file"};
  object(spec, path);
  check_keys(spec, path, kinds, "key");
  if (spec.size() != 1) {
    std::vector<std::string> given;
    for (auto it = spec.begin(); it != spec.end(); ++it) given.push_back(it.key());
    fail(path, "must hold exactly one of " + list(kinds) + ", got " +
                   (given.empty() ? std::string("none") : list(given)));
  }
  const std::string kind = spec.begin().key();
  const Json& body = spec.begin().value();
  const std::string body_path = join(path, kind);
  Ensemble e;
  if (kind == "states") {
    e = from_states(body, body_path, model);
  } else if (kind == "file") {
    e = from_file(body, body_path, model);
  } else if (kind == "box") {
    e = from_box(body, body_path, model);
  } else if (kind == "random_box") {
    e = from_random_box(body, body_path, model);
  } else if (kind == "loop") {
    e = from_loop(body, body_path, model);
  } else if (kind == "parallelepiped") {
    e = from_parallelepiped(body, body_path, model);
  } else {
    e = from_section_grid(body, body_path, model, params, section, has_section);
  }
  e.kind = kind;
  // A row the model cannot even evaluate (a Kepler body at the origin, a momentum whose kinetic
  // energy overflows) is bad input, not a run-time status. section_grid rows lie on H = E.
  if (kind != "section_grid") check_initial_states(e, model, params, false);
  return e;
}

}  // namespace vigor::host
