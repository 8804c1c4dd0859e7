/// @file cpu_suite.cpp
/// @brief vigor-bench-cpu: vigor's CPU engine, end to end, next to a hand-written
/// SIMD-across-trajectories reference and Boost.Odeint (issue 8's measurement side).
///
/// For each workload and precision (FP64, FP32), trajectory-steps per second of
///   * the engine, run exactly as `vigor run` runs it: a job (JSON text) parsed and validated by
///     host::parse_job, then host::run_ensemble with RunOptions{threads = all, quiet = true};
///     reported as trajectory-steps / kernel seconds (time inside the engine's launches) and
///     / wall seconds (engine construction, upload, every segment and drain, download);
///   * the SIMD reference (cpu_simd_reference.cpp): the same arithmetic written by hand, blocks of
///     trajectories in vector lanes, `#pragma omp simd` over the lanes, OpenMP over blocks;
///   * Boost.Odeint's velocity_verlet per trajectory, OpenMP over trajectories (both Hénon–Heiles
///     workloads; cpu_odeint.cpp, present when Boost was found at configure time).
/// Workloads (Störmer–Verlet, h = 0.01):
///   henon_heiles  a = 1, b = -1/3, section_grid at E = 1/8 on the section q0 = 0 (upwards), which
///                 stays on during the run (the engine detects, locates and records crossings);
///   henon_heiles_bare  the same ensemble with no section and H evaluated after the last step only
///                 (diagnostics.conservation_every = steps), by the engine and by the reference:
///                 the work per step of Odeint's loop (the engine adds a non-finite test);
///   kepler        mu = 1, random_box around q = (0.7, 0), p = (0, 1.35) (eccentricity ~0.28);
///   pendulum      m = l = g = 1, random_box q in [-2, 2], p in [-0.1, 0.1] (amplitudes <= ~2 rad).
/// Each timing is repeated (--repeats, default 3; the implementations take turns) and the median
/// is reported. The check: a strided subset of 1000 trajectories is run for 1000 steps by every
/// implementation and the final states are compared (max over components of |a - b| / max(1, |b|));
/// FP64 must agree to 1e-12 (same algorithm), FP32 to 1e-4; the timed runs must finish every
/// step with status ok, finite states and a small energy error. A result that fails is reported as
/// WRONG, however fast.
///
///   vigor-bench-cpu [--trajectories N] [--steps N] [--quick] [--repeats R] [--threads T]
///                   [--workloads henon_heiles,henon_heiles_bare,kepler,pendulum]
///                   [--precision both|fp64|fp32] [--conservation-every K]
///                   [--json FILE]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.hpp"
#include "bench/cpu_suite.hpp"
#include "host/job/job.hpp"
#include "host/output/summary.hpp"
#include "host/run/run.hpp"
#include "vigor/version.hpp"

#ifndef VIGOR_BENCH_ISA_FLAGS
#define VIGOR_BENCH_ISA_FLAGS "unknown"
#endif
#ifndef VIGOR_BENCH_COMPILE_FLAGS
#define VIGOR_BENCH_COMPILE_FLAGS "unknown"
#endif

