/// @file kernel_ab.cu
/// @brief Kernel-only throughput of the CUDA segment kernel, for A/B comparisons of two source
/// trees: build this file against each tree (build.sh), run the binaries in turn on one GPU.
///
/// Each case launches kernels::launch_segment once over 2^20 trajectories (2^18 for the double
/// spherical pendulum) for a fixed number of steps, after one warm-up launch, three times from the
/// same initial states; it prints the best and the median of the three as trajectory-steps/s, and
/// the fraction of the asked steps the trajectories took (1 unless some stopped). Only the kernel
/// is timed (CUDA events): no drain, no host work. The cases are the ones whose registers or
/// speed a driver change is most likely to move: Verlet on Hénon–Heiles with the section (H every
/// step) and bare (H once per launch: the burst path), the J2 satellite under the implicit and
/// fourth-order schemes, RATTLE and the midpoint rule on the double spherical pendulum. Initial
/// states: Hénon–Heiles at E = 1/8 on the line q0 = 0; J2 near-circular orbits of radius 1.5-2 and
/// inclination 0.3-1.3; the double spherical pendulum's reference state turned about z (a
/// symmetry) by a per-trajectory angle.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/cuda/segment_kernel.cuh"
#include "kernels/integrators/lobatto3.hpp"
#include "kernels/integrators/midpoint.hpp"
#include "kernels/integrators/newmark.hpp"
#include "kernels/integrators/rattle.hpp"
#include "kernels/integrators/stormer_verlet.hpp"
#include "kernels/integrators/yoshida4.hpp"
#include "models/double_spherical_pendulum.hpp"
#include "models/henon_heiles.hpp"
#include "models/j2_satellite.hpp"

