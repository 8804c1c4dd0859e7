#include "host/run/checkpoint.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <system_error>

#include "host/job/json_fields.hpp"
#include "host/run/slots.hpp"

namespace vigor::host {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'V', 'I', 'G', 'O', 'R', 'C', 'K', 'P'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint64_t kFnvOffset = 1469598103934665603ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;

std::uint64_t fnv1a(std::uint64_t h, const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t k = 0; k < size; ++k) h = (h ^ p[k]) * kFnvPrime;
  return h;
}

/// Buffered binary output that hashes every byte it writes.
class Writer {
 public:
  explicit Writer(const fs::path& file) : path_(file) {
    fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) fail();
    buf_.reserve(std::size_t(4) << 20);
  }
  ~Writer() {
    if (fd_ >= 0) ::close(fd_);
  }
  void bytes(const void* p, std::size_t n) {
    hash_ = fnv1a(hash_, p, n);
    raw(p, n);
  }
  template <class T>
  void pod(const T& v) {
    bytes(&v, sizeof v);
  }
  void text(const std::string& s) {
    pod(std::uint64_t(s.size()));
    bytes(s.data(), s.size());
  }
  /// Appends the hash of everything so far, then flushes, fsyncs and closes.
  void finish() {
    const std::uint64_t h = hash_;
    raw(&h, sizeof h);
    flush();
    if (::fsync(fd_) != 0) fail();
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail();
  }

 private:
  void raw(const void* p, std::size_t n) {
    const auto* c = static_cast<const char*>(p);
    if (buf_.size() + n > buf_.capacity()) flush();
    if (n >= buf_.capacity()) {
      write_all(c, n);
      return;
    }
    buf_.insert(buf_.end(), c, c + n);
  }
  void flush() {
    write_all(buf_.data(), buf_.size());
    buf_.clear();
  }
  void write_all(const char* p, std::size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) fail();
      p += w;
      n -= std::size_t(w);
    }
  }
  [[noreturn]] void fail() {
    throw std::runtime_error("cannot write checkpoint " + path_.string() + ": " +
                             std::strerror(errno));
  }
  fs::path path_;
  int fd_ = -1;
  std::vector<char> buf_;
  std::uint64_t hash_ = kFnvOffset;
};

/// Binary input that hashes every byte it reads and refuses to read past the end.
class Reader {
 public:
  explicit Reader(const fs::path& file) : path_(file), f_(std::fopen(file.c_str(), "rb")) {
    if (!f_)
      throw std::runtime_error("cannot read checkpoint " + path_.string() + ": " +
                               std::strerror(errno));
    std::error_code ec;
    size_ = fs::file_size(file, ec);
    if (ec) {
      std::fclose(f_);
      throw std::runtime_error("cannot read checkpoint " + path_.string() + ": " + ec.message());
    }
  }
  ~Reader() { std::fclose(f_); }
  void bytes(void* p, std::size_t n) {
    raw(p, n);
    hash_ = fnv1a(hash_, p, n);
  }
  template <class T>
  T pod() {
    T v;
    bytes(&v, sizeof v);
    return v;
  }
  /// A length read from the file, checked against what is left of it before anything is
  /// allocated for it.
  std::size_t length(std::size_t unit) { return count(pod<std::uint64_t>(), unit); }
  /// n items of `unit` bytes must fit in what is left of the file.
  std::size_t count(std::uint64_t n, std::size_t unit) {
    if (unit == 0 || n > (size_ - consumed_) / unit)
      bad("it is truncated or damaged (a length runs past the end of the file)");
    return std::size_t(n);
  }
  std::string text() {
    std::string s(length(1), '\0');
    bytes(s.data(), s.size());
    return s;
  }
  void finish() {
    const std::uint64_t expected = hash_;
    std::uint64_t stored = 0;
    raw(&stored, sizeof stored);
    if (stored != expected) bad("its checksum does not match (the file was altered or damaged)");
    if (consumed_ != size_) bad("it has bytes after its end");
  }
  [[noreturn]] void bad(const std::string& why) {
    throw std::runtime_error("checkpoint " + path_.string() + " is unusable: " + why);
  }

 private:
  void raw(void* p, std::size_t n) {
    if (n > size_ - consumed_ || std::fread(p, 1, n, f_) != n)
      bad("it is truncated (the run was killed while writing it?)");
    consumed_ += n;
  }
  fs::path path_;
  std::FILE* f_;
  std::uintmax_t size_ = 0;
  std::uintmax_t consumed_ = 0;
  std::uint64_t hash_ = kFnvOffset;
};