namespace {

using vigor_bench_util::cpu_model;
using vigor_bench_util::format_number;
using vigor_bench_util::seconds_since;
using vigor_bench_util::utc_now;

using vigor_bench_cpu::PeerResult;
using vigor_bench_cpu::Problem;
using vigor_bench_cpu::Workload;
using Json = nlohmann::ordered_json;

constexpr double kDt = 0.01;
constexpr std::int64_t kCheckTrajectories = 1000;
constexpr std::int64_t kCheckSteps = 1000;
constexpr double kTolFp64 = 1e-12;
constexpr double kTolFp32 = 1e-4;
/// Energy error above which a timed run counts as wrong (every workload stays far below it at
/// h = 0.01: ~1e-6 Henon-Heiles, ~1e-4 Kepler and pendulum).
constexpr double kMaxEnergyError = 1e-2;

struct Options {
  std::int64_t trajectories = 100'000;
  std::int64_t steps = 10'000;
  bool quick = false;
  int repeats = 3;
  int threads = 0;  ///< 0: all (omp_get_max_threads)
  std::vector<Workload> workloads{Workload::kHenonHeiles, Workload::kHenonHeilesBare,
                                  Workload::kKepler, Workload::kPendulum};
  bool fp64 = true, fp32 = true;
  /// henon_heiles_bare's diagnostics.conservation_every (0: steps, H after the last step only).
  std::int64_t conservation_every = 0;
  std::string json;
};

[[noreturn]] void usage(const std::string& error) {
  std::FILE* out = error.empty() ? stdout : stderr;
  if (!error.empty()) std::fprintf(out, "vigor-bench-cpu: %s\n\n", error.c_str());
  std::fprintf(
      out,
      "usage: vigor-bench-cpu [--trajectories N] [--steps N] [--quick] [--repeats R]\n"
      "                       [--threads T] [--workloads LIST] [--precision both|fp64|fp32]\n"
      "                       [--conservation-every K] [--json FILE]\n\n"
      "Trajectory-steps per second on the CPU of Stormer-Verlet (h = 0.01) through vigor's\n"
      "engine (as `vigor run` runs a job), a hand-written SIMD-across-trajectories reference\n"
      "and Boost.Odeint velocity_verlet, on henon_heiles (E = 1/8, section q0 = 0 up), kepler\n"
      "and pendulum, FP64 and FP32, with a correctness check of every implementation;\n"
      "henon_heiles_bare is the same ensemble with no section and H checked only after the\n"
      "last step (diagnostics.conservation_every = steps): Odeint's work per step plus a\n"
      "non-finite test of the state.\n"
      "  --trajectories  ensemble size (default 100000)\n"
      "  --steps         steps per run (default 10000)\n"
      "  --quick         10^4 trajectories x 10^3 steps (unless given explicitly)\n"
      "  --repeats       timed runs per implementation; the median is reported (default 3)\n"
      "  --threads       OpenMP threads for every implementation (default: all)\n"
      "  --workloads     comma-separated subset of henon_heiles,henon_heiles_bare,kepler,\n"
      "                  pendulum (default: all)\n"
      "  --precision     both (default), fp64 or fp32\n"
      "  --conservation-every  henon_heiles_bare's diagnostics.conservation_every (default:\n"
      "                  steps). The engine then evaluates H every K steps, the SIMD reference\n"
      "                  and Odeint still never: what the checks cost. The states do not\n"
      "                  depend on K; the correctness check runs with the default K\n"
      "  --json          also write the results and machine info as JSON to FILE\n\n"
      "Exit status: 0 all checks ok, 1 a check failed (WRONG), 2 bad arguments, 3 error.\n");
  std::exit(error.empty() ? 0 : 2);
}

std::int64_t parse_count(const std::string& s, const char* what) {
  const std::int64_t v = vigor_bench_util::positive_count(s);
  if (v < 0) usage(std::string(what) + ": expected a positive integer, got '" + s + "'");
  return v;
}

const char* workload_name(Workload w) {
  switch (w) {
    case Workload::kHenonHeiles:
      return "henon_heiles";
    case Workload::kKepler:
      return "kepler";
    case Workload::kPendulum:
      return "pendulum";
    case Workload::kHenonHeilesBare:
      return "henon_heiles_bare";
  }
  return "?";
}

Options parse_args(int argc, char** argv) {
  Options o;
  bool n_given = false, steps_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage("");
    } else if (a == "--trajectories") {
      o.trajectories = parse_count(value(), "--trajectories");
      n_given = true;
    } else if (a == "--steps") {
      o.steps = parse_count(value(), "--steps");
      steps_given = true;
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--repeats") {
      const std::int64_t r = parse_count(value(), "--repeats");
      if (r > 100) usage("--repeats: at most 100");
      o.repeats = int(r);
    } else if (a == "--threads") {
      const std::int64_t t = parse_count(value(), "--threads");
      if (t > 4096) usage("--threads: at most 4096");
      o.threads = int(t);
    } else if (a == "--workloads") {
      o.workloads.clear();
      std::stringstream ss(value());
      for (std::string item; std::getline(ss, item, ',');) {
        bool found = false;
        for (Workload w : {Workload::kHenonHeiles, Workload::kHenonHeilesBare, Workload::kKepler,
                           Workload::kPendulum})
          if (item == workload_name(w)) {
            o.workloads.push_back(w);
            found = true;
          }
        if (!found)
          usage("--workloads: unknown workload '" + item +
                "' (known: henon_heiles, henon_heiles_bare, kepler, pendulum)");
      }
      if (o.workloads.empty()) usage("--workloads: none given");
    } else if (a == "--precision") {
      const std::string p = value();
      if (p == "both") {
        o.fp64 = o.fp32 = true;
      } else if (p == "fp64") {
        o.fp64 = true;
        o.fp32 = false;
      } else if (p == "fp32") {
        o.fp64 = false;
        o.fp32 = true;
      } else {
        usage("--precision: expected both, fp64 or fp32, got '" + p + "'");
      }
    } else if (a == "--conservation-every") {
      o.conservation_every = parse_count(value(), "--conservation-every");
    } else if (a == "--json") {
      o.json = value();
    } else {
      usage("unknown argument '" + a + "'");
    }
  }
  if (o.quick) {
    if (!n_given) o.trajectories = 10'000;
    if (!steps_given) o.steps = 1'000;
  }
  if (o.threads == 0) o.threads = omp_get_max_threads();
  return o;
}

