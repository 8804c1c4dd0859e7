#include "host/output.hpp"
#include "host/tangent_report.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "host/job.hpp"
#include "kernels/core/config.hpp"

namespace vigor::host {

namespace fs = std::filesystem;

namespace {

/// Buffered writer of CSV numbers: shortest round-trip text (to_chars), so values read back
/// bit-identically; float runs print the float value's shortest form.
class CsvWriter {
 public:
  explicit CsvWriter(const fs::path& file) : f_(std::fopen(file.c_str(), "wb")), path_(file) {
    if (!f_) throw std::runtime_error("cannot write " + file.string());
    buf_.reserve(1 << 20);
  }
  ~CsvWriter() {
    if (f_) std::fclose(f_);
  }
  void text(const std::string& s) { buf_ += s; }
  void sep() { buf_ += ','; }
  void endl() {
    buf_ += '\n';
    if (buf_.size() > (1 << 20) - 4096) flush();
  }
  void integer(std::int64_t v) { append(std::to_chars(tmp_, tmp_ + sizeof tmp_, v)); }
  void real(double v, bool as_float) {
    if (as_float)
      append(std::to_chars(tmp_, tmp_ + sizeof tmp_, float(v)));
    else
      append(std::to_chars(tmp_, tmp_ + sizeof tmp_, v));
  }
  void close() {
    flush();
    if (std::fclose(f_) != 0) {
      f_ = nullptr;
      throw std::runtime_error("cannot write " + path_.string() + " (disk full?)");
    }
    f_ = nullptr;
  }

 private:
  void append(std::to_chars_result r) { buf_.append(tmp_, r.ptr); }
  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
      throw std::runtime_error("cannot write " + path_.string() + " (disk full?)");
    buf_.clear();
  }
  std::FILE* f_;
  fs::path path_;
  std::string buf_;
  char tmp_[64];
};

bool holds_anything(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec) && !(fs::is_directory(p, ec) && fs::is_empty(p, ec));
}

/// The target as given, lexically normalised, without a trailing separator ("res/" is "res").
fs::path normalised(const std::string& target) {
  fs::path p = fs::path(target).lexically_normal();
  if (!p.has_filename() && p.has_relative_path()) p = p.parent_path();
  return p;
}

/// Renames `from` to `to` unless `to` exists (atomically where the system can). Returns false
/// without touching anything when `to` exists.
bool rename_no_replace(const fs::path& from, const fs::path& to, std::error_code& ec) {
  ec.clear();
#if defined(RENAME_NOREPLACE)
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno == EEXIST) return false;
  if (errno != EINVAL && errno != ENOSYS) {
    ec = std::error_code(errno, std::generic_category());
    return true;
  }
  // The file system cannot rename without replacing: check, then rename.
#endif
  if (fs::exists(fs::symlink_status(to, ec))) return false;
  fs::rename(from, to, ec);
  return true;
}

}  // namespace

void OutputDir::check_target(const std::string& target) {
  std::error_code ec;
  const std::string shown = "\"" + target + "\"";
  // symlink_status: a dangling or looping symbolic link exists too (and is not a directory).
  if (fs::exists(fs::symlink_status(target_, ec)) && !fs::is_directory(target_, ec))
    throw JobError("output.dir", shown + " exists and is not a directory");
  if (holds_anything(target_) && !force_)
    throw JobError("output.dir",
                   shown + " already exists and is not empty; pass --force to replace it");
  target_was_empty_dir_ = fs::is_directory(target_, ec);
  const std::string leaf = target_.filename().string();
  if (leaf.empty() || leaf == "." || leaf == "..")
    throw JobError("output.dir", shown + " does not name a directory to create");
}

OutputDir::OutputDir(const std::string& target, bool force, fs::path temp)
    : target_(normalised(target)), temp_(std::move(temp)), force_(force) {
  kept_ = true;  // it holds a checkpoint: never removed, whatever fails
  check_target(target);
}

void OutputDir::remove_scratch(const fs::path& temp) noexcept {
  std::error_code ec;
  for (const char* f : {"hits.spill", "chunks.bin", "checkpoint.bin.tmp", "checkpoint.bin", ".lock"})
    fs::remove(temp / f, ec);
}

