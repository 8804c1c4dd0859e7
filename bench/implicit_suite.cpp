/// @file implicit_suite.cpp
/// @brief Throughput of the implicit and constrained integrators, each next to Verlet on
/// Hénon–Heiles on the same backend and precision.
///
/// Cases (trajectory-steps per second through the engine, driven as the run loop
/// (host/run/segment_loop.cpp) drives it):
///   * verlet      on henon_heiles, h = 0.01, section q0 = 0 up — the baseline;
///   * midpoint    on henon_heiles, 3 Newton iterations (target: >= 1/6 of Verlet: it does about
///                 8x the arithmetic, so anything slower points at spills or divergence);
///   * lobatto3    on henon_heiles, its default iterations;
///   * midpoint    on double_pendulum (the general, AD-Jacobian path of a non-separable L), its
///                 fourth-order composition midpoint4 (three such solves per step) and rk4 on the
///                 same equations (phase_rates: four Legendre solves and AD gradients per step);
///   * rattle      on double_spherical_pendulum (Marsden–Wendlandt data rotated about z), h = 1e-3;
///   * variational_euler_so3 on rigid_body_so3, h = 0.01, and its exponential chart;
///   * variational_euler_se3 on kirchhoff_se3, h = 0.025, and its exponential chart;
///   * verlet + tangent map on henon_heiles (diagnostics.tangent; FP64 only, as the job allows):
///                 target >= 1/5 of plain Verlet (the dual step carries 4 partials per component
///                 plus a Hessian-vector product per force, ~4x the arithmetic, and the chaos
///                 indicators add a deviation-vector norm and a log per step).
/// Sizes: 2e4 trajectories on the CPU, 1e6 on a GPU (a tenth with --quick). Steps are chosen from
/// a short calibration run to take about target_seconds; each case runs `repeats` times (3; 1 with
/// --quick) and the fastest run is reported.
#include "bench/implicit_suite.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/engine_run.hpp"
#include "host/backends/registry.hpp"
#include "models/double_spherical_pendulum.hpp"
#include "models/kirchhoff_se3.hpp"