// --- Jobs: what a user would write ----------------------------------------------------------

/// The job for a workload, as JSON. For Hénon–Heiles the section grid has k0 x k1 points, of
/// which the energetically allowed ones (about 3/4) become trajectories.
Json make_job_json(Workload w, std::int64_t n, std::int64_t steps, bool fp32, std::int64_t k0,
                   std::int64_t k1) {
  Json j;
  switch (w) {
    case Workload::kHenonHeiles:
    case Workload::kHenonHeilesBare:
      j["model"] = {{"name", "henon_heiles"}, {"params", {{"a", 1.0}, {"b", -1.0 / 3.0}}}};
      break;
    case Workload::kKepler:
      j["model"] = {{"name", "kepler"}, {"params", {{"mu", 1.0}}}};
      break;
    case Workload::kPendulum:
      j["model"] = {{"name", "pendulum"}, {"params", {{"m", 1.0}, {"l", 1.0}, {"g", 1.0}}}};
      break;
  }
  j["integrator"] = {{"name", "verlet"}, {"dt", kDt}};
  j["steps"] = steps;
  switch (w) {
    case Workload::kHenonHeiles:
    case Workload::kHenonHeilesBare:
      j["ensemble"] = {
          {"section_grid",
           {{"energy", 0.125}, {"axes", {{"q1", {-0.44, 0.67, k0}}, {"p1", {-0.5, 0.5, k1}}}}}}};
      j["section"] = {{"coordinate", "q0"}, {"value", 0.0}, {"direction", "up"}};
      break;
    case Workload::kKepler:
      j["ensemble"] = {{"random_box",
                        {{"lo", {0.69, -0.01, -0.01, 1.34}},
                         {"hi", {0.71, 0.01, 0.01, 1.36}},
                         {"count", n},
                         {"seed", 2024}}}};
      break;
    case Workload::kPendulum:
      j["ensemble"] = {
          {"random_box", {{"lo", {-2.0, -0.1}}, {"hi", {2.0, 0.1}}, {"count", n}, {"seed", 2024}}}};
      break;
  }
  j["backend"] = "cpu";
  j["precision"] = fp32 ? "float" : "double";
  // Never written: the bench calls run_ensemble, not run_job.
  j["output"] = {{"dir", "results/vigor-bench-cpu"}};
  return j;
}

/// Parse the workload's job; for the section grid, pick the grid so that about n points are
/// allowed (two passes: a guess, then a correction from the allowed fraction).
vigor::host::Job make_job(Workload w, std::int64_t n, std::int64_t steps, bool fp32,
                          std::int64_t conservation_every = 0) {
  if (w == Workload::kHenonHeilesBare) {
    // The section grid needs the section to place its points; the bare run then drops the
    // section, as a job with the same states in an ensemble file and no section would.
    vigor::host::Job job = make_job(Workload::kHenonHeiles, n, steps, fp32);
    job.integration.section.kind = 0;  // the engine gets no section
    job.integration.conservation_every = conservation_every > 0 ? conservation_every : job.steps;
    return job;
  }
  if (w != Workload::kHenonHeiles)
    return vigor::host::parse_job(make_job_json(w, n, steps, fp32, 0, 0).dump());
  std::int64_t k = std::max<std::int64_t>(2, std::int64_t(std::ceil(std::sqrt(double(n) / 0.75))));
  vigor::host::Job job = vigor::host::parse_job(make_job_json(w, n, steps, fp32, k, k).dump());
  const double fraction = double(job.ensemble.count) / double(k * k);
  const std::int64_t k2 =
      std::max<std::int64_t>(2, std::int64_t(std::ceil(std::sqrt(double(n) / fraction))));
  if (k2 != k) job = vigor::host::parse_job(make_job_json(w, n, steps, fp32, k2, k2).dump());
  return job;
}