OutputDir::OutputDir(const std::string& target, bool force)
    : target_(normalised(target)), force_(force) {
  check_target(target);
  std::error_code ec;
  const std::string leaf = target_.filename().string();
  fs::path parent = target_.parent_path();
  if (parent.empty()) parent = ".";
  // The ancestors that do not exist yet are created here, and removed again if the run fails. A
  // dangling or looping symbolic link on the way is not created here: never removed.
  for (fs::path p = parent; !p.empty() && !fs::exists(fs::symlink_status(p, ec));
       p = p.parent_path()) {
    created_.push_back(p);
    if (p == p.parent_path()) break;
  }
  try {
    fs::create_directories(parent, ec);
    if (ec)
      throw JobError("output.dir", "cannot create \"" + parent.string() + "\": " + ec.message());
    temp_ = parent / ("." + leaf + ".partial-" + std::to_string(::getpid()));
    fs::remove_all(temp_, ec);
    if (!fs::create_directory(temp_, ec) || ec)
      throw JobError("output.dir", "cannot write in \"" + parent.string() + "\": " +
                                       (ec ? ec.message() : std::string("permission denied")));
  } catch (...) {
    discard();
    throw;
  }
}

OutputDir::~OutputDir() {
  if (!committed_ && !kept_) discard();
}

void OutputDir::discard() noexcept {
  std::error_code ec;
  if (!temp_.empty()) fs::remove_all(temp_, ec);
  // Deepest first; fs::remove leaves a directory that something else has put files into.
  for (const auto& p : created_) fs::remove(p, ec);
}

void OutputDir::commit() {
  std::error_code ec;
  const std::string shown = "\"" + target_.string() + "\"";
  if (!force_ && !target_was_empty_dir_) {
    // Nothing was there at the start: never replace what appeared since.
    if (!rename_no_replace(temp_, target_, ec))
      throw std::runtime_error(shown +
                               " appeared during the run and is left untouched (pass --force to "
                               "replace it); the results were discarded");
    if (ec) throw std::runtime_error("cannot move results into " + shown + ": " + ec.message());
    committed_ = true;
    return;
  }
  if (!force_ && holds_anything(target_))
    throw std::runtime_error(shown +
                             " was filled during the run and is left untouched (pass --force to "
                             "replace it); the results were discarded");
  fs::path old;
  if (fs::exists(fs::symlink_status(target_, ec))) {
    // Move the previous results aside first, so a failure below still leaves one complete copy.
    old = target_;
    old += ".old-" + std::to_string(::getpid());
    fs::rename(target_, old, ec);
    if (ec) throw std::runtime_error("cannot replace " + target_.string() + ": " + ec.message());
  }
  fs::rename(temp_, target_, ec);
  if (ec) {
    if (!old.empty()) fs::rename(old, target_, ec);
    throw std::runtime_error("cannot move results into " + target_.string() + ": " + ec.message());
  }
  committed_ = true;
  if (!old.empty()) fs::remove_all(old, ec);
}

void HitStore::append(const HitBlock& b) {
  dim = b.dim;
  trajectory.insert(trajectory.end(), b.trajectory.begin(), b.trajectory.end());
  values.insert(values.end(), b.values.begin(), b.values.end());
}

HitSpill::HitSpill(fs::path file, int dim, std::int64_t n)
    : file_(std::move(file)), dim_(dim), n_(n), counts_(std::size_t(n), 0) {
  f_ = std::fopen(file_.c_str(), "wb");
  if (!f_) throw std::runtime_error("cannot write " + file_.string() + ": " + std::strerror(errno));
  buf_.reserve(std::size_t(4) << 20);
}

HitSpill::~HitSpill() {
  if (!kept_) {
    remove();
  } else if (f_) {
    std::fclose(f_);
    f_ = nullptr;
  }
}

void HitSpill::flush() {
  if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
    throw std::runtime_error("cannot write " + file_.string() + " (disk full?)");
  buf_.clear();
}

