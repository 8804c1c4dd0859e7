/// @file plugin.cpp
/// @brief Compiling, caching and loading plugins (see plugin.hpp).
#include "host/backends/plugin.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "host/backends/cpu_info.hpp"
#include "vigor/plugin_config.hpp"
#include "vigor/version.hpp"

namespace vigor::host {

#if defined(VIGOR_HAVE_CUDA)
int cuda_device_for_process(int node_rank);  // host/backends/cuda_runtime.cu
#endif

namespace {

namespace fs = std::filesystem;

/// FNV-1a, 64 bits: a cache key, not a security boundary (the cache is the user's own).
std::uint64_t fnv1a(const std::string& s, std::uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string hex(std::uint64_t x) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
  return buf;
}

/// Where a plugin's headers are: VIGOR_INCLUDE_DIR when set (an installed Python package, whose
/// headers travel inside it), else the build's source and generated trees.
const std::vector<std::string>& plugin_include_dirs() {
  static const std::vector<std::string> dirs = [] {
    if (const char* d = std::getenv("VIGOR_INCLUDE_DIR"); d && *d)
      return std::vector<std::string>{d};
    return std::vector<std::string>(std::begin(build::kPluginIncludeDirs),
                                    std::end(build::kPluginIncludeDirs));
  }();
  return dirs;
}

/// The compiler's argument list without the output and input files.
std::vector<std::string> compile_command(bool cuda) {
  std::vector<std::string> cmd{cuda ? plugin_cuda_compiler() : plugin_compiler()};
  if (cuda) {
    for (const char* const* f = build::kPluginCudaFlags; *f; ++f) cmd.emplace_back(*f);
    cmd.emplace_back("-shared");
  } else {
    for (const char* f : build::kPluginFlags) cmd.emplace_back(f);
    cmd.insert(cmd.end(),
               {"-fPIC", "-shared", "-fvisibility=hidden", "-fvisibility-inlines-hidden"});
  }
  for (const std::string& d : plugin_include_dirs()) cmd.push_back("-I" + d);
  return cmd;
}

/// Run argv with stdout and stderr into `log`; the exit status (127: it could not be started).
int run_logged(const std::vector<std::string>& argv, const fs::path& log) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/// The size and modification time of every header a plugin may include (kernels/, models/,
/// host/ and the generated vigor/ under the include directories), for the cache key: a plugin
/// compiled against other headers — a rebuilt or updated vigor of the same version — is another
/// plugin, never one whose engine no longer matches the program's. Stat only, once per process.
const std::string& headers_stamp() {
  static const std::string stamp = [] {
    std::string s;
    std::error_code ec;
    for (const std::string& dir : plugin_include_dirs()) {
      for (const char* sub : {"kernels", "models", "host", "vigor"}) {
        const fs::path root = fs::path(dir) / sub;
        if (!fs::is_directory(root, ec)) continue;
        std::vector<std::string> lines;
        for (auto it = fs::recursive_directory_iterator(root, ec);
             !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
          const fs::path& p = it->path();
          const std::string ext = p.extension().string();
          if (ext != ".hpp" && ext != ".cuh" && ext != ".h" && ext != ".def") continue;
          const auto size = fs::file_size(p, ec);
          const auto time = fs::last_write_time(p, ec).time_since_epoch().count();
          lines.push_back(p.string() + ' ' + std::to_string(size) + ' ' + std::to_string(time));
        }
        std::sort(lines.begin(), lines.end());  // directory order is the file system's
        for (const auto& l : lines) s += l + '\n';
      }
    }
    return s;
  }();
  return stamp;
}

EngineTestHooks& host_test_hooks() { return engine_test_hooks(); }
std::string host_cpu_device_name(int threads) { return cpu_device_name(threads); }
#if defined(VIGOR_HAVE_CUDA)
constexpr int (*host_cuda_device_for_process)(int) = &cuda_device_for_process;
#else
constexpr int (*host_cuda_device_for_process)(int) = nullptr;
#endif

/// The factory of the plugin at `so`, or nullptr when it does not load as a plugin of this ABI
/// (`why` says what failed). A loaded library stays loaded: its engines' code lives in it.
EngineFactory open_plugin(const fs::path& so, std::string& why) {
  void* handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    why = e ? e : "dlopen failed";
    return nullptr;
  }
  const auto entry = reinterpret_cast<PluginEntry>(dlsym(handle, kPluginEntryName));
  if (!entry) {
    why = std::string("no ") + kPluginEntryName + " in it";
    return nullptr;
  }
  static const PluginHost host{kPluginAbi, &host_test_hooks, &host_cpu_device_name,
                               host_cuda_device_for_process};
  const EngineFactory f = entry(host);
  if (!f) why = "it was built for another plugin ABI, or this program lacks its backend";
  return f;
}

std::atomic<unsigned> build_counter{0};
std::atomic<bool> compile_notices{true};

void require_cuda_compiler(const PluginSource& src) {
  if (src.cuda && plugin_cuda_compiler().empty())
    throw std::runtime_error("the " + src.what +
                             " needs the CUDA backend, and this vigor was built without it (no "
                             "CUDA compiler at configure time)");
}

/// A plugin's place in the cache: <cache>/plugins/<id>/plugin.so.
struct CacheEntry {
  std::string id;  ///< hash of everything the plugin is built from
  fs::path root;   ///< <cache>/plugins
  fs::path dir;    ///< root / id
  fs::path so;     ///< dir / plugin.so
};

CacheEntry cache_entry(const PluginSource& src, const std::vector<std::string>& cmd) {
  std::string key = src.main_text + '\0' + src.header_text + '\0' + kVersion + '\0' +
                    std::to_string(kPluginAbi) + '\0' + headers_stamp();
  for (const auto& a : cmd) key += '\0' + a;
  CacheEntry e;
  e.id = hex(fnv1a(key));
  e.root = fs::path(plugin_cache_dir()) / "plugins";
  e.dir = e.root / e.id;
  e.so = e.dir / "plugin.so";
  return e;
}

/// The factory of the complete plugin in the cache, or nullptr when there is none that loads.
EngineFactory open_cached(const CacheEntry& e) {
  std::error_code ec;
  if (!fs::exists(e.dir / "complete", ec)) return nullptr;
  std::string why;
  if (const EngineFactory f = open_plugin(e.so, why)) return f;
  // Damaged, or from another build: set aside (atomically) and build again.
  const fs::path bad = e.root / (e.id + ".bad-" + std::to_string(getpid()));
  fs::rename(e.dir, bad, ec);
  fs::remove_all(bad, ec);
  return nullptr;
}

/// A fresh directory to build in, beside the entry's (renamed into place once complete).
fs::path make_build_dir(const CacheEntry& e) {
  std::error_code ec;
  fs::create_directories(e.root, ec);
  if (ec)
    throw std::runtime_error("cannot create the model cache " + e.root.string() + ": " +
                             ec.message() + " (set VIGOR_CACHE_DIR to a writable directory)");
  const fs::path tmp =
      e.root / (e.id + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(build_counter++));
  fs::create_directories(tmp, ec);
  return tmp;
}

void write_sources(const PluginSource& src, const fs::path& tmp) {
  if (!src.header_file.empty()) std::ofstream(tmp / src.header_file) << src.header_text;
  std::ofstream(tmp / src.main_file) << src.main_text;
}

/// Runs the compiler with its output in tmp/build.log, after the command line; its exit status.
int compile_logged(const std::vector<std::string>& argv, const fs::path& tmp) {
  const fs::path log = tmp / "build.log";
  {
    std::ofstream l(log);
    for (const auto& a : argv) l << a << ' ';
    l << '\n';
  }
  return run_logged(argv, log);
}

/// Keeps the failed build (its log) in <cache>/plugins/failed/<id> and says what went wrong.
[[noreturn]] void fail_build(const PluginSource& src, const CacheEntry& e, const fs::path& tmp,
                             const std::string& compiler, int status) {
  std::error_code ec;
  const fs::path kept = e.root / "failed" / e.id;
  fs::remove_all(kept, ec);
  fs::create_directories(kept.parent_path(), ec);
  fs::rename(tmp, kept, ec);
  if (status == 127)
    throw std::runtime_error(
        "compiling the " + src.what +
        (src.cuda ? " needs the CUDA compiler: '" : " needs a C++20 compiler: '") + compiler +
        "' could not be run (" +
        (src.cuda ? "install the CUDA Toolkit, or set VIGOR_NVCC"
                  : "install g++, or set VIGOR_CXX") +
        ")");
  throw std::runtime_error("compiling the " + src.what + " failed (" + compiler + ", exit " +
                           std::to_string(status) + "); its log is kept in " +
                           (kept / "build.log").string());
}

/// Moves a finished build into its cache entry.
void publish(const CacheEntry& e, const fs::path& tmp) {
  std::ofstream(tmp / "complete") << e.id << '\n';
  std::error_code ec;
  fs::rename(tmp, e.dir, ec);
  if (ec) fs::remove_all(tmp, ec);  // another process finished first: use its plugin
}

/// Compiles the plugin with `cmd` into its cache entry.
void build_plugin(const PluginSource& src, const CacheEntry& e,
                  const std::vector<std::string>& cmd) {
  const fs::path tmp = make_build_dir(e);
  write_sources(src, tmp);
  if (src.announce && compile_notices.load())
    std::fprintf(stderr, "vigor: compiling the %s on first use (cached in %s)\n", src.what.c_str(),
                 e.dir.c_str());
  std::vector<std::string> argv = cmd;
  argv.insert(argv.end(), {"-o", (tmp / "plugin.so").string(), (tmp / src.main_file).string()});
  if (const int status = compile_logged(argv, tmp); status != 0)
    fail_build(src, e, tmp, argv[0], status);
  publish(e, tmp);
}

}  // namespace