Problem make_problem(Workload w, const vigor::host::Job& job) {
  Problem p;
  p.workload = w;
  p.params = job.integration.params;
  p.dt = job.integration.dt;
  p.dim =
      int(job.ensemble.state.size() / std::size_t(std::max<std::int64_t>(1, job.ensemble.count)));
  return p;
}

/// m trajectories spread evenly over the ensemble (SoA).
std::vector<double> strided_subset(const std::vector<double>& soa, std::int64_t n, int dim,
                                   std::int64_t m) {
  std::vector<double> out(std::size_t(dim) * std::size_t(m));
  for (int c = 0; c < dim; ++c)
    for (std::int64_t j = 0; j < m; ++j)
      out[std::size_t(c * m + j)] = soa[std::size_t(c * n + j * n / m)];
  return out;
}

/// max over components of |a - b| / max(1, |b|); NaN or a size mismatch give infinity.
double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const double d = std::abs(a[k] - b[k]) / std::max(1.0, std::abs(b[k]));
    m = std::max(m, std::isnan(d) ? INFINITY : d);
  }
  return m;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// --- Machine ----------------------------------------------------------------------------------

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return in ? a + " " + b + " " + c : "unknown";
}

/// Fraction of the machine's CPU time not idle over `seconds` (other work running before a
/// measurement makes its timings unreliable on a 2-core machine).
double busy_fraction(double seconds) {
  auto read = [](std::uint64_t& idle, std::uint64_t& total) {
    std::ifstream in("/proc/stat");
    std::string cpu;
    in >> cpu;
    idle = total = 0;
    for (int k = 0; k < 10; ++k) {
      std::uint64_t v = 0;
      if (!(in >> v)) break;
      total += v;
      if (k == 3 || k == 4) idle += v;  // idle, iowait
    }
  };
  std::uint64_t i0, t0, i1, t1;
  read(i0, t0);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  read(i1, t1);
  if (t1 <= t0) return 0.0;
  return 1.0 - double(i1 - i0) / double(t1 - t0);
}

/// Vector ISA macros the bench was compiled with.
std::string isa_macros() {
  std::string s;
#if defined(__AVX512F__)
  s += "AVX512F ";
#endif
#if defined(__AVX512VL__)
  s += "AVX512VL ";
#endif
#if defined(__AVX512DQ__)
  s += "AVX512DQ ";
#endif
#if defined(__AVX2__)
  s += "AVX2 ";
#endif
#if defined(__FMA__)
  s += "FMA ";
#endif
#if defined(__AVX__)
  s += "AVX ";
#endif
#if defined(__SSE4_2__)
  s += "SSE4.2 ";
#endif
#if defined(__ARM_NEON)
  s += "NEON ";
#endif
  if (!s.empty()) s.pop_back();
  return s.empty() ? "baseline" : s;
}

// --- One workload x precision -----------------------------------------------------------------

struct EngineRun {
  double kernel_seconds = 0, wall_seconds = 0;
  std::int64_t unfinished = 0;  ///< trajectories short of `steps` or not status ok
  double max_energy_error = 0;
  std::int64_t crossings = 0;
  std::string device;
  Json summary;
  std::vector<double> state;
  std::vector<std::int64_t> crossings_per_trajectory;
};

EngineRun run_engine(const vigor::host::Job& job, int threads) {
  vigor::host::RunOptions ro;
  ro.threads = threads;
  ro.quiet = true;
  vigor::host::RunResult r = vigor::host::run_ensemble(job, ro);
  EngineRun e;
  e.kernel_seconds = r.kernel_seconds;
  e.wall_seconds = r.wall_seconds;
  e.device = r.device;
  const std::int64_t n = job.ensemble.count;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto ui = std::size_t(i);
    if (r.final.step[ui] != job.steps || r.final.status[ui] != 0) ++e.unfinished;
    e.max_energy_error =
        std::max(e.max_energy_error,
                 std::isnan(r.final.energy_error[ui]) ? INFINITY : r.final.energy_error[ui]);
    e.crossings += r.final.crossings[ui];
  }
  e.summary = vigor::host::make_summary(job, r);
  e.summary.erase("job");
  e.state = std::move(r.final.state);
  e.crossings_per_trajectory = std::move(r.final.crossings);
  return e;
}

