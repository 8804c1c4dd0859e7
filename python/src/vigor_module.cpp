/// @file vigor_module.cpp
/// @brief vigor._vigor: the Python package's native module (nanobind), a thin layer over the host
/// library the command line uses — the same job parser, engines, segment loop and tables. It
/// turns a job into columns (NumPy arrays that own the engine's vectors, no per-row objects)
/// and C++ errors into the package's JobError and RunError; python/vigor/ is the public API.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "host/backends/registry.hpp"
#include "host/job/job.hpp"
#include "host/output/result_tables.hpp"
#include "host/output/tables.hpp"
#include "host/run/run.hpp"
#include "vigor/version.hpp"

namespace nb = nanobind;
namespace vh = vigor::host;

namespace {

/// The package's exception classes (vigor.JobError, vigor.RunError), handed over at import and
/// kept for the life of the interpreter (a reference is held, never released at exit).
nb::handle g_job_error, g_run_error;

/// A 1-D NumPy array that owns `v` (moved, not copied).
template <class T>
nb::object owning_array(std::vector<T>&& v) {
  auto* owned = new std::vector<T>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  const std::size_t shape[1] = {owned->size()};
  return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->data(), 1, shape, owner));
}

/// A table as a list of (name, array, kind) with kind "real", "integer" or "status" (kernel
/// status codes, which the package names). Real values of the run's precision become float32 in
/// an FP32 run, as the CSV prints them.
nb::list table(std::vector<vh::Column>&& columns, bool float_precision) {
  nb::list out;
  for (vh::Column& c : columns) {
    nb::object array;
    const char* kind = "real";
    if (c.kind != vh::Column::Kind::kReal) {
      kind = c.kind == vh::Column::Kind::kStatus ? "status" : "integer";
      array = owning_array(std::move(c.integer));
    } else if (float_precision && c.run_precision) {
      array = owning_array(std::vector<float>(c.real.begin(), c.real.end()));
    } else {
      array = owning_array(std::move(c.real));
    }
    out.append(nb::make_tuple(c.name, array, kind));
  }
  return out;
}

/// nlohmann JSON to Python objects through the json module (small documents only: summaries
/// and registry descriptions).
nb::object to_python(const nlohmann::ordered_json& j) {
  return nb::module_::import_("json").attr("loads")(j.dump());
}

template <class T>
using StatesArray = nb::ndarray<const T, nb::ndim<2>, nb::device::cpu>;

/// The rows of `states` (float64 or float32, any strides) in the engine's SoA layout,
/// state[c * n + i]: the one copy a run makes of them.
template <class T>
std::shared_ptr<vh::Ensemble> ensemble_of(const StatesArray<T>& states) {
  auto e = std::make_shared<vh::Ensemble>();
  const std::size_t n = states.shape(0), dim = states.shape(1);
  e->kind = "states";
  e->count = std::int64_t(n);
  e->state.resize(n * dim);
  const T* data = states.data();
  const std::int64_t s0 = states.stride(0), s1 = states.stride(1);
  for (std::size_t c = 0; c < dim; ++c)
    for (std::size_t i = 0; i < n; ++i)
      e->state[c * n + i] = double(data[std::int64_t(i) * s0 + std::int64_t(c) * s1]);
  return e;
}

std::shared_ptr<vh::Ensemble> ensemble_of(nb::handle states) {
  StatesArray<float> f32;
  if (nb::try_cast(states, f32, false)) return ensemble_of(f32);
  return ensemble_of(nb::cast<StatesArray<double>>(states, false));
}

vh::Job parse(const std::string& job, bool is_path, const vh::Overrides& overrides) {
  return is_path ? vh::load_job(job, overrides) : vh::parse_job(job, overrides);
}

/// run(job, is_path, states | None, backend, precision, threads, out, force, on_segment | None)
/// -> {"sections": table, "final": table, …, "summary": dict}
nb::dict run(const std::string& job_text, bool is_path, nb::object states,
             const std::string& backend, const std::string& precision, int threads,
             const std::string& out, bool force, nb::object on_segment) {
  vh::Overrides overrides;
  overrides.backend = backend;
  overrides.precision = precision;
  overrides.out = out;
  if (!states.is_none()) overrides.ensemble = ensemble_of(states);
  const vh::Job job = parse(job_text, is_path, overrides);

  vh::RunOptions options;
  options.threads = threads;
  options.quiet = true;           // the package shows its own progress through on_segment
  options.checkpoint_every = -1;  // no periodic checkpoints: a Python run is not resumed
  if (!on_segment.is_none())
    // A handle, not an object: the options may be copied while the GIL is released, and the
    // caller's reference keeps the callable alive for the whole call.
    options.on_segment = [callback = nb::handle(on_segment)](const vh::ProgressState& s) {
      nb::gil_scoped_acquire gil;
      // The command line's bar too, for a caller without a progress library of its own.
      callback(s.steps_done, s.steps_total, s.crossings, s.elapsed, vh::progress_bar(s));
      // Ctrl-C while the GIL was released only set a flag: raise KeyboardInterrupt here.
      if (PyErr_CheckSignals() != 0) throw nb::python_error();
    };

  vh::ResultTables tables;
  {
    nb::gil_scoped_release release;
    if (out.empty()) {
      tables = vh::run_to_tables(job, options);
    } else {
      vh::run_job(job, options, force, &tables);
    }
  }
  nb::dict result;
  const bool fp32 = tables.float_precision;
  result["sections"] = table(std::move(tables.sections), fp32);
  result["final"] = table(std::move(tables.final), fp32);
  result["energy_series"] = table(std::move(tables.energy_series), fp32);
  result["tangent_series"] = table(std::move(tables.tangent_series), fp32);
  result["invariants"] = table(std::move(tables.invariants), fp32);
  result["summary"] = to_python(tables.summary);
  return result;
}

