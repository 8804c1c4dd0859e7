/// @file test_bad_jobs.cpp
/// @brief The corpus of malformed and hostile job files in tests/bad_jobs/, run through the `vigor`
/// executable (DESIGN.md §4): each must exit with the code its manifest line gives (2 for bad
/// input), with `error: <key path>: …` as the only line on stderr, naming the key and quoting the
/// expected fragment, and nothing on disk may change — no output directory, no temporary directory
/// beside it, no parent directory created and left, the files and links already there untouched.
///
/// The manifest, tests/bad_jobs/EXPECTED.tsv, has one line per job file:
///
///     file <TAB> exit code <TAB> key path <TAB> message fragment <TAB> flags
///
/// Flags (comma-separated, "-" for none):
///   job_out   run without --out: the job's own output.dir is the target (else --out <scratch>/out)
///   existing  <scratch>/out already holds results; they must be byte-identical afterwards
///   force     pass --force
///   run_only  the fault is in the output directory, which `vigor validate` does not look at:
///             validate must accept the job (exit 0); otherwise validate must fail exactly as run
///
/// Placeholders in the job text and in the fragment, substituted when the job is copied into the
/// scratch directory (also its working directory): @SCRATCH@ (its absolute path) and, in job text
/// only, @PAD65MIB@ (65 MiB of spaces). The scratch directory also holds fixtures the jobs refer
/// to by relative path: data/ (a copy of tests/bad_jobs/data/), a_file (a regular file), a_dir.npy/
/// and a_dir.csv/ (directories), dangling (a symbolic link to nothing), loop (a link to itself),
/// zero.npy and zero.csv (links to /dev/zero), fifo.csv (a FIFO with no writer) and, for the jobs
/// that name it, huge_sparse.npy (a sparse 8 GB .npy file whose header claims 1000000001 rows).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(VIGOR_SOURCE_DIR) / "tests" / "bad_jobs";
const fs::path kManifest = kCorpus / "EXPECTED.tsv";
/// Files in tests/bad_jobs/ that are not job files.
const std::set<std::string> kNotJobs{"EXPECTED.tsv", "README.md"};
const std::set<std::string> kKnownFlags{"job_out", "existing", "force", "run_only"};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(part);
  if (!s.empty() && s.back() == sep) parts.emplace_back();
  return parts;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t k = s.find(from); k != std::string::npos; k = s.find(from, k + to.size()))
    s.replace(k, from.size(), to);
}

struct Case {
  std::string file;
  int exit_code = 2;
  std::string path;      ///< the key path: stderr must start with "error: <path>: "
  std::string fragment;  ///< must appear in the message
  std::set<std::string> flags;
  bool has(const std::string& flag) const { return flags.count(flag) > 0; }
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.file; }

struct Manifest {
  std::vector<Case> cases;
  std::vector<std::string> problems;  ///< malformed lines, reported by a test of their own
};

const Manifest& manifest() {
  static const Manifest m = [] {
    Manifest out;
    std::ifstream in(kManifest);
    if (!in) out.problems.push_back("cannot read " + kManifest.string());
    std::string line;
    for (int lineno = 1; std::getline(in, line); ++lineno) {
      if (line.empty() || line[0] == '#') continue;
      const std::string where = "EXPECTED.tsv line " + std::to_string(lineno) + ": ";
      const auto f = split(line, '\t');
      if (f.size() != 5) {
        out.problems.push_back(where + "expected 5 tab-separated fields, got " +
                               std::to_string(f.size()));
        continue;
      }
      Case c;
      c.file = f[0];
      try {
        c.exit_code = std::stoi(f[1]);
      } catch (const std::exception&) {
        out.problems.push_back(where + "exit code \"" + f[1] + "\" is not a number");
        continue;
      }
      c.path = f[2];
      c.fragment = f[3];
      if (c.path.empty() || c.fragment.empty()) {
        out.problems.push_back(where + "the key path and the fragment must not be empty");
        continue;
      }
      if (f[4] != "-")
        for (const auto& flag : split(f[4], ',')) {
          if (!kKnownFlags.count(flag)) out.problems.push_back(where + "unknown flag " + flag);
          c.flags.insert(flag);
        }
      out.cases.push_back(c);
    }
    return out;
  }();
  return m;
}

