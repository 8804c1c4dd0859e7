// vigor-bench-trig: the speed and accuracy of vigor's own sin and cos (kernels/core/trig.hpp)
// next to what the engines used before them: glibc's vector library (libmvec) on SIMD packs and
// the C library's scalar sin/cos.
//
// Each case evaluates sin, cos, or both, of N arguments spread over [-R, R] (R = 10 by default:
// the angles of a pendulum; --range 1e6 for a long rotating run) and sums the results so that
// nothing is optimised away. Timing: best of --repeats runs, the cases interleaved within each
// repeat. Accuracy: the largest error in ulps over the same arguments against long double.
// --exhaustive-float instead checks sin and cos of every positive finite float against glibc's
// double sin and cos (about 5 minutes on one core); negative floats follow by symmetry, which
// tests/test_trig.cpp holds bit for bit.
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
mvec_f16 _ZGVeN16v_sinf(mvec_f16);
mvec_f16 _ZGVeN16v_cosf(mvec_f16);
}
#endif

namespace {

struct Case {
  std::string name;
  std::function<double()> run;  // returns a checksum
  double best = 1e300;
};

double seconds_of(const std::function<double()>& f, double& sink) {
  const auto t0 = std::chrono::steady_clock::now();
  sink += f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class T>
double max_ulps(const std::vector<T>& x, const std::vector<T>& y, bool is_sin) {
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const long double want = is_sin ? sinl(x[i]) : cosl(x[i]);
    if (want == 0) continue;
    int e;
    std::frexp(static_cast<double>(want), &e);
    const long double ulp = std::ldexp(1.0L, e - std::numeric_limits<T>::digits);
    worst = std::max(worst, static_cast<double>(std::fabs((y[i] - want) / ulp)));
  }
  return worst;
}

// Packs of the target's native width over the whole array: y = f(x), pack by pack.
template <class T, class F>
double packed(const std::vector<T>& x, std::vector<T>& y, F f) {
  constexpr int W = vk::native_lanes<T>();
  using P = vk::Pack<T, W>;
  for (std::size_t i = 0; i + W <= x.size(); i += W) f(P::load(&x[i])).store(&y[i]);
  return static_cast<double>(y[y.size() / 3]);
}

template <class T>
void add_cases(std::vector<Case>& cases, const std::vector<T>& x, std::vector<T>& y,
               const char* type) {
  using P = vk::Pack<T, vk::native_lanes<T>()>;
  const std::string t = type;
  cases.push_back({t + " sin, vigor, packed",
                   [&] { return packed(x, y, [](const P& a) { return vk::sin(a); }); }});
  cases.push_back({t + " sincos, vigor, packed", [&] {
                     return packed(x, y, [](const P& a) {
                       P s, c;
                       vk::sincos(a, s, c);
                       return s + c;
                     });
                   }});
#if defined(VIGOR_BENCH_MVEC)
  if constexpr (sizeof(typename P::V) == 64) {
    cases.push_back({t + " sin, libmvec, packed", [&] {
                       return packed(x, y, [](const P& a) {
                         if constexpr (sizeof(T) == 8)
                           return P::map([&](int r) { return _ZGVeN8v_sin(a.v[r]); });
                         else
                           return P::map([&](int r) { return _ZGVeN16v_sinf(a.v[r]); });
                       });
                     }});
    cases.push_back(
        {t + " sin+cos, libmvec, packed", [&] {
           return packed(x, y, [](const P& a) {
             if constexpr (sizeof(T) == 8)
               return P::map([&](int r) { return _ZGVeN8v_sin(a.v[r]) + _ZGVeN8v_cos(a.v[r]); });
             else
               return P::map(
                   [&](int r) { return _ZGVeN16v_sinf(a.v[r]) + _ZGVeN16v_cosf(a.v[r]); });
           });
         }});
  }
#endif
  cases.push_back({t + " sin, vigor, scalar", [&] {
                     for (std::size_t i = 0; i < x.size(); ++i) y[i] = vk::sin(x[i]);
                     return static_cast<double>(y[y.size() / 3]);
                   }});
  cases.push_back({t + " sin, libm, scalar", [&] {
                     for (std::size_t i = 0; i < x.size(); ++i) y[i] = std::sin(x[i]);
                     return static_cast<double>(y[y.size() / 3]);
                   }});
}

// Every positive finite float: the largest error in float ulps of vigor's sin and cos against
// glibc's double ones (each within ~0.5 ulp of double, 2^-29 of a float ulp), and the count of
// results one ulp or more away.
int exhaustive_float() {
  double worst_sin = 0, worst_cos = 0;
  float at_sin = 0, at_cos = 0;
  long long off_by_one = 0;
  const auto err = [](float got, double want) {
    if (want == 0) return got == 0 ? 0.0 : 1e30;
    int e;
    std::frexp(want, &e);
    return std::fabs((static_cast<double>(got) - want) / std::ldexp(1.0, std::max(e, -125) - 24));
  };
  for (std::uint32_t u = 1; u < 0x7f800000u; ++u) {
    float x;
    std::memcpy(&x, &u, sizeof x);
    float s, c;
    vk::sincos(x, s, c);
    const double es = err(s, std::sin(static_cast<double>(x)));
    const double ec = err(c, std::cos(static_cast<double>(x)));
    if (es > worst_sin) worst_sin = es, at_sin = x;
    if (ec > worst_cos) worst_cos = ec, at_cos = x;
    off_by_one += es >= 1 || ec >= 1;
  }
  std::printf(
      "every positive finite float: max sin %.4f ulp (x = %a), max cos %.4f ulp (x = %a); "
      "%lld results >= 1 ulp\n",
      worst_sin, static_cast<double>(at_sin), worst_cos, static_cast<double>(at_cos), off_by_one);
  return off_by_one == 0 ? 0 : 1;
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
          "usage: vigor-bench-trig [--n N] [--repeats R] [--range X] | --exhaustive-float\n"
          "  ns per argument of sin/cos over N arguments in [-X, X] (default 2^20, 10),\n"
          "  best of R interleaved repeats (default 15), and each case's max error in\n"
          "  ulps against long double.\n");
      return 2;
    }
  }
  n -= n % 64;
  if (n == 0 || repeats < 1 || !(range > 0)) {
    std::fprintf(stderr, "vigor-bench-trig: --n, --repeats and --range must be positive\n");
    return 2;
  }
  std::mt19937_64 g(1);
  std::uniform_real_distribution<double> u(-range, range);
  std::vector<double> xd(n), yd(n);
  std::vector<float> xf(n), yf(n);
  for (std::size_t i = 0; i < n; ++i) xf[i] = static_cast<float>(xd[i] = u(g));

  std::vector<Case> cases;
  add_cases(cases, xd, yd, "double");
  add_cases(cases, xf, yf, "float ");
  double sink = 0;
  for (int r = 0; r < repeats; ++r)
    for (Case& c : cases) c.best = std::min(c.best, seconds_of(c.run, sink));

  std::printf("# %zu arguments in [-%g, %g], best of %d interleaved repeats, one thread\n", n,
              range, range, repeats);
  std::printf("%-30s %10s %12s\n", "case", "ns/arg", "max ulps");
  for (Case& c : cases) {
    // Accuracy of the case's first function (sin; sincos and sin+cos print their sum's: "-").
    const bool single = c.name.find("sin,") != std::string::npos;
    sink += c.run();
    double err = -1;
    if (single)
      err = c.name.rfind("double", 0) == 0 ? max_ulps(xd, yd, true) : max_ulps(xf, yf, true);
    std::printf("%-30s %10.3f %12s\n", c.name.c_str(), 1e9 * c.best / static_cast<double>(n),
                err < 0 ? "-" : std::to_string(err).substr(0, 5).c_str());
  }
  std::printf("# checksum %g\n", sink);
  return 0;
}
