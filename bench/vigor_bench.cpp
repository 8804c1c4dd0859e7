/// @file vigor_bench.cpp
/// @brief vigor-bench: throughput of the real engine next to a hand-written reference.
///
/// Workload: Störmer–Verlet on Hénon–Heiles (a = 1, b = -1/3) at E = 1/8, h = 0.01, with the
/// Poincaré section q0 = 0 (upwards) on, in FP64 and FP32, for ensembles of 10^3 ... 10^7
/// trajectories. Two measurements per point:
///   * engine:    host::make_engine + upload, then the run loop's launch/drain cycle in segments
///                of 10^4 steps (relaunching while trajectories are paused on full section
///                buffers), timed from the first launch to the last drain;
///   * reference: the same arithmetic written by hand (bench/reference.hpp) in the plainest form,
///                a per-trajectory OpenMP loop on the CPU, one thread per trajectory on the GPU.
/// The ratio engine/reference says what vigor's generality costs (or, for the CPU engine once it
/// advances trajectories in SIMD lanes, gains). Each point also checks that the engine and the
/// reference compute the same thing: a subset of the ensemble is run through both for a short
/// span and the final states must agree (FP64: 1e-12 relative, FP32: 1e-5); a warning column
/// reports otherwise. (The timed runs are long and E = 1/8 is chaotic, so their final states are
/// compared only in the JSON, for information.)
///
/// A second table (bench/implicit_suite.cpp) measures the implicit and constrained integrators
/// next to Verlet on the same backend and precision; with --survey, a third
/// (bench/survey_suite.cpp) times a section survey stage by stage: kernel, launch to last drain,
/// and end to end with results.h5 written, for the bare run, H every step, and the section with
/// H every step or at the end.
///
///   vigor-bench [--sizes 1e3,1e4,...] [--steps N] [--backend cpu|cuda|all] [--json FILE] [--quick]
///               [--no-implicit] [--event-burst L] [--survey | --survey-only]
///               [--survey-sizes N,...] [--survey-steps N]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.hpp"
#include "bench/engine_run.hpp"
#include "bench/implicit_suite.hpp"
#include "bench/reference.hpp"
#include "bench/survey_suite.hpp"
#include "host/backends/cpu_info.hpp"
#include "host/backends/engine.hpp"
#include "host/backends/registry.hpp"
#include "host/backends/test_hooks.hpp"
#include "host/run/run.hpp"
#include "vigor/version.hpp"

