/// @file composition_loops.cpp
/// @brief yoshida4 and yoshida6 on the CPU lanes as the engine runs them, to compare two trees'
/// forms of the compositions (the substeps written out, or taken as a loop).
///
/// For Hénon–Heiles, Kepler and the pendulum, in both precisions: 4096 trajectories advanced
/// through kernels::advance_lanes on one thread, on the engine's two block types (cpu_engine.hpp):
///   * bare: the burst blocks (QuietSegmentLanes, burst_block_lanes), conservation_every = steps;
///   * H every step: the per-step blocks (WithoutQuietBursts, block_lanes), conservation_every = 1.
/// Best of seven runs each. The final states' bytes are printed as an FNV-1a hash, so that two
/// builds' outputs can be compared for identical bits. Build against each tree, run the two in
/// turn (bench/build_against.sh):
///
///   bash bench/build_against.sh bench/composition_loops/composition_loops.cpp OLD_TREE old
///   bash bench/build_against.sh bench/composition_loops/composition_loops.cpp . new
///   for r in 1 2 3; do ./old > old_$r.txt; ./new > new_$r.txt; done
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "../lane_advance.hpp"
#include "kernels/driver/advance.hpp"
#include "kernels/integrators/yoshida4.hpp"
#include "kernels/integrators/yoshida6.hpp"
#include "kernels/simd/pack_lanes.hpp"
#include "models/henon_heiles.hpp"
#include "models/kepler.hpp"
#include "models/pendulum.hpp"

namespace {

using namespace vigor;

using vigor_bench_util::advance_on;

template <class Real>
unsigned long long fnv1a(const std::vector<Real>& x) {
  unsigned long long hash = 1469598103934665603ull;
  const auto* b = reinterpret_cast<const unsigned char*>(x.data());
  for (std::size_t i = 0; i < x.size() * sizeof(Real); ++i) hash = (hash ^ b[i]) * 1099511628211ull;
  return hash;
}

template <template <class> class MT, template <class> class IT, class Real>
void row(const char* name, const std::vector<double>& s0, double h, long steps) {
  constexpr long n = 4096;
  constexpr int kNative = kernels::native_lanes<Real>();
  constexpr int kBlock = kernels::block_lanes<Real>();
  constexpr int kDim = kernels::StateOps<MT<Real>, Real>::kDim;
  constexpr int kBurst = kernels::burst_block_lanes<Real>(kDim + kDim / 2);
  using Burst = kernels::QuietSegmentLanes<kernels::PackLanes<Real, kNative, kBurst / kNative>>;
  using PerStep = kernels::WithoutQuietBursts<kernels::PackLanes<Real, kNative, kBlock / kNative>>;
  std::vector<Real> bare, checked;
  double t_bare = 1e30, t_checked = 1e30;
  for (int r = 0; r < 7; ++r) {
    t_bare = std::min(t_bare, advance_on<MT, IT, Real, Burst>(n, steps, s0, h, bare, steps));
    t_checked = std::min(t_checked, advance_on<MT, IT, Real, PerStep>(n, steps, s0, h, checked, 1));
  }
  std::printf("%-13s %-9s %s  bare %.4f s  H every step %.4f s  bits %016llx %016llx\n", name,
              IT<Real>::kName, sizeof(Real) == 4 ? "FP32" : "FP64", t_bare, t_checked, fnv1a(bare),
              fnv1a(checked));
}

template <template <class> class IT, class Real>
void rows() {
  const std::vector<double> hh{0.0, -0.2, 0.45, 0.0}, kepler{0.7, 0.0, 0.0, 1.2},
      pendulum{1.0, 0.5};
  row<models::HenonHeiles, IT, Real>("henon_heiles", hh, 1e-2, 4000);
  row<models::Kepler, IT, Real>("kepler", kepler, 1e-2, 2000);
  row<models::Pendulum, IT, Real>("pendulum", pendulum, 1e-2, 2000);
}

}  // namespace

int main() {
  rows<kernels::Yoshida6, double>();
  rows<kernels::Yoshida6, float>();
  rows<kernels::Yoshida4, double>();
  rows<kernels::Yoshida4, float>();
}