namespace {

using namespace vigor;

template <class X>
X model_with_defaults() {
  double v[8] = {};
  for (std::size_t i = 0; i < X::kParams.size(); ++i) v[i] = X::kParams[i].default_value;
  return X::from_params(v);
}

template <class X>
X integrator_with_defaults() {
  double v[8] = {};
  for (std::size_t i = 0; i < std::size(X::kOptions); ++i) v[i] = X::kOptions[i].default_value;
  return X::from_options(v);
}

/// A reproducible number in [0, 1) for trajectory i, stream k.
double u01(long i, int k) {
  unsigned long x = static_cast<unsigned long>(i) * 2654435761ul + k * 40503ul + 12345ul;
  x ^= x >> 13;
  x *= 0x5bd1e995ul;
  x ^= x >> 15;
  return double(x % 1000003ul) / 1000003.0;
}

enum class Kind { kHenonHeiles, kJ2, kDoubleSpherical };

std::vector<double> initial_state(Kind kind, long i) {
  if (kind == Kind::kHenonHeiles) {
    const double y = -0.2 + 0.4 * u01(i, 1), py = 0.1 * (u01(i, 2) - 0.5);
    const double v = 0.5 * y * y - y * y * y / 3.0;
    return {0.0, y, std::sqrt(std::max(0.0, 0.25 - py * py - 2.0 * v)), py};
  }
  if (kind == Kind::kJ2) {
    const double r = 1.5 + 0.5 * u01(i, 1), inc = 0.3 + u01(i, 2);
    const double v = std::sqrt(1.0 / r) * (1.0 + 0.05 * u01(i, 3));
    return {r, 0.0, 0.0, 0.0, v * std::cos(inc), v * std::sin(inc)};
  }
  const auto s = models::DoubleSphericalPendulum<double>::reference_state();
  const double phi = 6.283 * u01(i, 1), c = std::cos(phi), sn = std::sin(phi);
  std::vector<double> x(s.begin(), s.end());
  for (int b = 0; b < 12; b += 3) {
    x[b] = c * s[b] - sn * s[b + 1];
    x[b + 1] = sn * s[b] + c * s[b + 1];
  }
  return x;
}

template <class R>
R* device_zeros(std::size_t n) {
  R* p = nullptr;
  if (cudaMalloc(&p, n * sizeof(R)) != cudaSuccess) {
    std::fprintf(stderr, "kernel_ab: cudaMalloc of %zu bytes failed\n", n * sizeof(R));
    std::exit(1);
  }
  cudaMemset(p, 0, n * sizeof(R));
  return p;
}

/// SegmentParams::event_burst where the tree has it (the driver's event bursts); older trees run
/// the case per step, as they always did.
template <class SP>
void set_event_burst(SP& sp, int steps) {
  if constexpr (requires { sp.event_burst; }) sp.event_burst = steps;
}

template <class M, class I, class R>
void run_case(const char* name, Kind kind, long n, long steps, bool section, bool bare,
              int event_burst = 0) {
  const M m = model_with_defaults<M>();
  const I integ = integrator_with_defaults<I>();
  constexpr int kDim = kernels::StateOps<M, R>::kDim;
  std::vector<R> host(std::size_t(kDim) * n);
  for (long i = 0; i < n; ++i) {
    const std::vector<double> x = initial_state(kind, i);
    for (int c = 0; c < kDim; ++c) host[std::size_t(c) * n + i] = R(x[c]);
  }
  kernels::SegmentParams<R> sp;
  sp.n = n;
  sp.h = R(kind == Kind::kDoubleSpherical ? 0.001 : 0.01);
  sp.end_step = steps;
  constexpr int kSlots = 16;
  if (section) {
    sp.section_kind = kernels::kSectionPlane;
    sp.section_coord = 0;
    sp.section_direction = kernels::kDirUp;
    sp.hit_capacity = kSlots;
    sp.max_recorded = std::int64_t(1) << 40;
  }
  if (bare) sp.conservation_every = steps;
  set_event_burst(sp, event_burst);
  const std::size_t un = std::size_t(n);
  kernels::EnsembleArrays<R> a;
  R* start = device_zeros<R>(host.size());
  cudaMemcpy(start, host.data(), host.size() * sizeof(R), cudaMemcpyHostToDevice);
  a.state = device_zeros<R>(host.size());
  a.energy0 = device_zeros<R>(un);
  a.energy_error = device_zeros<R>(un);
  a.momentum0 = device_zeros<R>(4 * un);
  a.momentum_error = device_zeros<R>(un);
  a.newton_residual = device_zeros<R>(un);
  a.step = device_zeros<std::int64_t>(un);
  a.status = device_zeros<std::int32_t>(un);
  a.crossings = device_zeros<std::int64_t>(un);
  a.recorded = device_zeros<std::int64_t>(un);
  a.hit_count = device_zeros<std::int32_t>(un);
  if (section) a.hits = device_zeros<R>(std::size_t(kDim + 1) * kSlots * un);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<float> ms;
  for (int rep = 0; rep < 4; ++rep) {  // rep 0: warm-up
    cudaMemcpy(a.state, start, host.size() * sizeof(R), cudaMemcpyDeviceToDevice);
    cudaMemset(a.step, 0, un * sizeof(std::int64_t));
    cudaMemset(a.status, 0, un * sizeof(std::int32_t));
    cudaMemset(a.crossings, 0, un * sizeof(std::int64_t));
    cudaMemset(a.recorded, 0, un * sizeof(std::int64_t));
    cudaMemset(a.hit_count, 0, un * sizeof(std::int32_t));
    kernels::launch_initial_energy(m, a, n);
    cudaDeviceSynchronize();
    cudaEventRecord(e0);
    kernels::launch_segment(m, integ, sp, a);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float t = 0;
    cudaEventElapsedTime(&t, e0, e1);
    if (rep > 0) ms.push_back(t);
  }
  std::vector<std::int64_t> taken(un);
  cudaMemcpy(taken.data(), a.step, un * sizeof(std::int64_t), cudaMemcpyDeviceToHost);
  double done = 0;
  for (const std::int64_t k : taken) done += double(k);
  std::vector<std::int64_t> crossed(un);
  cudaMemcpy(crossed.data(), a.crossings, un * sizeof(std::int64_t), cudaMemcpyDeviceToHost);
  long long crossings = 0;
  for (const std::int64_t c : crossed) crossings += c;
  std::sort(ms.begin(), ms.end());
  const double work = double(n) * double(steps);
  std::printf("%-30s best %.4e  median %.4e traj-steps/s  steps taken %.4f  crossings %lld  %s\n",
              name, work / (ms.front() * 1e-3), work / (ms[ms.size() / 2] * 1e-3), done / work,
              crossings, cudaGetErrorString(cudaGetLastError()));
  for (void* p :
       {static_cast<void*>(start), static_cast<void*>(a.state), static_cast<void*>(a.energy0),
        static_cast<void*>(a.energy_error), static_cast<void*>(a.momentum0),
        static_cast<void*>(a.momentum_error), static_cast<void*>(a.newton_residual),
        static_cast<void*>(a.step), static_cast<void*>(a.status), static_cast<void*>(a.crossings),
        static_cast<void*>(a.recorded), static_cast<void*>(a.hit_count),
        static_cast<void*>(a.hits)})
    if (p != nullptr) cudaFree(p);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
}

}  // namespace

