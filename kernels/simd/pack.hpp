/// @file pack.hpp
/// @brief `Pack<T, W>`: W trajectories side by side in one SIMD register, usable as the `Real` of
/// every model and integrator (CPU only).
///
/// One trajectory per CPU thread is latency-bound: each step is a chain of dependent multiply-adds.
/// Advancing W independent trajectories in the lanes of a vector register hides that latency and
/// uses the vector units, with the very same model and integrator code: instantiated on
/// Pack<double, 8> instead of double, `a * x * y` becomes three packed multiplies. Every lane
/// performs exactly the operations the scalar code performs, in the same order, so a lane's
/// results equal the scalar path's bit for bit (tests/test_simd.cpp).
///
/// Built on GCC/Clang vector extensions (host compilers only; never seen by nvcc's device pass).
/// Comparisons give a `Mask` (all-ones lanes where true); branches become `select`.
/// Transcendentals: sqrt is the correctly rounded packed instruction (identical to scalar sqrt);
/// sin, cos, tan, exp, log, atan, atan2, asin, acos, sinh, cosh, tanh and pow are vigor's own
/// (kernels/core/trig.hpp, exp_log.hpp, inverse_trig.hpp, hyperbolic.hpp, pow.hpp), identical to
/// the scalar ones lane by lane; cbrt calls the scalar C library per lane, so it too equals the
/// scalar path's.
#pragma once

#include <math.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "kernels/core/arith.hpp"
#include "kernels/core/compare.hpp"
#include "kernels/core/config.hpp"
#include "kernels/core/exp_log.hpp"
#include "kernels/core/hyperbolic.hpp"
#include "kernels/core/inverse_trig.hpp"
#include "kernels/core/pow.hpp"
#include "kernels/core/trig.hpp"

namespace vigor::kernels {

/// Lanes per register for T on the compilation target (AVX-512: 64 bytes, AVX: 32, else 16).
template <class T>
constexpr int native_lanes() {
#if defined(__AVX512F__)
  return int(64 / sizeof(T));
#elif defined(__AVX__)
  return int(32 / sizeof(T));
#else
  return int(16 / sizeof(T));
#endif
}

/// Lanes per block of the CPU backend: VIGOR_BLOCK_REGISTERS registers' worth (default 2).
/// Two registers of trajectories per block give the core two independent dependency chains;
/// three spill the step's temporaries (docs/performance.md, CPU section, has the measurements).
#ifndef VIGOR_BLOCK_REGISTERS
#define VIGOR_BLOCK_REGISTERS 2
#endif
template <class T>
constexpr int block_lanes() {
  return native_lanes<T>() * VIGOR_BLOCK_REGISTERS;
}

/// Lanes per block of the CPU backend when an explicit step runs bursts (no section, no escape
/// radius, conservation checks every K > 1 steps: kernels::segment_allows_bursts): the live state
/// of a burst is the sub-blocks' q, p and force alone, so four registers' worth fit AVX-512's 32
/// registers, and four chains keep the FP pipes busy where two leave them waiting on latency
/// (docs/performance.md, henon_heiles_bare). Where four registers would exceed 64 lanes (one bit
/// each in a lane mask), block_lanes().
#ifndef VIGOR_BURST_REGISTERS
#define VIGOR_BURST_REGISTERS 4
#endif
template <class T>
constexpr int burst_block_lanes() {
  return native_lanes<T>() * VIGOR_BURST_REGISTERS <= 64 ? native_lanes<T>() * VIGOR_BURST_REGISTERS
                                                         : block_lanes<T>();
}

/// Vector registers of the compilation target (AVX-512: 32; AVX and SSE: 16).
constexpr int vector_registers() {
#if defined(__AVX512F__)
  return 32;
#else
  return 16;
#endif
}

/// Lanes per burst block for a model whose burst keeps `live_packs` packs per sub-block live (q, p
/// and the cached force: 3 dof). More chains help only while one sub-block's state fits the
/// registers; where it does not, each further sub-block adds spill traffic and a copy of the step
/// to compile. The outer solar system (54 packs) ran its bare kernel at 0.98-1.03 of the speed with
/// four sub-blocks as with two, and the four-sub-block engines were 43 % of its explicit engines'
/// code (docs/performance.md, "Build time"), so such models burst in block_lanes().
template <class T>
constexpr int burst_block_lanes(int live_packs) {
  return live_packs <= vector_registers() ? burst_block_lanes<T>() : block_lanes<T>();
}

template <class T>
struct LaneInt;
template <>
struct LaneInt<double> {
  using type = std::int64_t;
};
template <>
struct LaneInt<float> {
  using type = std::int32_t;
};

template <class E, int L>
struct NativeVector {
  typedef E V __attribute__((vector_size(sizeof(E) * L)));
};

/// True when every bit of the (register-sized) vector is zero: one vector test instruction on
/// x86 (a lane-by-lane OR of extracted scalars costs more than a whole Verlet step).
template <class V>
inline bool all_zero(const V& v) {
#if defined(__AVX512F__)
  if constexpr (sizeof(V) == 64) {
    const __m512i x = reinterpret_cast<const __m512i&>(v);
    return _mm512_test_epi64_mask(x, x) == 0;
  }
#endif
#if defined(__AVX__)
  if constexpr (sizeof(V) == 32) {
    const __m256i x = reinterpret_cast<const __m256i&>(v);
    return _mm256_testz_si256(x, x) != 0;
  }
#endif
#if defined(__SSE4_1__)
  if constexpr (sizeof(V) == 16) {
    const __m128i x = reinterpret_cast<const __m128i&>(v);
    return _mm_testz_si128(x, x) != 0;
  }
#endif
  unsigned char b[sizeof(V)];
  std::memcpy(b, &v, sizeof(V));
  unsigned char acc = 0;
  for (unsigned char c : b) acc |= c;
  return acc == 0;
}

/// W lanes as R = W / L native registers of L lanes (L = the target's register width).
/// Wider-than-register GCC vectors compile poorly (docs/performance.md), so a block of several
/// registers is an explicit array whose operations the compiler issues register by register,
/// giving R independent dependency chains.
template <class T, int W>
struct PackShape {
  static constexpr int L = W < native_lanes<T>() ? W : native_lanes<T>();
  static constexpr int R = W / L;
  static_assert(R * L == W, "lanes must be a multiple of the register width");
};

template <class T, int W>
struct Mask {
  using I = typename LaneInt<T>::type;
  static constexpr int L = PackShape<T, W>::L;
  static constexpr int R = PackShape<T, W>::R;
  using V = typename NativeVector<I, L>::V;
  V v[R];

