/// @file segment_kernel.cuh
/// @brief The CUDA kernels of the CUDA backend: the fused segment kernel, the initial energies and
/// the compaction of section hits, with their launch helpers.
///
/// The segment kernel is the ONE fused kernel of DESIGN.md §1: one thread per trajectory, the state
/// in registers, every time step of the segment inside the kernel, global memory (SoA,
/// `x[c * n + i]`) touched only to load and store the state and to write section hits. It has no
/// numerics of its own: each thread runs kernels::advance_lanes, the very driver the CPU backend
/// runs, so both backends run one copy of the per-trajectory code. A thread only stores the
/// crossings it finds; locate_crossings_kernel, launched right after it, locates them, so that the
/// locator's registers are not the step loop's (kernels/driver/deferred_crossings.hpp).
///
/// The kernels are templates; they are instantiated per model in the generated
/// `cuda_<model>.cu` translation units (through host/backends/cuda_engine.cuh).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/cuda/check.cuh"
#include "kernels/cuda/occupancy.cuh"
#include "kernels/driver/advance.hpp"
#include "kernels/driver/deferred_crossings.hpp"

namespace vigor::kernels {

/// Threads per block of the segment kernel. Small blocks on purpose: (1) the per-thread work is
/// register-heavy (the state, the previous state for the section test, and for implicit steps the
/// Newton Jacobian and its LU), and `__launch_bounds__(kSegmentBlock)` tells nvcc that no block is
/// larger, so it may give each thread up to 255 registers without risking a launch failure for too
/// many resources — spilling to local memory would cost far more than a lower occupancy; (2) work
/// per thread varies (frozen, escaped and paused trajectories return at once), and with small
/// blocks an SM's slots are refilled at a fine grain, so a few long trajectories do not hold whole
/// large blocks resident. No minimum-blocks argument in general: it would cap registers and make
/// the heavy integrators spill (the exceptions, measured, are in kernels/cuda/occupancy.cuh).
inline constexpr int kSegmentBlock = 128;
/// Threads per block of the light, memory-bound helper kernels (initial energy, hit compaction):
/// a few registers each, so larger blocks and full occupancy hide the memory latency.
inline constexpr int kHelperBlock = 256;

/// Advance every trajectory of the ensemble to sp.end_step (kernels::advance_lanes on one lane,
/// as kernels::advance_trajectory, with the crossings stored for locate_crossings_kernel).
/// kSegmentMinBlocks (kernels/cuda/occupancy.cuh) is 0, no register cap, except where measured.
template <class M, class I, class Real>
__global__ void __launch_bounds__(kSegmentBlock, kSegmentMinBlocks<M, I, Real>)
    segment_kernel(M m, I integ, SegmentParams<Real> sp, EnsembleArrays<Real> a) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;  // 64-bit: n > 2^31
  if (i < sp.n) advance_lanes<DeferredLanes<Real>, false>(m, m, integ, integ, integ, sp, a, i, 1);
}

/// The same with the tangent map (kernels::advance_trajectory_tangent); ID is the tangent step's
/// integrator, I the plain one.
template <class M, class I, class ID, class Real>
__global__ void __launch_bounds__(kSegmentBlock)
    segment_tangent_kernel(M m, I integ, ID integ_d, SegmentParams<Real> sp,
                           EnsembleArrays<Real> a) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < sp.n)
    advance_lanes<DeferredLanes<Real>, true>(m, m, integ_d, integ, integ_d, sp, a, i, 1);
}

/// Locate the crossings the segment kernel stored (kernels::locate_stored_crossings), with the
/// plain integrator. Its registers are its own: the segment kernel calls none of this code.
template <class M, class I, class Real>
__global__ void __launch_bounds__(kSegmentBlock)
    locate_crossings_kernel(M m, I integ, SegmentParams<Real> sp, EnsembleArrays<Real> a) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < sp.n && a.hit_count[i] > 0) locate_stored_crossings(m, integ, sp, a, i);
}

/// Initial energies plus the tangent maps' seeds (kernels::initial_energy_tangent).
template <class M, class ID, class Real>
__global__ void __launch_bounds__(kSegmentBlock)
    initial_tangent_kernel(M m, ID integ, Real h, EnsembleArrays<Real> a, std::int64_t n) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) initial_energy_tangent(m, integ, h, a, n, i);
}

/// energy0[i] = H(state_i), energy_error[i] = 0 (before the first segment).
template <class M, class Real>
__global__ void __launch_bounds__(kHelperBlock)
    initial_energy_kernel(M m, EnsembleArrays<Real> a, std::int64_t n) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) initial_energy(m, a, n, i);
}