namespace {

using vigor_bench_util::cpu_model;
using vigor_bench_util::format_number;
using vigor_bench_util::seconds_since;
using vigor_bench_util::utc_now;

using Clock = std::chrono::steady_clock;
using vigor::host::BackendKind;
using vigor::host::Precision;
using vigor_bench::EngineRun;
using vigor_bench::kSegmentSteps;
using vigor_bench::ReferenceResult;

constexpr double kEnergy = 0.125;
constexpr double kDt = 0.01;
constexpr double kA = 1.0;
constexpr double kB = -1.0 / 3.0;
constexpr std::int64_t kMaxSteps = 10'000'000;
constexpr std::int64_t kVerifyTrajectories = 2'000;
constexpr std::int64_t kVerifySteps = 2'000;

struct Options {
  std::vector<std::int64_t> sizes{1'000, 10'000, 100'000, 1'000'000, 10'000'000};
  std::int64_t steps = 0;  ///< 0: chosen per size for the target time
  bool cpu = true;
  bool cuda = true;
  bool cuda_explicit = false;
  std::string json;
  bool quick = false;
  bool implicit = true;              ///< also the implicit/constrained table (implicit_suite.cpp)
  double target_seconds = 0.5;       ///< per measurement
  double cpu_budget_seconds = 10.0;  ///< skip a CPU size whose shortest run would take longer
  std::int64_t min_steps = 100;
  int event_burst = 0;  ///< GPU steps per event burst (0: the engines' own; 1: every step tested)
  bool survey = false;  ///< also the survey table (survey_suite.cpp)
  bool verlet_table = true;  ///< the Verlet table (off with --survey-only)
  vigor_bench::SurveySuiteOptions survey_options;
};

[[noreturn]] void usage(const std::string& error) {
  std::FILE* out = error.empty() ? stdout : stderr;
  if (!error.empty()) std::fprintf(out, "vigor-bench: %s\n\n", error.c_str());
  std::fprintf(
      out,
      "usage: vigor-bench [--sizes N,N,...] [--steps N] [--backend cpu|cuda|all]\n"
      "                   [--json FILE] [--quick] [--no-implicit] [--event-burst L]\n"
      "                   [--survey | --survey-only] [--survey-sizes N,...] [--survey-steps N]\n\n"
      "Trajectory-steps per second of Stormer-Verlet on Henon-Heiles (E = 1/8, section\n"
      "q0 = 0 up), FP64 and FP32, through vigor's engine and a hand-written reference;\n"
      "then the implicit and constrained integrators next to Verlet (bench/implicit_suite.cpp).\n"
      "  --sizes    ensemble sizes (default 1e3,1e4,1e5,1e6,1e7; 1e3,1e4,1e5 with --quick)\n"
      "  --steps    steps per measurement (default: chosen for ~%.1f s per measurement)\n"
      "  --backend  cpu, cuda or all (default all: cuda only where a device exists)\n"
      "  --json     also write the results and machine info as JSON to FILE\n"
      "  --quick    small sizes and short measurements (a smoke run, < 30 s)\n"
      "  --no-implicit  skip the table of implicit and constrained integrators\n"
      "  --event-burst  steps per event burst instead of the GPU engines' own (1: every\n"
      "                 step tested on its own), to measure the length (docs/performance.md);\n"
      "                 the CPU engines test every step and ignore it\n"
      "  --survey   also the survey table: bare, H every step, section + H every step and\n"
      "             section with H at the end; kernel, launch to last drain, and end to end\n"
      "             with results.h5 written (bench/survey_suite.cpp)\n"
      "  --survey-only   the survey table alone\n"
      "  --survey-sizes  its ensemble sizes (default 1e5,1e6,1e7; 1e4 with --quick); a size\n"
      "                  that would take over 120 s at the previous size's pace is skipped\n"
      "  --survey-steps  its steps (default 1e4; 1e3 with --quick)\n",
      Options{}.target_seconds);
  std::exit(error.empty() ? 0 : 2);
}

std::int64_t parse_count(const std::string& s, const char* what) {
  const std::int64_t v = vigor_bench_util::positive_count(s);
  if (v < 0) usage(std::string(what) + ": expected a positive integer, got '" + s + "'");
  return v;
}

Options parse_args(int argc, char** argv) {
  Options o;
  bool sizes_given = false, survey_sizes_given = false, survey_steps_given = false;
  const auto parse_sizes = [](const std::string& list, const char* what) {
    std::vector<std::int64_t> sizes;
    std::stringstream ss(list);
    for (std::string item; std::getline(ss, item, ',');) sizes.push_back(parse_count(item, what));
    if (sizes.empty()) usage(std::string(what) + ": no size given");
    return sizes;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage("");
    } else if (a == "--sizes") {
      o.sizes = parse_sizes(value(), "--sizes");
      sizes_given = true;
    } else if (a == "--steps") {
      o.steps = parse_count(value(), "--steps");
    } else if (a == "--backend") {
      const std::string b = value();
      if (b == "cpu") {
        o.cpu = true;
        o.cuda = false;
      } else if (b == "cuda") {
        o.cpu = false;
        o.cuda = true;
        o.cuda_explicit = true;
      } else if (b == "all") {
        o.cpu = o.cuda = true;
      } else {
        usage("--backend: expected cpu, cuda or all, got '" + b + "'");
      }
    } else if (a == "--json") {
      o.json = value();
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--no-implicit") {
      o.implicit = false;
    } else if (a == "--event-burst") {
      o.event_burst = int(parse_count(value(), "--event-burst"));
    } else if (a == "--survey") {
      o.survey = true;
    } else if (a == "--survey-only") {
      o.survey = true;
      o.verlet_table = o.implicit = false;
    } else if (a == "--survey-sizes") {
      o.survey_options.sizes = parse_sizes(value(), "--survey-sizes");
      survey_sizes_given = true;
    } else if (a == "--survey-steps") {
      o.survey_options.steps = parse_count(value(), "--survey-steps");
      survey_steps_given = true;
    } else {
      usage("unknown argument '" + a + "'");
    }
  }
  if (o.quick) {
    if (!sizes_given) o.sizes = {1'000, 10'000, 100'000};
    o.target_seconds = 0.15;
    o.cpu_budget_seconds = 1.0;
    o.min_steps = 50;
    if (!survey_sizes_given) o.survey_options.sizes = {10'000};
    if (!survey_steps_given) o.survey_options.steps = 1'000;
  }
  std::sort(o.sizes.begin(), o.sizes.end());
  std::sort(o.survey_options.sizes.begin(), o.survey_options.sizes.end());
  return o;
}

// --- The ensemble: n points of the E = 1/8 surface on the section x = 0, px > 0 ---------------

std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double uniform(std::uint64_t& s) { return double(splitmix64(s) >> 11) * 0x1.0p-53; }

/// SoA (x, y, px, py): x = 0, (y, py) uniform over the energetically allowed region, px from H = E.
std::vector<double> make_ensemble(std::int64_t n) {
  std::vector<double> soa(std::size_t(4 * n));
  std::uint64_t seed = 12345;
  for (std::int64_t i = 0; i < n;) {
    const double y = -0.45 + 1.15 * uniform(seed);
    const double py = -0.5 + 1.0 * uniform(seed);
    const double px2 = 2 * kEnergy - py * py - (y * y + 2 * kB * y * y * y);  // 2 (E - T_y - V)
    if (px2 <= 1e-6) continue;
    soa[std::size_t(i)] = 0.0;
    soa[std::size_t(n + i)] = y;
    soa[std::size_t(2 * n + i)] = std::sqrt(px2);
    soa[std::size_t(3 * n + i)] = py;
    ++i;
  }
  return soa;
}

/// The first m trajectories of an SoA ensemble of n.
std::vector<double> head(const std::vector<double>& soa, std::int64_t n, std::int64_t m) {
  std::vector<double> out(std::size_t(4 * m));
  for (int c = 0; c < 4; ++c)
    std::copy_n(soa.begin() + std::ptrdiff_t(c * n), m, out.begin() + std::ptrdiff_t(c * m));
  return out;
}

// --- The engine, driven as the run loop (host/run/segment_loop.cpp) drives it
// ------------------------------------------------

vigor::host::Integration make_integration(Precision precision) {
  const vigor::host::ModelInfo* model = vigor::host::find_model("henon_heiles");
  if (model == nullptr) throw std::runtime_error("model henon_heiles is not registered");
  vigor::host::Integration r;
  r.model = "henon_heiles";
  r.integrator = "verlet";
  r.precision = precision;
  r.params = {kA, kB};
  r.dt = kDt;
  r.section.kind = 1;        // kernels::kSectionPlane
  r.section.coordinate = 0;  // q0
  r.section.direction = 1;   // kernels::kDirUp
  r.section.value = 0.0;
  return r;
}

/// The engine as a run without --memory-limit gets it: on a GPU, section buffers sized from the
/// device's free memory and the host's (host::hit_budget_from_memory).
EngineRun run_engine(BackendKind backend, Precision precision, const std::vector<double>& soa,
                     std::int64_t n, std::int64_t steps) {
  return vigor_bench::run_engine(make_integration(precision), backend, soa, n, steps,
                                 vigor::host::engine_resources(vigor::host::RunOptions{}));
}

// --- The hand-written CPU reference ------------------------------------------------------------

template <class Real>
ReferenceResult reference_cpu_typed(std::vector<double>& state, std::int64_t n,
                                    std::int64_t steps) {
  std::vector<Real> s(state.begin(), state.end());
  std::vector<std::int64_t> cross(static_cast<std::size_t>(n));
  std::vector<Real> emax(static_cast<std::size_t>(n));
  Real* d = s.data();
  const Real h = Real(kDt), a = Real(kA), b = Real(kB);
  const auto t0 = Clock::now();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    Real x = d[i], y = d[n + i], px = d[2 * n + i], py = d[3 * n + i];
    vigor_bench::reference_trajectory(x, y, px, py, steps, h, a, b, cross[std::size_t(i)],
                                      emax[std::size_t(i)]);
    d[i] = x;
    d[n + i] = y;
    d[2 * n + i] = px;
    d[3 * n + i] = py;
  }
  ReferenceResult r;
  r.seconds = seconds_since(t0);
  state.assign(s.begin(), s.end());
  for (std::int64_t i = 0; i < n; ++i) {
    r.crossings += cross[std::size_t(i)];
    r.max_energy_error = std::max(r.max_energy_error, double(emax[std::size_t(i)]));
  }
  return r;
}

ReferenceResult run_reference(BackendKind backend, Precision precision, std::vector<double>& state,
                              std::int64_t n, std::int64_t steps) {
  const bool fp32 = precision == Precision::kFloat;
  if (backend == BackendKind::kCpu)
    return fp32 ? reference_cpu_typed<float>(state, n, steps)
                : reference_cpu_typed<double>(state, n, steps);
#if defined(VIGOR_BENCH_CUDA)
  return vigor_bench::reference_cuda(state, n, steps, kDt, kA, kB, fp32);
#else
  throw std::runtime_error("this vigor-bench was built without CUDA");
#endif
}

/// max over components of |a - b| / max(1, |b|).
double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
    const double d = std::abs(a[k] - b[k]) / std::max(1.0, std::abs(b[k]));
    m = std::max(m, std::isnan(d) ? INFINITY : d);
  }
  return a.size() == b.size() ? m : INFINITY;
}

