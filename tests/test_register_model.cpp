// Models registered at run time (host/custom_model.hpp): described by the same code as the
// built-in models, validated by the same job parser, run by the same engines — bit for bit — and
// refused with a clear error when the name is taken or registration has closed.
//
// Every test works on the process-wide registry. ctest runs each test in its own process; run
// together (the binary alone), they run in this order, which keeps each one's premise: the
// refusals leave the registry open, the full registration closes it, the last test needs it closed.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/custom_model.hpp"
#include "host/job/job.hpp"
#include "host/run/run.hpp"
#include "models/henon_heiles.hpp"
#include "models/pendulum.hpp"

using namespace vigor;
using namespace vigor::host;

namespace {

/// Hénon–Heiles under another name: a "user" model whose engines must compute exactly what the
/// built-in henon_heiles engines compute.
template <class Real>
struct HenonHeilesCopy : models::HenonHeiles<Real> {
  static constexpr const char* kName = "henon_heiles_copy";
  static HenonHeilesCopy from_params(const double* v) {
    HenonHeilesCopy m;
    static_cast<models::HenonHeiles<Real>&>(m) = models::HenonHeiles<Real>::from_params(v);
    return m;
  }
};

std::unique_ptr<Engine> no_engine(const Integration&, const EngineResources&) { return nullptr; }

/// A complete ModelInfo of the built-in pendulum under `name`, handled by verlet.
ModelInfo pendulum_info(const std::string& name) {
  ModelInfo info = describe_model<models::Pendulum>();
  info.name = name;
  info.integrators = {"verlet"};
  info.make_cpu_engine = &no_engine;
  return info;
}

void expect_refused(ModelInfo info, const std::string& fragment) {
  try {
    register_model(std::move(info));
    ADD_FAILURE() << "registered; expected an error containing: " << fragment;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(RegisterModel, RefusesTakenAndInvalidNames) {
  expect_refused(pendulum_info("pendulum"),
                 "register_model: model \"pendulum\": the name is taken by a built-in model");
  expect_refused(pendulum_info("Pendulum-2"), "must be a non-empty job name");
  expect_refused(pendulum_info(""), "must be a non-empty job name");
  ModelInfo info = pendulum_info("pendulum2");
  info.integrators = {"verlet", "leapfrog"};
  expect_refused(info, "\"leapfrog\" is not one of vigor's integrators");
  info.integrators = {"verlet", "verlet"};
  expect_refused(info, "integrator \"verlet\" is named twice");
  info.integrators = {};
  expect_refused(info, "no integrators");
  info = pendulum_info("pendulum2");
  info.state_names.pop_back();
  expect_refused(info, "1 state names for 2 state components");
  info = pendulum_info("pendulum2");
  info.make_cpu_engine = nullptr;
  expect_refused(info, "CPU engine factory");
  // A second registration of the same name is refused too.
  register_model(pendulum_info("pendulum2"));
  expect_refused(pendulum_info("pendulum2"), "a model of this name is already registered");
}

const char* kJob = R"({
  "model": {"name": "NAME", "params": {"a": 1.0, "b": -0.3333333333333333}},
  "integrator": {"name": "INTEGRATOR", "dt": 0.01},
  "steps": 3000,
  "ensemble": {"section_grid": {"energy": 0.125, "axes": {"q1": [-0.3, 0.4, 5], "p1": [-0.3, 0.3, 4]}}},
  "section": {"coordinate": "q0", "value": 0.0, "direction": "up"},
  "precision": "PRECISION",
  "output": {"dir": "unused"}
})";

std::string job_text(const std::string& model, const std::string& integrator,
                     const std::string& precision = "double") {
  std::string s = kJob;
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"NAME", model},
                                   {"INTEGRATOR", integrator},
                                   {"PRECISION", precision}})
    s.replace(s.find(key), key.size(), value);
  return s;
}

struct Outcome {
  FinalData final;
  HitBlock hits;
};