namespace vigor_bench {
namespace {

using vigor::host::BackendKind;
using vigor::host::Integration;
using vigor::host::Precision;

struct Case {
  std::string label;
  std::string model;
  std::string integrator;
  double dt = 0.01;
  int newton_iterations = 0;  ///< 0: the integrator's default
  bool section = false;       ///< q0 = 0 up (the Verlet table's section)
  bool tangent = false;       ///< diagnostics.tangent (FP64 only)
};

std::vector<double> default_params(const std::string& model) {
  const vigor::host::ModelInfo* info = vigor::host::find_model(model);
  if (info == nullptr) throw std::runtime_error("model " + model + " is not registered");
  std::vector<double> p;
  for (const auto& s : info->params) p.push_back(s.default_value);
  return p;
}

/// Marsden–Wendlandt's double spherical pendulum rotated by angle phi_i about z: a symmetry, so
/// every state lies exactly on the constraint manifold, and trajectories differ.
std::vector<double> double_spherical_ensemble(std::int64_t n) {
  const auto ref = vigor::models::DoubleSphericalPendulum<double>::reference_state();
  std::vector<double> soa(std::size_t(12 * n));
  for (std::int64_t i = 0; i < n; ++i) {
    const double phi = 6.283185307179586 * double(i) / double(n);
    const double c = std::cos(phi), s = std::sin(phi);
    double x[12];
    for (int block = 0; block < 4; ++block) {  // q1, q2, p1, p2: rotate (x, y), keep z
      const double* v = ref.data() + 3 * block;
      x[3 * block + 0] = c * v[0] - s * v[1];
      x[3 * block + 1] = s * v[0] + c * v[1];
      x[3 * block + 2] = v[2];
    }
    for (int k = 0; k < 12; ++k) soa[std::size_t(k * n + i)] = x[k];
  }
  return soa;
}

/// Angles in a box around (0.5, -0.3) radians, at rest.
std::vector<double> double_pendulum_ensemble(std::int64_t n) {
  std::vector<double> soa(std::size_t(4 * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    const double u = double(i) / double(std::max<std::int64_t>(n - 1, 1));
    soa[std::size_t(i)] = 0.4 + 0.2 * u;
    soa[std::size_t(n + i)] = -0.3 + 0.1 * std::sin(7.0 * u);
  }
  return soa;
}

/// R = identity, body momentum (cos a, 0, sin a) with a spread around the HLW value 1.1.
std::vector<double> rigid_body_ensemble(std::int64_t n) {
  std::vector<double> soa(std::size_t(12 * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    const double a = 1.1 + 0.3 * double(i) / double(std::max<std::int64_t>(n, 1));
    for (int d = 0; d < 3; ++d) soa[std::size_t((4 * d) * n + i)] = 1.0;  // R00, R11, R22
    soa[std::size_t(9 * n + i)] = std::cos(a);
    soa[std::size_t(11 * n + i)] = std::sin(a);
  }
  return soa;
}

/// The body in fluid's reference state (B = E, x = 0, on the thesis's level set) with Pi0 spread
/// by up to 10 %.
std::vector<double> kirchhoff_ensemble(std::int64_t n) {
  const auto ref = vigor::models::KirchhoffSE3<double>::reference_state();
  std::vector<double> soa(std::size_t(18 * n));
  for (std::int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < 18; ++k) soa[std::size_t(k * n + i)] = ref[std::size_t(k)];
    soa[std::size_t(12 * n + i)] *= 1.0 + 0.1 * double(i) / double(std::max<std::int64_t>(n, 1));
  }
  return soa;
}

}  // namespace

nlohmann::json run_implicit_suite(const std::vector<BackendKind>& backends,
                                  const ImplicitSuiteOptions& o) {
  const std::vector<Case> cases = {
      {"verlet / henon_heiles", "henon_heiles", "verlet", 0.01, 0, true},
      {"midpoint(3) / henon_heiles", "henon_heiles", "midpoint", 0.01, 3, true},
      {"lobatto3 / henon_heiles", "henon_heiles", "lobatto3", 0.01, 0, true},
      {"midpoint / double_pendulum", "double_pendulum", "midpoint", 0.01, 0, false},
      {"midpoint4 / double_pendulum", "double_pendulum", "midpoint4", 0.01, 0, false},
      {"rk4 / double_pendulum", "double_pendulum", "rk4", 0.01, 0, false},
      {"rattle / double_spherical", "double_spherical_pendulum", "rattle", 1e-3, 0, false},
      {"var_euler / rigid_body_so3", "rigid_body_so3", "variational_euler_so3", 0.01, 0, false},
      {"var_euler_exp / rigid_body_so3", "rigid_body_so3", "variational_euler_so3_exp", 0.01, 0,
       false},
      {"var_euler_se3 / kirchhoff_se3", "kirchhoff_se3", "variational_euler_se3", 0.025, 0, false},
      {"var_euler_se3_exp / kirchhoff", "kirchhoff_se3", "variational_euler_se3_exp", 0.025, 0,
       false},
      {"verlet+tangent / henon_heiles", "henon_heiles", "verlet", 0.01, 0, true, true},
  };
  std::printf(
      "\nimplicit and constrained integrators (ratio = this / verlet on henon_heiles, "
      "same backend and precision)\n");
  std::printf("%-7s %-5s %-28s %9s %7s %8s %14s %7s %10s\n", "backend", "prec", "case", "n",
              "lanes", "steps", "engine t-s/s", "ratio", "residual");
  nlohmann::json rows = nlohmann::json::array();
  for (const BackendKind b : backends) {
    const std::int64_t n =
        b == BackendKind::kCuda ? (o.quick ? 100'000 : 1'000'000) : (o.quick ? 2'000 : 20'000);
    for (const Precision p : {Precision::kDouble, Precision::kFloat}) {
      double verlet_rate = 0;
      for (const Case& c : cases) {
        if (!vigor::host::find_model(c.model) || !vigor::host::find_integrator(c.integrator))
          continue;
        if (c.tangent && p != Precision::kDouble) continue;
        Integration r;
        r.model = c.model;
        r.integrator = c.integrator;
        r.precision = p;
        r.params = default_params(c.model);
        for (const auto& opt : vigor::host::find_integrator(c.integrator)->options)
          r.options.push_back(opt.default_value);
        r.dt = c.dt;
        r.newton_iterations = c.newton_iterations;
        r.tangent = c.tangent;
        if (c.section) {
          r.section.kind = 1;        // plane
          r.section.coordinate = 0;  // q0
          r.section.direction = 1;   // up
        }
        std::vector<double> soa;
        if (c.model == "henon_heiles")
          soa = o.henon_heiles_ensemble(n);
        else if (c.model == "double_spherical_pendulum")
          soa = double_spherical_ensemble(n);
        else if (c.model == "double_pendulum")
          soa = double_pendulum_ensemble(n);
        else if (c.model == "kirchhoff_se3")
          soa = kirchhoff_ensemble(n);
        else
          soa = rigid_body_ensemble(n);
        // Calibrate on a short run, then aim at the target time.
        const std::int64_t cal_steps = o.quick ? 10 : 20;
        const EngineRun cal = run_engine(r, b, soa, n, cal_steps);
        const double cal_rate = double(n) * double(cal_steps) / std::max(cal.seconds, 1e-9);
        const std::int64_t steps = std::clamp<std::int64_t>(
            std::int64_t(o.target_seconds * cal_rate / double(n)), 20, 1'000'000);
        EngineRun run = run_engine(r, b, soa, n, steps);
        for (int rep = 1; rep < o.repeats; ++rep) {
          EngineRun again = run_engine(r, b, soa, n, steps);
          if (again.seconds < run.seconds) run = std::move(again);
        }
        const double rate = double(n) * double(steps) / run.seconds;
        if (c.integrator == "verlet" && !c.tangent) verlet_rate = rate;
        const double ratio = verlet_rate > 0 ? rate / verlet_rate : 0.0;
        const char* bn = b == BackendKind::kCuda ? "cuda" : "cpu";
        const char* pn = p == Precision::kDouble ? "fp64" : "fp32";
        std::printf("%-7s %-5s %-28s %9lld %7d %8lld %14.3e %7.3f %10.2e%s\n", bn, pn,
                    c.label.c_str(), static_cast<long long>(n), run.simd_lanes,
                    static_cast<long long>(steps), rate, ratio, run.max_newton_residual,
                    run.unfinished ? "  WARNING: unfinished trajectories" : "");
        std::fflush(stdout);
        rows.push_back({{"backend", bn},
                        {"precision", pn},
                        {"case", c.label},
                        {"model", c.model},
                        {"integrator", c.integrator},
                        {"tangent", c.tangent},
                        {"newton_iterations", c.newton_iterations},
                        {"dt", c.dt},
                        {"n", n},
                        {"steps", steps},
                        {"repeats", o.repeats},
                        {"simd_lanes", run.simd_lanes},
                        {"traj_steps_per_s", rate},
                        {"kernel_traj_steps_per_s",
                         double(n) * double(steps) / std::max(run.kernel_seconds, 1e-12)},
                        {"ratio_to_verlet", ratio},
                        {"max_newton_residual", run.max_newton_residual},
                        {"max_energy_error", run.max_energy_error},
                        {"unfinished", run.unfinished},
                        {"device", run.device}});
      }
    }
  }
  return rows;
}

}  // namespace vigor_bench