/// Test names: the file name without ".json", other characters than [A-Za-z0-9_] as '_'.
std::string test_name(const std::string& file) {
  std::string name =
      file.size() > 5 && file.ends_with(".json") ? file.substr(0, file.size() - 5) : file;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

// --- The manifest and the corpus agree --------------------------------------------------------

TEST(BadJobsManifest, IsWellFormed) {
  for (const auto& p : manifest().problems) ADD_FAILURE() << p;
  std::set<std::string> seen, names;
  for (const auto& c : manifest().cases) {
    EXPECT_TRUE(seen.insert(c.file).second) << c.file << " is listed twice";
    EXPECT_TRUE(names.insert(test_name(c.file)).second) << c.file << ": test name taken";
    EXPECT_TRUE(fs::is_regular_file(kCorpus / c.file)) << c.file << " is listed but missing";
    EXPECT_EQ(c.file.find('/'), std::string::npos) << c.file;
  }
}

TEST(BadJobsManifest, HasAtLeastFortyCases) { EXPECT_GE(manifest().cases.size(), 40u); }

// A job file added without an expectation fails here.
TEST(BadJobsManifest, EveryFileInTheCorpusHasAnExpectation) {
  std::set<std::string> listed;
  for (const auto& c : manifest().cases) listed.insert(c.file);
  for (const auto& e : fs::directory_iterator(kCorpus)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && name == "data") continue;
    if (kNotJobs.count(name)) continue;
    EXPECT_TRUE(listed.count(name)) << "tests/bad_jobs/" << name << " has no line in EXPECTED.tsv";
  }
}

// Every data file is used by some job (an unused one is probably a job's misspelt reference).
TEST(BadJobsManifest, EveryDataFileIsUsed) {
  std::string jobs;
  for (const auto& c : manifest().cases) jobs += read_file(kCorpus / c.file);
  for (const auto& e : fs::directory_iterator(kCorpus / "data"))
    EXPECT_NE(jobs.find("data/" + e.path().filename().string()), std::string::npos)
        << "tests/bad_jobs/data/" << e.path().filename().string() << " is used by no job";
}

// --- Each job through the executable ----------------------------------------------------------

struct Result {
  bool exited = false;
  int code = -1;  ///< exit status, or the signal number when !exited
  std::string out;
  std::string err;
};

/// Everything under `dir`, without following links: path -> type, size, content (small files)
/// or link target. Two snapshots are equal when nothing was created, removed or changed.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> s;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path& p = it->path();
    const fs::file_status st = fs::symlink_status(p);
    std::string d;
    if (fs::is_symlink(st)) {
      d = "link to " + fs::read_symlink(p).string();
    } else if (fs::is_directory(st)) {
      d = "directory";
    } else if (fs::is_regular_file(st)) {
      const auto size = fs::file_size(p);
      d = "file of " + std::to_string(size) + " bytes";
      if (size <= (1u << 20)) d += ": " + read_file(p);
    } else {
      d = "special file";
    }
    s[p.lexically_relative(dir).string()] = d;
  }
  return s;
}

/// The differences between two snapshots, one per line ("" when equal).
std::string differences(const std::map<std::string, std::string>& before,
                        const std::map<std::string, std::string>& after) {
  std::string d;
  for (const auto& [p, what] : after) {
    const auto it = before.find(p);
    if (it == before.end())
      d += "  created " + p + "\n";
    else if (it->second != what)
      d += "  changed " + p + "\n";
  }
  for (const auto& [p, what] : before)
    if (!after.count(p)) d += "  removed " + p + "\n";
  return d;
}