/// What the job would run, without running it: the parsed settings a notebook wants to see.
nb::object validate(const std::string& job_text, bool is_path, const std::string& backend,
                    const std::string& precision) {
  vh::Overrides overrides;
  overrides.backend = backend;
  overrides.precision = precision;
  const vh::Job job = parse(job_text, is_path, overrides);
  nlohmann::ordered_json j;
  j["model"] = job.integration.model;
  j["integrator"] = job.integration.integrator;
  j["dt"] = job.integration.dt;
  j["steps"] = job.steps;
  j["segment_steps"] = job.segment_steps;
  j["trajectories"] = job.ensemble.count;
  j["ensemble"] = job.ensemble.kind;
  j["section"] = job.has_section();
  j["precision"] = job.integration.precision == vh::Precision::kFloat ? "float" : "double";
  j["output_dir"] = job.output_dir;
  return to_python(j);
}

nlohmann::ordered_json params_json(const std::vector<vigor::kernels::ParamSpec>& ps) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& p : ps)
    out.push_back({{"name", p.name}, {"default", p.default_value}, {"description", p.description}});
  return out;
}

nb::object models() {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const vh::ModelInfo& m : vh::model_infos())
    out.push_back({{"name", m.name},
                   {"description", m.description},
                   {"kind", m.kind},
                   {"dof", m.dof},
                   {"dim", m.dim},
                   {"constraints", m.constraints},
                   {"forced", m.forced},
                   {"state_names", m.state_names},
                   {"momentum_names", m.momentum_names},
                   {"params", params_json(m.params)},
                   {"integrators", m.integrators},
                   {"tangent_integrators", m.tangent_integrators}});
  return to_python(out);
}

nb::object integrators() {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const vh::IntegratorInfo& i : vh::integrator_infos())
    out.push_back({{"name", i.name},
                   {"description", i.description},
                   {"reference", i.reference},
                   {"order", i.order},
                   {"symplectic", i.symplectic},
                   {"explicit", i.is_explicit},
                   {"newton_iterations", i.newton_iterations},
                   {"compensable", i.compensable},
                   {"handles", i.requires_model},
                   {"options", params_json(i.options)}});
  return to_python(out);
}

nb::object backends() {
  nb::dict d;
  d["cpu"] = true;
  d["cuda"] = vh::cuda_device_count() > 0;
  if (vh::cuda_device_count() == 0) d["cuda_unavailable"] = vh::cuda_unavailable_reason();
  return d;
}

/// C++ errors as the package's: JobError(message, key) for bad input, RunError for a failure
/// of the run; a Python error raised in a callback (KeyboardInterrupt) passes through.
void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const vh::JobError& e) {
    PyErr_SetObject(g_job_error.ptr(), nb::make_tuple(e.what(), e.path()).ptr());
  } catch (const std::exception& e) {
    PyErr_SetString(g_run_error.ptr(), e.what());
  }
}

}  // namespace

NB_MODULE(_vigor, m) {
  m.doc() = "vigor's native module; use the vigor package.";
  m.attr("__version__") = vigor::kVersion;
  m.def("_set_errors", [](nb::handle job_error, nb::handle run_error) {
    // Once per process (a reloaded package keeps the first classes it was given).
    if (g_job_error) return;
    g_job_error = job_error.inc_ref();
    g_run_error = run_error.inc_ref();
    nb::register_exception_translator(translate);
  });
  m.def("run", &run, nb::arg("job"), nb::arg("is_path"), nb::arg("states").none(),
        nb::arg("backend"), nb::arg("precision"), nb::arg("threads"), nb::arg("out"),
        nb::arg("force"), nb::arg("on_segment").none());
  m.def("validate", &validate);
  m.def("models", &models);
  m.def("integrators", &integrators);
  m.def("backends", &backends);
  m.def("status_name", [](int code) { return std::string(vh::status_name(code)); });
}