double max_of(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::isnan(x) ? INFINITY : x);
  return m;
}

std::int64_t sum_of(const std::vector<std::int64_t>& v) {
  std::int64_t s = 0;
  for (auto x : v) s += x;
  return s;
}

struct Row {
  Workload workload = Workload::kHenonHeiles;
  bool fp32 = false;
  std::int64_t n = 0, steps = 0, skipped_points = 0;
  std::string ensemble_kind;
  std::vector<double> engine_kernel_s, engine_wall_s, simd_s, odeint_s;
  EngineRun engine;  ///< the last timed run
  PeerResult simd;   ///< the last timed run
  bool has_odeint = false;
  double engine_kernel_rate = 0, engine_wall_rate = 0, simd_rate = 0, odeint_rate = 0;
  // The check.
  std::int64_t check_n = 0, check_steps = 0;
  double diff_simd = 0, diff_odeint = 0, diff_simd_odeint = 0, diff_timed_simd = 0,
         diff_timed_odeint = 0;
  std::int64_t check_cross_engine = 0, check_cross_simd = 0;
  bool ok = true;
  std::string note;
};

Row measure(Workload w, bool fp32, const Options& o) {
  Row row;
  row.workload = w;
  row.fp32 = fp32;
  const vigor::host::Job job = make_job(w, o.trajectories, o.steps, fp32, o.conservation_every);
  const Problem pb = make_problem(w, job);
  const std::int64_t n = job.ensemble.count;
  row.n = n;
  row.steps = job.steps;
  row.ensemble_kind = job.ensemble.kind;
  row.skipped_points = job.ensemble.skipped;
#if defined(VIGOR_BENCH_ODEINT)
  row.has_odeint = w == Workload::kHenonHeiles || w == Workload::kHenonHeilesBare;
#endif

  // Timed runs: the implementations take turns, so slow drifts of the machine hit all alike.
  PeerResult odeint_last;
  for (int r = 0; r < o.repeats; ++r) {
    row.engine = run_engine(job, o.threads);
    row.engine_kernel_s.push_back(row.engine.kernel_seconds);
    row.engine_wall_s.push_back(row.engine.wall_seconds);
    row.simd =
        vigor_bench_cpu::simd_reference(pb, job.ensemble.state, n, job.steps, fp32, o.threads);
    row.simd_s.push_back(row.simd.seconds);
#if defined(VIGOR_BENCH_ODEINT)
    if (row.has_odeint) {
      odeint_last = vigor_bench_cpu::odeint_henon_heiles(pb, job.ensemble.state, n, job.steps, fp32,
                                                         o.threads);
      row.odeint_s.push_back(odeint_last.seconds);
    }
#endif
  }
  const double work = double(n) * double(job.steps);
  row.engine_kernel_rate = work / std::max(median(row.engine_kernel_s), 1e-12);
  row.engine_wall_rate = work / std::max(median(row.engine_wall_s), 1e-12);
  row.simd_rate = work / std::max(median(row.simd_s), 1e-12);
  if (row.has_odeint) row.odeint_rate = work / std::max(median(row.odeint_s), 1e-12);
  // The timed runs' final states, for information (a chaotic workload amplifies any round-off
  // difference over a long run; equal states mean bit-identical arithmetic).
  row.diff_timed_simd = max_rel_diff(row.engine.state, row.simd.state);
  if (row.has_odeint) row.diff_timed_odeint = max_rel_diff(row.engine.state, odeint_last.state);

  // The check on a subset over a short span.
  std::vector<std::string> wrong;
  const std::int64_t m = std::min(n, kCheckTrajectories);
  const std::int64_t cs = std::min(job.steps, kCheckSteps);
  row.check_n = m;
  row.check_steps = cs;
  vigor::host::Job sub = job;
  sub.ensemble.state = strided_subset(job.ensemble.state, n, pb.dim, m);
  sub.ensemble.count = m;
  sub.steps = cs;
  sub.segment_steps = std::min(sub.segment_steps, cs);
  // H after the last step, whatever --conservation-every says: the states do not depend on it.
  if (w == Workload::kHenonHeilesBare) sub.integration.conservation_every = cs;
  const EngineRun ce = run_engine(sub, o.threads);
  const PeerResult cr =
      vigor_bench_cpu::simd_reference(pb, sub.ensemble.state, m, cs, fp32, o.threads);
  const double tol = fp32 ? kTolFp32 : kTolFp64;
  row.diff_simd = max_rel_diff(ce.state, cr.state);
  if (!(row.diff_simd <= tol))
    wrong.push_back("engine vs SIMD reference " + format_number(row.diff_simd) + " > " +
                    format_number(tol));
  if (w == Workload::kHenonHeiles) {
    row.check_cross_engine = ce.crossings;
    row.check_cross_simd = sum_of(cr.crossings);
    // Same arithmetic: the same crossings in FP64; FP32 may differ where a lane lands next to
    // the plane, but only rarely.
    const std::int64_t dc = std::abs(row.check_cross_engine - row.check_cross_simd);
    if ((!fp32 && dc != 0) || dc > std::max<std::int64_t>(2, row.check_cross_simd / 100))
      wrong.push_back("crossings " + std::to_string(row.check_cross_engine) + " (engine) vs " +
                      std::to_string(row.check_cross_simd) + " (SIMD reference)");
  }
#if defined(VIGOR_BENCH_ODEINT)
  if (row.has_odeint) {
    const PeerResult co =
        vigor_bench_cpu::odeint_henon_heiles(pb, sub.ensemble.state, m, cs, fp32, o.threads);
    row.diff_odeint = max_rel_diff(ce.state, co.state);
    // The two peers against each other: when the engine disagrees with both and they agree, the
    // engine is the one that is wrong.
    row.diff_simd_odeint = max_rel_diff(cr.state, co.state);
    if (!(row.diff_odeint <= tol))
      wrong.push_back("engine vs odeint " + format_number(row.diff_odeint) + " > " +
                      format_number(tol) + " (SIMD reference vs odeint " +
                      format_number(row.diff_simd_odeint) + ")");
  }
#endif
  // The timed runs themselves: complete, finite, energy conserved.
  if (ce.unfinished != 0 || row.engine.unfinished != 0)
    wrong.push_back("engine left " + std::to_string(row.engine.unfinished) +
                    " trajectories unfinished or not ok");
  if (!(row.engine.max_energy_error <= kMaxEnergyError))
    wrong.push_back("engine max |dH| " + format_number(row.engine.max_energy_error));
  if (row.simd.non_finite != 0 || cr.non_finite != 0)
    wrong.push_back("SIMD reference: " + std::to_string(row.simd.non_finite) + " non-finite");
  const double simd_emax = max_of(row.simd.energy_error);
  if (!(simd_emax <= kMaxEnergyError))
    wrong.push_back("SIMD reference max |dH| " + format_number(simd_emax));
  row.ok = wrong.empty();
  if (row.ok) {
    row.note = "ok (" + format_number(row.diff_simd, "%.1e");
    if (row.has_odeint) row.note += ", odeint " + format_number(row.diff_odeint, "%.1e");
    row.note += ")";
  } else {
    row.note = "WRONG:";
    for (std::size_t k = 0; k < wrong.size(); ++k) row.note += (k ? "; " : " ") + wrong[k];
  }
  return row;
}