int main() {
  using kernels::LobattoIIIAB3;
  using kernels::Midpoint;
  using kernels::Newmark;
  using kernels::Rattle;
  using kernels::StormerVerlet;
  using kernels::Yoshida4;
  using models::DoubleSphericalPendulum;
  using models::HenonHeiles;
  using models::J2Satellite;
  const long n = 1L << 20;
  const Kind hh = Kind::kHenonHeiles, j2 = Kind::kJ2, dsp = Kind::kDoubleSpherical;
  run_case<HenonHeiles<double>, StormerVerlet<double>, double>("HH verlet fp64 section", hh, n,
                                                               2000, true, false);
  run_case<HenonHeiles<float>, StormerVerlet<float>, float>("HH verlet fp32 section", hh, n, 2000,
                                                            true, false);
  // Event bursts of 4 .. 32 steps (SegmentParams::event_burst; per step on trees without them).
  run_case<HenonHeiles<double>, StormerVerlet<double>, double>("HH verlet fp64 section ev4", hh, n,
                                                               2000, true, false, 4);
  run_case<HenonHeiles<double>, StormerVerlet<double>, double>("HH verlet fp64 section ev8", hh, n,
                                                               2000, true, false, 8);
  run_case<HenonHeiles<double>, StormerVerlet<double>, double>("HH verlet fp64 section ev16", hh, n,
                                                               2000, true, false, 16);
  run_case<HenonHeiles<double>, StormerVerlet<double>, double>("HH verlet fp64 section ev32", hh, n,
                                                               2000, true, false, 32);
  run_case<HenonHeiles<float>, StormerVerlet<float>, float>("HH verlet fp32 section ev8", hh, n,
                                                            2000, true, false, 8);
  run_case<HenonHeiles<float>, StormerVerlet<float>, float>("HH verlet fp32 section ev16", hh, n,
                                                            2000, true, false, 16);
  // H after every step, no section: per step, and in event bursts.
  run_case<HenonHeiles<double>, StormerVerlet<double>, double>("HH verlet fp64 H every step", hh, n,
                                                               4000, false, false);
  run_case<HenonHeiles<double>, StormerVerlet<double>, double>("HH verlet fp64 H every ev16", hh, n,
                                                               4000, false, false, 16);
  run_case<HenonHeiles<double>, StormerVerlet<double>, double>("HH verlet fp64 bare", hh, n, 4000,
                                                               false, true);
  run_case<HenonHeiles<float>, StormerVerlet<float>, float>("HH verlet fp32 bare", hh, n, 4000,
                                                            false, true);
  run_case<J2Satellite<float>, Midpoint<float>, float>("J2 midpoint fp32", j2, n, 500, false,
                                                       false);
  run_case<J2Satellite<float>, Yoshida4<float>, float>("J2 yoshida4 fp32", j2, n, 1000, false,
                                                       false);
  run_case<J2Satellite<double>, Midpoint<double>, double>("J2 midpoint fp64", j2, n, 300, false,
                                                          false);
  run_case<J2Satellite<double>, Newmark<double>, double>("J2 newmark fp64", j2, n, 300, false,
                                                         false);
  run_case<J2Satellite<double>, LobattoIIIAB3<double>, double>("J2 lobatto fp64", j2, n, 200, false,
                                                               false);
  run_case<DoubleSphericalPendulum<double>, Rattle<double>, double>("DSP rattle fp64", dsp, n / 4,
                                                                    300, false, false);
  run_case<DoubleSphericalPendulum<float>, Rattle<float>, float>("DSP rattle fp32", dsp, n / 4, 300,
                                                                 false, false);
  run_case<DoubleSphericalPendulum<float>, Midpoint<float>, float>("DSP midpoint fp32", dsp, n / 4,
                                                                   100, false, false);
  return 0;
}
