#include "host/backends/registry.hpp"

#include <algorithm>
#include <atomic>
#include <deque>
#include <stdexcept>

#include "host/backends/first_use.hpp"
#include "host/backends/model_info.hpp"
#include "vigor/all_integrators.hpp"
#include "vigor/all_models.hpp"

namespace vigor::host {

#define VIGOR_MODEL(name, Type, header) \
  std::unique_ptr<Engine> make_cpu_engine_##name(const Integration&, const EngineResources&);
#include "models/models.def"
#undef VIGOR_MODEL

#if defined(VIGOR_HAVE_CUDA)
#define VIGOR_MODEL(name, Type, header) \
  std::unique_ptr<Engine> make_cuda_engine_##name(const Integration&, const EngineResources&);
#include "models/models.def"
#undef VIGOR_MODEL
int cuda_runtime_device_count(std::string* why);  // host/backends/cuda_runtime.cu
#endif

namespace {

constexpr bool same_text(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

/// A built-in model: describe_model plus every integrator of integrators.def that handles it.
template <template <class> class ModelT>
ModelInfo describe_builtin_model() {
  ModelInfo info = describe_model<ModelT>();
#define VIGOR_INTEGRATOR(name, Type, header)                                     \
  static_assert(same_text(kernels::Type<double>::kName, #name),                  \
                "integrators.def: the job name must be the integrator's kName"); \
  add_integrator<ModelT, kernels::Type>(info);
#include "kernels/integrators/integrators.def"
#undef VIGOR_INTEGRATOR
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
  info.newton_iterations = kernels::default_newton_iterations<I>;
  info.requires_model = kernels::integrator_requires<I>;
  info.options.assign(I::kOptions.begin(), I::kOptions.end());
  info.compensable = kernels::integrator_compensable<I>;
  return info;
}

}  // namespace

int ModelInfo::state_index(const std::string& s) const {
  for (std::size_t i = 0; i < state_names.size(); ++i)
    if (state_names[i] == s) return int(i);
  return -1;
}

namespace {

/// A built-in model's engine factory: the compiled-in engines, and the pairs this build compiles
/// on first use (host/backends/first_use.hpp) through a plugin.
template <EngineFactory kCompiledIn, BackendKind kBackend>
std::unique_ptr<Engine> with_first_use(const Integration& s, const EngineResources& r) {
  if (compiled_on_first_use(s)) return make_first_use_engine(s, r, kBackend);
  return kCompiledIn(s, r);
}

/// `vigor validate --compile`: a first-use pair's plugin into the cache now.
void prepare_first_use(const Integration& s, BackendKind backend) {
  if (compiled_on_first_use(s)) load_plugin(builtin_engine_source(s, backend));
}

/// The model list and whether it is still open for registration (see register_model).
struct ModelRegistry {
  std::vector<ModelInfo> models;
  std::atomic<bool> closed{false};
};

ModelRegistry& model_registry() {
  static ModelRegistry r;
  static const bool filled = [] {
#define VIGOR_MODEL(name, Type, header)                                                \
  {                                                                                    \
    static_assert(same_text(models::Type<double>::kName, #name),                       \
                  "models.def: the job name must be the model's kName");               \
    ModelInfo info = describe_builtin_model<models::Type>();                           \
    info.make_cpu_engine = with_first_use<&make_cpu_engine_##name, BackendKind::kCpu>; \
    VIGOR_CUDA_FACTORY(name)                                                           \
    info.prepare = &prepare_first_use;                                                 \
    r.models.push_back(std::move(info));                                               \
  }
#if defined(VIGOR_HAVE_CUDA)
#define VIGOR_CUDA_FACTORY(name) \
  info.make_cuda_engine = with_first_use<&make_cuda_engine_##name, BackendKind::kCuda>;
#else
#define VIGOR_CUDA_FACTORY(name)
#endif
#include "models/models.def"
#undef VIGOR_CUDA_FACTORY
#undef VIGOR_MODEL
    return true;
  }();
  (void)filled;
  return r;
}

bool job_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

template <class Names>
std::string first_repeat(const Names& names) {
  for (std::size_t i = 0; i < names.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (std::string(names[i]) == std::string(names[j])) return std::string(names[i]);
  return {};
}

}  // namespace

const std::vector<ModelInfo>& model_infos() {
  ModelRegistry& r = model_registry();
  r.closed = true;
  return r.models;
}

void register_model(ModelInfo info) {
  ModelRegistry& r = model_registry();
  const std::string what = "register_model: model \"" + info.name + "\": ";
  auto bad = [&](const std::string& why) { throw std::invalid_argument(what + why); };
  if (r.closed)
    throw std::logic_error(what +
                           "registration is closed: register every model before the first "
                           "model_infos(), find_model() or cli_main() call");
  if (!job_name(info.name))
    bad("the name (its kName) must be a non-empty job name of lower-case letters, digits and "
        "underscores");
  for (const ModelInfo& m : r.models)
    if (m.name == info.name)
      bad(m.builtin ? "the name is taken by a built-in model (vigor list); give the model "
                      "another kName"
                    : "a model of this name is already registered");
  if (info.integrators.empty()) bad("no integrators: name at least one that handles the model");
  for (const std::string& i : info.integrators)
    if (!find_integrator(i)) bad("\"" + i + "\" is not one of vigor's integrators (vigor list)");
  if (const std::string d = first_repeat(info.integrators); !d.empty())
    bad("integrator \"" + d + "\" is named twice");
  for (const std::string& i : info.tangent_integrators)
    if (std::find(info.integrators.begin(), info.integrators.end(), i) == info.integrators.end())
      bad("tangent integrator \"" + i + "\" is not among its integrators");
  std::vector<std::string> params;
  for (const auto& p : info.params) params.emplace_back(p.name);
  if (const std::string d = first_repeat(params); !d.empty())
    bad("parameter \"" + d + "\" is declared twice in kParams");
  if (info.dim < 1 || int(info.state_names.size()) != info.dim)
    bad("it has " + std::to_string(info.state_names.size()) + " state names for " +
        std::to_string(info.dim) + " state components");
  if (const std::string d = first_repeat(info.state_names); !d.empty())
    bad("state name \"" + d + "\" is used twice");
  if (!info.energy || !info.check_state || !info.make_cpu_engine)
    bad("the energy, the state check and the CPU engine factory are required");
  info.builtin = false;
  r.models.push_back(std::move(info));
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

namespace {

/// The models jobs defined (formula models), oldest first; a deque, so references stay valid.
std::deque<ModelInfo>& job_models() {
  static std::deque<ModelInfo> models;
  return models;
}

}  // namespace

const ModelInfo& add_job_model(ModelInfo info) {
  info.builtin = false;
  return job_models().emplace_back(std::move(info));
}

const ModelInfo* find_model(const std::string& name) {
  for (const auto& m : model_infos())
    if (m.name == name) return &m;
  const auto& jm = job_models();
  for (auto it = jm.rbegin(); it != jm.rend(); ++it)
    if (it->name == name) return &*it;
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

std::unique_ptr<Engine> make_engine(const Integration& s, const EngineResources& r,
                                    BackendKind backend) {
  const ModelInfo* model = find_model(s.model);
  if (!model) throw std::runtime_error("no engine for unknown model '" + s.model + "'");
  std::unique_ptr<Engine> e;
  if (backend == BackendKind::kCuda) {
    if (cuda_device_count() == 0)
      throw std::runtime_error("backend cuda: no usable CUDA device: " + cuda_unavailable_reason());
    if (!model->make_cuda_engine)
      throw std::runtime_error("backend cuda: model '" + s.model +
                               "' has no CUDA engine in this program (it was registered "
                               "without one); use backend cpu");
    e = model->make_cuda_engine(s, r);
  } else {
    e = model->make_cpu_engine(s, r);
  }
  if (!e)
    throw std::runtime_error("no engine for model '" + s.model + "' and integrator '" +
                             s.integrator + "'");
  return e;
}

}  // namespace vigor::host
