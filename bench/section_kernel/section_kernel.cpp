/// @file section_kernel.cpp
/// @brief The section survey's per-step work on the CPU lanes, kernel only: Störmer–Verlet on
/// Hénon–Heiles through kernels::advance_lanes on the CPU engine's lane type
/// (PackLanes<Real, native, 2>), one thread, no engine, no drains, no output.
///
/// Four workloads on the same 4096 trajectories (E ~ 0.12, h = 0.01, 20 000 steps), best of five
/// runs each, interleaved:
///   section+H   the plane q0 = 0 (upwards) tested and H checked after every step (the default
///               diagnostics.conservation_every = 1): vigor-bench's section workload;
///   H only      H after every step, no section;
///   per-step    no H, no section, but every step tested for non-finite values (bursts off):
///               the driver's per-step bookkeeping alone;
///   bare        H after the last step only: the steps run in bursts, as a hand-written loop.
/// The differences between the rows are what H, the section test and the per-step bookkeeping
/// cost (docs/performance.md). The crossings counted and a hash of the final states are printed
/// so that two trees can be seen to compute the same thing.
///
///   bash bench/section_kernel/build.sh . section_kernel && ./section_kernel
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../driver_arrays.hpp"
#include "kernels/driver/advance.hpp"
#include "kernels/integrators/stormer_verlet.hpp"
#include "kernels/simd/pack_lanes.hpp"
#include "models/henon_heiles.hpp"

namespace {

using namespace vigor;

struct Workload {
  const char* name;
  bool section;
  bool check_every_step;
  bool bursts;
};

constexpr Workload kWorkloads[] = {
    {"section+H", true, true, true},
    {"H only", false, true, true},
    {"per-step", false, false, false},
    {"bare", false, false, true},
};

struct Outcome {
  double seconds = 0;
  std::int64_t crossings = 0;
  std::uint64_t hash = 0;
};

/// One run of workload w on n trajectories of `steps` steps, on lane type L.
template <class Real, class L>
Outcome run(const Workload& w, long n, long steps) {
  using M = models::HenonHeiles<Real>;
  using I = kernels::StormerVerlet<Real>;
  using P = typename L::Real;
  const double params[2] = {M::kParams[0].default_value, M::kParams[1].default_value};
  const double options[1] = {0};
  const M m = M::from_params(params);
  const I step = I::from_options(options);
  const auto m_lanes = kernels::rebind_t<M, P>::from_params(params);
  const auto step_lanes = kernels::rebind_t<I, P>::from_options(options);
  constexpr int kDim = 4, kCapacity = 64;  // 20 000 steps cross q0 = 0 about 30 times
  vigor_bench_util::DriverArrays<Real> arrays(n, kDim, kCapacity);
  std::vector<Real>& state = arrays.state;
  const double s0[kDim] = {0.0, -0.2, 0.45, 0.0};
  for (long i = 0; i < n; ++i)
    for (int c = 0; c < kDim; ++c)
      state[c * n + i] = Real(s0[c] * (1 + 1e-3 * double(i % 7)) + (c == 1 ? 1e-4 * (i % 13) : 0));
  const kernels::EnsembleArrays<Real> a = arrays.view();
  for (long i = 0; i < n; ++i) kernels::initial_energy(m, a, n, i);
  kernels::SegmentParams<Real> sp;
  sp.n = n;
  sp.h = Real(0.01);
  sp.end_step = steps;
  sp.conservation_every = w.check_every_step ? 1 : steps;
  sp.bursts = w.bursts;
  if (w.section) {
    sp.section_kind = kernels::kSectionPlane;
    sp.section_coord = 0;
    sp.section_direction = kernels::kDirUp;
    sp.hit_capacity = kCapacity;
    sp.max_recorded = kCapacity;
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (long i0 = 0; i0 < n; i0 += L::NB)
    kernels::advance_lanes<L, false>(m_lanes, m, step_lanes, step, step, sp, a, i0,
                                     int(std::min<long>(L::NB, n - i0)));
  Outcome o;
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (long i = 0; i < n; ++i) o.crossings += arrays.crossings[i];
  for (const Real x : state) {  // FNV-1a over the final states' bytes
    unsigned char b[sizeof(Real)];
    std::memcpy(b, &x, sizeof(Real));
    for (const unsigned char c : b) o.hash = (o.hash ^ c) * 1099511628211ull;
  }
  return o;
}

template <class Real>
void bench(long n, long steps) {
  constexpr int kNative = kernels::native_lanes<Real>();
  using L = kernels::PackLanes<Real, kNative, 2>;
  constexpr int kRows = sizeof(kWorkloads) / sizeof(kWorkloads[0]);
  Outcome best[kRows];
  for (int r = 0; r < 5; ++r)
    for (int w = 0; w < kRows; ++w) {
      const Outcome o = run<Real, L>(kWorkloads[w], n, steps);
      if (r == 0 || o.seconds < best[w].seconds) best[w] = o;
    }
  const double work = double(n) * double(steps);
  for (int w = 0; w < kRows; ++w)
    std::printf("%s  %-10s %.3e trajectory-steps/s  (%.3f of bare)  crossings %lld  hash %016llx\n",
                sizeof(Real) == 8 ? "FP64" : "FP32", kWorkloads[w].name, work / best[w].seconds,
                best[kRows - 1].seconds / best[w].seconds, (long long)best[w].crossings,
                (unsigned long long)best[w].hash);
}

}  // namespace

int main() {
  std::printf(
      "section_kernel: Verlet on Henon-Heiles, 4096 trajectories x 20000 steps, one "
      "thread, best of 5 interleaved; lanes PackLanes<Real, native, 2>\n");
  bench<double>(4096, 20000);
  bench<float>(4096, 20000);
}