// --- Memory estimates (skip sizes that do not fit) ------------------------------------------

/// Device-side (or CPU-side array) bytes of one engine plus one reference run, with section
/// buffers of `hit_budget` bytes at most.
double working_set_bytes(std::int64_t n, Precision precision, std::size_t hit_budget) {
  const double real = precision == Precision::kFloat ? 4 : 8;
  const vigor::host::Integration r = make_integration(precision);
  const int cap = vigor::host::choose_hit_capacity(r.section, n, 4, std::size_t(real), hit_budget);
  const double engine = double(n) * (6 * real + 3 * 8 + 2 * 4 + 8 + cap * 5 * real);
  const double reference = double(n) * (5 * real + 8);
  return engine + reference;
}

// --- One measurement ----------------------------------------------------------------------------

struct Row {
  std::string backend, precision;
  std::int64_t n = 0, steps = 0;
  bool skipped = false;
  std::string note;  ///< why skipped, or the check's warning
  EngineRun engine;
  ReferenceResult reference;
  double engine_rate = 0, kernel_rate = 0, reference_rate = 0;
  double verify_diff = 0, timed_diff = 0;
  bool verify_ok = true;
  std::int64_t verify_crossings_engine = 0, verify_crossings_reference = 0;
};

std::int64_t nice_steps(double s, std::int64_t lo) {
  if (!(s > double(lo))) return lo;
  if (s > double(kMaxSteps)) return kMaxSteps;
  const double p = std::pow(10.0, std::floor(std::log10(s)) - 1);  // two significant digits
  return std::max(lo, std::int64_t(std::floor(s / p) * p));
}

