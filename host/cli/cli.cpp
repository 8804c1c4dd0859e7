#include "host/cli/cli.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "host/backends/first_use.hpp"
#include "host/backends/plugin.hpp"
#include "host/backends/registry.hpp"
#include "host/job/job.hpp"
#include "host/output/plot_command.hpp"
#include "host/run/comm.hpp"
#include "host/run/progress.hpp"
#include "host/run/ranks.hpp"
#include "host/run/run.hpp"
#include "host/run/stop.hpp"
#include "vigor/version.hpp"

namespace vigor::host {

namespace {

constexpr const char* kUsage =
    "usage:\n"
    "  vigor run JOB.json [--out DIR] [--backend auto|cpu|cuda] [--precision double|float]\n"
    "                     [--threads N] [--quiet] [--force] [--checkpoint-every SECONDS]\n"
    "                     [--memory-limit SIZE]\n"
    "  vigor run --resume OUT_DIR [--threads N] [--quiet] [--force] [--memory-limit SIZE]\n"
    "  vigor validate JOB.json [--out DIR] [--backend B] [--precision P] [--compile]\n"
    "  vigor plot OUT_DIR [--out PLOT_DIR] [--svg] [--axes X,Y] [--color-by NAME]\n"
    "  vigor list [JOB.json]\n"
    "  vigor --version\n";

const char* rule_text(kernels::Rule r) {
  switch (r) {
    case kernels::Rule::kPositive:
      return "> 0";
    case kernels::Rule::kNonNegative:
      return ">= 0";
    case kernels::Rule::kCount:
      return "integer >= 1";
    case kernels::Rule::kStageCount:
      return "integer 1-8";
    default:
      return "finite";
  }
}

/// Shortest text that reads back to the same double (0.05, not 0.050000000000000003).
std::string shortest(double x) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

void print_params(const std::vector<kernels::ParamSpec>& ps) {
  for (const auto& p : ps)
    std::printf("      %-10s default %-22s %-14s %s\n", p.name, shortest(p.default_value).c_str(),
                rule_text(p.rule), p.description);
}

/// One line of print_model: the label, then each name after a space.
void print_names(const char* label, const std::vector<std::string>& names) {
  std::printf("%s", label);
  for (const auto& s : names) std::printf(" %s", s.c_str());
  std::printf("\n");
}

void print_model(const ModelInfo& m) {
  std::printf(
      "  %s  (dof %d, %s%s%s%s)\n    %s\n", m.name.c_str(), m.dof, m.kind.c_str(),
      m.constraints > 0 ? (", " + std::to_string(m.constraints) + " constraints").c_str() : "",
      m.forced ? ", forced" : "",
      m.formula   ? ", from the job's formulas"
      : m.builtin ? ""
                  : ", registered by this program",
      m.description.c_str());
  print_names("    state:", m.state_names);
  if (!m.momentum_names.empty()) print_names("    momentum maps:", m.momentum_names);
  print_names("    integrators:", m.integrators);
  std::string first_use;
  for (const auto& s : m.integrators)
    if (m.builtin && compiled_on_first_use(m.name, s)) first_use += " " + s;
  if (!first_use.empty())
    std::printf("    compiled on first use, then cached:%s\n", first_use.c_str());
  if (!m.tangent_integrators.empty())
    print_names("    tangent maps (diagnostics.tangent):", m.tangent_integrators);
  if (!m.params.empty()) {
    std::printf("    params:\n");
    print_params(m.params);
  }
}

int list() {
  std::printf("models:\n");
  for (const auto& m : model_infos()) print_model(m);
  std::printf("integrators:\n");
  for (const auto& i : integrator_infos()) {
    std::printf("  %s  (order %d, %s, %s)\n    %s\n    reference: %s\n", i.name.c_str(), i.order,
                i.symplectic ? "symplectic" : "not symplectic",
                i.is_explicit ? "explicit" : "implicit", i.description.c_str(),
                i.reference.c_str());
    std::printf("    handles: %s\n", i.requires_model.c_str());
    if (i.newton_iterations > 0)
      std::printf("    newton_iterations: default %d\n", i.newton_iterations);
    if (i.compensable)
      std::printf(
          "    compensated: false by default; true sums the updates with compensation "
          "(compiled on first use)\n");
    if (!i.options.empty()) {
      std::printf("    options:\n");
      print_params(i.options);
    }
  }
  std::printf("backends: cpu%s\n", cuda_device_count() > 0 ? ", cuda" : "");
  if (cuda_device_count() == 0) std::printf("  (cuda: %s)\n", cuda_unavailable_reason().c_str());
  return kExitOk;
}

struct Args {
  std::string command;
  std::string job;
  Overrides overrides;
  int threads = 0;
  bool quiet = false;
  bool force = false;
  std::string resume;             ///< --resume OUT_DIR
  double checkpoint_every = 600;  ///< --checkpoint-every SECONDS
  std::size_t memory_limit = 0;   ///< --memory-limit SIZE
  bool compile = false;           ///< validate --compile: build what the run will compile
};

/// The number at the start of t; `used` is how many characters it took (0: none).
double leading_number(const std::string& t, std::size_t& used) {
  used = 0;
  try {
    return std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
    return -1;
  }
}

/// Bytes in one K, M, G or T (powers of 1024, either case); 0 for any other suffix.
double unit_bytes(char suffix) {
  switch (suffix) {
    case 'K':
    case 'k':
      return 1024.0;
    case 'M':
    case 'm':
      return 1024.0 * 1024;
    case 'G':
    case 'g':
      return 1024.0 * 1024 * 1024;
    case 'T':
    case 't':
      return 1024.0 * 1024 * 1024 * 1024;
    default:
      return 0;
  }
}

/// "512M", "2G", "1.5G", "65536": bytes, with an optional K, M, G or T (powers of 1024).
std::size_t parse_size(const std::string& t) {
  std::size_t used = 0;
  const double x = leading_number(t, used);
  double unit = 1;
  if (used > 0 && used + 1 == t.size()) {
    const double suffix_unit = unit_bytes(t.back());
    if (suffix_unit > 0) {
      unit = suffix_unit;
      ++used;
    } else {
      used = 0;
    }
  }
  const double bytes = x * unit;
  if (used == 0 || used != t.size() || !(bytes >= 1) || bytes > 1e18)
    throw JobError(
        "--memory-limit",
        "must be a size in bytes with an optional K, M, G or T (e.g. 512M), got \"" + t + "\"");
  return std::size_t(bytes);
}

/// The value after the option at v[k], moving k onto it.
std::string option_value(const std::vector<std::string>& v, std::size_t& k) {
  if (k + 1 >= v.size()) throw JobError(v[k], "needs a value");
  return v[++k];
}

/// --threads N, from 1 to 4096.
int parse_threads(const std::string& t) {
  std::size_t used = 0;
  long n = 0;
  try {
    n = std::stol(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != t.size() || n < 1 || n > 4096)
    throw JobError("--threads", "must be an integer between 1 and 4096, got \"" + t + "\"");
  return int(n);
}

/// --checkpoint-every SECONDS, where 0 checkpoints after every segment.
double parse_checkpoint_every(const std::string& t) {
  std::size_t used = 0;
  const double x = leading_number(t, used);
  if (used != t.size() || !(x >= 0) || !std::isfinite(x))
    throw JobError("--checkpoint-every",
                   "must be a number of seconds >= 0 (0: after every segment), got \"" + t + "\"");
  return x;
}

/// Reads the option at v[k] that takes a value into a, moving k onto the value; false when v[k]
/// is no such option.
bool read_option_with_value(const std::vector<std::string>& v, std::size_t& k, Args& a) {
  const std::string& s = v[k];
  if (s == "--out") {
    a.overrides.out = option_value(v, k);
    if (a.overrides.out.empty()) throw JobError("--out", "must not be empty");
  } else if (s == "--backend") {
    a.overrides.backend = option_value(v, k);
  } else if (s == "--precision") {
    a.overrides.precision = option_value(v, k);
  } else if (s == "--threads") {
    a.threads = parse_threads(option_value(v, k));
  } else if (s == "--resume") {
    a.resume = option_value(v, k);
    if (a.resume.empty()) throw JobError("--resume", "must not be empty");
  } else if (s == "--checkpoint-every") {
    a.checkpoint_every = parse_checkpoint_every(option_value(v, k));
  } else if (s == "--memory-limit") {
    a.memory_limit = parse_size(option_value(v, k));
  } else {
    return false;
  }
  return true;
}

/// Sets the switch s in a; false when s is no switch.
bool read_switch(const std::string& s, Args& a) {
  if (s == "--quiet")
    a.quiet = true;
  else if (s == "--force")
    a.force = true;
  else if (s == "--compile")
    a.compile = true;
  else
    return false;
  return true;
}

/// Throws JobError naming the option.
Args parse_args(int argc, char** argv) {
  Args a;
  std::vector<std::string> v(argv + 1, argv + argc);
  if (v.empty()) throw JobError("command", "missing (expected run, validate, plot or list)");
  a.command = v[0];
  if (a.command == "list" && v.size() > 2)
    throw JobError("command", "list takes at most a job file, got \"" + v[2] + "\"");
  for (std::size_t k = 1; k < v.size(); ++k) {
    const std::string& s = v[k];
    if (read_option_with_value(v, k, a) || read_switch(s, a)) continue;
    if (!s.empty() && s[0] == '-') throw JobError(s, "unknown option");
    if (!a.job.empty()) throw JobError("command", "unexpected extra argument \"" + s + "\"");
    a.job = s;
  }
  return a;
}

}  // namespace

namespace {

/// `vigor list JOB.json`: the model of a job, as the job defines it (a formula model's derived
/// facts).
int list_job_model(const Args& a) {
  const Job job = load_job(a.job, a.overrides);
  std::printf("model of %s:\n", a.job.c_str());
  print_model(*find_model(job.integration.model));
  return kExitOk;
}

/// The checks of run and validate that need no job file read yet.
void check_run_args(const Args& a) {
  if (a.compile && a.command != "validate")
    throw JobError("--compile", "belongs to vigor validate");
  if (a.command != "run" && a.command != "validate")
    throw JobError("command",
                   "unknown command \"" + a.command + "\" (expected run, validate, plot or list)");
  if (!a.resume.empty()) {
    if (a.command != "run") throw JobError("--resume", "belongs to vigor run");
    if (!a.job.empty())
      throw JobError("--resume", "takes the job from the checkpoint; drop \"" + a.job + "\"");
    if (!a.overrides.out.empty() || !a.overrides.backend.empty() || !a.overrides.precision.empty())
      throw JobError("--resume",
                     "continues with the settings of the interrupted run; drop --out, "
                     "--backend and --precision");
  } else if (a.job.empty()) {
    throw JobError("command", a.command + " needs a job file");
  }
}

int validate(const Args& a, const Job& job) {
  // --compile: the plugins a formula model needs, compiled into the cache now (ahead of a
  // batch of runs, or of MPI ranks that would otherwise all wait on the first compile).
  if (a.compile) {
    const ModelInfo& model = *find_model(job.integration.model);
    if (model.prepare) model.prepare(job.integration, resolve_backend(job.backend));
  }
  if (!comm::root()) return kExitOk;
  std::printf("%s: valid (%s, %s, %lld trajectories x %lld steps, dt %g)\n", a.job.c_str(),
              job.integration.model.c_str(), job.integration.integrator.c_str(),
              static_cast<long long>(job.ensemble.count), static_cast<long long>(job.steps),
              job.integration.dt);
  return kExitOk;
}

RunOptions run_options(const Args& a) {
  RunOptions opt;
  opt.threads = a.threads;
  opt.quiet = a.quiet;
  opt.progress_terminal = stderr_is_terminal();
  opt.checkpoint_every = a.checkpoint_every;
  opt.memory_limit = a.memory_limit;
  return opt;
}

/// The line a run ends with, from its summary.
void print_run_summary(const nlohmann::ordered_json& s) {
  std::printf(
      "vigor: %lld trajectories x %lld steps on %s (%s) in %.3g s (%.3g traj-steps/s), "
      "%lld crossings; results in %s\n",
      static_cast<long long>(s["trajectories"].get<std::int64_t>()),
      static_cast<long long>(s["steps"].get<std::int64_t>()),
      s["backend"].get<std::string>().c_str(), s["device"].get<std::string>().c_str(),
      s["wall_seconds"].get<double>(), s["trajectory_steps_per_second"].get<double>(),
      static_cast<long long>(s["crossings_total"].get<std::int64_t>()),
      s["output_dir"].get<std::string>().c_str());
}

/// `vigor run`, or `vigor run --resume` when a.resume names the interrupted run.
int run(const Args& a, const Job& job) {
  set_compile_notices(!a.quiet);  // "compiling ... on first use" on stderr
  const RunOptions opt = run_options(a);
  install_stop_handlers();
  try {
    const auto s =
        a.resume.empty() ? run_job(job, opt, a.force) : resume_job(a.resume, opt, a.force);
    if (comm::root() && !a.quiet) print_run_summary(s);
  } catch (const JobError&) {
    throw;
  } catch (const PeerFailure& e) {
    return e.exit_code();  // the rank that failed has said why
  } catch (const Interrupted& e) {
    if (comm::root()) std::fprintf(stderr, "vigor: %s\n", e.what());
    return kExitRuntime;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %srun failed: %s\n", comm::rank_prefix().c_str(), e.what());
    return kExitRuntime;
  }
  return kExitOk;
}

/// The ranks of an MPI run must run one job: the same command, job file contents, --precision,
/// --out and --resume. A launch that gives each rank a command line of its own (mpirun's
/// "-np 1 vigor ... : -np 1 vigor ...") may differ in --backend, --threads and the other options
/// of how a rank runs: one rank on a GPU and one on the CPU give the same files. Ranks that
/// disagree on the job would exchange arrays of different shapes and wait for each other forever.
void check_ranks_agree(const Args& a) {
  if (!comm::distributed()) return;
  std::string key =
      a.command + '\n' + a.overrides.precision + '\n' + a.overrides.out + '\n' + a.resume + '\n';
  if (!a.job.empty()) {
    std::ifstream in(a.job, std::ios::binary);
    key.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (!comm::all_equal(std::hash<std::string>{}(key)))
    throw JobError("mpi ranks",
                   "were not all given the same job: the job file's contents, --precision, --out "
                   "and --resume must agree on every rank (--backend and --threads may differ)");
}

/// The command argv names, run; what it throws, cli reports.
int run_command(int argc, char** argv) {
  const std::string first = argc >= 2 ? argv[1] : "";
  // Ranks given different commands would part here, before any of them reads a job.
  if (comm::distributed() && !comm::all_equal(std::hash<std::string>{}(first)))
    throw JobError("mpi ranks", "were not all given the same command");
  if (first == "--help" || first == "-h") {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (first == "--version") {
    std::printf("vigor %s\n", kVersion);
    return kExitOk;
  }
  // Everything after "plot" belongs to the plot script, which validates its own options.
  if (first == "plot") {
    if (argc < 3) throw JobError("command", "plot needs a results directory");
    return plot_command(std::vector<std::string>(argv + 2, argv + argc));
  }
  Args a;
  together([&] {
    a = parse_args(argc, argv);
    if (a.command != "list") check_run_args(a);
  });
  if (a.command == "list") {
    check_ranks_agree(a);
    return a.job.empty() ? list() : list_job_model(a);
  }
  // Each rank reads its job before the ranks compare them, so that a file one rank cannot read
  // or parse is reported by that rank, as it would be in one process.
  Job job;
  together([&] {
    if (a.resume.empty()) job = load_job(a.job, a.overrides);
  });
  check_ranks_agree(a);
  if (a.command == "validate") return validate(a, job);
  return run(a, job);
}

int cli(int argc, char** argv) {
  try {
    return run_command(argc, argv);
  } catch (const PeerFailure& e) {
    return e.exit_code();
  } catch (const JobError& e) {
    // Rank 0 says it: bad input reaches here on every rank alike (the ranks' agreement checks),
    // or on rank 0 alone when together() chose it to report one that only some ranks found.
    if (!comm::root()) return kExitBadInput;
    std::fprintf(stderr, "error: %s\n", e.what());
    if (e.path() == "command") std::fputs(kUsage, stderr);
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s%s\n", comm::rank_prefix().c_str(), e.what());
    return kExitRuntime;
  }
}

}  // namespace

int cli_main(int argc, char** argv) {
  // MPI starts here only when an MPI launcher started this process (host/run/comm.hpp).
  comm::init(&argc, &argv);
  const int code = cli(argc, argv);
  comm::finalize();
  return code;
}

}  // namespace vigor::host
