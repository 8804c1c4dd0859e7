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
/// sin/cos/exp/log call glibc's vector math library (libmvec) where it has the width, else the
/// scalar function per lane. libmvec's results are within 4 ulp of the scalar libm, not identical.
#pragma once

#include <math.h>

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "kernels/core/config.hpp"

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

/// True when every bit of the vector is zero.
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

template <class T, int W>
struct Mask {
  using I = typename LaneInt<T>::type;
  typedef I V __attribute__((vector_size(sizeof(I) * W)));
  V v;

  friend Mask operator&(Mask a, Mask b) { return {a.v & b.v}; }
  friend Mask operator|(Mask a, Mask b) { return {a.v | b.v}; }
  friend Mask operator!(Mask a) { return {~a.v}; }
  bool operator[](int l) const { return v[l] != 0; }
  static Mask all(bool b) {
    Mask m;
    m.v = V{} + (b ? I(-1) : I(0));
    return m;
  }
  /// Any lane set: one vector test instruction on x86 (a lane-by-lane OR of extracted scalars
  /// cost more than the whole Verlet step in measurements).
  bool any() const { return !all_zero(v); }
  bool all() const { return all_zero(~v); }
  void set(int l, bool b) { v[l] = b ? I(-1) : I(0); }
};

template <class T, int W>
struct Pack {
  typedef T V __attribute__((vector_size(sizeof(T) * W)));
  using MaskT = Mask<T, W>;
  static constexpr int lanes = W;
  V v;

  Pack() = default;
  Pack(T x) : v(V{} + x) {}  // NOLINT(google-explicit-constructor): broadcast constants
  static Pack from(V x) {
    Pack p;
    p.v = x;
    return p;
  }
  /// Load W consecutive values (a block of trajectories in SoA memory).
  static Pack load(const T* p) {
    Pack r;
    std::memcpy(&r.v, p, sizeof(V));
    return r;
  }
  void store(T* p) const { std::memcpy(p, &v, sizeof(V)); }

  T operator[](int l) const { return v[l]; }
  void set(int l, T x) { v[l] = x; }

  Pack operator-() const { return from(-v); }
  Pack operator+() const { return *this; }
  Pack& operator+=(const Pack& o) {
    v += o.v;
    return *this;
  }
  Pack& operator-=(const Pack& o) {
    v -= o.v;
    return *this;
  }
  Pack& operator*=(const Pack& o) {
    v *= o.v;
    return *this;
  }
  Pack& operator/=(const Pack& o) {
    v /= o.v;
    return *this;
  }
  friend Pack operator+(Pack a, const Pack& b) { return a += b; }
  friend Pack operator-(Pack a, const Pack& b) { return a -= b; }
  friend Pack operator*(Pack a, const Pack& b) { return a *= b; }
  friend Pack operator/(Pack a, const Pack& b) { return a /= b; }
  friend Pack operator+(Pack a, T b) { return from(a.v + b); }
  friend Pack operator+(T a, Pack b) { return from(a + b.v); }
  friend Pack operator-(Pack a, T b) { return from(a.v - b); }
  friend Pack operator-(T a, Pack b) { return from(a - b.v); }
  friend Pack operator*(Pack a, T b) { return from(a.v * b); }
  friend Pack operator*(T a, Pack b) { return from(a * b.v); }
  friend Pack operator/(Pack a, T b) { return from(a.v / b); }
  friend Pack operator/(T a, Pack b) { return from(a / b.v); }

  friend MaskT operator<(const Pack& a, const Pack& b) { return {a.v < b.v}; }
  friend MaskT operator>(const Pack& a, const Pack& b) { return {a.v > b.v}; }
  friend MaskT operator<=(const Pack& a, const Pack& b) { return {a.v <= b.v}; }
  friend MaskT operator>=(const Pack& a, const Pack& b) { return {a.v >= b.v}; }
  friend MaskT operator==(const Pack& a, const Pack& b) { return {a.v == b.v}; }
  friend MaskT operator!=(const Pack& a, const Pack& b) { return {a.v != b.v}; }
};

template <class T, int W>
inline Pack<T, W> select(Mask<T, W> m, const Pack<T, W>& a, const Pack<T, W>& b) {
  return Pack<T, W>::from(m.v ? a.v : b.v);
}

// ---- Math. Overloads live in namespace vigor::kernels beside the scalar ones (math.hpp), so model
// code calling sqrt(x) unqualified finds them by lookup or ADL.

template <class T, int W>
inline Pack<T, W> abs(const Pack<T, W>& a) {
  Pack<T, W> r;
  for (int l = 0; l < W; ++l) r.v[l] = __builtin_fabs(a.v[l]);  // one packed sign-bit clear
  return r;
}

template <class T, int W>
inline Pack<T, W> sqrt(const Pack<T, W>& a) {
  Pack<T, W> r;
  // A per-lane loop over __builtin_sqrt becomes one packed vsqrtp[sd] (with -fno-math-errno); the
  // packed instruction is correctly rounded, like the scalar one.
  for (int l = 0; l < W; ++l) r.v[l] = __builtin_sqrt(a.v[l]);
  return r;
}

/// Lanes where the value is finite (x - x is 0 for finite x, NaN for inf and NaN).
template <class T, int W>
inline Mask<T, W> finite_lanes(const Pack<T, W>& a) {
  return (a - a) == Pack<T, W>(T(0));
}

template <class T, int W>
inline Pack<T, W> max_of(const Pack<T, W>& a, const Pack<T, W>& b) {
  return select(a < b, b, a);
}
template <class T, int W>
inline Pack<T, W> min_of(const Pack<T, W>& a, const Pack<T, W>& b) {
  return select(b < a, b, a);
}

