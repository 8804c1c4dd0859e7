/// @file survey_suite.cpp
/// @brief What a Poincaré-section survey costs, stage by stage: Verlet on Hénon–Heiles at
/// E = 1/8 (the Verlet table's ensemble, step and section), per backend and precision, at
/// 10^5 ... 10^7 trajectories.
///
/// Workloads:
///   * bare:                  no section, |H - H0| checked after the last step only;
///   * H every step:          no section, |H - H0| after every step (the job's default);
///   * section + H every step: the plane q0 = 0 up and H after every step (a survey's default);
///   * section, H at the end: the plane, H after the last step only.
/// Three times per workload:
///   * kernel:       the engine's own kernel time (Engine::kernel_seconds);
///   * launch→drain: the run loop's launch/drain cycle in segments of 10^4 steps, from the first
///                   launch to the last drain (bench/engine_run.hpp);
///   * end to end:   host::run_job on a job with the same states, steps and backend and
///                   output.hdf5 (output.csv off), from the call to its return: engine, upload,
///                   the run, results.h5 and summary.json written. "write" is that time less the
///                   run's own wall time (summary.json's wall_seconds): writing the results.
/// "of bare" is a workload's kernel rate over the bare kernel rate of the same backend,
/// precision and size, the ratio issue 27's targets are stated in. Each workload is measured once
/// per size; a run of the whole table repeated is how its noise shows.
#include "bench/survey_suite.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

#include "bench/bench_util.hpp"
#include "bench/engine_run.hpp"
#include "host/backends/registry.hpp"
#include "host/build_info.hpp"
#include "host/job/job.hpp"
#include "host/run/run.hpp"