void set_compile_notices(bool on) { compile_notices.store(on); }

std::string plugin_cache_dir() {
  if (const char* d = std::getenv("VIGOR_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/vigor";
  if (const char* d = std::getenv("HOME"); d && *d) return std::string(d) + "/.cache/vigor";
  throw std::runtime_error(
      "no cache directory for compiled models: set VIGOR_CACHE_DIR (or HOME or XDG_CACHE_HOME)");
}

std::string plugin_compiler() {
  if (const char* c = std::getenv("VIGOR_CXX"); c && *c) return c;
  return build::kPluginCompiler;
}

std::string plugin_cuda_compiler() {
  if (!*build::kPluginCudaCompiler) return {};
  if (const char* c = std::getenv("VIGOR_NVCC"); c && *c) return c;
  return build::kPluginCudaCompiler;
}

LoadedPlugin load_plugin(const PluginSource& src) {
  // One process loads or builds one plugin at a time (threads of one process share the cache).
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  require_cuda_compiler(src);
  const std::vector<std::string> cmd = compile_command(src.cuda);
  const CacheEntry entry = cache_entry(src, cmd);
  LoadedPlugin out;
  out.path = entry.so.string();
  if ((out.factory = open_cached(entry))) return out;
  build_plugin(src, entry, cmd);
  out.built = true;
  std::string why;
  if (!(out.factory = open_plugin(entry.so, why)))
    throw std::runtime_error("the " + src.what + " was compiled into " + entry.so.string() +
                             " but does not load: " + why);
  return out;
}

}  // namespace vigor::host
