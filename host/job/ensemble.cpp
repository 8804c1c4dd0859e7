/// @file ensemble.cpp
/// @brief make_ensemble (the ensemble block read, then generated: ensemble_spec.cpp,
/// ensemble_generate.cpp) and the check of the initial states every job's rows must pass.
#include "host/job/ensemble.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "host/backends/registry.hpp"
#include "host/job/ensemble_spec.hpp"
#include "host/job/json_fields.hpp"

namespace vigor::host {

namespace {

using namespace json;

/// Where trajectory i of the ensemble came from, for messages: the row of "states" (path
/// ensemble.states[i]), or the trajectory index of a generated ensemble (path ensemble.<kind>).
struct RowPlace {
  std::string path;
  std::string where;
};

RowPlace row_place(const Ensemble& e, std::int64_t i) {
  const std::string kind_path = join("ensemble", e.kind);
  if (e.kind == "states") return {at(kind_path, std::size_t(i)), "at this state"};
  return {kind_path, "at trajectory " + std::to_string(i)};
}

/// "(q0 = 0, q1 = 1.5, …)" for trajectory i.
std::string state_text(const Ensemble& e, const ModelInfo& model, std::int64_t i) {
  std::string s;
  for (int c = 0; c < model.dim; ++c)
    s += (c ? ", " : "(") + model.state_names[c] + " = " +
         format_number(e.state[std::size_t(c) * e.count + i]);
  return s + ")";
}

std::string energy_text(double x) { return std::isnan(x) ? "nan" : format_number(x); }

}  // namespace

void check_initial_states(const Ensemble& e, const ModelInfo& model,
                          const std::vector<double>& params, bool float_range) {
  const std::int64_t n = e.count;
  const int dim = model.dim;
  const double* state = e.state.data();
  const double* p = params.data();
  const double float_max = double(std::numeric_limits<float>::max());
  auto bad = [&](std::int64_t i, double* row) {
    for (int c = 0; c < dim; ++c) {
      row[c] = state[std::size_t(c) * n + i];
      if (float_range && !std::isfinite(float(row[c]))) return true;
    }
    const double energy = model.energy(p, row);
    if (!std::isfinite(energy) || (float_range && !(std::fabs(energy) <= float_max))) return true;
    // Off the constraint manifold (checked once, in double, when the ensemble is made).
    return !float_range && !model.check_state(p, row).empty();
  };
  // One pass, in parallel; the first bad row (smallest index) is the one reported.
  std::int64_t first = n;
#pragma omp parallel
  {
    std::vector<double> row(std::size_t(dim), 0.0);
#pragma omp for schedule(static) reduction(min : first)
    for (std::int64_t i = 0; i < n; ++i)
      if (i < first && bad(i, row.data())) first = i;
  }
  if (first == n) return;

  const RowPlace place = row_place(e, first);
  std::vector<double> row(std::size_t(dim), 0.0);
  for (int c = 0; c < dim; ++c) {
    row[c] = state[std::size_t(c) * n + first];
    if (float_range && !std::isfinite(float(row[c])))
      fail(place.path, model.state_names[c] + " = " + format_number(row[c]) + " " + place.where +
                           " is beyond the range of a float (3.4e38) in this float-precision run");
  }
  const double energy = model.energy(p, row.data());
  const std::string shown = state_text(e, model, first);
  if (!float_range && std::isfinite(energy)) {
    const std::string off = model.check_state(p, row.data());
    if (!off.empty()) fail(place.path, place.where + " " + shown + ": " + off);
  }
  if (!std::isfinite(energy))
    fail(place.path, "energy is " + energy_text(energy) + " " + place.where + " " + shown);
  fail(place.path, "energy is " + format_number(energy) + " " + place.where + " " + shown +
                       ", beyond the range of a float (3.4e38) in this float-precision run");
}

Ensemble make_ensemble(const nlohmann::ordered_json& spec, const ModelInfo& model,
                       const std::vector<double>& params, const SectionConfig& section) {
  const EnsembleSpec read = read_ensemble_spec(spec, model, section);
  Ensemble e = generate_ensemble(read, model, params);
  // A row the model cannot even evaluate (a Kepler body at the origin, a momentum whose kinetic
  // energy overflows) is bad input, not a run-time status. section_grid rows lie on H = E.
  if (e.kind != "section_grid") check_initial_states(e, model, params, false);
  return e;
}

}  // namespace vigor::host
