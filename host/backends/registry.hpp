/// @file registry.hpp
/// @brief Run-time view of the compile-time registries (models/models.def,
/// kernels/integrators/integrators.def) and of the models a program registers at run time
/// (host/custom_model.hpp): names, parameters, options, and engine construction.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host/backends/engine.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::host {

struct ModelInfo {
  std::string name;
  std::string description;
  /// "separable" (diagonal mass and a potential), "lagrangian" (general L(q, v)) or "lie_group"
  /// (a state that is not (q, p): the rigid body on SO(3)).
  std::string kind;
  int dof = 0;
  int dim = 0;          ///< state components (2 dof for (q, p) models)
  int constraints = 0;  ///< holonomic constraints g(q) = 0
  bool forced = false;  ///< has a time-dependent external force
  std::vector<kernels::ParamSpec> params;
  std::vector<std::string> state_names;  ///< q0 .. q(n-1), p0 .. p(n-1) unless the model names them
  std::vector<std::string> momentum_names;  ///< the conserved momentum maps it reports
  std::vector<std::string> integrators;     ///< the integrators that handle it
  /// Those whose tangent map (diagnostics.tangent) is compiled for it.
  std::vector<std::string> tangent_integrators;
  /// H(state) in double for the given parameter values (kParams order).
  std::function<double(const double* params, const double* state)> energy;
  /// Diagonal inverse mass M^{-1}_ii (separable models only; empty otherwise).
  std::function<double(const double* params, int i)> inv_mass;
  /// "" when the state lies on the model's manifold (constraints and their velocity form within
  /// kManifoldTolerance, relative), else what is off, with the sizes.
  std::function<std::string(const double* params, const double* state)> check_state;
  /// The CPU engines (always present) and the CUDA engines (empty in a build without CUDA, and
  /// for a registered model given no CUDA factory: host/custom_model_cuda.cuh). A formula
  /// model's compile its plugin on first use (host/job/formula/formula_model.hpp), as do a
  /// built-in model's pairs that a program-only build leaves out (host/backends/first_use.hpp).
  std::function<std::unique_ptr<Engine>(const Integration&, const EngineResources&)>
      make_cpu_engine, make_cuda_engine;
  /// Builds ahead of time what make_cpu_engine (backend kCpu) or make_cuda_engine (kCuda) would
  /// build for an Integration on first use (a plugin: `vigor validate --compile`); nothing to do
  /// for compiled-in engines; empty for models registered by a program.
  std::function<void(const Integration&, BackendKind)> prepare;
  /// true for the models of models/models.def, false for those registered by a program.
  bool builtin = true;
  /// Written as formulas in a job file (host/job/formula/): compiled at run time.
  bool formula = false;

  /// Index of a state name, or -1.
  int state_index(const std::string& s) const;
};

struct IntegratorInfo {
  std::string name;
  std::string description;
  std::string reference;
  int order = 0;
  bool symplectic = false;
  bool is_explicit = true;
  int newton_iterations = 0;   ///< default Newton iteration count (0: explicit)
  std::string requires_model;  ///< which models it handles, in words
  std::vector<kernels::ParamSpec> options;
  /// Whether it may run with integrator.compensated (kernels::integrator_compensable).
  bool compensable = false;
};

/// The built-in models in models/models.def order, then the registered ones in registration
/// order. The first call (or find_model) closes registration, so the list and the pointers into
/// it never change afterwards.
const std::vector<ModelInfo>& model_infos();
const std::vector<IntegratorInfo>& integrator_infos();
const ModelInfo* find_model(const std::string& name);
/// Relative tolerance on initial states of constrained models, whose constraints are written in
/// length units: |g(q)| <= tol max|q_i| and |G(q) v| <= tol max|v_i|; loose enough for states
/// typed with 12 significant digits, tight enough that no run starts visibly off the manifold.
inline constexpr double kManifoldTolerance = 1e-9;
const IntegratorInfo* find_integrator(const std::string& name);

/// Add a model to the registry at run time. Most programs call the
/// template host::register_model<Model, Integrators...>() of host/custom_model.hpp, which fills
/// `info` from the model's class template and compiles its engines. Throws std::invalid_argument
/// (naming the model and what is wrong) when the name is not a job name ([a-z0-9_]+) or is
/// already taken (by a built-in model or an earlier registration), when an integrator name is not
/// one of vigor's integrators or repeats, when there are no integrators, parameter or state names
/// repeat, the state names do not match dim, or the CPU factory is missing; throws std::logic_error
/// once registration is closed (the first model_infos() or find_model() call, e.g. by cli_main).
/// `info.builtin` is set to false. Not thread-safe: register from main, before anything else.
void register_model(ModelInfo info);

/// Add a model defined by the job being read (a formula model, host/job/formula/): allowed after
/// registration has closed, found by find_model (the latest of a name first) but not listed by
/// model_infos(). The caller has checked that the name is not a registered model's. The returned
/// reference stays valid for the life of the program.
const ModelInfo& add_job_model(ModelInfo info);

/// Number of usable CUDA devices (0 in a build without CUDA, without a driver or without a GPU).
int cuda_device_count();
/// Human-readable reason why no CUDA device is usable ("" when one is).
std::string cuda_unavailable_reason();

/// auto -> cuda when a device exists, else cpu; explicit choices are returned unchanged.
BackendKind resolve_backend(BackendKind requested);

/// Build the engine of a validated integration on a resolved backend (cpu or cuda).
/// Throws std::runtime_error when the backend is not available in this build or on this machine.
std::unique_ptr<Engine> make_engine(const Integration& integration,
                                    const EngineResources& resources, BackendKind backend);

}  // namespace vigor::host