Outcome run_cpu(const Job& job) {
  std::unique_ptr<Engine> e =
      make_engine(job.integration, engine_resources(RunOptions{}), BackendKind::kCpu);
  e->upload(job.ensemble.state, job.ensemble.count);
  Outcome out;
  do e->launch(job.steps);
  while (e->drain(out.hits) > 0);
  out.final = e->download();
  return out;
}

template <class T, class A>
bool same_bits(const std::vector<T, A>& a, const std::vector<T, A>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

TEST(RegisterModel, RegisteredModelRunsLikeTheBuiltInOne) {
  register_model<HenonHeilesCopy, kernels::StormerVerlet>();
  const ModelInfo* copy = find_model("henon_heiles_copy");
  const ModelInfo* original = find_model("henon_heiles");
  ASSERT_NE(copy, nullptr);
  ASSERT_NE(original, nullptr);
  // Described by the same code: everything but the name, the origin and the integrators agrees.
  EXPECT_FALSE(copy->builtin);
  EXPECT_TRUE(original->builtin);
  EXPECT_EQ(copy->kind, original->kind);
  EXPECT_EQ(copy->dof, original->dof);
  EXPECT_EQ(copy->dim, original->dim);
  EXPECT_EQ(copy->state_names, original->state_names);
  ASSERT_EQ(copy->params.size(), original->params.size());
  for (std::size_t i = 0; i < copy->params.size(); ++i)
    EXPECT_STREQ(copy->params[i].name, original->params[i].name);
  EXPECT_EQ(copy->integrators, std::vector<std::string>{"verlet"});
  EXPECT_EQ(copy->tangent_integrators, std::vector<std::string>{"verlet"});
  EXPECT_NE(copy->make_cpu_engine, nullptr);
  EXPECT_EQ(copy->make_cuda_engine, nullptr);  // nothing compiled by nvcc here
  const double params[2] = {1.0, -1.0 / 3.0};
  const double state[4] = {0.1, -0.2, 0.3, 0.25};
  EXPECT_EQ(copy->energy(params, state), original->energy(params, state));
  // It is the last entry of the registry, after every built-in model.
  EXPECT_EQ(&model_infos().back(), copy);

  // The job parser takes it like any model, and holds it to the integrators it was compiled for.
  for (const std::string precision : {"double", "float"}) {
    SCOPED_TRACE(precision);
    const Job a = parse_job(job_text("henon_heiles", "verlet", precision));
    const Job b = parse_job(job_text("henon_heiles_copy", "verlet", precision));
    ASSERT_EQ(a.ensemble.state, b.ensemble.state);
    const Outcome x = run_cpu(a);
    const Outcome y = run_cpu(b);
    EXPECT_GT(x.hits.trajectory.size(), std::size_t(20));
    EXPECT_TRUE(same_bits(x.final.state, y.final.state));
    EXPECT_TRUE(same_bits(x.final.energy_error, y.final.energy_error));
    EXPECT_EQ(x.final.crossings, y.final.crossings);
    EXPECT_EQ(x.hits.trajectory, y.hits.trajectory);
    EXPECT_TRUE(same_bits(x.hits.values, y.hits.values));
  }
  try {
    (void)parse_job(job_text("henon_heiles_copy", "rk4"));
    ADD_FAILURE() << "rk4 accepted for a model registered with verlet only";
  } catch (const JobError& e) {
    EXPECT_EQ(e.path(), "integrator.name");
    EXPECT_NE(std::string(e.what()).find("model \"henon_heiles_copy\" needs one of: verlet"),
              std::string::npos)
        << e.what();
  }
}

TEST(RegisterModel, RegistrationClosesAtTheFirstLookup) {
  (void)find_model("pendulum");
  try {
    register_model(pendulum_info("pendulum3"));
    ADD_FAILURE() << "registered after the first lookup";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("registration is closed"), std::string::npos) << e.what();
  }
  EXPECT_EQ(find_model("pendulum3"), nullptr);
}

}  // namespace
