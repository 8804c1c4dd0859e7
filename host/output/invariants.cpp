/// @file invariants.cpp
/// @brief Area, Poincaré integral invariant and volume of loop / parallelepiped ensembles
/// (invariants.csv and the "invariants" object of summary.json).
///
/// Reads the stroboscopic samples back from the run's hit spill. Records of one trajectory are in
/// chronological order in the file, so the m-th record of trajectory i is its state at step
/// (m + 1) * every. Samples are gathered in windows of sample indices that fit a memory budget,
/// one pass over the file per window, so a long run never needs all samples in memory at once.
#include "host/output/invariants.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

#include "host/backends/cpu_info.hpp"
#include "host/backends/registry.hpp"

namespace vigor::host {

namespace fs = std::filesystem;

namespace {

using Complex = std::complex<double>;

/// Memory for one window of samples (states of every point of the cloud at several times).
constexpr std::size_t kWindowBytes = std::size_t(256) << 20;

bool is_power_of_two(std::size_t n) { return n > 0 && (n & (n - 1)) == 0; }

/// X_k = sum_j x_j exp(-2 pi i j k / N).
std::vector<Complex> spectrum(std::span<const double> x) {
  const std::size_t n = x.size();
  std::vector<Complex> out(n);
  // Twiddles from cos/sin of the exact angle (not by recurrence) keep the rule at round-off.
  auto twiddle = [n](std::size_t m) {
    const double a = -2.0 * std::numbers::pi * double(m) / double(n);
    return Complex(std::cos(a), std::sin(a));
  };
  if (!is_power_of_two(n)) {
    std::vector<Complex> w(n);
    for (std::size_t m = 0; m < n; ++m) w[m] = twiddle(m);
    for (std::size_t k = 0; k < n; ++k) {
      Complex s = 0;
      std::size_t m = 0;  // j k mod N, advanced without overflow
      for (std::size_t j = 0; j < n; ++j) {
        s += x[j] * w[m];
        m += k;
        if (m >= n) m -= n;
      }
      out[k] = s;
    }
    return out;
  }
  // Iterative radix-2 Cooley–Tukey on the bit-reversed input.
  out[0] = x[0];
  for (std::size_t j = 1, r = 0; j < n; ++j) {
    std::size_t bit = n >> 1;
    for (; r & bit; bit >>= 1) r ^= bit;
    r ^= bit;
    out[r] = x[j];
  }
  std::vector<Complex> w(n / 2 + 1);
  for (std::size_t m = 0; m < w.size(); ++m) w[m] = twiddle(m);
  for (std::size_t len = 2; len <= n; len <<= 1) {
    const std::size_t half = len / 2, step = n / len;
    for (std::size_t s = 0; s < n; s += len)
      for (std::size_t j = 0; j < half; ++j) {
        const Complex a = out[s + j], b = out[s + j + half] * w[j * step];
        out[s + j] = a + b;
        out[s + j + half] = a - b;
      }
  }
  return out;
}

/// ∮ p dq from the spectra: (2 pi / N^2) Re sum_k conj(P_k) i k Q_k, k the signed frequency.
double pairing(const std::vector<Complex>& P, const std::vector<Complex>& Q) {
  const std::size_t n = P.size();
  double s = 0.0;
  for (std::size_t k = 1; k < n; ++k) {
    // The Nyquist mode of an even N has no derivative that is real on the grid: dropped.
    if (2 * k == n) continue;
    const double kk = 2 * k < n ? double(k) : double(k) - double(n);
    s += kk * (std::conj(P[k]) * Complex(0.0, 1.0) * Q[k]).real();
  }
  return 2.0 * std::numbers::pi * s / (double(n) * double(n));
}

void check_sizes(std::span<const double> a, std::span<const double> b) {
  if (a.size() != b.size() || a.size() < 3)
    throw std::invalid_argument("loop integral: two coordinate arrays of the same length >= 3");
}

/// Shortest round-trip text of a double ("nan" for NaN).
void append_number(std::string& out, double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

/// The values of one sample time: loop (area, Poincaré invariant), parallelepiped (volume ratio).
struct SampleValues {
  double a = std::numeric_limits<double>::quiet_NaN();
  double b = std::numeric_limits<double>::quiet_NaN();
};

/// Evaluates one sample: `x` holds the cloud's states, SoA x[c * n + i].
class Evaluator {
 public:
  Evaluator(const InvariantSampling& sm, int dof, int dim, std::int64_t n)
      : sm_(sm), dof_(dof), dim_(dim), n_(std::size_t(n)) {}

  SampleValues operator()(const double* x) const {
    return sm_.kind == "loop" ? loop(x) : parallelepiped(x);
  }

 private:
  std::span<const double> component(const double* x, int c) const {
    return {x + std::size_t(c) * n_, n_};
  }

  SampleValues loop(const double* x) const {
    SampleValues v;
    const auto X = component(x, sm_.plane[0]), Y = component(x, sm_.plane[1]);
    if (sm_.shape == "polygon") {
      v.a = loop_area(X, Y, false);
      v.b = 0.0;
      for (int i = 0; i < dof_; ++i)
        v.b += loop_integral_trapezoid(component(x, dof_ + i), component(x, i));
      return v;
    }
    // One transform per component, shared by the area and the invariant.
    std::vector<std::vector<Complex>> s(static_cast<std::size_t>(dim_));
    auto spec = [&](int c) -> const std::vector<Complex>& {
      if (s[std::size_t(c)].empty()) s[std::size_t(c)] = spectrum(component(x, c));
      return s[std::size_t(c)];
    };
    v.a = 0.5 * (pairing(spec(sm_.plane[0]), spec(sm_.plane[1])) -
                 pairing(spec(sm_.plane[1]), spec(sm_.plane[0])));
    v.b = 0.0;
    for (int i = 0; i < dof_; ++i) v.b += pairing(spec(dof_ + i), spec(i));
    return v;
  }

  SampleValues parallelepiped(const double* x) const {
    // Column c: the edge vector (x_{c+1} - x_0) / eps_c, so the matrix is the identity at t = 0
    // (scaled before the determinant: a product of many small eps_c could underflow).
    std::vector<double> m(std::size_t(dim_) * std::size_t(dim_));
    for (int r = 0; r < dim_; ++r)
      for (int c = 0; c < dim_; ++c) {
        const double* row = x + std::size_t(r) * n_;
        m[std::size_t(r) * std::size_t(dim_) + std::size_t(c)] =
            (row[std::size_t(c) + 1] - row[0]) / sm_.edge[std::size_t(c)];
      }
    return {determinant(std::move(m), dim_), 0.0};
  }

  const InvariantSampling& sm_;
  int dof_, dim_;
  std::size_t n_;
};

/// The states of samples [a, b) of every trajectory, out[(m - a) * dim * n + c * n + i], read in
/// one pass over the spill file.
void read_window(const HitSpill& hits, std::int64_t a, std::int64_t b, std::vector<double>& out) {
  const int dim = hits.dim();
  const std::int64_t n = hits.trajectories();
  const std::size_t per_sample = std::size_t(dim) * std::size_t(n);
  out.assign(std::size_t(b - a) * per_sample, 0.0);
  std::vector<std::int64_t> seen(std::size_t(n), 0);
  std::FILE* f = std::fopen(hits.file().c_str(), "rb");
  if (!f) throw std::runtime_error("cannot read " + hits.file().string());
  const std::size_t words = hits.record_bytes() / sizeof(double);
  std::vector<double> buf(std::max<std::size_t>(1, (std::size_t(1) << 18) / words) * words);
  std::int64_t records = 0;
  for (;;) {
    const std::size_t got = std::fread(buf.data(), sizeof(double), buf.size(), f);
    for (std::size_t at = 0; at + words <= got; at += words) {
      std::int64_t t;
      std::memcpy(&t, &buf[at], sizeof t);
      ++records;
      if (t < 0 || t >= n) continue;
      const std::int64_t m = seen[std::size_t(t)]++;
      if (m < a || m >= b) continue;
      double* dst = out.data() + std::size_t(m - a) * per_sample + std::size_t(t);
      for (int c = 0; c < dim; ++c)
        dst[std::size_t(c) * std::size_t(n)] = buf[at + 2 + std::size_t(c)];
    }
    if (got < buf.size()) break;
  }
  const bool bad = std::ferror(f) != 0;
  std::fclose(f);
  if (bad || records != hits.total())
    throw std::runtime_error("cannot read " + hits.file().string() + " back (" +
                             std::to_string(records) + " of " + std::to_string(hits.total()) +
                             " records)");
}

/// Sample m (0-based) is the state at step (m + 1) * every; it is valid while every trajectory
/// of the cloud still has it (a stopped trajectory records nothing more).
struct SampleCounts {
  std::int64_t samples = 0;  ///< samples the run was asked for (t = 0 not counted)
  std::int64_t valid = 0;    ///< leading samples that every trajectory of the cloud has
  std::int64_t stopped = 0;  ///< trajectories that stopped before the last sample
};

SampleCounts count_samples(const Job& job, const HitSpill& hits) {
  const std::int64_t samples = job.steps / job.ensemble.sampling.every;
  SampleCounts counts{samples, samples, 0};
  for (std::int64_t i = 0; i < job.ensemble.count; ++i) {
    const std::int64_t c = hits.counts()[std::size_t(i)];
    counts.valid = std::min(counts.valid, c);
    counts.stopped += c < samples ? 1 : 0;
  }
  return counts;
}

/// The time of sample m.
double sample_time(const Job& job, std::int64_t m) {
  return double((m + 1) * job.ensemble.sampling.every) * job.integration.dt;
}

/// t = 0 from the initial states as the run saw them (rounded to float in a float run).
std::vector<double> initial_states(const Job& job) {
  std::vector<double> initial = job.ensemble.state;
  if (job.integration.precision == Precision::kFloat)
    for (double& v : initial) v = double(float(v));
  return initial;
}

/// The columns of invariants.csv, empty, with room for t = 0 and every sample.
std::vector<Column> empty_columns(bool is_loop, std::int64_t samples) {
  const std::vector<std::string> names =
      is_loop ? std::vector<std::string>{"t", "area", "area_relative_change", "poincare_invariant",
                                         "poincare_relative_change"}
              : std::vector<std::string>{"t", "volume_ratio", "volume_relative_change"};
  std::vector<Column> columns;
  for (const auto& name : names) columns.push_back({name, Column::Kind::kReal, false, {}, {}});
  for (auto& c : columns) c.real.reserve(std::size_t(samples + 1));
  return columns;
}

/// Appends the rows of invariants.csv, one per sample time, and keeps the largest finite
/// relative changes for summary.json.
class RowWriter {
 public:
  RowWriter(std::vector<Column>& columns, bool is_loop, const SampleValues& initial)
      : columns_(columns), is_loop_(is_loop), v0_(initial), scale_(std::fabs(initial.a)) {}

  void add(double t, const SampleValues& v) {
    std::vector<double> row{t};
    if (is_loop_) {
      const double da = (v.a - v0_.a) / scale_, db = (v.b - v0_.b) / scale_;
      if (std::isfinite(da)) max_a_ = std::max(max_a_, std::fabs(da));
      if (std::isfinite(db)) max_b_ = std::max(max_b_, std::fabs(db));
      row.insert(row.end(), {v.a, da, v.b, db});
    } else {
      const double d = v.a / v0_.a - 1.0;
      if (std::isfinite(d)) max_a_ = std::max(max_a_, std::fabs(d));
      row.insert(row.end(), {v.a, d});
    }
    for (std::size_t k = 0; k < row.size(); ++k) columns_[k].real.push_back(row[k]);
  }

  /// The largest finite |relative change| of the first (area or volume) and second (Poincaré
  /// invariant) values so far.
  double max_a() const { return max_a_; }
  double max_b() const { return max_b_; }

 private:
  std::vector<Column>& columns_;
  bool is_loop_;
  SampleValues v0_;
  // Both loop changes are relative to |area(0)|: for a conjugate plane (q_i, p_i) that equals
  // |I(0)|; for any other plane I(0) = 0 and the loop's own area is the natural scale.
  double scale_;
  double max_a_ = 0.0, max_b_ = 0.0;
};

/// The rows of samples [0, valid), read and evaluated a memory window at a time, on `threads`
/// threads.
void add_recorded_samples(const Job& job, const HitSpill& hits, const Evaluator& evaluate, int dim,
                          std::int64_t valid, int threads, RowWriter& rows) {
  const std::int64_t n = job.ensemble.count;
  const std::size_t per_sample = std::size_t(dim) * std::size_t(n) * sizeof(double);
  const std::int64_t window = std::max<std::int64_t>(1, std::int64_t(kWindowBytes / per_sample));
  std::vector<double> states;
  for (std::int64_t a = 0; a < valid; a += window) {
    const std::int64_t b = std::min(valid, a + window);
    read_window(hits, a, b, states);
    std::vector<SampleValues> vals(std::size_t(b - a));
#pragma omp parallel for schedule(dynamic) num_threads(threads)
    for (std::int64_t m = a; m < b; ++m)
      vals[std::size_t(m - a)] =
          evaluate(states.data() + std::size_t(m - a) * std::size_t(dim) * std::size_t(n));
    for (std::int64_t m = a; m < b; ++m) rows.add(sample_time(job, m), vals[std::size_t(m - a)]);
  }
}

void add_loop_summary(nlohmann::ordered_json& s, const InvariantSampling& sm,
                      const ModelInfo& model, const SampleValues& v0, const RowWriter& rows) {
  s["shape"] = sm.shape;
  s["plane"] = {model.state_names[std::size_t(sm.plane[0])],
                model.state_names[std::size_t(sm.plane[1])]};
  s["points"] = sm.points;
  s["quadrature"] = sm.shape == "polygon" ? "trapezoid" : "spectral";
  s["area_initial"] = v0.a;
  s["poincare_invariant_initial"] = v0.b;
  s["area_relative_change_max"] = rows.max_a();
  s["poincare_relative_change_max"] = rows.max_b();
}

void add_parallelepiped_summary(nlohmann::ordered_json& s, const InvariantSampling& sm,
                                const SampleValues& v0, const RowWriter& rows) {
  s["edge"] = sm.edge;
  s["volume_ratio_initial"] = v0.a;
  s["volume_relative_change_max"] = rows.max_a();
}

void add_stopped_note(nlohmann::ordered_json& s, const Job& job, const SampleCounts& counts) {
  s["stopped_trajectories"] = counts.stopped;
  std::string t_first;
  append_number(t_first, sample_time(job, counts.valid));
  s["note"] =
      std::to_string(counts.stopped) +
      " trajectories of the cloud stopped (see final.csv status); samples from t = " + t_first +
      " on are NaN in invariants.csv and the maxima cover the valid samples only";
}

/// The "invariants" object of summary.json.
nlohmann::ordered_json invariants_summary(const Job& job, const ModelInfo& model,
                                          const SampleCounts& counts, const SampleValues& v0,
                                          const RowWriter& rows) {
  const InvariantSampling& sm = job.ensemble.sampling;
  nlohmann::ordered_json s;
  s["kind"] = sm.kind;
  s["every"] = sm.every;
  s["samples"] = counts.samples + 1;
  s["valid_samples"] = counts.valid + 1;
  if (sm.kind == "loop")
    add_loop_summary(s, sm, model, v0, rows);
  else
    add_parallelepiped_summary(s, sm, v0, rows);
  if (counts.valid < counts.samples) add_stopped_note(s, job, counts);
  return s;
}

}  // namespace

double loop_integral_spectral(std::span<const double> p, std::span<const double> q) {
  check_sizes(p, q);
  return pairing(spectrum(p), spectrum(q));
}

double loop_integral_trapezoid(std::span<const double> p, std::span<const double> q) {
  check_sizes(p, q);
  const std::size_t n = p.size();
  double s = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t j1 = j + 1 == n ? 0 : j + 1;
    s += 0.5 * (p[j] + p[j1]) * (q[j1] - q[j]);
  }
  return s;
}

double loop_area(std::span<const double> x, std::span<const double> y, bool spectral) {
  check_sizes(x, y);
  if (spectral) {
    const auto X = spectrum(x), Y = spectrum(y);
    return 0.5 * (pairing(X, Y) - pairing(Y, X));
  }
  // Shoelace: exact for the polygon through the points.
  const std::size_t n = x.size();
  double s = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t j1 = j + 1 == n ? 0 : j + 1;
    s += x[j] * y[j1] - x[j1] * y[j];
  }
  return 0.5 * s;
}