void HitSpill::append(const HitBlock& b) {
  if (!f_) throw std::logic_error("HitSpill::append after finish()");
  if (b.trajectory.empty()) return;
  if (b.dim != dim_)
    throw std::logic_error("HitSpill::append: blocks of " + std::to_string(b.dim) +
                           " components, expected " + std::to_string(dim_));
  const std::size_t w = std::size_t(dim_) + 1;
  const std::size_t rec = record_bytes();
  for (std::size_t k = 0; k < b.trajectory.size(); ++k) {
    const std::int64_t t = b.trajectory[k];
    if (t < 0 || t >= n_)
      throw std::runtime_error("hit of trajectory " + std::to_string(t) + " in a run of " +
                               std::to_string(n_));
    if (buf_.size() + rec > buf_.capacity()) flush();
    const std::size_t at = buf_.size();
    buf_.resize(at + rec);
    std::memcpy(buf_.data() + at, &t, sizeof t);
    std::memcpy(buf_.data() + at + sizeof t, b.values.data() + k * w, w * sizeof(double));
    ++counts_[std::size_t(t)];
    ++total_;
  }
}

HitSpill::HitSpill(fs::path file, int dim, std::int64_t n, std::int64_t records)
    : file_(std::move(file)), dim_(dim), n_(n), counts_(std::size_t(n), 0) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(file_, ec);
  const std::uintmax_t keep = std::uintmax_t(records) * record_bytes();
  if (ec || records < 0 || size < keep)
    throw std::runtime_error("the section spill " + file_.string() + " holds fewer than the " +
                             std::to_string(records) + " records its checkpoint counts");
  fs::resize_file(file_, keep, ec);
  if (ec) throw std::runtime_error("cannot truncate " + file_.string() + ": " + ec.message());
  total_ = records;
  if (records > 0) {
    // The per-trajectory counts, from the records themselves.
    for_each_spill_block(*this, std::size_t(1) << 16, [&](const HitBlock& b) {
      for (const std::int64_t t : b.trajectory) {
        if (t < 0 || t >= n_)
          throw std::runtime_error("the section spill " + file_.string() + " names trajectory " +
                                   std::to_string(t) + " in a run of " + std::to_string(n_));
        ++counts_[std::size_t(t)];
      }
    });
  }
  f_ = std::fopen(file_.c_str(), "ab");
  if (!f_) throw std::runtime_error("cannot write " + file_.string() + ": " + std::strerror(errno));
  buf_.reserve(std::size_t(4) << 20);
}

void HitSpill::sync() {
  if (!f_) return;
  flush();
  if (std::fflush(f_) != 0 || ::fsync(::fileno(f_)) != 0)
    throw std::runtime_error("cannot write " + file_.string() + " (disk full?)");
}

void HitSpill::finish() {
  if (!f_) return;
  flush();
  const int rc = std::fclose(f_);
  f_ = nullptr;
  if (rc != 0) throw std::runtime_error("cannot write " + file_.string() + " (disk full?)");
}

void HitSpill::remove() noexcept {
  if (f_) {
    std::fclose(f_);
    f_ = nullptr;
  }
  std::error_code ec;
  if (!file_.empty()) fs::remove(file_, ec);
}

namespace {

/// Reads a finished spill file record by record, in chunks.
class SpillReader {
 public:
  explicit SpillReader(const HitSpill& spill)
      : f_(std::fopen(spill.file().c_str(), "rb")),
        path_(spill.file()),
        words_(spill.record_bytes() / sizeof(double)) {
    if (!f_)
      throw std::runtime_error("cannot read " + path_.string() + ": " + std::strerror(errno));
    // A whole number of records, in 8-byte words: the trajectory id, then t and the state.
    buf_.resize(std::max<std::size_t>(1, (std::size_t(1) << 19) / words_) * words_);
  }
  ~SpillReader() { std::fclose(f_); }
  SpillReader(const SpillReader&) = delete;
  SpillReader& operator=(const SpillReader&) = delete;

  /// Calls f(trajectory, const double* values) for every record, in file order.
  template <class F>
  void for_each(std::int64_t expected, F&& f) {
    std::rewind(f_);
    std::int64_t seen = 0;
    for (;;) {
      const std::size_t got = std::fread(buf_.data(), sizeof(double), buf_.size(), f_);
      if (got % words_ != 0) break;
      for (std::size_t at = 0; at < got; at += words_) {
        std::int64_t t;
        std::memcpy(&t, &buf_[at], sizeof t);
        f(t, &buf_[at + 1]);
        ++seen;
      }
      if (got < buf_.size()) break;
    }
    if (std::ferror(f_) || seen != expected)
      throw std::runtime_error("cannot read " + path_.string() + " back (" + std::to_string(seen) +
                               " of " + std::to_string(expected) + " records)");
  }

