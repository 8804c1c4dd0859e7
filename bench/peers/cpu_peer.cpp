/// @file cpu_peer.cpp
/// @brief vigor-peer-cpu: the C++ CPU peers of the peer benchmark (bench/peers/run_peers.py) as
/// one program speaking the peers' protocol — initial states from a .npy, final states to a .npy,
/// one JSON line of timings on stdout.
///
///   --variant odeint  Boost.Odeint velocity_verlet per trajectory, OpenMP over trajectories
///                     (cpu_odeint.cpp; built when Boost is found);
///   --variant simd    the hand-written SIMD-across-trajectories loop (cpu_simd_reference.cpp):
///                     the practical ceiling of a CPU;
///   --variant peak    this CPU's peak FP64 and FP32 FLOP/s (packed FMA chains), for the roofline.
/// Workload: Störmer–Verlet on Hénon–Heiles (a = 1, b = -1/3), as bench/peers/workload.py.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/cpu_suite.hpp"
#include "host/job/array_file.hpp"

namespace {

using namespace vigor_bench_cpu;

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "error: %s\nusage: vigor-peer-cpu --variant odeint|simd --precision fp64|fp32 "
               "--init IN.npy --out OUT.npy [--steps 1000] [--dt 0.01] [--repeats 3] "
               "[--threads N]\n",
               why.c_str());
  std::exit(2);
}

/// A 2-D float64 .npy (version 1.0, C order) of rows x cols values, row-major.
void write_npy(const std::string& path, std::int64_t rows, int cols,
               const std::vector<double>& data) {
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {char(header.size() & 0xff), char(header.size() >> 8)};
  out.write(len, 2);
  out << header;
  out.write(reinterpret_cast<const char*>(data.data()),
            std::streamsize(data.size() * sizeof(double)));
  if (!out) throw std::runtime_error("cannot write " + path);
}

/// Peak FLOP/s of this CPU in `Real` with every thread: twelve independent chains of packed fused
/// multiply-adds (GCC vector types of the target's register width) in registers, enough to cover
/// the FMA latency on two pipes. The chains feed the result, so the loop cannot be dropped.
template <class Real>
double peak_flops(int threads) {
  constexpr int kLanes = simd_register_bytes() / int(sizeof(Real));
  typedef Real V __attribute__((vector_size(simd_register_bytes())));
  constexpr int kChains = 12;
  constexpr std::int64_t kIters = 40'000'000;
  double sink = 0;
  const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads) reduction(+ : sink)
  {
    const V mul = V{} + Real(0.999999), add = V{} + Real(1e-7);
    V a0 = V{} + Real(1), a1 = V{} + Real(2), a2 = V{} + Real(3), a3 = V{} + Real(4);
    V a4 = V{} + Real(5), a5 = V{} + Real(6), a6 = V{} + Real(7), a7 = V{} + Real(8);
    V a8 = V{} + Real(9), a9 = V{} + Real(10), a10 = V{} + Real(11), a11 = V{} + Real(12);
    for (std::int64_t k = 0; k < kIters; ++k) {
      a0 = a0 * mul + add;
      a1 = a1 * mul + add;
      a2 = a2 * mul + add;
      a3 = a3 * mul + add;
      a4 = a4 * mul + add;
      a5 = a5 * mul + add;
      a6 = a6 * mul + add;
      a7 = a7 * mul + add;
      a8 = a8 * mul + add;
      a9 = a9 * mul + add;
      a10 = a10 * mul + add;
      a11 = a11 * mul + add;
    }
    const V t = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)) + ((a8 + a9) + (a10 + a11));
    for (int l = 0; l < kLanes; ++l) sink += double(t[l]);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (sink == 0.123) std::puts("");
  return 2.0 * kLanes * kChains * double(kIters) * threads / s;
}

}  // namespace

