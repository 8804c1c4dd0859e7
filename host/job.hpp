/// @file job.hpp
/// @brief A job file, parsed and fully validated (DESIGN.md §4), ready for the run loop.
///
/// parse_job() either returns a Job whose every field is valid, or throws JobError naming the
/// offending key path and value (`integrator.dt: must be > 0, got -0.1`). Nothing is computed.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/engine.hpp"

namespace vigor::host {

/// Bad input: the message starts with the key path ("integrator.dt: must be > 0, got -0.1").
class JobError : public std::runtime_error {
 public:
  JobError(const std::string& path, const std::string& what)
      : std::runtime_error(path + ": " + what), path_(path) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// What a cloud ensemble (loop, parallelepiped) measures; the run samples it with a stroboscopic
/// section every `every` steps and host/invariants.cpp turns the samples into invariants.csv.
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

/// Command-line settings that override the job file.
struct Overrides {
  std::string out;        ///< --out
  std::string backend;    ///< --backend
  std::string precision;  ///< --precision
};

struct Job {
  nlohmann::ordered_json source;  ///< the job as given (echoed into summary.json)
  Overrides overrides;            ///< the command-line settings it was parsed with

  std::string model;
  std::vector<double> params;  ///< every parameter, in the model's kParams order, defaults filled

  std::string integrator;
  double dt = 0.0;
  std::vector<double> options;  ///< every option, in the integrator's kOptions order
  int newton_iterations = 0;    ///< 0: the integrator's default (explicit integrators ignore it)

  std::int64_t steps = 0;
  std::int64_t segment_steps = 0;  ///< steps per segment (host drains sections between segments)

  Ensemble ensemble;

  bool has_section = false;
  SectionConfig section;          ///< kind 0 when there is no section
  double escape_radius = 0.0;     ///< <= 0: none
  double newton_tolerance = 0.0;  ///< <= 0: none (residuals are reported, never acted on)
  bool tangent = false;           ///< diagnostics.tangent: carry tangent maps (kernels/tangent.hpp)
  /// diagnostics.conservation_every: |H - H0| and the momentum maps after every K-th step
  std::int64_t conservation_every = 1;

  BackendKind backend = BackendKind::kAuto;
  Precision precision = Precision::kDouble;
  std::string output_dir;
  bool hdf5 = false;  ///< output.hdf5: also write results.h5
  bool csv = true;    ///< output.csv: write sections.csv and final.csv (false needs hdf5)
};

/// Parse and validate JSON text. Throws JobError on any bad input.
Job parse_job(const std::string& text, const Overrides& overrides = {});
/// Read the file and parse it; a missing or unreadable file is a JobError on "job".
Job load_job(const std::string& path, const Overrides& overrides = {});

/// Generate the ensemble described by the job's "ensemble" block (called by parse_job).
struct ModelInfo;

Ensemble make_ensemble(const nlohmann::ordered_json& spec, const ModelInfo& model,
                       const std::vector<double>& params, const SectionConfig& section,
                       bool has_section);

}  // namespace vigor::host