namespace simd_detail {
// glibc's libmvec entry points (vector function ABI names) for the widths it provides.
typedef double d2 __attribute__((vector_size(16)));
typedef double d4 __attribute__((vector_size(32)));
typedef double d8 __attribute__((vector_size(64)));
typedef float f4 __attribute__((vector_size(16)));
typedef float f8 __attribute__((vector_size(32)));
typedef float f16 __attribute__((vector_size(64)));
extern "C" {
d2 _ZGVbN2v_sin(d2);
d2 _ZGVbN2v_cos(d2);
d2 _ZGVbN2v_exp(d2);
d2 _ZGVbN2v_log(d2);
f4 _ZGVbN4v_sinf(f4);
f4 _ZGVbN4v_cosf(f4);
f4 _ZGVbN4v_expf(f4);
f4 _ZGVbN4v_logf(f4);
#if defined(__AVX2__)
d4 _ZGVdN4v_sin(d4);
d4 _ZGVdN4v_cos(d4);
d4 _ZGVdN4v_exp(d4);
d4 _ZGVdN4v_log(d4);
f8 _ZGVdN8v_sinf(f8);
f8 _ZGVdN8v_cosf(f8);
f8 _ZGVdN8v_expf(f8);
f8 _ZGVdN8v_logf(f8);
#endif
#if defined(__AVX512F__)
d8 _ZGVeN8v_sin(d8);
d8 _ZGVeN8v_cos(d8);
d8 _ZGVeN8v_exp(d8);
d8 _ZGVeN8v_log(d8);
f16 _ZGVeN16v_sinf(f16);
f16 _ZGVeN16v_cosf(f16);
f16 _ZGVeN16v_expf(f16);
f16 _ZGVeN16v_logf(f16);
#endif
}
}  // namespace simd_detail

// VIGOR_PACK_MATH(fn): fn(Pack) through libmvec at the native width, else lane by lane.
#if defined(__AVX512F__)
#define VIGOR_PACK_MATH_WIDE(fn)                                                    \
  if constexpr (sizeof(typename Pack<T, W>::V) == 64) {                             \
    if constexpr (sizeof(T) == 8) return Pack<T, W>::from(simd_detail::_ZGVeN8v_##fn(a.v)); \
    else return Pack<T, W>::from(simd_detail::_ZGVeN16v_##fn##f(a.v));              \
  }
#else
#define VIGOR_PACK_MATH_WIDE(fn)
#endif
#if defined(__AVX2__)
#define VIGOR_PACK_MATH_MID(fn)                                                     \
  if constexpr (sizeof(typename Pack<T, W>::V) == 32) {                             \
    if constexpr (sizeof(T) == 8) return Pack<T, W>::from(simd_detail::_ZGVdN4v_##fn(a.v)); \
    else return Pack<T, W>::from(simd_detail::_ZGVdN8v_##fn##f(a.v));               \
  }
#else
#define VIGOR_PACK_MATH_MID(fn)
#endif
#define VIGOR_PACK_MATH(fn)                                                         \
  template <class T, int W>                                                         \
  inline Pack<T, W> fn(const Pack<T, W>& a) {                                       \
    VIGOR_PACK_MATH_WIDE(fn)                                                        \
    VIGOR_PACK_MATH_MID(fn)                                                         \
    if constexpr (sizeof(typename Pack<T, W>::V) == 16) {                           \
      if constexpr (sizeof(T) == 8) return Pack<T, W>::from(simd_detail::_ZGVbN2v_##fn(a.v)); \
      else return Pack<T, W>::from(simd_detail::_ZGVbN4v_##fn##f(a.v));             \
    } else {                                                                        \
      Pack<T, W> r;                                                                 \
      for (int l = 0; l < W; ++l) r.v[l] = vigor::kernels::fn(a.v[l]);              \
      return r;                                                                     \
    }                                                                               \
  }
VIGOR_PACK_MATH(sin)
VIGOR_PACK_MATH(cos)
VIGOR_PACK_MATH(exp)
VIGOR_PACK_MATH(log)
#undef VIGOR_PACK_MATH
#undef VIGOR_PACK_MATH_WIDE
#undef VIGOR_PACK_MATH_MID

/// Lane by lane for the functions libmvec has no vector entry for (or models rarely need).
#define VIGOR_PACK_LANEWISE(fn)                                       \
  template <class T, int W>                                           \
  inline Pack<T, W> fn(const Pack<T, W>& a) {                         \
    Pack<T, W> r;                                                     \
    for (int l = 0; l < W; ++l) r.v[l] = vigor::kernels::fn(a.v[l]);  \
    return r;                                                         \
  }
VIGOR_PACK_LANEWISE(cbrt)
VIGOR_PACK_LANEWISE(tan)
VIGOR_PACK_LANEWISE(asin)
VIGOR_PACK_LANEWISE(acos)
VIGOR_PACK_LANEWISE(atan)
VIGOR_PACK_LANEWISE(sinh)
VIGOR_PACK_LANEWISE(cosh)
VIGOR_PACK_LANEWISE(tanh)
#undef VIGOR_PACK_LANEWISE

template <class T, int W>
inline Pack<T, W> pow(const Pack<T, W>& a, const Pack<T, W>& b) {
  Pack<T, W> r;
  for (int l = 0; l < W; ++l) r.v[l] = vigor::kernels::pow(a.v[l], b.v[l]);
  return r;
}
template <class T, int W>
inline Pack<T, W> atan2(const Pack<T, W>& y, const Pack<T, W>& x) {
  Pack<T, W> r;
  for (int l = 0; l < W; ++l) r.v[l] = vigor::kernels::atan2(y.v[l], x.v[l]);
  return r;
}

}  // namespace vigor::kernels
