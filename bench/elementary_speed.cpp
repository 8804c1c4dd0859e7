// vigor-bench-elementary: the speed and accuracy of vigor's own sin, cos, exp and log
// (kernels/core/trig.hpp, exp_log.hpp), of tan, atan, asin and acos (inverse_trig.hpp), of
// sinh, cosh and tanh (hyperbolic.hpp) and of pow (pow.hpp) next to what the engines used before
// them: glibc's vector library (libmvec) on SIMD packs and the C library's scalar functions.
//
// Each case evaluates one function (or sin and cos together) of N arguments and stores the
// results. sin and cos take arguments spread over [-R, R] (R = 10 by default: the angles of a
// pendulum; --range 1e6 for a long rotating run), exp over [-20, 20] (a Boltzmann factor or a
// growth rate), log log-uniformly over [1e-3, 1e3] (MEGNO's ln |M w|, a logarithmic potential),
// tan like sin, atan like log, asin and acos over [-1, 1], sinh, cosh and tanh like exp, pow(x,
// -1.5) with x like log. Timing: best of --repeats runs, the cases interleaved within each repeat.
// Accuracy: the largest error in ulps over the same arguments against long double.
// --exhaustive-float instead checks each function of every float it needs (exhaustive_float)
// against glibc's double functions (about 30 minutes on one core).
#include <math.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/core/math.hpp"
#include "kernels/simd/pack.hpp"

namespace vk = vigor::kernels;

#if !defined(VIGOR_BENCH_NO_LIBMVEC) && defined(__AVX512F__)
#define VIGOR_BENCH_MVEC 1
typedef double mvec_d8 __attribute__((vector_size(64)));
typedef float mvec_f16 __attribute__((vector_size(64)));
extern "C" {
mvec_d8 _ZGVeN8v_sin(mvec_d8);
mvec_d8 _ZGVeN8v_cos(mvec_d8);
mvec_d8 _ZGVeN8v_exp(mvec_d8);
mvec_d8 _ZGVeN8v_log(mvec_d8);
mvec_f16 _ZGVeN16v_sinf(mvec_f16);
mvec_f16 _ZGVeN16v_cosf(mvec_f16);
mvec_f16 _ZGVeN16v_expf(mvec_f16);
mvec_f16 _ZGVeN16v_logf(mvec_f16);
mvec_d8 _ZGVeN8v_tan(mvec_d8);
mvec_d8 _ZGVeN8v_atan(mvec_d8);
mvec_d8 _ZGVeN8v_asin(mvec_d8);
mvec_d8 _ZGVeN8v_acos(mvec_d8);
mvec_f16 _ZGVeN16v_tanf(mvec_f16);
mvec_f16 _ZGVeN16v_atanf(mvec_f16);
mvec_f16 _ZGVeN16v_asinf(mvec_f16);
mvec_f16 _ZGVeN16v_acosf(mvec_f16);
mvec_d8 _ZGVeN8v_sinh(mvec_d8);
mvec_d8 _ZGVeN8v_cosh(mvec_d8);
mvec_d8 _ZGVeN8v_tanh(mvec_d8);
mvec_f16 _ZGVeN16v_sinhf(mvec_f16);
mvec_f16 _ZGVeN16v_coshf(mvec_f16);
mvec_f16 _ZGVeN16v_tanhf(mvec_f16);
mvec_d8 _ZGVeN8vv_pow(mvec_d8, mvec_d8);
mvec_f16 _ZGVeN16vv_powf(mvec_f16, mvec_f16);
}
#endif

