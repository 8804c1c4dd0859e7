/// @file engine_drain.cpp
/// @brief Where a CPU section survey spends its time outside the kernel: one CpuEngine (Verlet
/// on Hénon–Heiles, the section q0 = 0 up, H after every step) driven as the run loop drives it,
/// timed in three phases: upload (allocating the ensemble's arrays and the section buffers, the
/// initial energies), launches (the kernel) and drains (unpacking the section buffers into a
/// HitBlock). Built against a source tree by build.sh, so that two commits can be compared in
/// turn on the same machine (docs/performance.md, "The section buffers without zero-filling").
///
///   engine_drain [n] [steps] [repeats] [MiB]   defaults 100000 10000 5 32; prints the best of
///                                               `repeats` per phase, for FP64 and FP32; MiB is the
///                                               section-buffer budget (32: what a CPU run gives)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "host/backends/cpu_engine.hpp"
#include "kernels/integrators/stormer_verlet.hpp"
#include "models/henon_heiles.hpp"

using namespace vigor;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::int64_t kSegmentSteps = 10'000;  // the run loop's default segment

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// n states on the section q0 = 0 at E = 1/8, crossing upwards (p0 > 0), from a fixed LCG.
std::vector<double> section_states(std::int64_t n) {
  const double energy = 0.125, b = -1.0 / 3.0;
  std::vector<double> soa(std::size_t(4 * n));
  std::uint64_t s = 12345;
  auto uniform = [&s](double lo, double hi) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * double(s >> 11) * 0x1.0p-53;
  };
  for (std::int64_t i = 0; i < n;) {
    const double y = uniform(-0.45, 0.6), py = uniform(-0.5, 0.5);
    const double v = 0.5 * y * y + b * y * y * y;
    const double px2 = 2.0 * (energy - v) - py * py;
    if (!(px2 > 0)) continue;
    soa[std::size_t(0 * n + i)] = 0.0;
    soa[std::size_t(1 * n + i)] = y;
    soa[std::size_t(2 * n + i)] = std::sqrt(px2);
    soa[std::size_t(3 * n + i)] = py;
    ++i;
  }
  return soa;
}

struct Phases {
  double upload = 1e300, launches = 1e300, drains = 1e300;
  std::int64_t hits = 0, launches_count = 0;
};

template <class Real>
Phases run_once(const std::vector<double>& soa, std::int64_t n, std::int64_t steps,
                std::size_t budget) {
  host::Integration in;
  in.model = "henon_heiles";
  in.params = {1.0, -1.0 / 3.0};
  in.integrator = "verlet";
  in.dt = 0.01;
  in.precision = sizeof(Real) == 8 ? host::Precision::kDouble : host::Precision::kFloat;
  in.section.kind = kernels::kSectionPlane;
  in.section.coordinate = 0;
  in.section.direction = kernels::kDirUp;
  in.section.max_crossings = 1000;
  in.conservation_every = 1;
  host::CpuEngine<models::HenonHeiles<Real>, kernels::StormerVerlet<Real>, Real> engine(
      in, host::EngineResources{0, budget, -1});
  Phases p;
  auto t0 = Clock::now();
  engine.upload(soa, n);
  p.upload = since(t0);
  p.launches = p.drains = 0;
  host::HitBlock block;
  for (std::int64_t done = 0; done < steps;) {
    const std::int64_t end = std::min(steps, done + kSegmentSteps);
    for (;;) {
      t0 = Clock::now();
      engine.launch(end);
      p.launches += since(t0);
      ++p.launches_count;
      t0 = Clock::now();
      block.clear();
      const std::int64_t full = engine.drain(block);
      p.drains += since(t0);
      p.hits += std::int64_t(block.trajectory.size());
      if (full == 0) break;
    }
    done = end;
  }
  return p;
}

template <class Real>
void report(const char* name, const std::vector<double>& soa, std::int64_t n, std::int64_t steps,
            int repeats, std::size_t budget) {
  Phases best;
  for (int r = 0; r < repeats; ++r) {
    const Phases p = run_once<Real>(soa, n, steps, budget);
    best.upload = std::min(best.upload, p.upload);
    best.launches = std::min(best.launches, p.launches);
    best.drains = std::min(best.drains, p.drains);
    best.hits = p.hits;
    best.launches_count = p.launches_count;
  }
  const double total = best.upload + best.launches + best.drains;
  std::printf(
      "%s n=%lld steps=%lld hits=%lld launches=%lld  upload %.4f s  launches %.4f s  drains %.4f s "
      " "
      "sum %.4f s  (%.3e trajectory-steps/s)\n",
      name, (long long)n, (long long)steps, (long long)best.hits, (long long)best.launches_count,
      best.upload, best.launches, best.drains, total, double(n) * double(steps) / total);
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 100000;
  const std::int64_t steps = argc > 2 ? std::atoll(argv[2]) : 10000;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  const std::size_t budget = std::size_t(argc > 4 ? std::atoll(argv[4]) : 32) << 20;
  const auto soa = section_states(n);
  report<double>("FP64", soa, n, steps, repeats, budget);
  report<float>("FP32", soa, n, steps, repeats, budget);
}