// --- Output -----------------------------------------------------------------------------------

void print_header() {
  std::printf("%-17s %-4s %8s %6s %12s %12s %12s %12s %8s %8s  %s\n", "workload", "prec", "n",
              "steps", "engine(kern)", "engine(wall)", "SIMD ref", "odeint", "eng/SIMD",
              "eng/odeint", "check");
  std::fflush(stdout);
}

void print_row(const Row& r) {
  const std::string od = r.has_odeint ? format_number(r.odeint_rate, "%.3e") : "-";
  const std::string eo =
      r.has_odeint ? format_number(r.engine_wall_rate / r.odeint_rate, "%.2f") : "-";
  std::printf("%-17s %-4s %8lld %6lld %12.3e %12.3e %12.3e %12s %8.2f %8s  %s\n",
              workload_name(r.workload), r.fp32 ? "fp32" : "fp64", static_cast<long long>(r.n),
              static_cast<long long>(r.steps), r.engine_kernel_rate, r.engine_wall_rate,
              r.simd_rate, od.c_str(), r.engine_wall_rate / r.simd_rate, eo.c_str(),
              r.note.c_str());
  std::fflush(stdout);
}

Json row_json(const Row& r) {
  Json j;
  j["workload"] = workload_name(r.workload);
  j["integrator"] = "verlet";
  j["precision"] = r.fp32 ? "fp32" : "fp64";
  j["dt"] = kDt;
  j["trajectories"] = r.n;
  j["steps"] = r.steps;
  j["ensemble"] = {{"kind", r.ensemble_kind}, {"skipped_points", r.skipped_points}};
  j["engine"] = {{"traj_steps_per_s_kernel", r.engine_kernel_rate},
                 {"traj_steps_per_s_wall", r.engine_wall_rate},
                 {"kernel_seconds", r.engine_kernel_s},
                 {"wall_seconds", r.engine_wall_s},
                 {"max_energy_error", r.engine.max_energy_error},
                 {"crossings", r.engine.crossings},
                 {"device", r.engine.device},
                 {"summary", r.engine.summary}};
  j["simd_reference"] = {{"traj_steps_per_s", r.simd_rate},
                         {"seconds", r.simd_s},
                         {"block_lanes", r.simd.block_lanes},
                         {"max_energy_error", max_of(r.simd.energy_error)}};
  if (r.workload == Workload::kHenonHeiles)
    j["simd_reference"]["crossings"] = sum_of(r.simd.crossings);
  if (r.has_odeint)
    j["odeint"] = {{"traj_steps_per_s", r.odeint_rate},
                   {"seconds", r.odeint_s},
                   {"stepper", "velocity_verlet<std::array<Real,2>>, do_step loop"}};
  else
    j["odeint"] = nullptr;
  j["ratios"] = {{"engine_wall_over_simd_reference", r.engine_wall_rate / r.simd_rate},
                 {"engine_kernel_over_simd_reference", r.engine_kernel_rate / r.simd_rate}};
  if (r.has_odeint) {
    j["ratios"]["engine_wall_over_odeint"] = r.engine_wall_rate / r.odeint_rate;
    j["ratios"]["engine_kernel_over_odeint"] = r.engine_kernel_rate / r.odeint_rate;
  }
  j["check"] = {{"ok", r.ok},
                {"note", r.note},
                {"trajectories", r.check_n},
                {"steps", r.check_steps},
                {"tolerance", r.fp32 ? kTolFp32 : kTolFp64},
                {"engine_vs_simd_max_rel_diff", r.diff_simd}};
  if (r.has_odeint) {
    j["check"]["engine_vs_odeint_max_rel_diff"] = r.diff_odeint;
    j["check"]["simd_reference_vs_odeint_max_rel_diff"] = r.diff_simd_odeint;
  }
  if (r.workload == Workload::kHenonHeiles) {
    j["check"]["crossings_engine"] = r.check_cross_engine;
    j["check"]["crossings_simd_reference"] = r.check_cross_simd;
  }
  j["check"]["timed_run_engine_vs_simd_max_rel_diff"] = r.diff_timed_simd;
  if (r.has_odeint) j["check"]["timed_run_engine_vs_odeint_max_rel_diff"] = r.diff_timed_odeint;
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_args(argc, argv);
  const auto t_start = std::chrono::steady_clock::now();
  const std::string load_start = load_average();
  const double busy = busy_fraction(0.5);

  std::printf(
      "vigor-bench-cpu %s: Stormer-Verlet, h = %g, %lld trajectories x %lld steps, "
      "median of %d\n",
      vigor::kVersion, kDt, static_cast<long long>(o.trajectories), static_cast<long long>(o.steps),
      o.repeats);
  std::printf("cpu: %s, %d OpenMP threads; ISA flags: %s (%s)\n", cpu_model().c_str(), o.threads,
              VIGOR_BENCH_ISA_FLAGS, isa_macros().c_str());
  std::printf("C++ flags: %s\n", VIGOR_BENCH_COMPILE_FLAGS);
  std::printf(
      "SIMD reference: %d-byte registers, lanes per block FP64/FP32: henon_heiles %d/%d, "
      "kepler %d/%d, pendulum %d/%d;\n  %s\n",
      vigor_bench_cpu::simd_register_bytes(),
      vigor_bench_cpu::simd_reference_lanes(Workload::kHenonHeiles, false),
      vigor_bench_cpu::simd_reference_lanes(Workload::kHenonHeiles, true),
      vigor_bench_cpu::simd_reference_lanes(Workload::kKepler, false),
      vigor_bench_cpu::simd_reference_lanes(Workload::kKepler, true),
      vigor_bench_cpu::simd_reference_lanes(Workload::kPendulum, false),
      vigor_bench_cpu::simd_reference_lanes(Workload::kPendulum, true),
      vigor_bench_cpu::simd_reference_math().c_str());
#if defined(VIGOR_BENCH_ODEINT)
  std::printf("odeint: velocity_verlet, %s (henon_heiles and henon_heiles_bare only)\n",
              vigor_bench_cpu::odeint_version().c_str());
#else
  std::printf("odeint: not built (Boost not found at configure time)\n");
#endif
  if (busy > 0.25)
    std::printf(
        "WARNING: the machine was %.0f%% busy before the run (load %s): timings are "
        "unreliable\n",
        100 * busy, load_start.c_str());
  std::printf(
      "t-s/s = trajectory-steps per second; ratios use the engine's wall (end-to-end) "
      "rate\n\n");
  print_header();

  std::vector<Row> rows;
  try {
    for (const Workload w : o.workloads)
      for (const bool fp32 : {false, true}) {
        if ((fp32 && !o.fp32) || (!fp32 && !o.fp64)) continue;
        rows.push_back(measure(w, fp32, o));
        print_row(rows.back());
      }
  } catch (const vigor::host::JobError& e) {
    std::fprintf(stderr, "vigor-bench-cpu: bad job: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vigor-bench-cpu: error: %s\n", e.what());
    return 3;
  }
  const int wrong =
      int(std::count_if(rows.begin(), rows.end(), [](const Row& r) { return !r.ok; }));
  const std::string load_end = load_average();
  std::printf("\n%zu measurements, %d WRONG, %.1f s (load average %s at start, %s at end)\n",
              rows.size(), wrong, seconds_since(t_start), load_start.c_str(), load_end.c_str());

  if (!o.json.empty()) {
    Json j;
    j["benchmark"] = {{"name", "vigor-bench-cpu"},
                      {"integrator", "verlet"},
                      {"dt", kDt},
                      {"trajectories", o.trajectories},
                      {"steps", o.steps},
                      {"repeats", o.repeats},
                      {"statistic", "median"},
                      {"quick", o.quick},
                      {"henon_heiles_bare_conservation_every",
                       o.conservation_every > 0 ? o.conservation_every : o.steps},
                      {"check",
                       {{"trajectories", kCheckTrajectories},
                        {"steps", kCheckSteps},
                        {"tolerance_fp64", kTolFp64},
                        {"tolerance_fp32", kTolFp32},
                        {"max_energy_error", kMaxEnergyError}}}};
    j["machine"] = {
      {"cpu", cpu_model()},
      {"hardware_threads", std::thread::hardware_concurrency()},
      {"threads", o.threads},
      {"isa_flags", VIGOR_BENCH_ISA_FLAGS},
      {"isa_macros", isa_macros()},
      {"compile_flags", VIGOR_BENCH_COMPILE_FLAGS},
      {"vector_register_bytes", vigor_bench_cpu::simd_register_bytes()},
      {"simd_reference_math", vigor_bench_cpu::simd_reference_math()},
#if defined(VIGOR_BENCH_ODEINT)
      {"odeint", vigor_bench_cpu::odeint_version()},
#else
      {"odeint", nullptr},
#endif
      {"compiler", __VERSION__},
      {"vigor_version", vigor::kVersion},
      {"date_utc", utc_now()},
      {"busy_fraction_before", busy},
      {"load_average_start", load_start},
      {"load_average_end", load_end}
    };
    j["results"] = Json::array();
    for (const Row& r : rows) j["results"].push_back(row_json(r));
    std::ofstream out(o.json);
    out << j.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "vigor-bench-cpu: cannot write %s\n", o.json.c_str());
      return 3;
    }
    std::printf("wrote %s\n", o.json.c_str());
  }
  return wrong == 0 ? 0 : 1;
}