  friend Mask operator&(const Mask& a, const Mask& b) {
    Mask m;
    for (int r = 0; r < R; ++r) m.v[r] = a.v[r] & b.v[r];
    return m;
  }
  friend Mask operator|(const Mask& a, const Mask& b) {
    Mask m;
    for (int r = 0; r < R; ++r) m.v[r] = a.v[r] | b.v[r];
    return m;
  }
  friend Mask operator^(const Mask& a, const Mask& b) {
    Mask m;
    for (int r = 0; r < R; ++r) m.v[r] = a.v[r] ^ b.v[r];
    return m;
  }
  friend Mask operator!(const Mask& a) {
    Mask m;
    for (int r = 0; r < R; ++r) m.v[r] = ~a.v[r];
    return m;
  }
  bool operator[](int l) const {
    bool x = v[0][l % L] != 0;
    for (int r = 1; r < R; ++r)
      if (l / L == r) x = v[r][l % L] != 0;
    return x;
  }
  void set(int l, bool b) {
    for (int r = 0; r < R; ++r)
      if (l / L == r) v[r][l % L] = b ? I(-1) : I(0);
  }
  static Mask all(bool b) {
    Mask m;
    for (int r = 0; r < R; ++r) m.v[r] = V{} + (b ? I(-1) : I(0));
    return m;
  }
  bool any() const {
    V acc = v[0];
    for (int r = 1; r < R; ++r) acc |= v[r];
    return !all_zero(acc);
  }
  bool all() const {
    V acc = v[0];
    for (int r = 1; r < R; ++r) acc &= v[r];
    return all_zero(~acc);
  }
  /// The lanes as bits of an integer (bit l: lane l), what the block driver's per-step decisions
  /// use: a vector mask that is indexed lane by lane must live in memory, and the driver stored
  /// every mask of every step to the stack for the rare branch that reads it.
  std::uint64_t bits() const {
    static_assert(W <= 64, "a lane mask has at most 64 lanes");
    std::uint64_t b = 0;
    for (int r = 0; r < R; ++r) b |= std::uint64_t(register_bits(v[r])) << (r * L);
    return b;
  }