/// Gather the buffered section hits into a dense array, trajectory by trajectory.
///
/// Input: the per-trajectory buffers `hits[(c * cap + slot) * n + i]` (c = 0: t, then the Dim state
/// components), `hit_count[i]` and `offset[i]` = exclusive prefix sum of hit_count (where
/// trajectory i's hits start in the dense output). Output, as double whatever Real is (the host
/// appends it to its hit block with one copy): `values[(offset[i] + slot) * (1 + Dim) + c]` and
/// `trajectory[offset[i] + slot] = i`, i.e. the hits in trajectory order and
/// chronological within a trajectory, exactly as the CPU backend's drain appends them. hit_count
/// is reset to 0 (the buffer is drained). Reads are coalesced (consecutive threads read
/// consecutive i for a fixed (c, slot)); the writes are few (hits are rare next to steps).
template <int Dim, class Real>
__global__ void __launch_bounds__(kHelperBlock)
    compact_hits_kernel(const Real* __restrict__ hits, std::int32_t* __restrict__ hit_count,
                        const std::int64_t* __restrict__ offset, std::int64_t n, int cap,
                        double* __restrict__ values, std::int64_t* __restrict__ trajectory) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int count = hit_count[i];
  if (count == 0) return;
  const std::int64_t base = offset[i];
  for (int s = 0; s < count; ++s) {
    const std::int64_t k = base + s;
    trajectory[k] = i;
#pragma unroll
    for (int c = 0; c <= Dim; ++c)
      values[k * (Dim + 1) + c] = double(hits[(std::int64_t(c) * cap + s) * n + i]);
  }
  hit_count[i] = 0;
}

/// Blocks for n threads in blocks of `block` (n > 0); throws if the grid would be too large.
inline unsigned grid_blocks(std::int64_t n, int block) {
  const std::int64_t blocks = (n + block - 1) / block;
  if (blocks > std::int64_t(std::numeric_limits<int>::max()))
    throw std::runtime_error("CUDA backend: " + std::to_string(n) +
                             " trajectories exceed one launch's grid; run them in chunks");
  return unsigned(blocks);
}

/// After a segment kernel with a plane section: locate the crossings it stored, on the same
/// stream, so that whatever reads the hits next (the compaction, a drain) sees located ones.
template <class M, class I, class Real>
void launch_locate_crossings(const M& m, const I& integ, const SegmentParams<Real>& sp,
                             const EnsembleArrays<Real>& a, cudaStream_t stream) {
  if (sp.section_kind != kSectionPlane) return;
  locate_crossings_kernel<M, I, Real>
      <<<grid_blocks(sp.n, kSegmentBlock), kSegmentBlock, 0, stream>>>(m, integ, sp, a);
  VIGOR_CUDA_CHECK_LAUNCH();
}

/// Launch the segment kernel on `stream` and, with a plane section, the kernel that locates its
/// crossings (asynchronous; launch errors are thrown here).
template <class M, class I, class Real>
void launch_segment(const M& m, const I& integ, const SegmentParams<Real>& sp,
                    const EnsembleArrays<Real>& a, cudaStream_t stream = nullptr) {
  if (sp.n == 0) return;
  segment_kernel<M, I, Real>
      <<<grid_blocks(sp.n, kSegmentBlock), kSegmentBlock, 0, stream>>>(m, integ, sp, a);
  VIGOR_CUDA_CHECK_LAUNCH();
  launch_locate_crossings(m, integ, sp, a, stream);
}

/// Launch the tangent-map segment kernel on `stream`.
template <class M, class I, class ID, class Real>
void launch_segment_tangent(const M& m, const I& integ, const ID& integ_d,
                            const SegmentParams<Real>& sp, const EnsembleArrays<Real>& a,
                            cudaStream_t stream = nullptr) {
  if (sp.n == 0) return;
  segment_tangent_kernel<M, I, ID, Real>
      <<<grid_blocks(sp.n, kSegmentBlock), kSegmentBlock, 0, stream>>>(m, integ, integ_d, sp, a);
  VIGOR_CUDA_CHECK_LAUNCH();
  launch_locate_crossings(m, integ, sp, a, stream);
}

/// Launch the tangent-map initial kernel on `stream`.
template <class M, class ID, class Real>
void launch_initial_tangent(const M& m, const ID& integ, Real h, const EnsembleArrays<Real>& a,
                            std::int64_t n, cudaStream_t stream = nullptr) {
  if (n == 0) return;
  initial_tangent_kernel<M, ID, Real>
      <<<grid_blocks(n, kSegmentBlock), kSegmentBlock, 0, stream>>>(m, integ, h, a, n);
  VIGOR_CUDA_CHECK_LAUNCH();
}

/// Launch the initial-energy kernel on `stream`.
template <class M, class Real>
void launch_initial_energy(const M& m, const EnsembleArrays<Real>& a, std::int64_t n,
                           cudaStream_t stream = nullptr) {
  if (n == 0) return;
  initial_energy_kernel<M, Real>
      <<<grid_blocks(n, kHelperBlock), kHelperBlock, 0, stream>>>(m, a, n);
  VIGOR_CUDA_CHECK_LAUNCH();
}

/// Launch the hit-compaction kernel on `stream`.
template <int Dim, class Real>
void launch_compact_hits(const Real* hits, std::int32_t* hit_count, const std::int64_t* offset,
                         std::int64_t n, int cap, double* values, std::int64_t* trajectory,
                         cudaStream_t stream = nullptr) {
  if (n == 0) return;
  compact_hits_kernel<Dim, Real><<<grid_blocks(n, kHelperBlock), kHelperBlock, 0, stream>>>(
      hits, hit_count, offset, n, cap, values, trajectory);
  VIGOR_CUDA_CHECK_LAUNCH();
}

}  // namespace vigor::kernels
