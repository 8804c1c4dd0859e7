#include "host/output/tables.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "host/output/tangent_report.hpp"
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

namespace {

/// v's first n values as a column's vector: moved when it holds exactly n (the usual case),
/// copied otherwise.
template <class T>
std::vector<T> first_n(std::vector<T>&& v, std::size_t n) {
  if (v.size() == n) return std::move(v);
  return std::vector<T>(v.begin(), v.begin() + std::ptrdiff_t(std::min(n, v.size())));
}

}  // namespace

std::vector<Column> final_columns(FinalData&& f, double dt,
                                  const std::vector<std::string>& state_names, std::int64_t n,
                                  bool momentum, bool newton) {
  const auto un = std::size_t(n);
  std::vector<Column> c;
  c.reserve(8 + state_names.size() + kTangentColumns.size());
  auto integer = [&](std::string name, std::vector<std::int64_t> v,
                     Column::Kind kind = Column::Kind::kInteger) {
    c.push_back({std::move(name), kind, false, {}, std::move(v)});
  };
  auto real = [&](std::string name, bool run_precision, std::vector<double> v) {
    c.push_back({std::move(name), Column::Kind::kReal, run_precision, std::move(v), {}});
  };
  std::vector<std::int64_t> id(un);
  for (std::size_t i = 0; i < un; ++i) id[i] = std::int64_t(i);
  integer("trajectory", std::move(id));
  std::vector<double> t(un);
  for (std::size_t i = 0; i < un; ++i) t[i] = double(f.step[i]) * dt;
  real("t", false, std::move(t));
  // The state is one slot-major array: every component but the first is copied out, and the
  // first keeps the array itself, cut to its n values.
  const std::size_t first_state = c.size();
  for (std::size_t k = 0; k < state_names.size(); ++k) {
    std::vector<double> v;
    if (k > 0) {
      const auto first = f.state.begin() + std::ptrdiff_t(k * un);
      v.assign(first, first + std::ptrdiff_t(un));
    }
    real(state_names[k], true, std::move(v));
  }
  if (!state_names.empty()) {
    f.state.resize(un);
    c[first_state].real = std::move(f.state);
  }
  // The contract's columns first, unchanged; the optional ones after them, so positional readers
  // of explicit runs and of the first columns keep working.
  real("energy_error_max", true, first_n(std::move(f.energy_error), un));
  integer("crossings", first_n(std::move(f.crossings), un));
  std::vector<std::int64_t> status(un);
  for (std::size_t i = 0; i < un; ++i) status[i] = f.status[i];
  integer("status", std::move(status), Column::Kind::kStatus);
  if (momentum) real("momentum_error_max", true, first_n(std::move(f.momentum_error), un));
  if (newton) real("newton_residual_max", true, first_n(std::move(f.newton_residual), un));
  if (!f.tangent_out.empty())
    for (std::size_t k = 0; k < kTangentColumns.size(); ++k) {
      const auto first = f.tangent_out.begin() + std::ptrdiff_t(k * un);
      real(kTangentColumns[k], true, std::vector<double>(first, first + std::ptrdiff_t(un)));
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
  const std::size_t rows = columns.empty()                          ? 0
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