void write_series(Writer& w, const StatSeries& s) {
  w.pod(std::uint64_t(s.size()));
  w.pod(std::uint64_t(s.names().size()));
  for (std::size_t r = 0; r < s.size(); ++r) {
    w.pod(s.t()[r]);
    for (const Stats& st : s.rows()[r]) {
      w.pod(st.max);
      w.pod(st.median);
      w.pod(st.p99);
      w.pod(st.finite);
      w.pod(st.nan);
    }
  }
}

void read_series(Reader& in, StatSeries& s) {
  const auto rows_stored = in.pod<std::uint64_t>();
  const auto names = in.pod<std::uint64_t>();
  if (names != s.names().size()) in.bad("a series has " + std::to_string(names) + " columns");
  // Each row: t, then five 8-byte numbers per quantity.
  const std::size_t rows = in.count(rows_stored, 8 * (1 + 5 * std::size_t(names)));
  for (std::size_t r = 0; r < rows; ++r) {
    const double t = in.pod<double>();
    std::vector<Stats> row(names);
    for (Stats& st : row) {
      st.max = in.pod<double>();
      st.median = in.pod<double>();
      st.p99 = in.pod<double>();
      st.finite = in.pod<std::int64_t>();
      st.nan = in.pod<std::int64_t>();
    }
    s.StatSeries::add(t, std::move(row));
  }
}

void fsync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: the rename itself is atomic
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

std::uint64_t ensemble_fingerprint(const Ensemble& e) {
  std::uint64_t h = fnv1a(kFnvOffset, &e.count, sizeof e.count);
  return fnv1a(h, e.state.data(), e.state.size() * sizeof(double));
}

void write_checkpoint(const fs::path& dir, const Checkpoint& c) {
  const fs::path tmp = dir / (std::string(kCheckpointFile) + ".tmp");
  const fs::path file = dir / kCheckpointFile;
  nlohmann::ordered_json h;
  h["job"] = c.job;
  h["overrides"] = {{"out", c.overrides.out},
                    {"backend", c.overrides.backend},
                    {"precision", c.overrides.precision}};
  h["cwd"] = c.cwd;
  h["trajectories"] = c.trajectories;
  h["dim"] = c.dim;
  h["ensemble_hash"] = c.ensemble_hash;
  h["spill_records"] = c.spill_records;
  h["memory_limit"] = c.memory_limit;
  h["resumed_at"] = c.resumed_at;
  h["step"] = c.cursor.step;
  h["segments"] = c.cursor.segments;
  h["launches"] = c.cursor.launches;
  h["hits"] = c.cursor.hits;
  {
    Writer w(tmp);
    w.bytes(kMagic, sizeof kMagic);
    w.pod(kVersion);
    w.text(h.dump());
    // Binary, not JSON: the statistics may be NaN, and must come back bit for bit.
    w.pod(c.cursor.kernel_seconds);
    w.pod(c.cursor.wall_seconds);
    write_series(w, c.cursor.energy_series);
    write_series(w, c.cursor.tangent_series);
    w.pod(std::uint64_t(c.arrays.size()));
    for (const auto& a : c.arrays) {
      w.text(a.name);
      w.pod(std::int32_t(a.elem_bytes));
      w.pod(std::uint64_t(a.bytes.size()));
      w.bytes(a.bytes.data(), a.bytes.size());
    }
    w.finish();
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error("cannot write checkpoint " + file.string() + ": " + ec.message());
  }
  fsync_directory(dir);
}