namespace vigor_bench {
namespace {

namespace fs = std::filesystem;
using vigor::host::BackendKind;
using vigor::host::Integration;
using vigor::host::Precision;

struct Workload {
  const char* label;
  bool section;
  bool h_every_step;
};

constexpr Workload kWorkloads[] = {
    {"bare", false, false},
    {"H every step", false, true},
    {"section + H every step", true, true},
    {"section, H at the end", true, false},
};

Integration workload_integration(const SurveySuiteOptions& o, Precision p, const Workload& w,
                                 std::int64_t steps) {
  Integration in = o.integration(p);
  if (!w.section) in.section = {};
  in.conservation_every = w.h_every_step ? 1 : steps;
  return in;
}

/// The job a user would write for the same run: the Integration's model, step and section, the
/// states given as a program gives them (Overrides::ensemble), results.h5 only (sections.csv
/// where the build has no HDF5).
vigor::host::Job workload_job(const Integration& in, BackendKind backend,
                              const std::vector<double>& soa, std::int64_t n, std::int64_t steps,
                              const fs::path& dir) {
  const vigor::host::ModelInfo* model = vigor::host::find_model(in.model);
  if (model == nullptr) throw std::runtime_error("model " + in.model + " is not registered");
  nlohmann::ordered_json j;
  j["model"]["name"] = in.model;
  for (std::size_t k = 0; k < model->params.size(); ++k)
    j["model"]["params"][model->params[k].name] = in.params.at(k);
  j["integrator"] = {{"name", in.integrator}, {"dt", in.dt}};
  j["steps"] = steps;
  if (in.section.kind != 0) {
    const int d = in.section.direction;
    j["section"] = {{"coordinate", model->state_names.at(std::size_t(in.section.coordinate))},
                    {"value", in.section.value},
                    {"direction", d > 0 ? "up" : (d < 0 ? "down" : "both")}};
  }
  j["diagnostics"] = {{"conservation_every", in.conservation_every}};
  j["backend"] = backend == BackendKind::kCpu ? "cpu" : "cuda";
  j["precision"] = in.precision == Precision::kFloat ? "float" : "double";
  const bool hdf5 = vigor::host::hdf5_available();
  j["output"] = {{"dir", dir.string()}, {"hdf5", hdf5}, {"csv", !hdf5}};
  vigor::host::Overrides ov;
  ov.ensemble = std::make_shared<vigor::host::Ensemble>();
  ov.ensemble->kind = "states";
  ov.ensemble->count = n;
  ov.ensemble->state = soa;
  return vigor::host::parse_job(j.dump(), ov);
}

struct EndToEnd {
  double seconds = 0, run_seconds = 0;
  std::int64_t crossings = 0, recorded = 0;
  std::uintmax_t bytes = 0;  ///< results.h5 (or sections.csv)
};

EndToEnd run_end_to_end(const vigor::host::Job& job, const fs::path& dir) {
  vigor::host::RunOptions ro;
  ro.quiet = true;
  const auto t0 = std::chrono::steady_clock::now();
  const nlohmann::ordered_json s = vigor::host::run_job(job, ro, /*force=*/true);
  EndToEnd e;
  e.seconds = vigor_bench_util::seconds_since(t0);
  e.run_seconds = s.at("wall_seconds").get<double>();
  e.crossings = s.value("crossings_total", std::int64_t(0));
  e.recorded = s.value("crossings_recorded", std::int64_t(0));
  std::error_code ec;
  e.bytes = fs::file_size(dir / (job.hdf5 ? "results.h5" : "sections.csv"), ec);
  if (ec) e.bytes = 0;
  fs::remove_all(dir, ec);
  return e;
}

std::string rate(double work, double seconds) {
  return vigor_bench_util::format_number(seconds > 0 ? work / seconds : 0.0);
}

void print_header() {
  std::printf(
      "\nsurvey: verlet on henon_heiles, E = 1/8, the table's section; trajectory-steps/s\n");
  std::printf("%-7s %-5s %9s %7s %-23s %10s %7s %13s %10s %10s %9s %7s %10s  %s\n", "backend",
              "prec", "n", "steps", "workload", "kernel", "of bare", "launch->drain", "end to end",
              "recorded", "file MB", "write s", "written/s", "check");
}

/// One workload at one size: its engine run and its end-to-end run, printed and as a JSON row.
/// bare_kernel_rate: the bare workload's kernel rate at this size (0 for the bare workload itself,
/// which sets it).
nlohmann::json measure_workload(const SurveySuiteOptions& o, BackendKind backend, Precision p,
                                const Workload& w, const std::vector<double>& soa, std::int64_t n,
                                double& bare_kernel_rate, const fs::path& dir) {
  const std::int64_t steps = o.steps;
  const double work = double(n) * double(steps);
  const Integration in = workload_integration(o, p, w, steps);
  const EngineRun er = run_engine(in, backend, soa, n, steps,
                                  vigor::host::engine_resources(vigor::host::RunOptions{}));
  const EndToEnd e = run_end_to_end(workload_job(in, backend, soa, n, steps, dir), dir);
  const double kernel_rate = work / std::max(er.kernel_seconds, 1e-12);
  if (!w.section && !w.h_every_step) bare_kernel_rate = kernel_rate;
  const double of_bare = bare_kernel_rate > 0 ? kernel_rate / bare_kernel_rate : 0.0;
  const double write_seconds = std::max(0.0, e.seconds - e.run_seconds);
  // The engine run drains what it records; the end-to-end run counts what it recorded.
  const bool same = e.crossings == er.crossings && e.recorded == er.hits;
  const std::string check = same ? "ok"
                                 : "WARNING: crossings " + std::to_string(er.crossings) +
                                       " (engine) vs " + std::to_string(e.crossings) +
                                       " (end to end), recorded " + std::to_string(er.hits) +
                                       " vs " + std::to_string(e.recorded);
  const char* bname = backend == BackendKind::kCpu ? "cpu" : "cuda";
  const char* pname = p == Precision::kDouble ? "fp64" : "fp32";
  std::printf("%-7s %-5s %9lld %7lld %-23s %10s %7.3f %13s %10s %10lld %9.1f %7.2f %10s  %s\n",
              bname, pname, static_cast<long long>(n), static_cast<long long>(steps), w.label,
              rate(work, er.kernel_seconds).c_str(), of_bare, rate(work, er.seconds).c_str(),
              rate(work, e.seconds).c_str(), static_cast<long long>(e.recorded),
              double(e.bytes) / 1e6, write_seconds, rate(double(e.recorded), write_seconds).c_str(),
              check.c_str());
  std::fflush(stdout);
  return {{"backend", bname},
          {"precision", pname},
          {"n", n},
          {"steps", steps},
          {"workload", w.label},
          {"kernel_seconds", er.kernel_seconds},
          {"launch_to_last_drain_seconds", er.seconds},
          {"launches", er.launches},
          {"end_to_end_seconds", e.seconds},
          {"end_to_end_run_seconds", e.run_seconds},
          {"write_seconds", write_seconds},
          {"crossings", e.crossings},
          {"crossings_recorded", e.recorded},
          {"output_bytes", e.bytes},
          {"output", vigor::host::hdf5_available() ? "results.h5" : "sections.csv"},
          {"kernel_of_bare", of_bare},
          {"device", er.device},
          {"check", check}};
}

}  // namespace

nlohmann::json run_survey_suite(const std::vector<BackendKind>& backends,
                                const SurveySuiteOptions& o) {
  nlohmann::json rows = nlohmann::json::array();
  print_header();
  const fs::path dir = o.scratch / ("vigor-bench-survey-" + std::to_string(::getpid()));
  for (const BackendKind backend : backends)
    for (const Precision p : {Precision::kDouble, Precision::kFloat}) {
      // The previous size's time for all its runs, writing included: the next size's estimate.
      double last_seconds = 0;
      std::int64_t last_n = 0;
      for (const std::int64_t n : o.sizes) {
        const double estimate = last_n > 0 ? last_seconds * double(n) / double(last_n) : 0.0;
        if (estimate > o.budget_seconds) {
          const char* bname = backend == BackendKind::kCpu ? "cpu" : "cuda";
          const char* pname = p == Precision::kDouble ? "fp64" : "fp32";
          std::printf(
              "%-7s %-5s %9lld %7lld skipped: ~%.0f s at the last size's pace (budget %.0f s)\n",
              bname, pname, static_cast<long long>(n), static_cast<long long>(o.steps), estimate,
              o.budget_seconds);
          rows.push_back({{"backend", bname},
                          {"precision", pname},
                          {"n", n},
                          {"skipped", "over the time budget"}});
          continue;
        }
        const auto t0 = std::chrono::steady_clock::now();
        const std::vector<double> soa = o.henon_heiles_ensemble(n);
        double bare_kernel_rate = 0;
        for (const Workload& w : kWorkloads)
          rows.push_back(measure_workload(o, backend, p, w, soa, n, bare_kernel_rate, dir));
        last_seconds = vigor_bench_util::seconds_since(t0);
        last_n = n;
      }
    }
  return rows;
}

}  // namespace vigor_bench
