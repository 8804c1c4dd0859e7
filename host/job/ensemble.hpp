/// @file ensemble.hpp
/// @brief The initial conditions of a job (its "ensemble" block, DESIGN.md §4): read from the job
/// into an EnsembleSpec (ensemble_spec.cpp), then generated on the host (ensemble_generate.cpp),
/// identical for every backend and thread count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/backends/engine.hpp"

namespace vigor::host {

struct ModelInfo;

/// What a cloud ensemble (loop, parallelepiped) measures; the run samples it with a stroboscopic
/// section every `every` steps and host/output/invariants.cpp turns the samples into
/// invariants.csv.
struct InvariantSampling {
  std::string kind;          ///< "" (none) | loop | parallelepiped
  int plane[2] = {0, 1};     ///< loop: the two state coordinates of the plane (x, y)
  std::string shape;         ///< loop: circle | ellipse | polygon
  std::int64_t points = 0;   ///< loop: points on the loop (trajectory j is point j, in order)
  std::int64_t every = 1;    ///< steps between samples
  std::vector<double> edge;  ///< parallelepiped: eps_c per state coordinate
};

/// The initial conditions, generated on the host (identical for every backend and thread count).
struct Ensemble {
  std::string kind;  ///< states | file | box | random_box | section_grid | loop | parallelepiped
  std::int64_t count = 0;      ///< trajectories
  std::int64_t skipped = 0;    ///< section_grid points outside the energetically allowed region
  std::vector<double> state;   ///< SoA: state[c * count + i]
  InvariantSampling sampling;  ///< loop and parallelepiped only
};

/// Read and generate the ensemble a job's "ensemble" block describes (JobError on bad input);
/// `section` (kind 0: none) is the job's, which a section grid lies on.
Ensemble make_ensemble(const nlohmann::ordered_json& spec, const ModelInfo& model,
                       const std::vector<double>& params, const SectionConfig& section);

/// Fails on the first trajectory (smallest index) whose energy, in double, is not finite; with
/// `float_range`, also on one whose state components or energy lie beyond the range of a float.
/// The path is ensemble.states[i] for explicit rows, else ensemble.<kind> and the trajectory
/// index. One parallel O(n) pass.
void check_initial_states(const Ensemble& e, const ModelInfo& model,
                          const std::vector<double>& params, bool float_range);

}  // namespace vigor::host