class Bench {
 public:
  explicit Bench(const Options& o) : o_(o) {}

  Row measure(BackendKind backend, Precision precision, std::int64_t n, double& rate_estimate) {
    Row row;
    row.backend = backend == BackendKind::kCpu ? "cpu" : "cuda";
    row.precision = precision == Precision::kDouble ? "fp64" : "fp32";
    row.n = n;
    const double need = working_set_bytes(n, precision, vigor::host::kDefaultHitBudget);
    const double host_need = double(n) * 4 * 8 * 3 +  // ensemble, reference copy, final data
                             (backend == BackendKind::kCpu ? need : 0);
    if (host_need > 0.7 * double(vigor::host::host_available_memory())) {
      row.skipped = true;
      row.note = "skipped: needs ~" + format_number(host_need / 1e9) + " GB of host memory";
      return row;
    }
#if defined(VIGOR_BENCH_CUDA)
    if (backend == BackendKind::kCuda) {
      const vigor_bench::GpuInfo g = vigor_bench::cuda_info();
      const double device_need =
          working_set_bytes(n, precision,
                            vigor::host::hit_budget_from_memory(
                                std::size_t(g.free_bytes), vigor::host::host_available_memory()));
      if (device_need > 0.8 * g.free_bytes) {
        row.skipped = true;
        row.note = "skipped: needs ~" + format_number(device_need / 1e9) + " GB of device memory";
        return row;
      }
    }
#endif
    // Budget: on the CPU, skip a size whose shortest measurement would take far too long.
    if (backend == BackendKind::kCpu && o_.steps == 0 && rate_estimate > 0) {
      const double t = double(n) * double(o_.min_steps) / rate_estimate;
      if (t > o_.cpu_budget_seconds) {
        row.skipped = true;
        row.note = "skipped: >= " + format_number(t) + " s per run at " +
                   std::to_string(o_.min_steps) + " steps (budget " +
                   format_number(o_.cpu_budget_seconds) + " s)";
        return row;
      }
    }
    const std::vector<double> ensemble = make_ensemble(n);

    // Steps: calibrate with a short reference run, then aim at the target time.
    if (o_.steps > 0) {
      row.steps = o_.steps;
    } else {
      const double guess =
          rate_estimate > 0 ? rate_estimate : (backend == BackendKind::kCpu ? 5e7 : 5e9);
      std::int64_t cal_steps = std::clamp<std::int64_t>(
          std::int64_t(0.05 * o_.target_seconds * guess / double(n)), 10, kMaxSteps);
      // Lengthen the calibration until it is long enough to time (a poor first guess, or timer
      // noise at a few milliseconds, would otherwise pick the steps badly). The first attempt is
      // never trusted alone: it also pays for thread-pool start-up and first-touch page faults.
      for (int attempt = 0;; ++attempt) {
        std::vector<double> s = ensemble;
        const ReferenceResult cal = run_reference(backend, precision, s, n, cal_steps);
        rate_estimate = double(n) * double(cal_steps) / std::max(cal.seconds, 1e-6);
        if (attempt > 0 &&
            (cal.seconds >= 0.05 * o_.target_seconds || attempt == 3 || cal_steps >= kMaxSteps))
          break;
        cal_steps = std::min(kMaxSteps, std::int64_t(double(cal_steps) * 0.1 * o_.target_seconds /
                                                     std::max(cal.seconds, 1e-6)) +
                                            1);
      }
      row.steps = nice_steps(o_.target_seconds * rate_estimate / double(n), o_.min_steps);
    }

    row.engine = run_engine(backend, precision, ensemble, n, row.steps);
    std::vector<double> ref_state = ensemble;
    row.reference = run_reference(backend, precision, ref_state, n, row.steps);
    const double work = double(n) * double(row.steps);
    row.engine_rate = work / row.engine.seconds;
    row.kernel_rate = work / std::max(row.engine.kernel_seconds, 1e-12);
    row.reference_rate = work / row.reference.seconds;
    row.timed_diff = max_rel_diff(row.engine.state, ref_state);
    rate_estimate = std::min(row.engine_rate, row.reference_rate);

    // The check: engine and reference on a subset over a short span, where round-off
    // differences (if any) are not yet amplified by the chaos of E = 1/8.
    const std::int64_t m = std::min(n, kVerifyTrajectories);
    const std::int64_t vs = std::min(row.steps, kVerifySteps);
    const std::vector<double> sub = head(ensemble, n, m);
    const EngineRun ev = run_engine(backend, precision, sub, m, vs);
    std::vector<double> rv_state = sub;
    const ReferenceResult rv = run_reference(backend, precision, rv_state, m, vs);
    row.verify_diff = max_rel_diff(ev.state, rv_state);
    row.verify_crossings_engine = ev.crossings;
    row.verify_crossings_reference = rv.crossings;
    const double tol = precision == Precision::kDouble ? 1e-12 : 1e-5;
    std::string warn;
    if (!(row.verify_diff <= tol))
      warn += "states differ by " + format_number(row.verify_diff) + " (tol " + format_number(tol) +
              ")";
    if (ev.crossings != rv.crossings)
      warn += std::string(warn.empty() ? "" : "; ") + "crossings " + std::to_string(ev.crossings) +
              " vs " + std::to_string(rv.crossings);
    if (ev.unfinished != 0 || row.engine.unfinished != 0)
      warn += std::string(warn.empty() ? "" : "; ") + "engine left trajectories unfinished";
    row.verify_ok = warn.empty();
    row.note = warn.empty() ? "ok (" + format_number(row.verify_diff) + ")" : "WARNING: " + warn;
    return row;
  }