namespace {

/// The arguments of one function, in one precision, and where its results go.
template <class T>
struct Arguments {
  std::vector<T> x, y;
};

struct Case {
  std::string name;
  std::function<double()> run;       // returns a checksum
  std::function<double()> max_ulps;  // of the last run's results; empty: not one function
  double best = 1e300;
};

double seconds_of(const std::function<double()>& f, double& sink) {
  const auto t0 = std::chrono::steady_clock::now();
  sink += f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class T, class Reference>
double max_ulps(const Arguments<T>& a, Reference ref) {
  double worst = 0;
  for (std::size_t i = 0; i < a.x.size(); ++i) {
    const long double want = ref(static_cast<long double>(a.x[i]));
    if (want == 0) continue;
    int e;
    std::frexp(static_cast<double>(want), &e);
    const long double ulp = std::ldexp(1.0L, e - std::numeric_limits<T>::digits);
    worst = std::max(worst, static_cast<double>(std::fabs((a.y[i] - want) / ulp)));
  }
  return worst;
}

// Packs of the target's native width over the whole array: y = f(x), pack by pack.
template <class T, class F>
double packed(Arguments<T>& a, F f) {
  constexpr int W = vk::native_lanes<T>();
  using P = vk::Pack<T, W>;
  for (std::size_t i = 0; i + W <= a.x.size(); i += W) f(P::load(&a.x[i])).store(&a.y[i]);
  return static_cast<double>(a.y[a.y.size() / 3]);
}

template <class T, class F>
double scalar(Arguments<T>& a, F f) {
  for (std::size_t i = 0; i < a.x.size(); ++i) a.y[i] = f(a.x[i]);
  return static_cast<double>(a.y[a.y.size() / 3]);
}

using Ld = long double;

// One function's cases: vigor's packed and scalar forms, libmvec's packed one (where this target
// has it) and the C library's scalar one, each with its accuracy against `ref`.
template <class T, class Vigor, class Libm, class Mvec, class Ref>
void add_function(std::vector<Case>& cases, Arguments<T>& a, const std::string& name, Vigor vigor,
                  Libm libm, [[maybe_unused]] Mvec mvec, Ref ref) {
  using P = vk::Pack<T, vk::native_lanes<T>()>;
  const std::string t = sizeof(T) == 8 ? "double " : "float  ";
  const auto accuracy = [&a, ref] { return max_ulps(a, ref); };
  cases.push_back(
      {t + name + ", vigor, packed", [&a, vigor] { return packed(a, vigor); }, accuracy});
#if defined(VIGOR_BENCH_MVEC)
  if constexpr (sizeof(typename P::V) == 64)
    cases.push_back({t + name + ", libmvec, packed",
                     [&a, mvec] {
                       return packed(a, [&](const P& v) {
                         return P::map([&](int r) { return mvec(v.v[r]); });
                       });
                     },
                     accuracy});
#endif
  cases.push_back({t + name + ", vigor, scalar",
                   [&a, vigor] { return scalar(a, [&](T v) { return vigor(v); }); }, accuracy});
  cases.push_back({t + name + ", libm, scalar", [&a, libm] { return scalar(a, libm); }, accuracy});
}

// libmvec's packed function for T's width: the double one or the float one.
#if defined(VIGOR_BENCH_MVEC)
#define VIGOR_BENCH_MVEC_OF(fn)      \
  [](const auto& v) {                \
    if constexpr (sizeof(v[0]) == 8) \
      return _ZGVeN8v_##fn(v);       \
    else                             \
      return _ZGVeN16v_##fn##f(v);   \
  }
#else
#define VIGOR_BENCH_MVEC_OF(fn) 0
#endif

// tan, atan, asin, acos, sinh, cosh, tanh and pow: vigor's functions against libmvec's packed
// ones and the C library's.
template <class T>
void add_other_cases(std::vector<Case>& cases, Arguments<T>& angles, Arguments<T>& logs,
                     Arguments<T>& units, Arguments<T>& exps) {
  add_function(
      cases, angles, "tan", [](const auto& v) { return vk::tan(v); },
      [](T v) { return std::tan(v); }, VIGOR_BENCH_MVEC_OF(tan), [](Ld v) { return tanl(v); });
  add_function(
      cases, logs, "atan", [](const auto& v) { return vk::atan(v); },
      [](T v) { return std::atan(v); }, VIGOR_BENCH_MVEC_OF(atan), [](Ld v) { return atanl(v); });
  add_function(
      cases, units, "asin", [](const auto& v) { return vk::asin(v); },
      [](T v) { return std::asin(v); }, VIGOR_BENCH_MVEC_OF(asin), [](Ld v) { return asinl(v); });
  add_function(
      cases, units, "acos", [](const auto& v) { return vk::acos(v); },
      [](T v) { return std::acos(v); }, VIGOR_BENCH_MVEC_OF(acos), [](Ld v) { return acosl(v); });
  add_function(
      cases, exps, "sinh", [](const auto& v) { return vk::sinh(v); },
      [](T v) { return std::sinh(v); }, VIGOR_BENCH_MVEC_OF(sinh), [](Ld v) { return sinhl(v); });
  add_function(
      cases, exps, "cosh", [](const auto& v) { return vk::cosh(v); },
      [](T v) { return std::cosh(v); }, VIGOR_BENCH_MVEC_OF(cosh), [](Ld v) { return coshl(v); });
  add_function(
      cases, exps, "tanh", [](const auto& v) { return vk::tanh(v); },
      [](T v) { return std::tanh(v); }, VIGOR_BENCH_MVEC_OF(tanh), [](Ld v) { return tanhl(v); });
  // pow with the exponent of a gravitational or Coulomb force written as a formula, r^-1.5 (the
  // method does not depend on y).
  add_function(
      cases, logs, "pow",
      [](const auto& v) {
        using V = std::remove_cvref_t<decltype(v)>;
        return vk::pow(v, V(T(-1.5)));
      },
      [](T v) { return std::pow(v, T(-1.5)); },
#if defined(VIGOR_BENCH_MVEC)
      [](const auto& v) {
        using V = std::remove_cvref_t<decltype(v)>;
        V e;
        for (std::size_t i = 0; i < sizeof(V) / sizeof(T); ++i) e[i] = T(-1.5);
        if constexpr (sizeof(T) == 8)
          return _ZGVeN8vv_pow(v, e);
        else
          return _ZGVeN16vv_powf(v, e);
      },
#else
      0,
#endif
      [](Ld v) { return powl(v, -1.5L); });
}

template <class T>
void add_cases(std::vector<Case>& cases, Arguments<T>& angles, Arguments<T>& exps,
               Arguments<T>& logs) {
  using P = vk::Pack<T, vk::native_lanes<T>()>;
  constexpr bool d = sizeof(T) == 8;
  const auto vigor_sin = [](const auto& v) { return vk::sin(v); };
  const auto vigor_exp = [](const auto& v) { return vk::exp(v); };
  const auto vigor_log = [](const auto& v) { return vk::log(v); };
#if defined(VIGOR_BENCH_MVEC)
  const auto mvec_sin = [](const auto& v) {
    if constexpr (d)
      return _ZGVeN8v_sin(v);
    else
      return _ZGVeN16v_sinf(v);
  };
  const auto mvec_exp = [](const auto& v) {
    if constexpr (d)
      return _ZGVeN8v_exp(v);
    else
      return _ZGVeN16v_expf(v);
  };
  const auto mvec_log = [](const auto& v) {
    if constexpr (d)
      return _ZGVeN8v_log(v);
    else
      return _ZGVeN16v_logf(v);
  };
#else
  const auto mvec_sin = 0, mvec_exp = 0, mvec_log = 0;
#endif
  add_function(
      cases, angles, "sin", vigor_sin, [](T v) { return std::sin(v); }, mvec_sin,
      [](Ld v) { return sinl(v); });
  const std::string t = d ? "double " : "float  ";
  cases.push_back({t + "sincos, vigor, packed",
                   [&angles] {
                     return packed(angles, [](const P& a) {
                       P s, c;
                       vk::sincos(a, s, c);
                       return s + c;
                     });
                   },
                   {}});
#if defined(VIGOR_BENCH_MVEC)
  if constexpr (sizeof(typename P::V) == 64)
    cases.push_back(
        {t + "sin+cos, libmvec, packed",
         [&angles] {
           return packed(angles, [](const P& a) {
             if constexpr (d)
               return P::map([&](int r) { return _ZGVeN8v_sin(a.v[r]) + _ZGVeN8v_cos(a.v[r]); });
             else
               return P::map(
                   [&](int r) { return _ZGVeN16v_sinf(a.v[r]) + _ZGVeN16v_cosf(a.v[r]); });
           });
         },
         {}});
#endif
  add_function(
      cases, exps, "exp", vigor_exp, [](T v) { return std::exp(v); }, mvec_exp,
      [](Ld v) { return expl(v); });
  add_function(
      cases, logs, "log", vigor_log, [](T v) { return std::log(v); }, mvec_log,
      [](Ld v) { return logl(v); });
}

// The error in float ulps of a float result against a double reference (glibc's double
// functions, each within ~0.5 ulp of double: 2^-29 of a float ulp).
double float_ulps(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0.0 : 1e30;
  if (std::isinf(want) || std::fabs(want) > std::numeric_limits<float>::max())
    return static_cast<double>(got) == static_cast<double>(static_cast<float>(want)) ? 0.0 : 1e30;
  if (want == 0) return got == 0 ? 0.0 : 1e30;
  int e;
  std::frexp(want, &e);
  return std::fabs((static_cast<double>(got) - want) / std::ldexp(1.0, std::max(e, -125) - 24));
}

/// The worst error of one function over a set of floats, and the count of results >= 1 ulp off.
struct Worst {
  const char* name;
  double ulps = 0;
  float at = 0;
  long long off_by_one = 0;
  void add(float x, float got, double want) {
    const double e = float_ulps(got, want);
    if (e > ulps) ulps = e, at = x;
    off_by_one += e >= 1;
  }
};

// Every positive finite float for the odd functions sin, tan, atan, sinh and tanh and for the
// even ones cos and cosh (negative floats follow by symmetry, which tests/test_trig.cpp,
// test_inverse_trig.cpp and test_hyperbolic.cpp hold bit for bit), every float for exp, log,
// asin and acos (NaN in, NaN out; NaN beyond [-1, 1]).
int exhaustive_float() {
  Worst sin_w{"sin"}, cos_w{"cos"}, exp_w{"exp"}, log_w{"log"}, tan_w{"tan"}, atan_w{"atan"},
      asin_w{"asin"}, acos_w{"acos"}, sinh_w{"sinh"}, cosh_w{"cosh"}, tanh_w{"tanh"};
  std::uint32_t u = 0;
  do {
    float x;
    std::memcpy(&x, &u, sizeof x);
    const double xd = static_cast<double>(x);
    if (u > 0 && u < 0x7f800000u) {
      float s, c;
      vk::sincos(x, s, c);
      sin_w.add(x, s, std::sin(xd));
      cos_w.add(x, c, std::cos(xd));
      tan_w.add(x, vk::tan(x), std::tan(xd));
      atan_w.add(x, vk::atan(x), std::atan(xd));
      sinh_w.add(x, vk::sinh(x), std::sinh(xd));
      cosh_w.add(x, vk::cosh(x), std::cosh(xd));
      tanh_w.add(x, vk::tanh(x), std::tanh(xd));
    }
    exp_w.add(x, vk::exp(x), std::exp(xd));
    log_w.add(x, vk::log(x), std::log(xd));
    asin_w.add(x, vk::asin(x), std::asin(xd));
    acos_w.add(x, vk::acos(x), std::acos(xd));
  } while (++u != 0);
  long long off = 0;
  for (const Worst* w : {&sin_w, &cos_w, &tan_w, &exp_w, &log_w, &atan_w, &asin_w, &acos_w, &sinh_w,
                         &cosh_w, &tanh_w}) {
    std::printf("float %s: max %.4f ulp (x = %a); %lld results >= 1 ulp\n", w->name, w->ulps,
                static_cast<double>(w->at), w->off_by_one);
    off += w->off_by_one;
  }
  return off == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 1 << 20;
  int repeats = 15;
  double range = 10.0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--n" && i + 1 < argc) {
      n = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--repeats" && i + 1 < argc) {
      repeats = std::atoi(argv[++i]);
    } else if (a == "--range" && i + 1 < argc) {
      range = std::atof(argv[++i]);
    } else if (a == "--exhaustive-float") {
      return exhaustive_float();
    } else {
      std::fprintf(
          stderr,
          "usage: vigor-bench-elementary [--n N] [--repeats R] [--range X] | --exhaustive-float\n"
          "  ns per argument of sin/cos over N arguments in [-X, X] (default 2^20, 10),\n"
          "  of exp over [-20, 20] and of log over [1e-3, 1e3],\n"
          "  best of R interleaved repeats (default 15), and each case's max error in\n"
          "  ulps against long double.\n");
      return 2;
    }
  }
  n -= n % 64;
  if (n == 0 || repeats < 1 || !(range > 0)) {
    std::fprintf(stderr, "vigor-bench-elementary: --n, --repeats and --range must be positive\n");
    return 2;
  }
  std::mt19937_64 g(1);
  std::uniform_real_distribution<double> u(0, 1);
  Arguments<double> ad{std::vector<double>(n), std::vector<double>(n)}, ed = ad, ld = ad;
  Arguments<double> ud = ad;
  Arguments<float> af{std::vector<float>(n), std::vector<float>(n)}, ef = af, lf = af, uf = af;
  for (std::size_t i = 0; i < n; ++i) {
    af.x[i] = static_cast<float>(ad.x[i] = range * (2 * u(g) - 1));
    ef.x[i] = static_cast<float>(ed.x[i] = 20 * (2 * u(g) - 1));
    lf.x[i] = static_cast<float>(ld.x[i] = std::pow(10.0, 6 * u(g) - 3));
    uf.x[i] = static_cast<float>(ud.x[i] = 2 * u(g) - 1);
  }

