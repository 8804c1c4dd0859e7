// An engine that fails mid-run — on a GPU a CUDA error, out of memory included (the CUDA engine
// turns every error into a std::runtime_error naming it) — ends the run with exit 3, a message
// naming the error, and the last checkpoint intact: `--resume` then finishes the run with the
// results of an uninterrupted one. The failing engine here is a CPU engine that throws where a
// device would fail (at its Nth launch, or when its arrays are allocated), so the host path every
// backend shares is tested without a GPU.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/cli/cli.hpp"
#include "host/custom_model.hpp"
#include "host/job/job.hpp"
#include "host/run/run.hpp"
#include "models/harmonic_oscillator.hpp"
#include "tests/scratch_dir.hpp"

namespace fs = std::filesystem;
using namespace vigor;
using namespace vigor::host;

namespace {

/// Where the engine fails: at launch number `launch` (1-based, counted over the process), or in
/// upload (where a GPU engine allocates); 0 / false: never.
struct FaultPlan {
  int launch = 0;
  bool upload = false;
  int launches = 0;
} g_fault;

constexpr const char* kDeviceError = "cudaErrorMemoryAllocation: out of memory (simulated)";

/// harmonic_oscillator's CPU engine with the faults of g_fault.
class FaultyEngine final : public Engine {
 public:
  explicit FaultyEngine(std::unique_ptr<Engine> inner) : inner_(std::move(inner)) {}
  int dim() const override { return inner_->dim(); }
  void upload(const std::vector<double>& state_soa, std::int64_t n) override {
    if (g_fault.upload) throw std::runtime_error(kDeviceError);
    inner_->upload(state_soa, n);
  }
  void launch(std::int64_t end_step) override {
    if (++g_fault.launches == g_fault.launch) throw std::runtime_error(kDeviceError);
    inner_->launch(end_step);
    kernel_seconds_ = inner_->kernel_seconds();
  }
  std::int64_t drain(HitBlock& out) override { return inner_->drain(out); }
  FinalData download() override { return inner_->download(); }
  std::string backend_name() const override { return inner_->backend_name(); }
  std::string device_name() const override { return inner_->device_name(); }
  std::vector<double> tangent_snapshot() override { return inner_->tangent_snapshot(); }
  std::vector<double> energy_error_snapshot() override { return inner_->energy_error_snapshot(); }
  std::vector<StateArray> save_state() override { return inner_->save_state(); }
  void restore_state(const std::vector<StateArray>& a) override { inner_->restore_state(a); }
  std::size_t free_memory() const override { return inner_->free_memory(); }
  int simd_lanes() const override { return inner_->simd_lanes(); }
  int hit_capacity() const override { return inner_->hit_capacity(); }
  std::size_t hit_budget() const override { return inner_->hit_budget(); }

 private:
  std::unique_ptr<Engine> inner_;
};

std::unique_ptr<Engine> make_faulty_engine(const Integration& s, const EngineResources& r) {
  auto inner = find_model("harmonic_oscillator")->make_cpu_engine(s, r);
  if (!inner) return nullptr;
  return std::make_unique<FaultyEngine>(std::move(inner));
}

// Registered before main (and so before anything closes the registry).
const bool kRegistered = [] {
  ModelInfo info = describe_model<models::HarmonicOscillator>();
  info.name = "faulty_oscillator";
  info.integrators = {"verlet"};
  info.tangent_integrators = {};
  info.make_cpu_engine = &make_faulty_engine;
  register_model(std::move(info));
  return true;
}();

struct TempDir : ScratchDir {
  explicit TempDir(const std::string& tag) : ScratchDir("fault-" + tag) {}
};

/// 10 segments of 100 steps, one launch each (about one crossing per trajectory per segment,
/// far below the section buffer).
std::string job_text(const fs::path& out) {
  return R"({"model": {"name": "faulty_oscillator"},
             "integrator": {"name": "verlet", "dt": 0.05},
             "steps": 1000, "segment_steps": 100,
             "ensemble": {"box": {"counts": [12, 10], "lo": [-1.0, -0.8], "hi": [1.0, 0.8]}},
             "section": {"coordinate": "q0", "value": 0.0, "direction": "up"},
             "backend": "cpu",
             "output": {"dir": ")" +
         out.string() + R"("}})";
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// The run's temporary directories beside `target` (.NAME.partial-PID).
std::vector<fs::path> partial_dirs(const fs::path& target) {
  std::vector<fs::path> r;
  const std::string prefix = "." + target.filename().string() + ".partial-";
  for (const auto& e : fs::directory_iterator(target.parent_path()))
    if (e.path().filename().string().rfind(prefix, 0) == 0) r.push_back(e.path());
  return r;
}