 private:
  const Options& o_;
};

// --- Output ----------------------------------------------------------------------------------

void print_header() {
  std::printf("%-7s %-5s %10s %9s %16s %16s %7s  %s\n", "backend", "prec", "n", "steps",
              "engine t-s/s", "reference t-s/s", "ratio", "check");
  std::fflush(stdout);
}

void print_row(const Row& r) {
  if (r.skipped) {
    std::printf("%-7s %-5s %10lld %9s %16s %16s %7s  %s\n", r.backend.c_str(), r.precision.c_str(),
                static_cast<long long>(r.n), "-", "-", "-", "-", r.note.c_str());
  } else {
    std::printf("%-7s %-5s %10lld %9lld %16.3e %16.3e %7.2f  %s\n", r.backend.c_str(),
                r.precision.c_str(), static_cast<long long>(r.n), static_cast<long long>(r.steps),
                r.engine_rate, r.reference_rate, r.engine_rate / r.reference_rate, r.note.c_str());
  }
  std::fflush(stdout);
}

nlohmann::json row_json(const Row& r) {
  nlohmann::json j = {{"backend", r.backend}, {"precision", r.precision}, {"n", r.n}};
  if (r.skipped) {
    j["skipped"] = r.note;
    return j;
  }
  j["steps"] = r.steps;
  j["engine"] = {
      {"traj_steps_per_s", r.engine_rate}, {"kernel_traj_steps_per_s", r.kernel_rate},
      {"seconds", r.engine.seconds},       {"kernel_seconds", r.engine.kernel_seconds},
      {"launches", r.engine.launches},     {"hits", r.engine.hits},
      {"crossings", r.engine.crossings},   {"max_energy_error", r.engine.max_energy_error},
      {"device", r.engine.device}};
  j["reference"] = {{"traj_steps_per_s", r.reference_rate},
                    {"seconds", r.reference.seconds},
                    {"crossings", r.reference.crossings},
                    {"max_energy_error", r.reference.max_energy_error}};
  j["ratio"] = r.engine_rate / r.reference_rate;
  j["check"] = {{"ok", r.verify_ok},
                {"note", r.note},
                {"trajectories", std::min(r.n, kVerifyTrajectories)},
                {"steps", std::min(r.steps, kVerifySteps)},
                {"max_rel_state_diff", r.verify_diff},
                {"crossings_engine", r.verify_crossings_engine},
                {"crossings_reference", r.verify_crossings_reference},
                {"timed_run_max_rel_state_diff", r.timed_diff}};
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_args(argc, argv);
  vigor::host::engine_test_hooks().event_burst = o.event_burst;
  const auto t_start = Clock::now();

  bool use_cuda = false;
  std::string gpu_name, gpu_why;
  if (o.cuda) {
    if (vigor::host::cuda_device_count() > 0) {
#if defined(VIGOR_BENCH_CUDA)
      const vigor_bench::GpuInfo g = vigor_bench::cuda_info();
      use_cuda = g.present;
      gpu_name = g.name;
      gpu_why = g.why;
#else
      gpu_why = "vigor-bench was built without its CUDA reference";
#endif
    } else {
      gpu_why = vigor::host::cuda_unavailable_reason();
    }
    if (!use_cuda) {
      if (o.cuda_explicit) {
        std::fprintf(stderr, "vigor-bench: --backend cuda: no usable CUDA device: %s\n",
                     gpu_why.c_str());
        return 2;
      }
      std::printf("note: no CUDA measurements: %s\n", gpu_why.c_str());
    }
  }

  std::printf("vigor-bench %s: verlet on henon_heiles, E = 1/8, h = %g, section q0 = 0 up\n",
              vigor::kVersion, kDt);
  std::printf("cpu: %s, %d OpenMP threads%s%s\n", cpu_model().c_str(), omp_get_max_threads(),
              use_cuda ? "; gpu: " : "", gpu_name.c_str());
  std::printf("t-s/s = trajectory-steps per second; ratio = engine / reference\n\n");

  Bench bench(o);
  std::vector<Row> rows;
  std::vector<BackendKind> backends;
  if (o.cpu) backends.push_back(BackendKind::kCpu);
  if (use_cuda) backends.push_back(BackendKind::kCuda);
  try {
    if (o.verlet_table) print_header();
    for (const BackendKind b : o.verlet_table ? backends : std::vector<BackendKind>{}) {
      for (const Precision p : {Precision::kDouble, Precision::kFloat}) {
        double rate_estimate = 0;
        for (const std::int64_t n : o.sizes) {
          rows.push_back(bench.measure(b, p, n, rate_estimate));
          print_row(rows.back());
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vigor-bench: error: %s\n", e.what());
    return 3;
  }
  nlohmann::json implicit_rows;
  if (o.implicit) {
    vigor_bench::ImplicitSuiteOptions io;
    io.quick = o.quick;
    io.repeats = o.quick ? 1 : 3;
    io.target_seconds = o.target_seconds;
    io.henon_heiles_ensemble = make_ensemble;
    try {
      implicit_rows = vigor_bench::run_implicit_suite(backends, io);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "vigor-bench: error: %s\n", e.what());
      return 3;
    }
  }
  nlohmann::json survey_rows;
  if (o.survey) {
    vigor_bench::SurveySuiteOptions so = o.survey_options;
    so.henon_heiles_ensemble = make_ensemble;
    so.integration = make_integration;
    so.scratch = std::filesystem::temp_directory_path();
    try {
      survey_rows = vigor_bench::run_survey_suite(backends, so);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "vigor-bench: error: %s\n", e.what());
      return 3;
    }
  }
  int warnings = int(std::count_if(rows.begin(), rows.end(),
                                   [](const Row& r) { return !r.skipped && !r.verify_ok; }));
  for (const auto& r : survey_rows)
    warnings += r.contains("check") && r["check"].get<std::string>() != "ok";
  std::printf("\n%zu measurements, %d with check warnings, %.1f s\n",
              rows.size() + survey_rows.size(), warnings, seconds_since(t_start));

  if (!o.json.empty()) {
    nlohmann::json j;
    j["benchmark"] = {{"model", "henon_heiles"},
                      {"params", {{"a", kA}, {"b", kB}}},
                      {"integrator", "verlet"},
                      {"dt", kDt},
                      {"energy", kEnergy},
                      {"section", "q0 = 0, up"},
                      {"segment_steps", kSegmentSteps},
                      {"quick", o.quick},
                      {"event_burst", o.event_burst}};
    j["machine"] = {{"cpu", cpu_model()},
                    {"hardware_threads", std::thread::hardware_concurrency()},
                    {"openmp_threads", omp_get_max_threads()},
                    {"gpu", use_cuda ? nlohmann::json(gpu_name) : nlohmann::json(nullptr)},
                    {"date_utc", utc_now()},
                    {"vigor_version", vigor::kVersion},
                    {"compiler", __VERSION__}};
    if (!use_cuda && o.cuda) j["machine"]["gpu_unavailable"] = gpu_why;
    j["results"] = nlohmann::json::array();
    for (const Row& r : rows) j["results"].push_back(row_json(r));
    if (o.implicit) j["implicit"] = implicit_rows;
    if (o.survey) j["survey"] = survey_rows;
    std::ofstream out(o.json);
    out << j.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "vigor-bench: cannot write %s\n", o.json.c_str());
      return 3;
    }
    std::printf("wrote %s\n", o.json.c_str());
  }
  return 0;
}