/// Well-formed UTF-8 (no overlong forms, surrogates or code points above U+10FFFF).
bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    const std::size_t len = c < 0x80   ? 1
                            : c < 0xC2 ? 0
                            : c < 0xE0 ? 2
                            : c < 0xF0 ? 3
                            : c < 0xF5 ? 4
                                       : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k)
      if ((b(i + k) & 0xC0) != 0x80) return false;
    if (len > 2 && ((c == 0xE0 && b(i + 1) < 0xA0) || (c == 0xED && b(i + 1) >= 0xA0) ||
                    (c == 0xF0 && b(i + 1) < 0x90) || (c == 0xF4 && b(i + 1) >= 0x90)))
      return false;
    i += len;
  }
  return true;
}

class BadJob : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("vigor_bad_jobs_" + std::to_string(::getpid()) + "_" + test_name(GetParam().file));
    fs::remove_all(root_);
    fs::create_directories(work());
  }
  void TearDown() override { fs::remove_all(root_); }

  /// The scratch directory: working directory of the runs, holding the job and the fixtures.
  fs::path work() const { return root_ / "work"; }

  std::string substitute(std::string text, bool job_text) const {
    replace_all(text, "@SCRATCH@", work().string());
    if (job_text) replace_all(text, "@PAD65MIB@", std::string(std::size_t(65) << 20, ' '));
    return text;
  }

  /// The fixtures, the job and (flag existing) earlier results. Returns false when the sparse
  /// file cannot be made sparse on this file system (the test is then skipped).
  bool prepare(const Case& c) {
    const std::string job = substitute(read_file(kCorpus / c.file), true);
    write_file(work() / "job.json", job);
    fs::copy(kCorpus / "data", work() / "data", fs::copy_options::recursive);
    write_file(work() / "a_file", "a regular file, not a directory\n");
    fs::create_directory(work() / "a_dir.npy");
    fs::create_directory(work() / "a_dir.csv");
    fs::create_symlink("does-not-exist", work() / "dangling");
    fs::create_symlink("loop", work() / "loop");
    fs::create_symlink("/dev/zero", work() / "zero.npy");
    fs::create_symlink("/dev/zero", work() / "zero.csv");
    if (::mkfifo((work() / "fifo.csv").c_str(), 0644) != 0) ADD_FAILURE() << "mkfifo failed";
    if (job.find("huge_sparse.npy") != std::string::npos && !make_sparse_npy()) return false;
    if (c.has("existing")) {
      fs::create_directory(work() / "out");
      write_file(work() / "out" / "summary.json", "{\"earlier\": \"results\"}\n");
      write_file(work() / "out" / "final.csv", "trajectory,t,q0,p0\n0,10,1,0\n");
      fs::create_directory(work() / "out" / "keep");
      write_file(work() / "out" / "keep" / "notes.txt", "mine\n");
    }
    return true;
  }

  /// huge_sparse.npy: a float32 array of shape (1000000001, 2) whose data is a hole of 8 GB.
  bool make_sparse_npy() const {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000001, 2), }";
    header.append(64 - (10 + header.size() + 1) % 64, ' ');
    header += '\n';
    std::string bytes = "\x93NUMPY\x01";
    bytes += '\0';
    bytes += char(header.size() & 0xff);
    bytes += char(header.size() >> 8);
    bytes += header;
    const fs::path p = work() / "huge_sparse.npy";
    write_file(p, bytes);
    std::error_code ec;
    fs::resize_file(p, bytes.size() + std::uintmax_t(1000000001) * 2 * 4, ec);
    struct stat st {};
    if (ec || ::stat(p.c_str(), &st) != 0 || std::uintmax_t(st.st_blocks) * 512 > (1u << 20)) {
      fs::remove(p);
      return false;
    }
    return true;
  }

  /// `vigor <args>` in work(), stdin from /dev/null, under a time limit (a hang is a failure).
  Result vigor(const std::string& args) const {
    const std::string cmd = "cd '" + work().string() + "' && timeout -s KILL 60 '" VIGOR_BIN "' " +
                            args + " </dev/null >'" + (root_ / "stdout").string() + "' 2>'" +
                            (root_ / "stderr").string() + "'";
    const int status = std::system(cmd.c_str());
    Result r;
    r.exited = WIFEXITED(status);
    r.code = r.exited ? WEXITSTATUS(status) : WTERMSIG(status);
    r.out = read_file(root_ / "stdout");
    r.err = read_file(root_ / "stderr");
    return r;
  }

  /// The error contract: the expected exit code and one line `error: <path>: …` quoting the
  /// fragment, nothing that looks like a crash report, nothing on stdout.
  void expect_refused(const Result& r, const Case& c, const std::string& command) const {
    const std::string shown = command + " stderr:\n" + r.err;
    EXPECT_TRUE(r.exited) << command << ": killed by signal " << r.code << "\n" << shown;
    EXPECT_EQ(r.code, c.exit_code) << shown;
    // 137 (killed by timeout's SIGKILL, seen through the shell) means it hung.
    EXPECT_NE(r.code, 137) << command << " hung\n" << shown;
    const std::string prefix = "error: " + c.path + ": ";
    EXPECT_EQ(r.err.compare(0, prefix.size(), prefix), 0)
        << "stderr does not start with \"" << prefix << "\"\n"
        << shown;
    const std::string fragment = substitute(c.fragment, false);
    EXPECT_NE(r.err.find(fragment), std::string::npos)
        << "stderr does not hold \"" << fragment << "\"\n"
        << shown;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "not one line\n" << shown;
    EXPECT_TRUE(r.err.ends_with("\n")) << shown;
    EXPECT_TRUE(valid_utf8(r.err)) << "stderr is not UTF-8\n" << shown;
    for (const char* crash : {"terminate called", "what():", "Abort", "abort", "Sanitizer",
                              "runtime error:", "Segmentation", "core dumped", "Assertion",
                              "std::", "stack smashing", "free()", "malloc", "Killed", "Traceback"})
      EXPECT_EQ(r.err.find(crash), std::string::npos) << "\"" << crash << "\" on stderr\n" << shown;
    EXPECT_EQ(r.out, "") << command << " wrote on stdout";
  }

  fs::path root_;
};