 private:
  std::FILE* f_;
  fs::path path_;
  std::size_t words_;
  std::vector<double> buf_;
};

void write_row(CsvWriter& out, std::int64_t trajectory, std::int64_t crossing, const double* v,
               int w, bool float_precision) {
  out.integer(trajectory);
  out.sep();
  out.integer(crossing);
  for (int c = 0; c < w; ++c) {
    out.sep();
    out.real(v[c], float_precision);
  }
  out.endl();
}

}  // namespace

void write_sections_csv(const fs::path& file, const HitSpill& hits,
                        const std::vector<std::string>& state_names, bool float_precision,
                        std::size_t memory_budget) {
  const std::int64_t n = hits.trajectories();
  const int w = hits.dim() + 1;
  const auto& counts = hits.counts();
  CsvWriter out(file);
  out.text("trajectory,crossing,t");
  for (const auto& s : state_names) out.text("," + s);
  out.endl();
  if (hits.total() == 0) {
    out.close();
    return;
  }
  SpillReader reader(hits);
  // Records per pass: values only (the trajectory is implied by the position).
  const std::int64_t budget_records =
      std::max<std::int64_t>(1, std::int64_t(memory_budget / (std::size_t(w) * sizeof(double))));
  std::vector<double> values;
  std::vector<std::int64_t> start;  // offsets of the range's trajectories, then their cursors
  for (std::int64_t a = 0; a < n;) {
    // The range [a, b): as many trajectories as fit in the budget, at least one.
    std::int64_t b = a, records = 0;
    while (b < n && (b == a || records + counts[std::size_t(b)] <= budget_records))
      records += counts[std::size_t(b++)];
    if (records == 0) {
      a = b;
      continue;
    }
    if (records > budget_records) {
      // One trajectory alone beyond the budget: its records are in order in the file already.
      std::int64_t crossing = 0;
      reader.for_each(hits.total(), [&](std::int64_t t, const double* v) {
        if (t == a) write_row(out, t, crossing++, v, w, float_precision);
      });
      a = b;
      continue;
    }
    // Counting sort of the range: offsets from the counts, then one read placing each record.
    // Stable, so each trajectory keeps its drain order, which is chronological.
    start.assign(std::size_t(b - a) + 1, 0);
    for (std::int64_t i = a; i < b; ++i)
      start[std::size_t(i - a) + 1] = start[std::size_t(i - a)] + counts[std::size_t(i)];
    std::vector<std::int64_t> next(start.begin(), start.end() - 1);
    values.resize(std::size_t(records) * std::size_t(w));
    reader.for_each(hits.total(), [&](std::int64_t t, const double* v) {
      if (t < a || t >= b) return;
      std::memcpy(&values[std::size_t(next[std::size_t(t - a)]++) * std::size_t(w)], v,
                  std::size_t(w) * sizeof(double));
    });
    for (std::int64_t i = a; i < b; ++i)
      for (std::int64_t r = start[std::size_t(i - a)]; r < start[std::size_t(i - a) + 1]; ++r)
        write_row(out, i, r - start[std::size_t(i - a)], &values[std::size_t(r) * std::size_t(w)],
                  w, float_precision);
    a = b;
  }
  out.close();
}

void for_each_spill_block(const HitSpill& hits, std::size_t max_records,
                          const std::function<void(const HitBlock&)>& f) {
  if (hits.total() == 0) return;
  const std::size_t w = std::size_t(hits.dim()) + 1;
  max_records = std::max<std::size_t>(1, max_records);
  HitBlock block;
  block.dim = hits.dim();
  SpillReader reader(hits);
  reader.for_each(hits.total(), [&](std::int64_t t, const double* v) {
    block.trajectory.push_back(t);
    block.values.insert(block.values.end(), v, v + w);
    if (block.trajectory.size() == max_records) {
      f(block);
      block.clear();
    }
  });
  if (!block.trajectory.empty()) f(block);
}