Checkpoint read_checkpoint(const fs::path& dir) {
  Reader in(dir / kCheckpointFile);
  char magic[sizeof kMagic];
  in.bytes(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof magic) != 0) in.bad("it is not a vigor checkpoint");
  const auto version = in.pod<std::uint32_t>();
  if (version != kVersion)
    in.bad("format version " + std::to_string(version) + ", this vigor reads version " +
           std::to_string(kVersion));
  Checkpoint c;
  try {
    // Numbers through the job parser's checked readers: a float or an out-of-range value where an
    // integer belongs is refused, not converted.
    using json::integer;
    using json::unsigned_integer;
    constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
    const auto h = nlohmann::ordered_json::parse(in.text());
    c.job = h.at("job");
    c.overrides.out = h.at("overrides").at("out").get<std::string>();
    c.overrides.backend = h.at("overrides").at("backend").get<std::string>();
    c.overrides.precision = h.at("overrides").at("precision").get<std::string>();
    c.cwd = h.at("cwd").get<std::string>();
    c.trajectories = integer(h.at("trajectories"), "trajectories", 0, kMax);
    c.dim = int(integer(h.at("dim"), "dim", 1, 1 << 20));
    c.ensemble_hash = unsigned_integer(h.at("ensemble_hash"), "ensemble_hash");
    c.spill_records = integer(h.at("spill_records"), "spill_records", 0, kMax);
    c.memory_limit = unsigned_integer(h.at("memory_limit"), "memory_limit");
    for (const auto& v : json::array(h.at("resumed_at"), "resumed_at"))
      c.resumed_at.push_back(integer(v, "resumed_at", 0, kMax));
    c.cursor.step = integer(h.at("step"), "step", 0, kMax);
    c.cursor.segments = integer(h.at("segments"), "segments", 0, kMax);
    c.cursor.launches = integer(h.at("launches"), "launches", 0, kMax);
    c.cursor.hits = integer(h.at("hits"), "hits", 0, kMax);
  } catch (const nlohmann::json::exception& e) {
    in.bad(std::string("bad header: ") + e.what());
  } catch (const JobError& e) {
    in.bad(std::string("bad header: ") + e.what());
  }
  c.cursor.kernel_seconds = in.pod<double>();
  c.cursor.wall_seconds = in.pod<double>();
  read_series(in, c.cursor.energy_series);
  read_series(in, c.cursor.tangent_series);
  const std::size_t arrays = in.length(8);
  for (std::size_t k = 0; k < arrays; ++k) {
    StateArray a;
    a.name = in.text();
    a.elem_bytes = in.pod<std::int32_t>();
    a.bytes.resize(in.length(1));
    in.bytes(a.bytes.data(), a.bytes.size());
    if (a.elem_bytes <= 0 || a.bytes.size() % std::size_t(a.elem_bytes) != 0 ||
        (c.trajectories > 0 &&
         a.bytes.size() % (std::size_t(a.elem_bytes) * std::size_t(c.trajectories)) != 0))
      in.bad("array " + a.name + " does not hold whole values per trajectory");
    c.arrays.push_back(std::move(a));
  }
  in.finish();
  return c;
}

std::vector<StateArray> slice_arrays(const std::vector<StateArray>& all, std::int64_t n,
                                     std::int64_t begin, std::int64_t end) {
  std::vector<StateArray> out;
  for (const auto& a : all) {
    StateArray s;
    s.name = a.name;
    s.elem_bytes = a.elem_bytes;
    const std::int64_t e = a.elem_bytes;
    const std::int64_t slots = n > 0 ? std::int64_t(a.bytes.size()) / (e * n) : 0;
    s.bytes.resize(std::size_t(slots * (end - begin) * e));
    copy_slots(a.bytes.data(), n, begin, s.bytes.data(), end - begin, 0, end - begin, slots, e);
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

/// Every ".<name>.partial-<digits>" directory beside `target`, sorted.
std::vector<fs::path> partial_dirs(const fs::path& target) {
  std::vector<fs::path> found;
  fs::path parent = target.parent_path();
  if (parent.empty()) parent = ".";
  // Appended piecewise: GCC 12 warns (-Wrestrict, a false positive) on "." + string + "…".
  std::string prefix(1, '.');
  prefix += target.filename().string();
  prefix += ".partial-";
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    if (!std::all_of(name.begin() + std::ptrdiff_t(prefix.size()), name.end(),
                     [](char ch) { return ch >= '0' && ch <= '9'; }))
      continue;
    std::error_code e2;
    if (fs::is_directory(fs::symlink_status(it->path(), e2))) found.push_back(it->path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

bool resumable(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / kCheckpointFile, ec) || fs::exists(dir / "summary.json", ec);
}

}  // namespace

std::vector<fs::path> find_interrupted_runs(const fs::path& target) {
  std::vector<fs::path> found;
  for (const auto& d : partial_dirs(target))
    if (resumable(d)) found.push_back(d);
  return found;
}

std::vector<fs::path> remove_dead_runs(const fs::path& target) {
  std::vector<fs::path> kept;
  for (const auto& d : partial_dirs(target)) {
    if (resumable(d)) {
      kept.push_back(d);
      continue;
    }
    try {
      DirLock lock(d);  // throws while the run that owns it is alive
    } catch (const std::runtime_error&) {
      continue;
    }
    std::error_code ec;
    fs::remove_all(d, ec);
  }
  return kept;
}

DirLock::DirLock(const fs::path& dir) {
  const fs::path file = dir / ".lock";
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw std::runtime_error("cannot lock " + dir.string() + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error(dir.string() + " is in use by another vigor run that is still going");
  }
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace vigor::host