RunOptions options() {
  RunOptions opt;
  opt.quiet = true;
  opt.threads = 2;
  opt.checkpoint_every = 0;  // after every segment
  return opt;
}

/// The error of the job writing `out`, run through the armed engine (empty, and a test failure,
/// when the run went through).
std::string failure_of(const fs::path& out) {
  try {
    run_job(parse_job(job_text(out)), options(), false);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "the run went through a failing engine";
  return "";
}

void expect_same_results(const fs::path& ref, const fs::path& got) {
  for (const char* f : {"final.csv", "sections.csv", "energy_series.csv"})
    EXPECT_EQ(read_text(got / f), read_text(ref / f)) << f;
}

/// No fault armed before or after a test, whatever way it ends.
class EngineFault : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kRegistered);
    g_fault = {};
  }
  void TearDown() override { g_fault = {}; }
};

}  // namespace

TEST_F(EngineFault, MidRunErrorKeepsTheLastCheckpointAndResumeFinishesTheRun) {
  TempDir tmp("midrun");
  run_job(parse_job(job_text(tmp.path / "ref")), options(), false);

  const fs::path out = tmp.path / "out";
  g_fault = {5, false, 0};  // launches 1-4 end segments 1-4, each followed by a checkpoint
  const std::string m = failure_of(out);
  EXPECT_NE(m.find(kDeviceError), std::string::npos) << m;
  EXPECT_NE(m.find("the last checkpoint is kept in"), std::string::npos) << m;
  EXPECT_NE(m.find("continue with: vigor run --resume " + out.string()), std::string::npos) << m;
  EXPECT_FALSE(fs::exists(out)) << "nothing half-written in the target";
  const auto partial = partial_dirs(out);
  ASSERT_EQ(partial.size(), 1u);
  EXPECT_TRUE(fs::exists(partial[0] / "checkpoint.bin"));

  g_fault = {};  // the device works again
  const auto summary = resume_job(out.string(), options(), false);
  EXPECT_EQ(summary["resumed_at_step"], std::vector<std::int64_t>{400});
  expect_same_results(tmp.path / "ref", out);
  EXPECT_TRUE(partial_dirs(out).empty()) << "the checkpoint and the spill are gone";
}

// Out of memory when the engine allocates its arrays: no checkpoint exists, nothing is left.
TEST_F(EngineFault, AllocationErrorBeforeAnyCheckpointLeavesNothing) {
  TempDir tmp("upload");
  const fs::path out = tmp.path / "out";
  g_fault = {0, true, 0};
  const std::string m = failure_of(out);
  EXPECT_NE(m.find(kDeviceError), std::string::npos) << m;
  EXPECT_EQ(m.find("checkpoint"), std::string::npos) << m;
  g_fault = {};
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(partial_dirs(out).empty());
}

// The command line: exit 3, the error and where to continue on stderr.
TEST_F(EngineFault, CommandLineExitsThreeNamingTheErrorAndTheResumeCommand) {
  TempDir tmp("cli");
  const fs::path out = tmp.path / "out";
  const fs::path job = tmp.path / "job.json";
  std::ofstream(job) << job_text(out);
  g_fault = {3, false, 0};
  std::vector<std::string> args = {"vigor", "run", job.string(), "--quiet", "--checkpoint-every",
                                   "0"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStderr();
  const int code = cli_main(int(argv.size()), argv.data());
  const std::string err = testing::internal::GetCapturedStderr();
  g_fault = {};
  EXPECT_EQ(code, kExitRuntime);
  EXPECT_NE(err.find(kDeviceError), std::string::npos) << err;
  EXPECT_NE(err.find("continue with: vigor run --resume"), std::string::npos) << err;
  EXPECT_EQ(partial_dirs(out).size(), 1u);
}
