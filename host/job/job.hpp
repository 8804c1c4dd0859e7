/// @file job.hpp
/// @brief A job file, parsed and fully validated (DESIGN.md §4), ready for the run loop.
///
/// parse_job() either returns a Job whose every field is valid, or throws JobError naming the
/// offending key path and value (`integrator.dt: must be > 0, got -0.1`). Nothing is computed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/backends/engine.hpp"
#include "host/errors.hpp"
#include "host/job/ensemble.hpp"

namespace vigor::host {

/// Command-line settings that override the job file.
struct Overrides {
  std::string out;        ///< --out
  std::string backend;    ///< --backend
  std::string precision;  ///< --precision
  /// Initial states given by a program (the Python package's `states=`), kind "states", SoA:
  /// they replace the job's "ensemble", which may then be absent. Checked as explicit rows are.
  /// The job takes the states over (the pointee is left empty): a 10^6-row array is not copied
  /// twice on its way to the engine.
  std::shared_ptr<Ensemble> ensemble = nullptr;
};

struct Job {
  nlohmann::ordered_json source;  ///< the job as given (echoed into summary.json)
  Overrides overrides;            ///< the command-line settings it was parsed with

  /// What is integrated and how (model, integrator, step, section, stops, diagnostics,
  /// precision): handed to the engines unchanged.
  Integration integration;

  std::int64_t steps = 0;
  std::int64_t segment_steps = 0;  ///< steps per segment (host drains sections between segments)

  Ensemble ensemble;

  BackendKind backend = BackendKind::kAuto;
  std::string output_dir;
  bool hdf5 = false;  ///< output.hdf5: also write results.h5
  bool csv = true;    ///< output.csv: write sections.csv and final.csv (false needs hdf5)

  bool has_section() const { return integration.section.kind != 0; }
};

/// Parse and validate JSON text. Throws JobError on any bad input.
Job parse_job(const std::string& text, const Overrides& overrides = {});
/// Read the file and parse it; a missing or unreadable file is a JobError on "job".
Job load_job(const std::string& path, const Overrides& overrides = {});

}  // namespace vigor::host
