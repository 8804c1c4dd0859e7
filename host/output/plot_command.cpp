#include "host/output/plot_command.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "host/errors.hpp"

namespace vigor::host {

namespace fs = std::filesystem;

namespace {

/// Runs argv (PATH lookup for argv[0]) with stdout/stderr inherited, or silenced when `quiet`;
/// returns the exit code, or -1 when it could not run.
int spawn(const std::vector<std::string>& argv, bool quiet) {
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (quiet) {
      std::FILE* null = std::fopen("/dev/null", "w");
      if (null) {
        ::dup2(::fileno(null), STDOUT_FILENO);
        ::dup2(::fileno(null), STDERR_FILENO);
      }
    }
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    ::execvp(a[0], a.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status) == 127 ? -1 : WEXITSTATUS(status);
  return -1;
}

fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

}  // namespace

std::string find_plot_script() {
  if (const char* env = std::getenv("VIGOR_PLOT_SCRIPT"); env && *env) return env;
  std::error_code ec;
  const fs::path installed = executable_dir() / ".." / "share" / "vigor" / "vigor_plot.py";
  if (fs::is_regular_file(installed, ec)) return fs::weakly_canonical(installed, ec).string();
#if defined(VIGOR_SOURCE_PLOT_SCRIPT)
  if (fs::is_regular_file(VIGOR_SOURCE_PLOT_SCRIPT, ec)) return VIGOR_SOURCE_PLOT_SCRIPT;
#endif
  return {};
}

std::optional<std::string> find_plot_python() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("VIGOR_PYTHON"); env && *env) candidates.push_back(env);
  candidates.push_back("python3");
  candidates.push_back("/usr/bin/python3");
  // One with h5py too when there is one (results.h5 gives the chaos map its initial points and
  // is the only input of "csv": false runs); else any with matplotlib.
  for (const char* probe : {"import matplotlib, numpy, h5py", "import matplotlib, numpy"})
    for (const auto& py : candidates)
      if (spawn({py, "-c", probe}, true) == 0) return py;
  return std::nullopt;
}

int plot_command(const std::vector<std::string>& args) {
  const std::string script = find_plot_script();
  std::error_code ec;
  if (!script.empty() && !fs::is_regular_file(script, ec)) {
    std::fprintf(stderr, "error: plot: VIGOR_PLOT_SCRIPT: no such file: %s\n", script.c_str());
    return kExitRuntime;
  }
  if (script.empty()) {
    std::fprintf(stderr,
                 "error: plot: vigor_plot.py not found (set VIGOR_PLOT_SCRIPT, or install vigor "
                 "with cmake --install)\n");
    return kExitRuntime;
  }
  const auto python = find_plot_python();
  if (!python) {
    std::fprintf(stderr,
                 "error: plot: needs Python 3 with matplotlib and numpy (Debian: apt-get install "
                 "python3-matplotlib; or set VIGOR_PYTHON to an interpreter that has them)\n");
    return kExitRuntime;
  }
  std::vector<std::string> argv{*python, script};
  argv.insert(argv.end(), args.begin(), args.end());
  const int code = spawn(argv, false);
  if (code < 0) {
    std::fprintf(stderr, "error: plot: could not run %s %s\n", python->c_str(), script.c_str());
    return kExitRuntime;
  }
  return code;
}

}  // namespace vigor::host