int main(int argc, char** argv) {
  std::string variant, precision, init, out_path;
  std::int64_t steps = 1000;
  double dt = 0.01;
  int repeats = 3, threads = omp_get_max_threads();
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    auto value = [&]() -> std::string {
      if (k + 1 >= argc) usage(a + " needs a value");
      return argv[++k];
    };
    try {
      if (a == "--variant")
        variant = value();
      else if (a == "--precision")
        precision = value();
      else if (a == "--init")
        init = value();
      else if (a == "--out")
        out_path = value();
      else if (a == "--steps")
        steps = std::stoll(value());
      else if (a == "--dt")
        dt = std::stod(value());
      else if (a == "--repeats")
        repeats = std::stoi(value());
      else if (a == "--threads")
        threads = std::stoi(value());
      else if (a == "--device")
        value();  // the CPU is the only device
      else
        usage("unknown option " + a);
    } catch (const std::logic_error&) {
      usage(a + ": not a number");
    }
  }
  if (variant == "peak") {
    const double f64 = peak_flops<double>(threads), f32 = peak_flops<float>(threads);
    std::printf("{\"fp64\": %.6g, \"fp32\": %.6g, \"threads\": %d, \"register_bytes\": %d}\n", f64,
                f32, threads, simd_register_bytes());
    return 0;
  }
  if (variant != "odeint" && variant != "simd") usage("--variant: expected odeint, simd or peak");
  if (precision != "fp64" && precision != "fp32") usage("--precision: expected fp64 or fp32");
  if (init.empty() || out_path.empty()) usage("--init and --out are required");
  if (steps < 1 || repeats < 1 || threads < 1 || !(dt > 0))
    usage("steps, repeats, threads, dt > 0");
#if !defined(VIGOR_BENCH_ODEINT)
  if (variant == "odeint") {
    std::fprintf(stderr, "error: built without Boost.Odeint\n");
    return 3;
  }
#endif
  try {
    const vigor::host::ArrayFile t = vigor::host::read_array_file(init);
    if (t.cols != 4) throw std::runtime_error(init + ": expected 4 columns (q0 q1 p0 p1)");
    const std::int64_t n = t.rows;
    std::vector<double> soa(std::size_t(4 * n));
    for (std::int64_t i = 0; i < n; ++i)
      for (int c = 0; c < 4; ++c) soa[std::size_t(c * n + i)] = t.data[std::size_t(4 * i + c)];
    Problem pb;
    pb.workload = Workload::kHenonHeiles;
    pb.params = {1.0, -1.0 / 3.0};
    pb.dt = dt;
    const bool fp32 = precision == "fp32";
    auto run = [&]() -> PeerResult {
#if defined(VIGOR_BENCH_ODEINT)
      if (variant == "odeint") return odeint_henon_heiles(pb, soa, n, steps, fp32, threads);
#endif
      return simd_reference(pb, soa, n, steps, fp32, threads);
    };
    run();  // warm-up: pages, thread pool
    std::vector<double> kernel, e2e;
    PeerResult last;
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      last = run();
      e2e.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      kernel.push_back(last.seconds);
    }
    std::vector<double> rows(std::size_t(4 * n));
    for (std::int64_t i = 0; i < n; ++i)
      for (int c = 0; c < 4; ++c) rows[std::size_t(4 * i + c)] = last.state[std::size_t(c * n + i)];
    write_npy(out_path, n, 4, rows);
    auto list = [](const std::vector<double>& v) {
      std::string s = "[";
      for (std::size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
      return s + "]";
    };
    std::string notes = variant == "simd" ? "lanes " + std::to_string(last.block_lanes)
#if defined(VIGOR_BENCH_ODEINT)
                                          : odeint_version();
#else
                                          : std::string();
#endif
    std::printf(
        "{\"kernel_s\": %s, \"end_to_end_s\": %s, \"device\": \"cpu: %d threads\", "
        "\"notes\": \"%s\"}\n",
        list(kernel).c_str(), list(e2e).c_str(), threads, notes.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 3;
  }
  return 0;
}
