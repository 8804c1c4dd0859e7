#include "host/registry.hpp"

#include <stdexcept>

#include "kernels/core/hamiltonian.hpp"
#include "vigor/all_integrators.hpp"
#include "vigor/all_models.hpp"

namespace vigor::host {

#define VIGOR_MODEL(name, Type, header) \
  std::unique_ptr<Engine> make_cpu_engine_##name(const EngineRequest&);
#include "models/models.def"
#undef VIGOR_MODEL

#if defined(VIGOR_HAVE_CUDA)
#define VIGOR_MODEL(name, Type, header) \
  std::unique_ptr<Engine> make_cuda_engine_##name(const EngineRequest&);
#include "models/models.def"
#undef VIGOR_MODEL
int cuda_runtime_device_count(std::string* why);  // host/backends/cuda_runtime.cu
#endif

namespace {

template <template <class> class ModelT>
ModelInfo describe_model() {
  using M = ModelT<double>;
  ModelInfo info;
  info.name = M::kName;
  info.description = M::kDescription;
  info.dof = M::dof;
  info.dim = 2 * M::dof;
  info.params.assign(M::kParams.begin(), M::kParams.end());
  // Appending (not "q" + to_string) sidesteps a GCC 12 false -Wrestrict warning.
  for (const char* prefix : {"q", "p"}) {
    for (int i = 0; i < M::dof; ++i) {
      std::string name(prefix);
      name.append(std::to_string(i));
      info.state_names.push_back(name);
    }
  }
  info.energy = [](const double* params, const double* state) {
    const M m = M::from_params(params);
    kernels::Vec<double, M::dof> q, p;
    for (int i = 0; i < M::dof; ++i) {
      q[i] = state[i];
      p[i] = state[M::dof + i];
    }
    return kernels::energy(m, q, p);
  };
  info.inv_mass = [](const double* params, int i) { return M::from_params(params).inv_mass(i); };
  return info;
}

template <template <class> class IntegratorT>
IntegratorInfo describe_integrator() {
  using I = IntegratorT<double>;
  IntegratorInfo info;
  info.name = I::kName;
  info.description = I::kDescription;
  info.reference = I::kReference;
  info.order = I::kOrder;
  info.symplectic = I::kSymplectic;
  info.is_explicit = I::kExplicit;
  info.options.assign(I::kOptions.begin(), I::kOptions.end());
  return info;
}

}  // namespace

int ModelInfo::state_index(const std::string& s) const {
  for (std::size_t i = 0; i < state_names.size(); ++i)
    if (state_names[i] == s) return int(i);
  return -1;
}

const std::vector<ModelInfo>& model_infos() {
  static const std::vector<ModelInfo> infos = [] {
    std::vector<ModelInfo> v;
#define VIGOR_MODEL(name, Type, header) v.push_back(describe_model<models::Type>());
#include "models/models.def"
#undef VIGOR_MODEL
    return v;
  }();
  return infos;
}

const std::vector<IntegratorInfo>& integrator_infos() {
  static const std::vector<IntegratorInfo> infos = [] {
    std::vector<IntegratorInfo> v;
#define VIGOR_INTEGRATOR(name, Type, header) v.push_back(describe_integrator<kernels::Type>());
#include "kernels/integrators/integrators.def"
#undef VIGOR_INTEGRATOR
    return v;
  }();
  return infos;
}

const ModelInfo* find_model(const std::string& name) {
  for (const auto& m : model_infos())
    if (m.name == name) return &m;
  return nullptr;
}

const IntegratorInfo* find_integrator(const std::string& name) {
  for (const auto& i : integrator_infos())
    if (i.name == name) return &i;
  return nullptr;
}

int cuda_device_count() {
#if defined(VIGOR_HAVE_CUDA)
  std::string why;
  return cuda_runtime_device_count(&why);
#else
  return 0;
#endif
}

std::string cuda_unavailable_reason() {
#if defined(VIGOR_HAVE_CUDA)
  std::string why;
  return cuda_runtime_device_count(&why) > 0 ? std::string() : why;
#else
  return "this build of vigor has no CUDA backend (no CUDA compiler was found at configure time)";
#endif
}

BackendKind resolve_backend(BackendKind requested) {
  if (requested != BackendKind::kAuto) return requested;
  return cuda_device_count() > 0 ? BackendKind::kCuda : BackendKind::kCpu;
}

std::unique_ptr<Engine> make_engine(const EngineRequest& r, BackendKind backend) {
  std::unique_ptr<Engine> e;
  if (backend == BackendKind::kCuda) {
    if (cuda_device_count() == 0)
      throw std::runtime_error("backend cuda: no usable CUDA device: " + cuda_unavailable_reason());
#if defined(VIGOR_HAVE_CUDA)
#define VIGOR_MODEL(name, Type, header) \
  if (r.model == #name) e = make_cuda_engine_##name(r);
#include "models/models.def"
#undef VIGOR_MODEL
#endif
  } else {
#define VIGOR_MODEL(name, Type, header) \
  if (r.model == #name) e = make_cpu_engine_##name(r);
#include "models/models.def"
#undef VIGOR_MODEL
  }
  if (!e)
    throw std::runtime_error("no engine for model '" + r.model + "' and integrator '" +
                             r.integrator + "'");
  return e;
}

}  // namespace vigor::host