 private:
  static unsigned register_bits(const V& x) {
#if defined(__AVX512F__)
    if constexpr (sizeof(V) == 64) {
      const __m512i y = reinterpret_cast<const __m512i&>(x);
#if defined(__AVX512DQ__)
      // The sign bits: lets the compiler fold compare -> vector -> mask back into the compare.
      if constexpr (sizeof(I) == 8)
        return _mm512_movepi64_mask(y);
      else
        return _mm512_movepi32_mask(y);
#else
      if constexpr (sizeof(I) == 8)
        return _mm512_test_epi64_mask(y, y);
      else
        return _mm512_test_epi32_mask(y, y);
#endif
    }
#endif
#if defined(__AVX__)
    if constexpr (sizeof(V) == 32) {
      if constexpr (sizeof(I) == 8)
        return unsigned(_mm256_movemask_pd(reinterpret_cast<const __m256d&>(x)));
      else
        return unsigned(_mm256_movemask_ps(reinterpret_cast<const __m256&>(x)));
    }
#endif
#if defined(__SSE2__)
    if constexpr (sizeof(V) == 16) {
      if constexpr (sizeof(I) == 8)
        return unsigned(_mm_movemask_pd(reinterpret_cast<const __m128d&>(x)));
      else
        return unsigned(_mm_movemask_ps(reinterpret_cast<const __m128&>(x)));
    }
#endif
    unsigned b = 0;
    for (int l = 0; l < L; ++l) b |= unsigned(x[l] != 0) << l;
    return b;
  }
};

/// Calls f(l) for each set bit l of a lane mask, lowest lane first.
template <class F>
VIGOR_INLINE void for_each_lane(std::uint64_t bits, F&& f) {
  for (; bits != 0; bits &= bits - 1) f(__builtin_ctzll(bits));
}

/// How the pack's broadcast, map and arithmetic and compare operators are inlined: forced in the
/// explicit engine units of the models CMakeLists.txt names in VIGOR_PACK_ARITHMETIC_FORCED_MODELS
/// (they define VIGOR_PACK_ARITHMETIC_FORCED), left to GCC everywhere else. A compile-time choice
/// only: the operations, and so the bits, are the same. Left to GCC, each operator (a loop over the
/// registers) stays a call through the early passes and is inlined later one call site at a time;
/// forced, those units compile in less time and run as fast or faster. Elsewhere the gain was
/// small, a step ran slower, or (the solving units: Newton iterations, dual-number Jacobians) the
/// unit compiled slower. select, fma and the masks' operations are left to GCC in every unit:
/// forced as well, they put the whole pack trig kernel into the early passes at each force
/// evaluation of the angle models, whose points-to analysis then cost more than the inlining saved
/// (docs/performance.md, "Pack operators forced in the explicit units"). The two kinds of unit get
/// distinct Pack types (the inline namespace), so no inline function has two definitions in one
/// program.
#if defined(VIGOR_PACK_ARITHMETIC_FORCED) && VIGOR_PACK_ARITHMETIC_FORCED
#define VIGOR_PACK_OP VIGOR_INLINE
#define VIGOR_PACK_INLINING pack_operators_forced
#else
#define VIGOR_PACK_OP inline
#define VIGOR_PACK_INLINING pack_operators_unforced
#endif

inline namespace VIGOR_PACK_INLINING {
template <class T, int W>
struct Pack {
  static constexpr int L = PackShape<T, W>::L;
  static constexpr int R = PackShape<T, W>::R;
  using V = typename NativeVector<T, L>::V;
  using MaskT = Mask<T, W>;
  static constexpr int lanes = W;
  V v[R];

  Pack() = default;
  VIGOR_PACK_OP Pack(T x) {  // NOLINT(google-explicit-constructor): broadcast constants
    for (int r = 0; r < R; ++r) v[r] = V{} + x;
  }
  /// Load W consecutive values (a block of trajectories in SoA memory).
  static Pack load(const T* p) {
    Pack x;
    std::memcpy(&x.v, p, sizeof(x.v));
    return x;
  }
  void store(T* p) const { std::memcpy(p, &v, sizeof(v)); }

  /// Lane l. The register is picked by unrolled compares, not by indexing the array: an array
  /// indexed at run time must live in memory, and the block driver's state (read lane by lane
  /// only when a trajectory retires) was kept on the stack through every step because of it.
  T operator[](int l) const {
    T x = v[0][l % L];
    for (int r = 1; r < R; ++r)
      if (l / L == r) x = v[r][l % L];
    return x;
  }
  void set(int l, T x) {
    for (int r = 0; r < R; ++r)
      if (l / L == r) v[r][l % L] = x;
  }

  template <class F>
  VIGOR_PACK_OP static Pack map(F f) {
    Pack x;
    for (int r = 0; r < R; ++r) x.v[r] = f(r);
    return x;
  }

  VIGOR_PACK_OP Pack operator-() const {
    return map([&](int r) { return -v[r]; });
  }
  Pack operator+() const { return *this; }
  VIGOR_PACK_OP Pack& operator+=(const Pack& o) {
    for (int r = 0; r < R; ++r) v[r] += o.v[r];
    return *this;
  }
  VIGOR_PACK_OP Pack& operator-=(const Pack& o) {
    for (int r = 0; r < R; ++r) v[r] -= o.v[r];
    return *this;
  }
  VIGOR_PACK_OP Pack& operator*=(const Pack& o) {
    for (int r = 0; r < R; ++r) v[r] *= o.v[r];
    return *this;
  }
  VIGOR_PACK_OP Pack& operator/=(const Pack& o) {
    for (int r = 0; r < R; ++r) v[r] /= o.v[r];
    return *this;
  }
  friend VIGOR_PACK_OP Pack operator+(Pack a, const Pack& b) { return a += b; }
  friend VIGOR_PACK_OP Pack operator-(Pack a, const Pack& b) { return a -= b; }
  friend VIGOR_PACK_OP Pack operator*(Pack a, const Pack& b) { return a *= b; }
  friend VIGOR_PACK_OP Pack operator/(Pack a, const Pack& b) { return a /= b; }
  friend VIGOR_PACK_OP Pack operator+(const Pack& a, T b) {
    return map([&](int r) { return a.v[r] + b; });
  }
  friend VIGOR_PACK_OP Pack operator+(T a, const Pack& b) {
    return map([&](int r) { return a + b.v[r]; });
  }
  friend VIGOR_PACK_OP Pack operator-(const Pack& a, T b) {
    return map([&](int r) { return a.v[r] - b; });
  }
  friend VIGOR_PACK_OP Pack operator-(T a, const Pack& b) {
    return map([&](int r) { return a - b.v[r]; });
  }
  friend VIGOR_PACK_OP Pack operator*(const Pack& a, T b) {
    return map([&](int r) { return a.v[r] * b; });
  }
  friend VIGOR_PACK_OP Pack operator*(T a, const Pack& b) {
    return map([&](int r) { return a * b.v[r]; });
  }
  friend VIGOR_PACK_OP Pack operator/(const Pack& a, T b) {
    return map([&](int r) { return a.v[r] / b; });
  }
  friend VIGOR_PACK_OP Pack operator/(T a, const Pack& b) {
    return map([&](int r) { return a / b.v[r]; });
  }

#define VIGOR_PACK_COMPARE(op)                                           \
  friend VIGOR_PACK_OP MaskT operator op(const Pack& a, const Pack& b) { \
    MaskT m;                                                             \
    for (int r = 0; r < R; ++r) m.v[r] = a.v[r] op b.v[r];               \
    return m;                                                            \
  }
  VIGOR_PACK_COMPARE(<)
  VIGOR_PACK_COMPARE(>)
  VIGOR_PACK_COMPARE(<=)
  VIGOR_PACK_COMPARE(>=)
  VIGOR_PACK_COMPARE(==)
  VIGOR_PACK_COMPARE(!=)
#undef VIGOR_PACK_COMPARE
};
}  // namespace VIGOR_PACK_INLINING

template <class T, int W>
inline Pack<T, W> select(const Mask<T, W>& m, const Pack<T, W>& a, const Pack<T, W>& b) {
  return Pack<T, W>::map([&](int r) { return m.v[r] ? a.v[r] : b.v[r]; });
}

/// Lane l of a where bit l of `bits` is set, of b elsewhere (bits: an integer lane mask, as
/// compare_bits writes them).
template <class T, int W>
inline Pack<T, W> select_bits(std::uint64_t bits, const Pack<T, W>& a, const Pack<T, W>& b) {
  Mask<T, W> m = Mask<T, W>::all(false);
  VIGOR_UNROLL
  for (int l = 0; l < W; ++l) m.set(l, (bits >> l & 1) != 0);
  return select(m, a, b);
}

// ---- Math. Overloads live in namespace vigor::kernels beside the scalar ones (math.hpp), so model
// code calling sqrt(x) unqualified finds them by lookup or ADL.

/// Apply a lane-wise scalar function register by register (the inner loop vectorises for
/// sqrt and fabs into one packed instruction).
template <class T, int W, class F>
inline Pack<T, W> lanewise(const Pack<T, W>& a, F f) {
  Pack<T, W> x;
  for (int r = 0; r < Pack<T, W>::R; ++r)
    for (int j = 0; j < Pack<T, W>::L; ++j) x.v[r][j] = f(a.v[r][j]);
  return x;
}

/// |a|: the sign bit cleared by an AND on the whole register, exactly what fabs does to each
/// lane. (Through lanewise GCC vectorised fabs at its preferred 256-bit width: two ANDs on the
/// halves of a 512-bit register plus a shuffle and an insert, on every step's energy check.)
template <class T, int W>
inline Pack<T, W> abs(const Pack<T, W>& a) {
  using I = typename LaneInt<T>::type;
  using IV = typename NativeVector<I, Pack<T, W>::L>::V;
  using V = typename Pack<T, W>::V;
  const IV magnitude = IV{} + std::numeric_limits<I>::max();  // every bit but the sign
  Pack<T, W> x;
  for (int r = 0; r < Pack<T, W>::R; ++r)
    x.v[r] = reinterpret_cast<V>(reinterpret_cast<IV>(a.v[r]) & magnitude);
  return x;
}

template <class T, int W>
inline Pack<T, W> sqrt(const Pack<T, W>& a) {
  // One packed vsqrtp[sd] per register, correctly rounded like the scalar sqrt. On 512-bit
  // registers through the intrinsic: GCC vectorises lanewise at its preferred 256-bit width, two
  // square roots on the halves plus a shuffle and an insert.
#if defined(__AVX512F__)
  if constexpr (sizeof(typename Pack<T, W>::V) == 64) {
    Pack<T, W> x;
    // (The masked form with every lane set: the plain _mm512_sqrt_pd trips GCC 12's
    // -Wuninitialized on its undefined pass-through operand. It compiles to the unmasked one.)
    for (int r = 0; r < Pack<T, W>::R; ++r) {
      if constexpr (std::is_same_v<T, double>)
        x.v[r] = _mm512_mask_sqrt_pd(a.v[r], __mmask8(0xFF), a.v[r]);
      else
        x.v[r] = _mm512_mask_sqrt_ps(a.v[r], __mmask16(0xFFFF), a.v[r]);
    }
    return x;
  }
#endif
  // With -fno-math-errno this is packed vsqrtp[sd].
  return lanewise(a, [](T x) { return T(__builtin_sqrt(x)); });
}

/// Lanes where the value is finite (x - x is 0 for finite x, NaN for inf and NaN).
template <class T, int W>
inline Mask<T, W> finite_lanes(const Pack<T, W>& a) {
  return (a - a) == Pack<T, W>(T(0));
}

/// The bits (bit l: lane l) of a lane-wise compare a C b, false where either is NaN. On AVX-512
/// the compare writes a mask register directly; `(a < b).bits()` goes through a vector of
/// all-ones lanes, two more instructions per register that the compiler does not fold away.
template <Cmp C, class T, int W>
inline std::uint64_t compare_bits(const Pack<T, W>& a, const Pack<T, W>& b) {
#if defined(__AVX512F__)
  using P = Pack<T, W>;
  if constexpr (sizeof(typename P::V) == 64) {
    constexpr int kImm = C == Cmp::kLt   ? _CMP_LT_OQ
                         : C == Cmp::kLe ? _CMP_LE_OQ
                         : C == Cmp::kGt ? _CMP_GT_OQ
                         : C == Cmp::kGe ? _CMP_GE_OQ
                                         : _CMP_EQ_OQ;
    std::uint64_t m = 0;
    for (int r = 0; r < P::R; ++r) {
      if constexpr (sizeof(T) == 8)
        m |= std::uint64_t(_mm512_cmp_pd_mask(reinterpret_cast<const __m512d&>(a.v[r]),
                                              reinterpret_cast<const __m512d&>(b.v[r]), kImm))
             << (r * P::L);
      else
        m |= std::uint64_t(_mm512_cmp_ps_mask(reinterpret_cast<const __m512&>(a.v[r]),
                                              reinterpret_cast<const __m512&>(b.v[r]), kImm))
             << (r * P::L);
    }
    return m;
  }
#endif
  if constexpr (C == Cmp::kLt)
    return (a < b).bits();
  else if constexpr (C == Cmp::kLe)
    return (a <= b).bits();
  else if constexpr (C == Cmp::kGt)
    return (a > b).bits();
  else if constexpr (C == Cmp::kGe)
    return (a >= b).bits();
  else
    return (a == b).bits();
}

/// finite_lanes(a).bits().
template <class T, int W>
inline std::uint64_t finite_bits(const Pack<T, W>& a) {
  return compare_bits<Cmp::kEq>(a - a, Pack<T, W>(T(0)));
}

template <class T, int W>
inline Pack<T, W> max_of(const Pack<T, W>& a, const Pack<T, W>& b) {
  return select(a < b, b, a);
}
template <class T, int W>
inline Pack<T, W> min_of(const Pack<T, W>& a, const Pack<T, W>& b) {
  return select(b < a, b, a);
}

/// a * b + c with one rounding in every lane: the packed FMA instruction where the target has
/// one, else the C library's exact fma lane by lane (slow, but the same bits as the scalar path).
template <class T, int W>
inline Pack<T, W> fma(const Pack<T, W>& a, const Pack<T, W>& b, const Pack<T, W>& c) {
  using V [[maybe_unused]] = typename Pack<T, W>::V;  // unused without FMA instructions
#if defined(__AVX512F__)
  if constexpr (sizeof(V) == 64) {
    if constexpr (sizeof(T) == 8)
      return Pack<T, W>::map([&](int r) { return V(_mm512_fmadd_pd(a.v[r], b.v[r], c.v[r])); });
    else
      return Pack<T, W>::map([&](int r) { return V(_mm512_fmadd_ps(a.v[r], b.v[r], c.v[r])); });
  }
#endif
#if defined(__FMA__)
  if constexpr (sizeof(V) == 32) {
    if constexpr (sizeof(T) == 8)
      return Pack<T, W>::map([&](int r) { return V(_mm256_fmadd_pd(a.v[r], b.v[r], c.v[r])); });
    else
      return Pack<T, W>::map([&](int r) { return V(_mm256_fmadd_ps(a.v[r], b.v[r], c.v[r])); });
  }
  if constexpr (sizeof(V) == 16) {
    if constexpr (sizeof(T) == 8)
      return Pack<T, W>::map([&](int r) { return V(_mm_fmadd_pd(a.v[r], b.v[r], c.v[r])); });
    else
      return Pack<T, W>::map([&](int r) { return V(_mm_fmadd_ps(a.v[r], b.v[r], c.v[r])); });
  }
#endif
  Pack<T, W> x;
  for (int r = 0; r < Pack<T, W>::R; ++r)
    for (int j = 0; j < Pack<T, W>::L; ++j)
      x.v[r][j] = vigor::kernels::fma(a.v[r][j], b.v[r][j], c.v[r][j]);
  return x;
}

/// -(a*b + c) with one rounding in every lane (kernels/core/arith.hpp): the packed
/// negated-multiply-subtract where the target has one, so that no negation follows it.
template <class T, int W>
inline Pack<T, W> negated_fma(const Pack<T, W>& a, const Pack<T, W>& b, const Pack<T, W>& c) {
  using V [[maybe_unused]] = typename Pack<T, W>::V;  // unused without FMA instructions
#if defined(__AVX512F__)
  if constexpr (sizeof(V) == 64) {
    if constexpr (sizeof(T) == 8)
      return Pack<T, W>::map([&](int r) { return V(_mm512_fnmsub_pd(a.v[r], b.v[r], c.v[r])); });
    else
      return Pack<T, W>::map([&](int r) { return V(_mm512_fnmsub_ps(a.v[r], b.v[r], c.v[r])); });
  }
#endif
#if defined(__FMA__)
  if constexpr (sizeof(V) == 32) {
    if constexpr (sizeof(T) == 8)
      return Pack<T, W>::map([&](int r) { return V(_mm256_fnmsub_pd(a.v[r], b.v[r], c.v[r])); });
    else
      return Pack<T, W>::map([&](int r) { return V(_mm256_fnmsub_ps(a.v[r], b.v[r], c.v[r])); });
  }
  if constexpr (sizeof(V) == 16) {
    if constexpr (sizeof(T) == 8)
      return Pack<T, W>::map([&](int r) { return V(_mm_fnmsub_pd(a.v[r], b.v[r], c.v[r])); });
    else
      return Pack<T, W>::map([&](int r) { return V(_mm_fnmsub_ps(a.v[r], b.v[r], c.v[r])); });
  }
#endif
  Pack<T, W> x;
  for (int r = 0; r < Pack<T, W>::R; ++r)
    for (int j = 0; j < Pack<T, W>::L; ++j)
      x.v[r][j] = vigor::kernels::fma(-a.v[r][j], b.v[r][j], -c.v[r][j]);
  return x;
}

/// The product, never fused with a later addition (the host compiles with -ffp-contract=off).
template <class T, int W>
inline Pack<T, W> mul_unfused(const Pack<T, W>& a, const Pack<T, W>& b) {
  return a * b;
}

/// Bit b of every lane's quadrant (kernels/core/trig.hpp): an AND on the integer view.
template <class T, int W>
inline Mask<T, W> quadrant_bit(const Pack<T, W>& q, unsigned b) {
  using M = Mask<T, W>;
  using I = typename M::I;
  M m;
  for (int r = 0; r < Pack<T, W>::R; ++r)
    m.v[r] = (reinterpret_cast<typename M::V>(q.v[r]) & I(b)) != I(0);
  return m;
}

/// v with the lanes in `bits` replaced by f of the same lane of x: the rare lanes the fast
/// reduction flags (kernels/core/trig.hpp) take the scalar function itself, out of line so that
/// the common path keeps its values in registers.
template <class T, int W, class F>
VIGOR_NOINLINE Pack<T, W> with_scalar_lanes(const Pack<T, W>& x, Pack<T, W> v, std::uint64_t bits,
                                            F f) {
  for_each_lane(bits, [&](int l) { v.set(l, f(x[l])); });
  return v;
}

/// sin and cos of every lane with vigor's own functions (kernels/core/trig.hpp): each lane gives
/// the bits of the scalar sin and cos, since it takes the same method as the scalar path.
/// Forced inline: the step that calls them is itself inside the driver's forced-inline parts, and
/// GCC, past its size limits there, would leave them as calls in the hot loop (docs/performance.md,
/// "The driver in short functions").
template <class T, int W>
VIGOR_INLINE Pack<T, W> sin(const Pack<T, W>& x) {
  using P = Pack<T, W>;
  Mask<T, W> flagged;
  const P v = trig_detail::sin_of_reduced<T>(trig_detail::reduce_fast<T>(x, flagged));
  const P s = select(x == P(T(0)), x, v);
  if (!flagged.any()) return s;
  return with_scalar_lanes(x, s, flagged.bits(), [](T y) { return sin_of(y); });
}
template <class T, int W>
VIGOR_INLINE Pack<T, W> cos(const Pack<T, W>& x) {
  Mask<T, W> flagged;
  const Pack<T, W> c = trig_detail::cos_of_reduced<T>(trig_detail::reduce_fast<T>(x, flagged));
  if (!flagged.any()) return c;
  return with_scalar_lanes(x, c, flagged.bits(), [](T y) { return cos_of(y); });
}
template <class T, int W>
VIGOR_INLINE void sincos(const Pack<T, W>& x, Pack<T, W>& sin_x, Pack<T, W>& cos_x) {
  using P = Pack<T, W>;
  Mask<T, W> flagged;
  trig_detail::place_in_quadrant<T>(trig_detail::reduce_fast<T>(x, flagged), sin_x, cos_x);
  sin_x = select(x == P(T(0)), x, sin_x);
  if (flagged.any()) {
    sin_x = with_scalar_lanes(x, sin_x, flagged.bits(), [](T y) { return sin_of(y); });
    cos_x = with_scalar_lanes(x, cos_x, flagged.bits(), [](T y) { return cos_of(y); });
  }
}

/// sin and cos of a pack, as sincos gives them.
template <class T, int W>
struct SinCosPacks {
  Pack<T, W> sin_x, cos_x;
};

/// sincos as a call, where a large nested dual takes it (dual.hpp, Dual::kTrigCalled): one copy
/// of the kernel per unit instead of one per use, the same bits. The pack goes by value and both
/// results come back, so that nothing of the caller's is behind an address the call might change.
/// On a scalar (math.hpp) the kernel stays inline: called, it cost the double pendulum's FP64 path
/// 8 % for little compile time, and a GPU thread's call would cost registers (docs/performance.md).
template <class T, int W>
VIGOR_NOINLINE SinCosPacks<T, W> sincos_out_of_line(const Pack<T, W> x) {
  SinCosPacks<T, W> r;
  sincos(x, r.sin_x, r.cos_x);
  return r;
}
template <class T, int W>
VIGOR_INLINE void sincos_called(const Pack<T, W>& x, Pack<T, W>& sin_x, Pack<T, W>& cos_x) {
  const SinCosPacks<T, W> r = sincos_out_of_line(x);
  sin_x = r.sin_x;
  cos_x = r.cos_x;
}

/// 2^k in every lane from ks = 1.5·2^(p-1) + k (kernels/core/arith.hpp's pow2_of_shifted):
/// an integer add and shift on the lanes' bits.
template <class T, int W>
inline Pack<T, W> pow2_of_shifted(const Pack<T, W>& ks) {
  using B = FloatBits<T>;
  using U = typename B::U;
  using UV = typename NativeVector<U, Pack<T, W>::L>::V;
  using V = typename Pack<T, W>::V;
  Pack<T, W> x;
  for (int r = 0; r < Pack<T, W>::R; ++r)
    x.v[r] = reinterpret_cast<V>((reinterpret_cast<UV>(ks.v[r]) + B::kBias) << B::kMantissaBits);
  return x;
}

/// Every lane's x = 2^e m with m in [sqrt(1/2), sqrt(2)), as arith.hpp's split_exponent (unsigned
/// lanes for the wrapping subtraction, signed ones for the arithmetic shift).
template <class T, int W>
inline void split_exponent(const Pack<T, W>& x, Pack<T, W>& m, Pack<T, W>& e) {
  using B = FloatBits<T>;
  using U = typename B::U;
  using UV = typename NativeVector<U, Pack<T, W>::L>::V;
  using IV = typename NativeVector<typename B::I, Pack<T, W>::L>::V;
  using V = typename Pack<T, W>::V;
  const U exponent_field = static_cast<U>(~((U(1) << B::kMantissaBits) - 1));
  for (int r = 0; r < Pack<T, W>::R; ++r) {
    const UV u = reinterpret_cast<UV>(x.v[r]);
    const UV shifted = u - B::kSqrtHalf;
    m.v[r] = reinterpret_cast<V>(u - (shifted & exponent_field));
    e.v[r] = __builtin_convertvector(reinterpret_cast<IV>(shifted) >> B::kMantissaBits, V);
  }
}

/// e^x and log x of every lane with vigor's own functions (kernels/core/exp_log.hpp): the scalar
/// functions' operations lane by lane, so their bits; flagged lanes take the scalar function.
template <class T, int W>
inline Pack<T, W> exp(const Pack<T, W>& x) {
  Pack<T, W> ks;
  const Pack<T, W> y = exp_log_detail::exp_reduced<T>(x, ks);
  const Pack<T, W> v = y * pow2_of_shifted(ks);
  const auto flagged = exp_log_detail::exp_needs_care<T>(x);
  if (!flagged.any()) return v;
  return with_scalar_lanes(x, v, flagged.bits(), [](T a) { return exp_of(a); });
}
template <class T, int W>
inline Pack<T, W> log(const Pack<T, W>& x) {
  Pack<T, W> m, e;
  split_exponent(x, m, e);
  const Pack<T, W> v = exp_log_detail::log_of_split<T>(m, e);
  const auto flagged = exp_log_detail::log_needs_care<T>(x);
  if (!flagged.any()) return v;
  return with_scalar_lanes(x, v, flagged.bits(), [](T a) { return log_of(a); });
}

/// tan of every lane (kernels/core/trig.hpp), like sin: flagged reductions take the scalar
/// function.
template <class T, int W>
inline Pack<T, W> tan(const Pack<T, W>& x) {
  using P = Pack<T, W>;
  Mask<T, W> flagged;
  const P v = trig_detail::tan_of_reduced<T>(trig_detail::reduce_fast<T>(x, flagged));
  const P t = select(x == P(T(0)), x, v);
  if (!flagged.any()) return t;
  return with_scalar_lanes(x, t, flagged.bits(), [](T y) { return tan_of(y); });
}

/// Whether any lane of the mask is set (arith.hpp's any_of for the one lane of a scalar).
template <class T, int W>
inline bool any_of(const Mask<T, W>& m) {
  return m.any();
}

/// The lanes whose sign bit is set (-0 included), as arith.hpp's sign_bit.
template <class T, int W>
inline Mask<T, W> sign_bit(const Pack<T, W>& x) {
  using M = Mask<T, W>;
  using I = typename M::I;
  M m;
  for (int r = 0; r < Pack<T, W>::R; ++r) m.v[r] = reinterpret_cast<typename M::V>(x.v[r]) < I(0);
  return m;
}

/// atan(c) = hi + lo in every lane, c = i/8: the values the scalar lookup loads. On 512-bit
/// registers one permute per part, indexed by the low bits of 8c + 1.5·2^(p-1) (which are i);
/// elsewhere by selects.
template <class T, int W>
inline void atan_of_eighth(const Pack<T, W>& c, Pack<T, W>& hi, Pack<T, W>& lo) {
  using P = Pack<T, W>;
  const T* hi_words = atan_detail::atan_eighths(T(0));  // 16 high words, then 16 low ones
  const T* lo_words = hi_words + 16;
#if defined(__AVX512F__)
  if constexpr (sizeof(typename P::V) == 64) {
    const P index = c * P(T(8)) + P(AtanCoefficients<T>::kRoundingShift);  // exact
    for (int r = 0; r < P::R; ++r) {
      const __m512i i = reinterpret_cast<const __m512i&>(index.v[r]);
      if constexpr (sizeof(T) == 8) {
        hi.v[r] =
            _mm512_permutex2var_pd(_mm512_loadu_pd(hi_words), i, _mm512_loadu_pd(hi_words + 8));
        lo.v[r] =
            _mm512_permutex2var_pd(_mm512_loadu_pd(lo_words), i, _mm512_loadu_pd(lo_words + 8));
      } else {
        // (The masked form with every lane set, as in sqrt: GCC 12's -Wuninitialized.)
        const __m512 h = _mm512_loadu_ps(hi_words), l = _mm512_loadu_ps(lo_words);
        hi.v[r] = _mm512_mask_permutexvar_ps(h, __mmask16(0xFFFF), i, h);
        lo.v[r] = _mm512_mask_permutexvar_ps(l, __mmask16(0xFFFF), i, l);
      }
    }
    return;
  }
#endif
  hi = P(hi_words[0]);
  lo = P(lo_words[0]);
  VIGOR_UNROLL
  for (int i = 1; i <= 8; ++i) {
    const auto at = c == P(T(i) * T(0.125));
    hi = select(at, P(hi_words[i]), hi);
    lo = select(at, P(lo_words[i]), lo);
  }
}

/// v with the lanes in `bits` replaced by f of the same lanes of y and x (with_scalar_lanes for
/// a function of two arguments).
template <class T, int W, class F>
VIGOR_NOINLINE Pack<T, W> with_scalar_lanes(const Pack<T, W>& y, const Pack<T, W>& x, Pack<T, W> v,
                                            std::uint64_t bits, F f) {
  for_each_lane(bits, [&](int l) { v.set(l, f(y[l], x[l])); });
  return v;
}

/// atan2, atan, asin and acos of every lane with vigor's own functions
/// (kernels/core/inverse_trig.hpp): the scalar operations lane by lane, so their bits; lanes
/// with special or tiny arguments, or beyond [-1, 1], take the scalar function.
template <class T, int W>
inline Pack<T, W> atan2(const Pack<T, W>& y, const Pack<T, W>& x) {
  using P = Pack<T, W>;
  const P ay = abs(y), ax = abs(x);
  const P v = atan_detail::atan2_magnitude<T>(DoubleWord<P>{ay, P(T(0))},
                                              DoubleWord<P>{ax, P(T(0))}, sign_bit(x));
  const P a = select(sign_bit(y), -v, v);
  const auto flagged = atan_detail::atan2_needs_care<T>(ay, ax);
  if (!flagged.any()) return a;
  return with_scalar_lanes(y, x, a, flagged.bits(), [](T s, T t) { return atan2_of(s, t); });
}
template <class T, int W>
inline Pack<T, W> atan(const Pack<T, W>& x) {
  return atan2(x, Pack<T, W>(T(1)));
}
template <class T, int W>
inline Pack<T, W> asin(const Pack<T, W>& x) {
  const Pack<T, W> v = atan_detail::asin_of_unit<T>(x);
  const auto flagged = !(abs(x) <= Pack<T, W>(T(1)));
  if (!flagged.any()) return v;
  return with_scalar_lanes(x, v, flagged.bits(), [](T a) { return asin_of(a); });
}
template <class T, int W>
inline Pack<T, W> acos(const Pack<T, W>& x) {
  const Pack<T, W> v = atan_detail::acos_of_unit<T>(x);
  const auto flagged = !(abs(x) <= Pack<T, W>(T(1)));
  if (!flagged.any()) return v;
  return with_scalar_lanes(x, v, flagged.bits(), [](T a) { return acos_of(a); });
}

/// sinh, cosh and tanh of every lane with vigor's own functions (kernels/core/hyperbolic.hpp): the
/// scalar operations lane by lane, so their bits; lanes beyond exp's fast range, inf and NaN take
/// the scalar function.
template <class T, int W, class F, class G>
inline Pack<T, W> hyperbolic_lanes(const Pack<T, W>& x, F magnitude, bool odd, G scalar) {
  const Pack<T, W> a = abs(x);
  const Pack<T, W> m = magnitude(a);
  const Pack<T, W> v = odd ? select(sign_bit(x), -m, m) : m;
  const auto flagged = hyperbolic_detail::hyperbolic_needs_care<T>(a);
  if (!flagged.any()) return v;
  return with_scalar_lanes(x, v, flagged.bits(), scalar);
}
template <class T, int W>
inline Pack<T, W> sinh(const Pack<T, W>& x) {
  return hyperbolic_lanes(
      x, [](const Pack<T, W>& a) { return hyperbolic_detail::sinh_magnitude<T>(a); }, true,
      [](T y) { return sinh_of(y); });
}
template <class T, int W>
inline Pack<T, W> cosh(const Pack<T, W>& x) {
  return hyperbolic_lanes(
      x, [](const Pack<T, W>& a) { return hyperbolic_detail::cosh_magnitude<T>(a); }, false,
      [](T y) { return cosh_of(y); });
}
template <class T, int W>
inline Pack<T, W> tanh(const Pack<T, W>& x) {
  return hyperbolic_lanes(
      x, [](const Pack<T, W>& a) { return hyperbolic_detail::tanh_magnitude<T>(a); }, true,
      [](T y) { return tanh_of(y); });
}

/// Lane by lane for the functions vigor has no packed form of (models rarely need them).
#define VIGOR_PACK_LANEWISE(fn)                                    \
  template <class T, int W>                                        \
  inline Pack<T, W> fn(const Pack<T, W>& a) {                      \
    return lanewise(a, [](T x) { return vigor::kernels::fn(x); }); \
  }
VIGOR_PACK_LANEWISE(cbrt)
#undef VIGOR_PACK_LANEWISE

/// pow's table rows for every lane's m (kernels/core/pow.hpp's log_row): the index from m's bits,
/// the rows by gathers on 512-bit registers and lane by lane elsewhere.
template <class T, int W>
inline pow_detail::LogRow<Pack<T, W>> pow_log_rows(const Pack<T, W>& m) {
  using P = Pack<T, W>;
  using B = FloatBits<T>;
  using U = typename B::U;
  using UV = typename NativeVector<U, P::L>::V;
  const T* t = pow_detail::log_table(T(0));
  pow_detail::LogRow<P> row;
  for (int r = 0; r < P::R; ++r) {
    const UV u = reinterpret_cast<UV>(m.v[r]) - B::kSqrtHalf;
    const UV at = ((u >> (B::kMantissaBits - 7)) & U(127)) * U(3);
#if defined(__AVX512F__)
    if constexpr (sizeof(typename P::V) == 64) {
      // (The masked forms with every lane set, as for sqrt: GCC 12's -Wuninitialized.)
      const __m512i i = reinterpret_cast<const __m512i&>(at);
      if constexpr (sizeof(T) == 8) {
        const __m512d z = _mm512_setzero_pd();
        row.invc.v[r] = _mm512_mask_i64gather_pd(z, __mmask8(0xFF), i, t, 8);
        row.hi.v[r] = _mm512_mask_i64gather_pd(z, __mmask8(0xFF), i, t + 1, 8);
        row.lo.v[r] = _mm512_mask_i64gather_pd(z, __mmask8(0xFF), i, t + 2, 8);
      } else {
        const __m512 z = _mm512_setzero_ps();
        row.invc.v[r] = _mm512_mask_i32gather_ps(z, __mmask16(0xFFFF), i, t, 4);
        row.hi.v[r] = _mm512_mask_i32gather_ps(z, __mmask16(0xFFFF), i, t + 1, 4);
        row.lo.v[r] = _mm512_mask_i32gather_ps(z, __mmask16(0xFFFF), i, t + 2, 4);
      }
      continue;
    }
#endif
    for (int l = 0; l < P::L; ++l) {
      row.invc.v[r][l] = t[at[l]];
      row.hi.v[r][l] = t[at[l] + 1];
      row.lo.v[r][l] = t[at[l] + 2];
    }
  }
  return row;
}

/// x^y of every lane with vigor's own pow (kernels/core/pow.hpp): the table rows read lane by
/// lane, the rest the scalar operations on whole packs, so the scalar bits; lanes the fast path
/// leaves (special, negative or subnormal x, results beyond exp's fast range) take the scalar
/// function.
template <class T, int W>
inline Pack<T, W> pow(const Pack<T, W>& x, const Pack<T, W>& y) {
  using P = Pack<T, W>;
  P m, e;
  split_exponent(x, m, e);
  const DoubleWord<P> p = pow_detail::y_log_x<T>(m, e, pow_log_rows(m), y);
  P ks;
  const P y_log_x_exp = pow_detail::exp_of_product<T>(p, ks);  // sets ks
  const P v = y_log_x_exp * pow2_of_shifted(ks);
  const auto flagged = (!pow_detail::pow_args_plain<T>(x, y)) |
                       (!(abs(p.hi) <= P(ExpLogCoefficients<T>::kFastLimit)));
  if (!flagged.any()) return v;
  return with_scalar_lanes(x, y, v, flagged.bits(), [](T a, T b) { return pow_of(a, b); });
}

}  // namespace vigor::kernels
