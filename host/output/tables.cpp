#include "host/output/tables.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <stdexcept>
#include <string_view>

#include "host/backends/cpu_info.hpp"
#include "host/output/tangent_report.hpp"
#include "kernels/core/config.hpp"

namespace vigor::host {

namespace fs = std::filesystem;

namespace {

/// CSV text in a buffer: numbers in their shortest round-trip form (to_chars), so values read
/// back bit-identically; float runs print the float value's shortest form.
class CsvText {
 public:
  void text(std::string_view s) { buf_ += s; }
  void sep() { buf_ += ','; }
  void endl() { buf_ += '\n'; }
  void integer(std::int64_t v) { append(std::to_chars(tmp_, tmp_ + sizeof tmp_, v)); }
  void real(double v, bool as_float) {
    if (as_float)
      append(std::to_chars(tmp_, tmp_ + sizeof tmp_, float(v)));
    else
      append(std::to_chars(tmp_, tmp_ + sizeof tmp_, v));
  }
  const std::string& str() const { return buf_; }
  void clear() { buf_.clear(); }

 private:
  void append(std::to_chars_result r) { buf_.append(tmp_, r.ptr); }
  std::string buf_;
  char tmp_[64];
};

/// A CSV file written from blocks of text; every failed write throws, naming the file.
class CsvFile {
 public:
  explicit CsvFile(const fs::path& file) : f_(std::fopen(file.c_str(), "wb")), path_(file) {
    if (!f_) throw std::runtime_error("cannot write " + file.string());
  }
  ~CsvFile() {
    if (f_) std::fclose(f_);
  }
  CsvFile(const CsvFile&) = delete;
  CsvFile& operator=(const CsvFile&) = delete;
  void write(const std::string& s) {
    if (!s.empty() && std::fwrite(s.data(), 1, s.size(), f_) != s.size()) fail();
  }
  void close() {
    std::FILE* f = f_;
    f_ = nullptr;
    if (std::fclose(f) != 0) fail();
  }

 private:
  [[noreturn]] void fail() const {
    throw std::runtime_error("cannot write " + path_.string() + " (disk full?)");
  }
  std::FILE* f_;
  fs::path path_;
};

/// A CSV file written row by row through a 1 MiB buffer.
class CsvWriter : public CsvText {
 public:
  explicit CsvWriter(const fs::path& file) : file_(file) {}
  void endl() {
    CsvText::endl();
    if (str().size() > (1 << 20) - 4096) flush();
  }
  void close() {
    flush();
    file_.close();
  }

