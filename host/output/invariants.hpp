/// @file invariants.hpp
/// @brief Phase-space area, the first Poincaré integral invariant and phase volume of a cloud of
/// initial conditions (the "loop" and "parallelepiped" ensembles), sampled along the run.
///
/// A loop ensemble is N points x_j on a closed curve in one plane of phase space; a symplectic map
/// keeps I = sum_i ∮ p_i dq_i of every closed curve, and for one degree of freedom that is minus
/// the enclosed area (SCIENCE.md §2). A parallelepiped ensemble is a point x_0 and its neighbours
/// x_0 + eps_c e_c; det[x_c(t) - x_0(t)] / prod eps_c follows det(dPhi), which is 1 for a
/// symplectic (indeed any volume-preserving) flow, up to the O(eps) secant error of finite edges.
///
/// The quadratures are free functions so that tests can check them on exact curves;
/// write_invariants() applies them to every stroboscopic sample of a finished run.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/job/job.hpp"
#include "host/output/hits.hpp"
#include "host/output/tables.hpp"

namespace vigor::host {

/// ∮ p dq over a closed loop sampled at N equally spaced parameter values theta_j = 2 pi j / N:
/// q' from the discrete Fourier transform (i k Q_k, Nyquist mode dropped), then the trapezoid sum
/// (2 pi / N) sum_j p_j q'_j, evaluated in Fourier space by Parseval. Exact for trigonometric
/// polynomials of degree < N/2 (circles and ellipses from N = 3 on), and exponentially
/// convergent in N for analytic loops. Radix-2 FFT when N is a power of two, else an O(N^2) DFT.
double loop_integral_spectral(std::span<const double> p, std::span<const double> q);

/// ∮ p dq by the trapezoid rule on the chords, sum_j (p_j + p_{j+1}) / 2 (q_{j+1} - q_j): exact
/// for a polygon through the points, second order in the spacing for a smooth loop.
double loop_integral_trapezoid(std::span<const double> p, std::span<const double> q);

/// Signed area 1/2 ∮ (x dy - y dx) enclosed by the loop (counterclockwise positive), by either
/// rule. The trapezoid form is the shoelace formula.
double loop_area(std::span<const double> x, std::span<const double> y, bool spectral);

/// Determinant of the n x n row-major matrix `a` by LU with partial pivoting.
double determinant(std::vector<double> a, int n);

/// The invariants of a finished run of a loop or parallelepiped ensemble, one row per sample time
/// (the columns of invariants.csv), and the "invariants" object of summary.json.
struct InvariantsTable {
  std::vector<Column> columns;
  nlohmann::ordered_json summary;
};

/// The invariants of a finished run of a loop or parallelepiped ensemble, from its initial
/// states (t = 0) and the stroboscopic samples in `hits` (finished, not yet removed). A sample
/// time at which any trajectory of the cloud had already stopped (non-finite, escaped, Newton not
/// converged) is NaN and counted. The samples are evaluated on `threads` threads (0: OpenMP's
/// default). Throws std::runtime_error on I/O errors.
InvariantsTable invariants_table(const Job& job, const HitSpill& hits, int threads = 0);

/// invariants.csv for a finished run of a loop or parallelepiped ensemble, from its initial
/// states (t = 0) and the stroboscopic samples in `hits` (finished, not yet removed). Returns the
/// "invariants" object of summary.json. A sample time at which any trajectory of the cloud had
/// already stopped (non-finite, escaped, Newton not converged) is written as NaN and counted.
/// Throws std::runtime_error on I/O errors.
nlohmann::ordered_json write_invariants(const std::filesystem::path& file, const Job& job,
                                        const HitSpill& hits, int threads = 0);

}  // namespace vigor::host
