#include "host/output.hpp"

#include <unistd.h>

#include <charconv>
#include <cstdio>
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

}  // namespace

OutputDir::OutputDir(const std::string& target, bool force) : target_(target), force_(force) {
  std::error_code ec;
  if (holds_anything(target_) && !force_)
    throw JobError("output.dir",
                   "\"" + target + "\" already exists and is not empty; pass --force to replace it");
  if (fs::exists(target_, ec) && !fs::is_directory(target_, ec))
    throw JobError("output.dir", "\"" + target + "\" exists and is not a directory");
  fs::path parent = target_.parent_path();
  if (parent.empty()) parent = ".";
  fs::create_directories(parent, ec);
  if (ec)
    throw JobError("output.dir", "cannot create \"" + parent.string() + "\": " + ec.message());
  std::string leaf = target_.filename().string();
  if (leaf.empty() || leaf == "." || leaf == "..")
    throw JobError("output.dir", "\"" + target + "\" does not name a directory to create");
  temp_ = parent / ("." + leaf + ".partial-" + std::to_string(::getpid()));
  fs::remove_all(temp_, ec);
  if (!fs::create_directory(temp_, ec) || ec)
    throw JobError("output.dir", "cannot write in \"" + parent.string() + "\": " +
                                     (ec ? ec.message() : std::string("permission denied")));
}

OutputDir::~OutputDir() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(temp_, ec);
  }
}

void OutputDir::commit() {
  std::error_code ec;
  fs::path old;
  if (fs::exists(target_, ec)) {
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

void write_sections_csv(const fs::path& file, const HitStore& hits,
                        const std::vector<std::string>& state_names, std::int64_t n,
                        bool float_precision) {
  // Hits arrive in drain order (chronological per trajectory); a stable counting sort by
  // trajectory gives the contract's order without comparing times.
  std::vector<std::int64_t> start(std::size_t(n) + 1, 0);
  for (auto t : hits.trajectory) ++start[std::size_t(t) + 1];
  for (std::int64_t i = 0; i < n; ++i) start[i + 1] += start[i];
  std::vector<std::int64_t> order(hits.size());
  {
    std::vector<std::int64_t> next(start.begin(), start.end() - 1);
    for (std::size_t k = 0; k < hits.size(); ++k) order[next[hits.trajectory[k]]++] = k;
  }
  const int w = hits.dim + 1;
  CsvWriter out(file);
  out.text("trajectory,crossing,t");
  for (const auto& s : state_names) out.text("," + s);
  out.endl();
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t r = start[i]; r < start[i + 1]; ++r) {
      const double* v = &hits.values[std::size_t(order[r]) * w];
      out.integer(i);
      out.sep();
      out.integer(r - start[i]);
      for (int c = 0; c < w; ++c) {
        out.sep();
        out.real(v[c], float_precision);
      }
      out.endl();
    }
  }
  out.close();
}

void write_final_csv(const fs::path& file, const FinalData& f, double dt,
                     const std::vector<std::string>& state_names, std::int64_t n,
                     bool float_precision) {
  const int dim = int(state_names.size());
  CsvWriter out(file);
  out.text("trajectory,t");
  for (const auto& s : state_names) out.text("," + s);
  out.text(",energy_error_max,crossings,status");
  out.endl();
  for (std::int64_t i = 0; i < n; ++i) {
    out.integer(i);
    out.sep();
    out.real(double(f.step[i]) * dt, false);
    for (int c = 0; c < dim; ++c) {
      out.sep();
      out.real(f.state[std::size_t(c) * n + i], float_precision);
    }
    out.sep();
    out.real(f.energy_error[i], float_precision);
    out.sep();
    out.integer(f.crossings[i]);
    out.sep();
    out.text(status_name(f.status[i]));
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