 private:
  void flush() {
    file_.write(str());
    clear();
  }
  CsvFile file_;
};

template <class Out>
void write_row(Out& out, std::int64_t trajectory, std::int64_t crossing, const double* v, int w,
               bool float_precision) {
  out.integer(trajectory);
  out.sep();
  out.integer(crossing);
  for (int c = 0; c < w; ++c) {
    out.sep();
    out.real(v[c], float_precision);
  }
  out.endl();
}

/// The records of trajectories [a, b), sorted by trajectory in drain order: trajectory i's are
/// records start[i - a] to start[i - a + 1] - 1 of `values` (w values each).
struct SortedRange {
  std::int64_t a = 0, b = 0;
  std::vector<std::int64_t> start;
  std::vector<double> values;
  int w = 0;
};

/// Records per piece of a range that one thread formats: a few MiB of text, and at least four
/// pieces per thread so that formatting and writing overlap.
std::int64_t piece_records(std::int64_t records, int threads) {
  constexpr std::int64_t kMostRecords = std::int64_t(1) << 15;
  return std::clamp<std::int64_t>(records / (4 * std::int64_t(threads)), 1, kMostRecords);
}

/// The pieces of a range: trajectory boundaries a = cut[0] < ... < cut.back() = b, cut where a
/// piece reaches `per_piece` records (a trajectory is never split).
std::vector<std::int64_t> piece_cuts(const SortedRange& r, std::int64_t per_piece) {
  std::vector<std::int64_t> cut{r.a};
  for (std::int64_t i = r.a; i < r.b; ++i)
    if (r.start[std::size_t(i + 1 - r.a)] - r.start[std::size_t(cut.back() - r.a)] >= per_piece)
      cut.push_back(i + 1);
  if (cut.back() != r.b) cut.push_back(r.b);
  return cut;
}

/// The rows of trajectories [i0, i1) of a sorted range.
void format_rows(CsvText& out, const SortedRange& r, std::int64_t i0, std::int64_t i1,
                 bool float_precision) {
  for (std::int64_t i = i0; i < i1; ++i) {
    const std::int64_t first = r.start[std::size_t(i - r.a)];
    for (std::int64_t k = first; k < r.start[std::size_t(i - r.a) + 1]; ++k)
      write_row(out, i, k - first, &r.values[std::size_t(k) * std::size_t(r.w)], r.w,
                float_precision);
  }
}

/// The rows of a sorted range, formatted in pieces on `threads` threads and written in order:
/// each piece is written when its turn comes (an ordered loop), while later pieces are formatted.
void write_range(CsvFile& file, const SortedRange& r, bool float_precision, int threads) {
  const std::int64_t records = r.start.back();
  const std::vector<std::int64_t> cut = piece_cuts(r, piece_records(records, threads));
  const auto pieces = std::int64_t(cut.size()) - 1;
  std::exception_ptr error;  // of a write: set and read only inside the ordered region
#pragma omp parallel num_threads(threads)
  {
    CsvText text;
#pragma omp for ordered schedule(dynamic, 1)
    for (std::int64_t k = 0; k < pieces; ++k) {
      text.clear();
      format_rows(text, r, cut[std::size_t(k)], cut[std::size_t(k) + 1], float_precision);
#pragma omp ordered
      {
        if (!error) try {
            file.write(text.str());
          } catch (...) {
            error = std::current_exception();
          }
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

/// Trajectory a's records when they alone exceed the sort's budget: in file order, which is
/// theirs, formatted as they are read.
void write_one_trajectory(CsvFile& file, SpillReader& reader, const HitSpill& hits, std::int64_t a,
                          bool float_precision) {
  CsvText text;
  std::int64_t crossing = 0;
  reader.for_each(hits.total(), [&](std::int64_t t, const double* v) {
    if (t != a) return;
    write_row(text, t, crossing++, v, hits.dim() + 1, float_precision);
    if (text.str().size() > (1 << 20)) {
      file.write(text.str());
      text.clear();
    }
  });
  file.write(text.str());
}

/// Reads the records of trajectories [r.a, r.b) from the spill into r, sorted: a counting sort,
/// offsets from the counts, then one read placing each record. Stable, so each trajectory keeps
/// its drain order, which is chronological.
void sort_range(SortedRange& r, SpillReader& reader, const HitSpill& hits) {
  const auto& counts = hits.counts();
  r.w = hits.dim() + 1;
  r.start.assign(std::size_t(r.b - r.a) + 1, 0);
  for (std::int64_t i = r.a; i < r.b; ++i)
    r.start[std::size_t(i - r.a) + 1] = r.start[std::size_t(i - r.a)] + counts[std::size_t(i)];
  std::vector<std::int64_t> next(r.start.begin(), r.start.end() - 1);
  r.values.resize(std::size_t(r.start.back()) * std::size_t(r.w));
  reader.for_each(hits.total(), [&](std::int64_t t, const double* v) {
    if (t < r.a || t >= r.b) return;
    std::memcpy(&r.values[std::size_t(next[std::size_t(t - r.a)]++) * std::size_t(r.w)], v,
                std::size_t(r.w) * sizeof(double));
  });
}

}  // namespace

void write_sections_csv(const fs::path& file, const HitSpill& hits,
                        const std::vector<std::string>& state_names, bool float_precision,
                        int threads, std::size_t memory_budget) {
  const std::int64_t n = hits.trajectories();
  const auto& counts = hits.counts();
  CsvFile out(file);
  CsvText header;
  header.text("trajectory,crossing,t");
  for (const auto& s : state_names) header.text("," + s);
  header.endl();
  out.write(header.str());
  if (hits.total() > 0) {
    SpillReader reader(hits);
    // Records per pass: values only (the trajectory is implied by the position).
    const std::int64_t budget_records = std::max<std::int64_t>(
        1, std::int64_t(memory_budget / (std::size_t(hits.dim() + 1) * sizeof(double))));
    SortedRange range;
    for (std::int64_t a = 0; a < n;) {
      // The range [a, b): as many trajectories as fit in the budget, at least one.
      std::int64_t b = a, records = 0;
      while (b < n && (b == a || records + counts[std::size_t(b)] <= budget_records))
        records += counts[std::size_t(b++)];
      if (records > budget_records) {
        write_one_trajectory(out, reader, hits, a, float_precision);
      } else if (records > 0) {
        range.a = a;
        range.b = b;
        sort_range(range, reader, hits);
        write_range(out, range, float_precision, thread_count(threads));
      }
      a = b;
    }
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
