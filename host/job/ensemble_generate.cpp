/// @file ensemble_generate.cpp
/// @brief The initial states of an EnsembleSpec (ensemble_spec.cpp), and make_ensemble.
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
#include <utility>
#include <vector>

#include "host/backends/registry.hpp"
#include "host/job/array_file.hpp"
#include "host/job/ensemble_spec.hpp"
#include "host/job/json_fields.hpp"

namespace vigor::host {

namespace {

using namespace json;

/// Point k of `count` points from lo to hi inclusive; one point is lo. The ends are exact.
double linspace_at(double lo, double hi, std::int64_t count, std::int64_t k) {
  return count == 1 ? lo : (k == count - 1 ? hi : lo + (hi - lo) * (double(k) / double(count - 1)));
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

Ensemble from_states(const StatesSpec& s) {
  Ensemble e;
  e.count = s.count;
  e.state = s.soa;
  return e;
}

/// States read from a .npy or .csv file (host/job/array_file.hpp), one row per trajectory. A CSV
/// header picks the state columns by name, in any order, other columns ignored (a previous run's
/// final.csv continues it); without a header, the row must be exactly the state. Relative paths
/// are relative to the working directory, like output.dir.
Ensemble from_file(const FileSpec& f, const ModelInfo& model) {
  const std::string& file = f.file;
  ArrayFile t;
  try {
    t = read_array_file(file, ensemble_limits::kMaxTrajectories);
  } catch (const ArrayFileError& err) {
    fail(f.path, err.what());
  }
  std::vector<int> column(model.dim);
  if (!t.names.empty()) {
    for (int c = 0; c < model.dim; ++c) {
      const auto it = std::find(t.names.begin(), t.names.end(), model.state_names[c]);
      if (it == t.names.end())
        fail(f.path, "'" + file + "' has no column '" + model.state_names[c] +
                         "' (the header holds " + list(t.names) + "; the states need " +
                         list(model.state_names) + ")");
      column[c] = int(it - t.names.begin());
    }
  } else {
    if (t.cols != model.dim)
      fail(f.path, "'" + file + "' has " + std::to_string(t.cols) + " columns, expected " +
                       std::to_string(model.dim) + " (" + list(model.state_names) +
                       ") or a header row naming them");
    for (int c = 0; c < model.dim; ++c) column[c] = c;
  }
  if (t.rows == 0) fail(f.path, "'" + file + "' holds no states");
  if (double(t.rows) > double(ensemble_limits::kMaxTrajectories))
    fail(f.path, format_number(double(t.rows)) + " trajectories is more than the " +
                     std::to_string(ensemble_limits::kMaxTrajectories) + " allowed");
  Ensemble e;
  e.count = t.rows;
  e.state = allocate_states(e.count, model.dim, "ensemble.file");
  for (std::int64_t i = 0; i < e.count; ++i)
    for (int c = 0; c < model.dim; ++c) {
      const std::size_t k = std::size_t(i) * std::size_t(t.cols) + std::size_t(column[c]);
      const double v = t.data[k];
      if (!std::isfinite(v)) {
        const auto txt = t.text.find(k);
        fail(f.path,
             "'" + file + "' row " + std::to_string(i) +
                 (t.line.empty() ? std::string()
                                 : " (line " + std::to_string(t.line[std::size_t(i)]) + ")") +
                 ", " + model.state_names[c] +
                 (txt != t.text.end() ? ": not a number: '" + txt->second + "'"
                                      : ": must be finite, got " + format_number(v)));
      }
      e.state[std::size_t(c) * e.count + i] = v;
    }
  return e;
}

Ensemble from_box(const BoxSpec& b, const ModelInfo& model) {
  Ensemble e;
  e.count = b.total;
  e.state = allocate_states(e.count, model.dim, b.path);
  // Row-major over the coordinates: the first coordinate varies slowest, so coordinate c holds
  // runs of stride_c equal values (stride_c the product of the later counts), cycling through its
  // axis. Filled run by run: memory-bound, no per-element division.
  std::int64_t stride = e.count;
  for (int c = 0; c < model.dim; ++c) {
    stride /= b.counts[c];
    const std::vector<double> axis = linspace(b.lo[c], b.hi[c], b.counts[c]);
    double* out = e.state.data() + std::size_t(c) * e.count;
    for (std::int64_t start = 0; start < e.count; start += stride * b.counts[c])
      for (std::int64_t k = 0; k < b.counts[c]; ++k)
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

Ensemble from_random_box(const RandomBoxSpec& r, const ModelInfo& model) {
  Ensemble e;
  e.count = r.count;
  e.state = allocate_states(r.count, model.dim, r.path);
  const std::uint64_t dim = std::uint64_t(model.dim);
  for (int c = 0; c < model.dim; ++c) {
    double* out = e.state.data() + std::size_t(c) * r.count;
    const double a = r.lo[c], w = r.hi[c] - r.lo[c];
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < r.count; ++i)
      out[i] = a + w * uniform01(r.seed, std::uint64_t(i) * dim + std::uint64_t(c));
  }
  return e;
}

/// The grid point (k0, k1) of a section grid in `s`, p_c solved from H = E; false where no real
/// p_c exists (H > E with p_c = 0). Separable models: p_c = s sqrt(2 (E - H_rest) / M^{-1}_cc),
/// H_rest = H with p_c = 0. Other (q, p) models have H = 1/2 p^T M(q)^{-1} p + (terms linear in
/// p) + V, a quadratic a p_c^2 + b p_c + H_rest in p_c whose coefficients three evaluations give
/// exactly; its roots have dq_c/dt = dH/dp_c = +-sqrt(b^2 - 4 a (H_rest - E)). The sign makes
/// q_c increase through the plane for "up" and "both", decrease for "down".
bool grid_point(const SectionGridSpec& g, const ModelInfo& model, const std::vector<double>& params,
                std::size_t k0, std::size_t k1, std::vector<double>& s) {
  const bool separable = model.inv_mass != nullptr;
  const double w = separable ? model.inv_mass(params.data(), g.qc) : 0.0;
  s = g.base;
  s[g.axes[0].coordinate] = g.axes[0].value(k0);
  s[g.axes[1].coordinate] = g.axes[1].value(k1);
  s[g.pc] = 0.0;
  const double h0 = model.energy(params.data(), s.data());
  const double excess = g.energy - h0;
  // NaN (a singular potential) counts as not allowed, like a negative kinetic energy.
  if (!(excess >= 0) && separable) return false;
  if (separable) {
    s[g.pc] = g.sign * std::sqrt(2.0 * excess / w);
    return std::isfinite(s[g.pc]);
  }
  s[g.pc] = 1.0;
  const double hp = model.energy(params.data(), s.data());
  s[g.pc] = -1.0;
  const double hm = model.energy(params.data(), s.data());
  const double a = 0.5 * (hp + hm) - h0, b = 0.5 * (hp - hm);
  const double disc = b * b + 4.0 * a * excess;
  if (!(a > 0) || !(disc >= 0)) return false;
  s[g.pc] = (-b + g.sign * std::sqrt(disc)) / (2.0 * a);
  return std::isfinite(s[g.pc]);
}

Ensemble from_section_grid(const SectionGridSpec& g, const ModelInfo& model,
                           const std::vector<double>& params) {
  const std::size_t n0 = std::size_t(g.axes[0].count), n1 = std::size_t(g.axes[1].count);
  // Two passes (count, then fill) so that the SoA array is allocated once at its final size.
  std::vector<double> s;
  std::int64_t allowed = 0;
  for (std::size_t k0 = 0; k0 < n0; ++k0)
    for (std::size_t k1 = 0; k1 < n1; ++k1)
      allowed += grid_point(g, model, params, k0, k1, s) ? 1 : 0;
  if (allowed == 0)
    fail(g.energy_path, "no point of the grid is energetically allowed (H > E with " +
                            model.state_names[g.pc] + " = 0 everywhere), got " + g.energy_shown);

  Ensemble e;
  e.count = allowed;
  e.skipped = g.total - allowed;
  e.state = allocate_states(allowed, model.dim, g.axes_path);
  std::int64_t i = 0;
  for (std::size_t k0 = 0; k0 < n0; ++k0)
    for (std::size_t k1 = 0; k1 < n1; ++k1) {
      if (!grid_point(g, model, params, k0, k1, s)) continue;
      for (int c = 0; c < model.dim; ++c) e.state[std::size_t(c) * allowed + i] = s[c];
      ++i;
    }
  return e;
}

/// The (x, y) of the loop's points in its plane: counterclockwise for circle and ellipse (theta_j
/// = 2 pi j / N from the +x axis); a polygon keeps the orientation of its vertices, with points
/// per edge proportional to its length (largest remainder), at least one per edge (its first
/// vertex), so every vertex is a point of the loop.
void loop_points(const LoopSpec& l, std::vector<double>& x, std::vector<double>& y) {
  const InvariantSampling& sm = l.sampling;
  const std::size_t n = std::size_t(sm.points);
  x.assign(n, 0.0);
  y.assign(n, 0.0);
  if (sm.shape != "polygon") {
    const double cx = l.center[std::size_t(sm.plane[0])];
    const double cy = l.center[std::size_t(sm.plane[1])];
    constexpr double kTwoPi = 6.283185307179586476925286766559;
    for (std::size_t j = 0; j < n; ++j) {
      const double th = kTwoPi * double(j) / double(n);
      x[j] = cx + l.a * std::cos(th);
      y[j] = cy + l.b * std::sin(th);
    }
    return;
  }
  const std::size_t nv = l.vx.size();
  std::vector<std::int64_t> per(nv, 1);
  std::int64_t spare = sm.points - std::int64_t(nv);
  std::vector<std::pair<double, std::size_t>> remainder;
  std::int64_t given = 0;
  for (std::size_t k = 0; k < nv; ++k) {
    const double share = double(spare) * l.len[k] / l.perimeter;
    const auto whole = std::int64_t(std::floor(share));
    per[k] += whole;
    given += whole;
    remainder.push_back({share - double(whole), k});
  }
  std::stable_sort(remainder.begin(), remainder.end(),
                   [](const auto& lhs, const auto& rhs) { return lhs.first > rhs.first; });
  for (std::int64_t k = 0; given < spare; ++k, ++given) ++per[remainder[std::size_t(k)].second];
  std::size_t j = 0;
  for (std::size_t k = 0; k < nv; ++k) {
    const std::size_t k1 = (k + 1) % nv;
    for (std::int64_t m = 0; m < per[k]; ++m, ++j) {
      const double f = double(m) / double(per[k]);
      x[j] = m == 0 ? l.vx[k] : l.vx[k] + f * (l.vx[k1] - l.vx[k]);
      y[j] = m == 0 ? l.vy[k] : l.vy[k] + f * (l.vy[k1] - l.vy[k]);
    }
  }
}

Ensemble from_loop(const LoopSpec& l, const ModelInfo& model) {
  const InvariantSampling& sm = l.sampling;
  std::vector<double> x, y;
  loop_points(l, x, y);
  const std::size_t n = std::size_t(sm.points);
  Ensemble e;
  e.count = sm.points;
  e.state = allocate_states(e.count, model.dim, l.points_path);
  for (int c = 0; c < model.dim; ++c)
    for (std::size_t j = 0; j < n; ++j)
      e.state[std::size_t(c) * n + j] =
          c == sm.plane[0] ? x[j] : (c == sm.plane[1] ? y[j] : l.center[std::size_t(c)]);
  e.sampling = sm;
  return e;
}

Ensemble from_parallelepiped(const ParallelepipedSpec& p, const ModelInfo& model) {
  const InvariantSampling& sm = p.sampling;
  Ensemble e;
  e.count = 1 + model.dim;
  e.state = allocate_states(e.count, model.dim, p.path);
  const std::size_t n = std::size_t(e.count);
  for (int c = 0; c < model.dim; ++c)
    for (std::size_t i = 0; i < n; ++i)
      e.state[std::size_t(c) * n + i] =
          p.center[std::size_t(c)] + (i == std::size_t(c) + 1 ? sm.edge[std::size_t(c)] : 0.0);
  e.sampling = sm;
  return e;
}

/// Calls f with the spec's body as its own type.
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace

double GridAxis::value(std::size_t k) const { return linspace_at(lo, hi, count, std::int64_t(k)); }

std::vector<double> allocate_states(std::int64_t count, int dim, const std::string& path) {
  // Checked against physical memory first: with overcommit the allocation itself may succeed and
  // the process be killed later while the states are written.
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

Ensemble generate_ensemble(const EnsembleSpec& spec, const ModelInfo& model,
                           const std::vector<double>& params) {
  Ensemble e = std::visit(
      Overloaded{[&](const StatesSpec& s) { return from_states(s); },
                 [&](const FileSpec& f) { return from_file(f, model); },
                 [&](const BoxSpec& b) { return from_box(b, model); },
                 [&](const RandomBoxSpec& r) { return from_random_box(r, model); },
                 [&](const SectionGridSpec& g) { return from_section_grid(g, model, params); },
                 [&](const LoopSpec& l) { return from_loop(l, model); },
                 [&](const ParallelepipedSpec& p) { return from_parallelepiped(p, model); }},
      spec.body);
  e.kind = spec.kind;
  return e;
}

}  // namespace vigor::host