TEST_P(BadJob, IsRefusedNamingTheKeyAndChangesNothing) {
  const Case& c = GetParam();
  if (!prepare(c)) GTEST_SKIP() << "this file system cannot hold the sparse fixture";
  const auto before = snapshot(work());

  std::string args = "run job.json";
  if (!c.has("job_out")) args += " --out '" + (work() / "out").string() + "'";
  if (c.has("force")) args += " --force";
  const Result run = vigor(args);
  expect_refused(run, c, "vigor " + args);
  // No output directory, no temporary directory beside it, no parent left; earlier results and
  // every fixture untouched, byte for byte.
  EXPECT_EQ(differences(before, snapshot(work())), "") << "vigor " << args << " changed the disk";
  std::set<std::string> beside;
  for (const auto& e : fs::directory_iterator(root_)) beside.insert(e.path().filename().string());
  EXPECT_EQ(beside, (std::set<std::string>{"work", "stdout", "stderr"}));

  const Result validate = vigor("validate job.json");
  if (c.has("run_only")) {
    // The fault lies in the output directory: the job itself is valid.
    EXPECT_TRUE(validate.exited && validate.code == 0) << "validate stderr:\n" << validate.err;
  } else {
    expect_refused(validate, c, "vigor validate job.json");
  }
  EXPECT_EQ(differences(before, snapshot(work())), "") << "vigor validate changed the disk";
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadJob, ::testing::ValuesIn(manifest().cases),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           return test_name(p.param.file);
                         });

}  // namespace