std::vector<Column> final_columns(const FinalData& f, double dt,
                                  const std::vector<std::string>& state_names, std::int64_t n,
                                  bool momentum, bool newton) {
  const auto un = std::size_t(n);
  std::vector<Column> c;
  auto integer = [&](std::string name, Column::Kind kind = Column::Kind::kInteger) -> Column& {
    c.push_back({std::move(name), kind, false, {}, {}});
    c.back().integer.reserve(un);
    return c.back();
  };
  auto real = [&](std::string name, bool run_precision) -> Column& {
    c.push_back({std::move(name), Column::Kind::kReal, run_precision, {}, {}});
    c.back().real.reserve(un);
    return c.back();
  };
  Column& id = integer("trajectory");
  for (std::int64_t i = 0; i < n; ++i) id.integer.push_back(i);
  Column& t = real("t", false);
  for (std::int64_t i = 0; i < n; ++i) t.real.push_back(double(f.step[std::size_t(i)]) * dt);
  for (std::size_t k = 0; k < state_names.size(); ++k) {
    const auto first = f.state.begin() + std::ptrdiff_t(k * un);
    real(state_names[k], true).real.assign(first, first + std::ptrdiff_t(un));
  }
  // The contract's columns first, unchanged; the optional ones after them, so positional readers
  // of explicit runs and of the first columns keep working.
  real("energy_error_max", true).real.assign(f.energy_error.begin(), f.energy_error.begin() + n);
  integer("crossings").integer.assign(f.crossings.begin(), f.crossings.begin() + n);
  Column& status = integer("status", Column::Kind::kStatus);
  for (std::int64_t i = 0; i < n; ++i) status.integer.push_back(f.status[std::size_t(i)]);
  if (momentum)
    real("momentum_error_max", true)
        .real.assign(f.momentum_error.begin(), f.momentum_error.begin() + n);
  if (newton)
    real("newton_residual_max", true)
        .real.assign(f.newton_residual.begin(), f.newton_residual.begin() + n);
  if (!f.tangent_out.empty())
    for (std::size_t k = 0; k < kTangentColumns.size(); ++k) {
      const auto first = f.tangent_out.begin() + std::ptrdiff_t(k * un);
      real(kTangentColumns[k], true).real.assign(first, first + std::ptrdiff_t(un));
    }
  return c;
}

std::vector<Column> initial_columns(const std::vector<double>& state_soa,
                                    const std::vector<std::string>& state_names, std::int64_t n) {
  std::vector<Column> c;
  for (std::size_t k = 0; k < state_names.size(); ++k) {
    const auto first = state_soa.begin() + std::ptrdiff_t(k * std::size_t(n));
    c.push_back({state_names[k], Column::Kind::kReal, false, {first, first + n}, {}});
  }
  return c;
}

void write_csv(const fs::path& file, const std::vector<Column>& columns, bool float_precision) {
  CsvWriter out(file);
  for (std::size_t k = 0; k < columns.size(); ++k) out.text((k ? "," : "") + columns[k].name);
  out.endl();
  const std::size_t rows = columns.empty() ? 0
                           : columns[0].kind == Column::Kind::kReal ? columns[0].real.size()
                                                                     : columns[0].integer.size();
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t k = 0; k < columns.size(); ++k) {
      const Column& c = columns[k];
      if (k) out.sep();
      switch (c.kind) {
        case Column::Kind::kReal:
          out.real(c.real[i], float_precision && c.run_precision);
          break;
        case Column::Kind::kInteger:
          out.integer(c.integer[i]);
          break;
        case Column::Kind::kStatus:
          out.text(status_name(std::int32_t(c.integer[i])));
          break;
      }
    }
    out.endl();
  }
  out.close();
}

void write_json(const fs::path& file, const nlohmann::ordered_json& j) {
  std::ofstream out(file);
  out << j.dump(2) << '\n';
  out.close();
  if (!out) throw std::runtime_error("cannot write " + file.string() + " (disk full?)");
}

const char* status_name(std::int32_t status) {
  switch (status) {
    case kernels::kStatusOk:
      return "ok";
    case kernels::kStatusNonFinite:
      return "non-finite";
    case kernels::kStatusEscaped:
      return "escaped";
    case kernels::kStatusNewtonNotConverged:
      return "newton-not-converged";
    default:
      return "unknown";
  }
}

}  // namespace vigor::host