double determinant(std::vector<double> a, int n) {
  if (n < 0 || a.size() != std::size_t(n) * std::size_t(n))
    throw std::invalid_argument("determinant: expected an n x n matrix");
  double det = 1.0;
  const std::size_t N = std::size_t(n);
  for (std::size_t k = 0; k < N; ++k) {
    std::size_t piv = k;
    for (std::size_t r = k + 1; r < N; ++r)
      if (std::fabs(a[r * N + k]) > std::fabs(a[piv * N + k])) piv = r;
    if (a[piv * N + k] == 0.0) return 0.0;
    if (piv != k) {
      for (std::size_t c = 0; c < N; ++c) std::swap(a[k * N + c], a[piv * N + c]);
      det = -det;
    }
    const double d = a[k * N + k];
    det *= d;
    for (std::size_t r = k + 1; r < N; ++r) {
      const double f = a[r * N + k] / d;
      if (f == 0.0) continue;
      for (std::size_t c = k + 1; c < N; ++c) a[r * N + c] -= f * a[k * N + c];
    }
  }
  return det;
}

InvariantsTable invariants_table(const Job& job, const HitSpill& hits, int threads) {
  const InvariantSampling& sm = job.ensemble.sampling;
  const ModelInfo* model = find_model(job.integration.model);
  if (sm.kind.empty() || !model) throw std::logic_error("invariants_table: not a cloud ensemble");
  const bool is_loop = sm.kind == "loop";
  const Evaluator evaluate(sm, model->dof, model->dim, job.ensemble.count);
  const SampleValues v0 = evaluate(initial_states(job).data());
  const SampleCounts counts = count_samples(job, hits);

  InvariantsTable table;
  table.columns = empty_columns(is_loop, counts.samples);
  RowWriter rows(table.columns, is_loop, v0);
  rows.add(0.0, v0);
  add_recorded_samples(job, hits, evaluate, model->dim, counts.valid, thread_count(threads), rows);
  // Samples a stopped trajectory never recorded: NaN (the default SampleValues).
  for (std::int64_t m = counts.valid; m < counts.samples; ++m)
    rows.add(sample_time(job, m), SampleValues{});
  table.summary = invariants_summary(job, *model, counts, v0, rows);
  return table;
}

nlohmann::ordered_json write_invariants(const fs::path& file, const Job& job, const HitSpill& hits,
                                        int threads) {
  InvariantsTable table = invariants_table(job, hits, threads);
  write_csv(file, table.columns, false);
  return std::move(table.summary);
}

}  // namespace vigor::host
