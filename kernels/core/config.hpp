/// @file config.hpp
/// @brief The one macro that makes per-trajectory numerics compile for host and device.
///
/// Everything in kernels/ and models/ is header-only and marked VIGOR_HD. Under nvcc it becomes
/// `__host__ __device__`; under a plain C++ compiler it expands to nothing, so the very same code
/// runs in the CPU backend's OpenMP loop and in the CUDA backend's fused kernel.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define VIGOR_HD __host__ __device__
#define VIGOR_INLINE __forceinline__
#define VIGOR_NOINLINE __noinline__
#elif defined(VIGOR_NO_FORCED_INLINE)
// Sanitizer builds: forced inlining copies every checked access of the small numeric helpers
// into each caller, which made instrumented compiles several times slower than the optimised one.
#define VIGOR_HD
#define VIGOR_INLINE inline
#define VIGOR_NOINLINE __attribute__((noinline))
#else
#define VIGOR_HD
#define VIGOR_INLINE inline __attribute__((always_inline))
#define VIGOR_NOINLINE __attribute__((noinline))
#endif

// A host function that interprocedural analysis must treat as opaque: GCC 12.2's IPA mod/ref
// analysis removed the call that locates and writes a CPU pack's queued crossings of constrained
// models in FP32 (kernels::PendingCrossings; docs/building.md), with the hits never written.
// noipa keeps the call and the function out of line; other compilers get noinline.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define VIGOR_NOIPA __attribute__((noipa))
#else
#define VIGOR_NOIPA VIGOR_NOINLINE
#endif

// The driver's per-sub-block lambdas must be inlined on the CPU for the SIMD packs they touch to
// stay in registers (GCC does not always inline a lambda called once per sub-block); device code
// inlines them anyway.
#if defined(__CUDACC__) || defined(VIGOR_NO_FORCED_INLINE) || !defined(__GNUC__)
#define VIGOR_LAMBDA_INLINE
#else
#define VIGOR_LAMBDA_INLINE __attribute__((always_inline))
#endif

// Full unrolling of the small fixed-trip loops over state components.
#if defined(__CUDACC__)
#define VIGOR_UNROLL _Pragma("unroll")
#elif defined(VIGOR_NO_FORCED_INLINE)
#define VIGOR_UNROLL
#elif defined(__clang__)
#define VIGOR_UNROLL _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__)
#define VIGOR_UNROLL _Pragma("GCC unroll 32")
#else
#define VIGOR_UNROLL
#endif

// True while compiling device code (nvcc's device pass); host passes and g++ see false.
#if defined(__CUDA_ARCH__)
#define VIGOR_DEVICE_PASS 1
#else
#define VIGOR_DEVICE_PASS 0
#endif

namespace vigor::kernels {

/// Per-trajectory status codes, stored as int32 in the ensemble's SoA arrays.
enum Status : std::int32_t {
  kStatusOk = 0,
  kStatusNonFinite = 1,          ///< frozen at the last finite state
  kStatusEscaped = 2,            ///< |q| exceeded the job's escape radius
  kStatusNewtonNotConverged = 3  ///< final Newton residual above the job's tolerance
};

}  // namespace vigor::kernels
