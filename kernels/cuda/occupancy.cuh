/// @file occupancy.cuh
/// @brief Occupancy hints for the segment kernel: the minimum number of resident blocks per SM that
/// `__launch_bounds__` passes to ptxas for one (model, integrator, precision).
///
/// By default the segment kernel gives ptxas no minimum (`kSegmentMinBlocks` = 0): the heavy
/// implicit and constrained steps would spill if their registers were capped, and a spill costs
/// more than a lower occupancy. Left free, ptxas may however settle just above an occupancy step
/// (with blocks of kSegmentBlock = 128 threads, an SM's 65 536 registers hold 3 blocks up to 168
/// registers a thread, 2 blocks up to 255), and lose a third of the kernel's warps for a few
/// registers. An entry here caps such a kernel at the step below. Add one only where ptxas -v
/// shows the capped kernel without new spills (bench/cuda_registers.py), and time it with
/// bench/kernel_ab on a GPU; the measurements are in docs/performance.md ("GPU registers").
#pragma once

namespace vigor::models {
template <class Real>
struct DoubleSphericalPendulum;
template <class Real>
struct HenonHeiles;
template <class Real>
struct J2Satellite;
}  // namespace vigor::models

namespace vigor::kernels {

template <class Real>
struct Midpoint;
template <class Real>
struct BlanesMoan6;
template <class Real>
struct StormerVerlet;

/// Minimum resident blocks per SM for segment_kernel<M, I, Real>. 0 means none: nvcc then writes no
/// `.minnctapersm` into the PTX, as if the argument were absent. 1 is not the same: it changes
/// ptxas's choice (Hénon–Heiles Verlet FP64 takes 91 registers with it instead of 80).
template <class M, class I, class Real>
inline constexpr int kSegmentMinBlocks = 0;

/// The double spherical pendulum under the midpoint rule in FP32: left free, ptxas takes 190
/// registers (2 blocks per SM); capped at 3 blocks, 168 without a spill, where the driver before
/// the one-driver change landed unasked (with a spill) and ran faster.
template <>
inline constexpr int
    kSegmentMinBlocks<models::DoubleSphericalPendulum<float>, Midpoint<float>, float> = 3;

/// Hénon–Heiles under Verlet in FP64, the bare kernel timed against the hand-written one: 80
/// registers (6 blocks of 128 per SM) without a spill until its force folded its sign into the
/// multiply-adds (models/henon_heiles.hpp). Left free, ptxas then took 72 (7 blocks) and spilled a
/// predicate to local memory, reloaded at the head of the driver's loop. Capped at the 6 blocks
/// it was timed at: 80, no spill, two instructions fewer per step in the burst loop. Not timed:
/// the session that made the cap had no GPU (docs/performance.md, "The Hénon–Heiles force with its
/// sign folded in").
template <>
inline constexpr int kSegmentMinBlocks<models::HenonHeiles<double>, StormerVerlet<double>, double> =
    6;

/// The J2 satellite under Blanes–Moan 6 in FP32: the driver in short functions (LaneDriver) moved
/// it from 56 registers (9 blocks of 128 per SM) to 62 (8 blocks); capped at 9, 56 without a spill.
/// Not timed: the session that made the cap had no GPU.
template <>
inline constexpr int kSegmentMinBlocks<models::J2Satellite<float>, BlanesMoan6<float>, float> = 9;

}  // namespace vigor::kernels
