/// @file ensemble_spec.hpp
/// @brief A job's "ensemble" block as read and checked (ensemble_spec.cpp), before any state is
/// generated from it (ensemble_generate.cpp). Each kind keeps the key paths that generation may
/// still fail on (memory, an unreadable file, an energy no grid point reaches).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "host/backends/engine.hpp"
#include "host/job/ensemble.hpp"
#include "host/job/json_fields.hpp"

namespace vigor::host {

/// "states": explicit rows, already the states.
struct StatesSpec {
  std::int64_t count = 0;
  std::vector<double> soa;  ///< state[c * count + i]
};

/// "file": a .npy or .csv file of initial states (host/job/array_file.hpp).
struct FileSpec {
  std::string file;
  std::string path;  ///< ensemble.file.path
};

/// "box": a grid from lo to hi with counts[c] points on coordinate c (row-major).
struct BoxSpec {
  std::vector<double> lo, hi;
  std::vector<std::int64_t> counts;
  std::int64_t total = 0;
  std::string path;  ///< ensemble.box.counts
};

/// "random_box": `count` uniform points in [lo, hi) from a counter-based generator.
struct RandomBoxSpec {
  std::vector<double> lo, hi;
  std::int64_t count = 0;
  std::uint64_t seed = 0;
  std::string path;  ///< ensemble.random_box.count
};

/// An axis of a section grid: its points are computed when used, never stored, so that a huge
/// count is refused before anything is allocated.
struct GridAxis {
  int coordinate;
  double lo, hi;
  std::int64_t count;
  double value(std::size_t k) const;
};

/// "section_grid": two axes on the section plane q_c = value, the conjugate momentum p_c solved
/// from H = energy with the sign of the section's direction; the other coordinates fixed.
struct SectionGridSpec {
  double energy = 0.0;
  std::vector<GridAxis> axes;  ///< two
  std::vector<double> base;    ///< every coordinate's value off the axes (q_c = the plane)
  int qc = 0, pc = 0;          ///< the section coordinate and its conjugate momentum
  double sign = 1.0;           ///< +1: q_c increases through the plane, -1: decreases
  std::int64_t total = 0;      ///< grid points, allowed or not
  std::string energy_path, energy_shown, axes_path;
};

/// "loop": a closed curve in a plane of two state coordinates (InvariantSampling::shape).
struct LoopSpec {
  InvariantSampling sampling;
  std::vector<double> center;
  double a = 0.0, b = 0.0;          ///< circle and ellipse: semi-axes along the plane's axes
  std::vector<double> vx, vy, len;  ///< polygon: vertices and edge lengths
  double perimeter = 0.0;
  std::string points_path;
};

/// "parallelepiped": the center and one point along each edge vector.
struct ParallelepipedSpec {
  InvariantSampling sampling;
  std::vector<double> center;
  std::string path;
};

struct EnsembleSpec {
  std::string kind;
  std::variant<StatesSpec, FileSpec, BoxSpec, RandomBoxSpec, SectionGridSpec, LoopSpec,
               ParallelepipedSpec>
      body;
};

/// Read and check the "ensemble" block (JobError naming the key on bad input); `section` (kind 0:
/// none) is the job's, on whose plane a section grid lies.
EnsembleSpec read_ensemble_spec(const Json& spec, const ModelInfo& model,
                                const SectionConfig& section);

/// The states of a spec (JobError naming its key where generation fails: memory, a file, an
/// energy no point reaches).
Ensemble generate_ensemble(const EnsembleSpec& spec, const ModelInfo& model,
                           const std::vector<double>& params);

/// The SoA state array of `count` trajectories of `dim` components, failing on `path` rather than
/// aborting when it does not fit in memory (ensemble_generate.cpp).
std::vector<double> allocate_states(std::int64_t count, int dim, const std::string& path);

namespace ensemble_limits {
/// Most trajectories one job may hold: below 2^31 - 1 (engines index trajectories with int in
/// places) and 32 GB of initial states for a 2-dof model. Larger models are further limited by
/// the memory check of allocate_states(). The fuzz build (fuzz/CMakeLists.txt) lowers it so that
/// every input is parsed in milliseconds.
#if defined(VIGOR_FUZZ_MAX_TRAJECTORIES)
inline constexpr std::int64_t kMaxTrajectories = VIGOR_FUZZ_MAX_TRAJECTORIES;
#else
inline constexpr std::int64_t kMaxTrajectories = 1'000'000'000;
#endif
}  // namespace ensemble_limits

}  // namespace vigor::host