  std::vector<Case> cases;
  add_cases(cases, ad, ed, ld);
  add_cases(cases, af, ef, lf);
  add_other_cases(cases, ad, ld, ud, ed);
  add_other_cases(cases, af, lf, uf, ef);
  double sink = 0;
  for (int r = 0; r < repeats; ++r)
    for (Case& c : cases) c.best = std::min(c.best, seconds_of(c.run, sink));

  std::printf(
      "# %zu arguments (sin, cos, tan in [-%g, %g]; exp, sinh, cosh, tanh in [-20, 20]; log, atan, "
      "pow(x, -1.5) in [1e-3, 1e3]; asin, acos in [-1, 1]), "
      "best of %d interleaved repeats, one thread\n",
      n, range, range, repeats);
  std::printf("%-30s %10s %12s\n", "case", "ns/arg", "max ulps");
  for (Case& c : cases) {
    sink += c.run();  // the results whose accuracy is printed
    const double err = c.max_ulps ? c.max_ulps() : -1;
    std::printf("%-30s %10.3f %12s\n", c.name.c_str(), 1e9 * c.best / static_cast<double>(n),
                err < 0 ? "-" : std::to_string(err).substr(0, 5).c_str());
  }
  std::printf("# checksum %g\n", sink);
  return 0;
}
