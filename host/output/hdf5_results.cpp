#include "host/output/hdf5_results.hpp"

#include <stdexcept>

#if defined(VIGOR_HAVE_HDF5)
#include <hdf5.h>

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>

#include "host/backends/cpu_info.hpp"
#include "kernels/core/config.hpp"
#endif

namespace vigor::host {

#if !defined(VIGOR_HAVE_HDF5)

bool hdf5_available() { return false; }

struct Hdf5Results::Impl {};

Hdf5Results::Hdf5Results(const std::filesystem::path&, const std::vector<std::string>&,
                         std::int64_t, bool, int) {
  throw std::runtime_error("this vigor was built without HDF5 (install libhdf5-dev and rebuild)");
}
Hdf5Results::~Hdf5Results() = default;
void Hdf5Results::append_sections(const HitBlock&) {}
std::size_t Hdf5Results::append_records(int) { return 1; }
void Hdf5Results::write_table(const std::string&, const std::vector<Column>&) {}
void Hdf5Results::write_series(const std::string&, const StatSeries&) {}
void Hdf5Results::write_summary(const nlohmann::ordered_json&) {}
void Hdf5Results::close() {}

#else

bool hdf5_available() { return true; }

namespace {

/// Rows per chunk: 64 Ki values (512 KiB of doubles) compress well and keep appends cheap.
constexpr hsize_t kChunkRows = hsize_t(1) << 16;
constexpr unsigned kDeflateLevel = 4;
/// Values compressed at once before their chunks are written: the memory a write holds.
constexpr std::size_t kBatchBytes = std::size_t(32) << 20;

/// One chunk as the shuffle and deflate filters of a dataset store it: the elements' bytes as
/// planes (byte 0 of every element, then byte 1, ...), compressed in zlib's format at
/// kDeflateLevel, as HDF5's deflate filter does. Written with H5Dwrite_chunk, HDF5 reads it back
/// through the same pipeline; compressing here lets every core take chunks of its own, where
/// HDF5's pipeline compresses one chunk after another (docs/performance.md, "Writing the
/// results"). Returns false when zlib fails.
bool shuffle_deflate(const unsigned char* elements, std::size_t count, std::size_t size,
                     std::vector<unsigned char>& planes, std::vector<unsigned char>& out) {
  planes.resize(count * size);
  for (std::size_t b = 0; b < size; ++b)
    for (std::size_t e = 0; e < count; ++e) planes[b * count + e] = elements[e * size + b];
  uLongf bytes = compressBound(uLong(planes.size()));
  out.resize(bytes);
  if (compress2(out.data(), &bytes, planes.data(), uLong(planes.size()), int(kDeflateLevel)) !=
      Z_OK)
    return false;
  out.resize(bytes);
  return true;
}

/// One column's rows as bytes (a /sections block's, or a whole table column): its dataset, name,
/// memory type and values.
struct ColumnBytes {
  hid_t dataset;
  std::string what;
  hid_t type;
  const unsigned char* bytes;
  std::size_t size;  ///< bytes per element
};

/// An HDF5 identifier closed by its own close function when it leaves scope.
class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(close_, o.close_);
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  herr_t reset() {
    herr_t r = 0;
    if (id_ >= 0 && close_) r = close_(id_);
    id_ = H5I_INVALID_HID;
    return r;
  }
  hid_t get() const { return id_; }

 private:
  hid_t id_ = H5I_INVALID_HID;
  herr_t (*close_)(hid_t) = nullptr;
};

/// Throws when an HDF5 call failed (negative identifier or status).
hid_t check(hid_t r, const std::filesystem::path& file, const std::string& what) {
  if (r < 0) throw std::runtime_error("cannot write " + file.string() + ": " + what);
  return r;
}

/// The status codes as an HDF5 enumeration, so readers get their names with the data.
Handle status_type() {
  Handle t(H5Tenum_create(H5T_NATIVE_INT8), H5Tclose);
  const std::pair<const char*, std::int8_t> codes[] = {
      {"ok", std::int8_t(kernels::kStatusOk)},
      {"non-finite", std::int8_t(kernels::kStatusNonFinite)},
      {"escaped", std::int8_t(kernels::kStatusEscaped)},
      {"newton-not-converged", std::int8_t(kernels::kStatusNewtonNotConverged)}};
  for (const auto& [name, code] : codes) H5Tenum_insert(t.get(), name, &code);
  return t;
}

Handle utf8_string_type() {
  Handle t(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(t.get(), H5T_VARIABLE);
  H5Tset_cset(t.get(), H5T_CSET_UTF8);
  return t;
}

}  // namespace

struct Hdf5Results::Impl {
  std::filesystem::path path;
  std::vector<std::string> names;  ///< state names
  bool as_float = false;
  int threads = 1;  ///< that compress the chunks of /sections
  Handle file, sections;
  /// /sections datasets: trajectory, crossing, t, then one per state component.
  std::vector<Handle> columns;
  std::vector<std::int64_t> crossings;  ///< per trajectory, so far
  hsize_t rows = 0;
  // Reused append buffers (one block's rows).
  std::vector<std::int64_t> ibuf;
  std::vector<double> dbuf;
  std::vector<float> fbuf;

  hid_t real_type(bool run_precision) const {
    return as_float && run_precision ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  }

  Handle group(const std::string& name) {
    return Handle(check(H5Gcreate2(file.get(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                        path, "group " + name),
                  H5Gclose);
  }

  /// A 1-D dataset of `rows` rows (extendible when `rows` is unlimited growth: extendible).
  Handle dataset(hid_t where, const std::string& name, hid_t type, hsize_t rows_now,
                 bool extendible) {
    const hsize_t max = extendible ? H5S_UNLIMITED : rows_now;
    Handle space(check(H5Screate_simple(1, &rows_now, &max), path, "dataspace"), H5Sclose);
    Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    // Chunking (needed for compression and for growth); an empty fixed table needs none.
    if (extendible || rows_now > 0) {
      const hsize_t chunk =
          std::max<hsize_t>(1, std::min(kChunkRows, extendible ? kChunkRows : rows_now));
      check(H5Pset_chunk(dcpl.get(), 1, &chunk), path, "chunking of " + name);
      check(H5Pset_shuffle(dcpl.get()), path, "shuffle filter of " + name);
      check(H5Pset_deflate(dcpl.get(), kDeflateLevel), path, "deflate filter of " + name);
    }
    return Handle(check(H5Dcreate2(where, name.c_str(), type, space.get(), H5P_DEFAULT, dcpl.get(),
                                   H5P_DEFAULT),
                        path, "dataset " + name),
                  H5Dclose);
  }

  /// Writes `count` rows from `data` (of memory type `mem`) at row `at` of a 1-D dataset.
  void write_rows(hid_t d, hid_t mem, hsize_t at, hsize_t count, const void* data,
                  const std::string& what) {
    if (count == 0) return;
    Handle fs(check(H5Dget_space(d), path, what), H5Sclose);
    check(H5Sselect_hyperslab(fs.get(), H5S_SELECT_SET, &at, nullptr, &count, nullptr), path, what);
    Handle ms(check(H5Screate_simple(1, &count, nullptr), path, what), H5Sclose);
    check(H5Dwrite(d, mem, ms.get(), fs.get(), H5P_DEFAULT, data), path, what);
  }

  /// The /sections columns of block b (whose crossing numbers are in ibuf) in the datasets'
  /// types: trajectory, crossing, then t and the state components, column after column.
  std::vector<ColumnBytes> section_columns(const HitBlock& b, hsize_t count) {
    const std::size_t w = names.size() + 1;
    const std::size_t real_size = as_float ? sizeof(float) : sizeof(double);
    if (as_float)
      fbuf.resize(count * w);
    else
      dbuf.resize(count * w);
    for (std::size_t c = 0; c < w; ++c)
      for (hsize_t r = 0; r < count; ++r) {
        const double v = b.values[r * w + c];
        if (as_float)
          fbuf[c * count + r] = float(v);
        else
          dbuf[c * count + r] = v;
      }
    const auto* reals = as_float ? reinterpret_cast<const unsigned char*>(fbuf.data())
                                 : reinterpret_cast<const unsigned char*>(dbuf.data());
    std::vector<ColumnBytes> out{
        {columns[0].get(), "/sections/trajectory", H5T_NATIVE_INT64,
         reinterpret_cast<const unsigned char*>(b.trajectory.data()), sizeof(std::int64_t)},
        {columns[1].get(), "/sections/crossing", H5T_NATIVE_INT64,
         reinterpret_cast<const unsigned char*>(ibuf.data()), sizeof(std::int64_t)}};
    for (std::size_t c = 0; c < w; ++c)
      out.push_back({columns[2 + c].get(),
                     "/sections/" + (c == 0 ? std::string("t") : names[c - 1]), real_type(true),
                     reals + c * count * real_size, real_size});
    return out;
  }

  /// Writes `count` rows of every column at row `at`, a chunk boundary, as whole chunks of `chunk`
  /// rows (the datasets' chunk size) compressed in parallel (shuffle_deflate). A last partial
  /// chunk is padded with zeros beyond the extent, as HDF5 stores an edge chunk.
  void write_chunks(const std::vector<ColumnBytes>& cols, hsize_t at, hsize_t count,
                    hsize_t chunk = kChunkRows) {
    const std::size_t chunks = std::size_t((count + chunk - 1) / chunk);
    const std::int64_t tasks = std::int64_t(cols.size() * chunks);
    std::vector<std::vector<unsigned char> > packed(cols.size() * chunks);
    std::atomic<bool> failed{false};
#pragma omp parallel num_threads(threads)
    {
      std::vector<unsigned char> padded, planes;
#pragma omp for schedule(dynamic)
      for (std::int64_t t = 0; t < tasks; ++t) {
        const ColumnBytes& c = cols[std::size_t(t) / chunks];
        const std::size_t first = (std::size_t(t) % chunks) * chunk;
        const std::size_t n = std::min<std::size_t>(chunk, count - first);
        const unsigned char* src = c.bytes + first * c.size;
        if (n < chunk) {
          padded.assign(chunk * c.size, 0);
          std::memcpy(padded.data(), src, n * c.size);
          src = padded.data();
        }
        if (!shuffle_deflate(src, chunk, c.size, planes, packed[std::size_t(t)])) failed = true;
      }
    }
    if (failed) throw std::runtime_error("cannot write " + path.string() + ": deflate failed");
    for (std::size_t t = 0; t < packed.size(); ++t) {
      const ColumnBytes& c = cols[t / chunks];
      const hsize_t offset = at + (t % chunks) * chunk;
      check(H5Dwrite_chunk(c.dataset, H5P_DEFAULT, 0, &offset, packed[t].size(), packed[t].data()),
            path, c.what);
    }
  }

  void string_attribute(hid_t where, const char* name, const std::string& value) {
    Handle t = utf8_string_type();
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    Handle a(check(H5Acreate2(where, name, t.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), path,
                   std::string("attribute ") + name),
             H5Aclose);
    const char* p = value.c_str();
    check(H5Awrite(a.get(), t.get(), &p), path, std::string("attribute ") + name);
  }

  template <class T>
  void number_attribute(hid_t where, const char* name, hid_t type, T value) {
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    Handle a(check(H5Acreate2(where, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), path,
                   std::string("attribute ") + name),
             H5Aclose);
    check(H5Awrite(a.get(), type, &value), path, std::string("attribute ") + name);
  }
};

Hdf5Results::Hdf5Results(const std::filesystem::path& file,
                         const std::vector<std::string>& state_names, std::int64_t trajectories,
                         bool float_precision, int threads)
    : impl_(std::make_unique<Impl>()) {
  // Errors come back as return codes and become exceptions; HDF5's own stack dump would only
  // repeat them on stderr.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  Impl& m = *impl_;
  m.path = file;
  m.names = state_names;
  m.as_float = float_precision;
  m.threads = thread_count(threads);
  m.crossings.assign(std::size_t(trajectories), 0);
  m.file = Handle(check(H5Fcreate(file.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT), file,
                        "cannot create the file"),
                  H5Fclose);
  m.sections = m.group("sections");
  m.columns.push_back(m.dataset(m.sections.get(), "trajectory", H5T_NATIVE_INT64, 0, true));
  m.columns.push_back(m.dataset(m.sections.get(), "crossing", H5T_NATIVE_INT64, 0, true));
  m.columns.push_back(m.dataset(m.sections.get(), "t", m.real_type(true), 0, true));
  for (const auto& s : state_names)
    m.columns.push_back(m.dataset(m.sections.get(), s, m.real_type(true), 0, true));
}

Hdf5Results::~Hdf5Results() = default;

std::size_t Hdf5Results::append_records(int dim) {
  const std::size_t record_bytes = (std::size_t(dim) + 2) * sizeof(double);
  return std::max<std::size_t>(1, kBatchBytes / record_bytes / kChunkRows) * kChunkRows;
}

void Hdf5Results::append_sections(const HitBlock& b) {
  Impl& m = *impl_;
  const hsize_t count = b.trajectory.size();
  if (count == 0) return;
  const std::size_t w = m.names.size() + 1;
  if (b.values.size() != count * w)
    throw std::logic_error("Hdf5Results::append_sections: block of the wrong width");
  m.ibuf.resize(count);
  for (hsize_t r = 0; r < count; ++r) {
    const auto i = std::size_t(b.trajectory[r]);
    if (i >= m.crossings.size())
      throw std::logic_error("Hdf5Results::append_sections: trajectory id out of range");
    m.ibuf[r] = m.crossings[i]++;
  }
  const std::vector<ColumnBytes> columns = m.section_columns(b, count);
  const hsize_t new_rows = m.rows + count;
  for (auto& d : m.columns) check(H5Dset_extent(d.get(), &new_rows), m.path, "growing /sections");
  // Whole chunks from a chunk boundary are compressed here, on every core. A block that starts
  // inside a chunk (only after a partial one, which for_each_spill_block gives last) goes
  // through HDF5's own pipeline, which merges it into the stored chunk.
  if (m.rows % kChunkRows == 0 && std::endian::native == std::endian::little)
    m.write_chunks(columns, m.rows, count);
  else
    for (const ColumnBytes& c : columns)
      m.write_rows(c.dataset, c.type, m.rows, count, c.bytes, c.what);
  m.rows = new_rows;
}

void Hdf5Results::write_table(const std::string& group, const std::vector<Column>& columns) {
  Impl& m = *impl_;
  Handle g = m.group(group);
  Handle status = status_type();
  std::vector<Handle> datasets;
  std::vector<std::vector<unsigned char> > converted;  // float values and status codes
  std::vector<ColumnBytes> cols;
  std::vector<hsize_t> rows_of;
  for (const Column& c : columns) {
    const bool f32 = c.kind == Column::Kind::kReal && m.as_float && c.run_precision;
    ColumnBytes b{H5I_INVALID_HID, "/" + group + "/" + c.name, H5T_NATIVE_INT64, nullptr, 8};
    hid_t stored = H5T_NATIVE_INT64;
    std::size_t rows = c.integer.size();
    if (c.kind == Column::Kind::kReal) {
      rows = c.real.size();
      stored = m.real_type(c.run_precision);
      b.type = f32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
      if (f32) {
        std::vector<float> v(c.real.begin(), c.real.end());
        converted.emplace_back(reinterpret_cast<const unsigned char*>(v.data()),
                               reinterpret_cast<const unsigned char*>(v.data() + v.size()));
        b.size = sizeof(float);
      }
      b.bytes =
          f32 ? converted.back().data() : reinterpret_cast<const unsigned char*>(c.real.data());
    } else if (c.kind == Column::Kind::kStatus) {
      stored = b.type = status.get();
      converted.emplace_back(c.integer.begin(), c.integer.end());  // int8 codes
      b.bytes = converted.back().data();
      b.size = 1;
    } else {
      b.bytes = reinterpret_cast<const unsigned char*>(c.integer.data());
    }
    datasets.push_back(m.dataset(g.get(), c.name, stored, rows, false));
    b.dataset = datasets.back().get();
    cols.push_back(b);
    rows_of.push_back(rows);
  }
  // Whole columns as chunks compressed on every core, as /sections are (a final table of 10^7
  // trajectories is ~0.5 GB of values), in batches of about kBatchBytes of values whose compressed
  // chunks are written before the next batch; HDF5's own pipeline where the columns differ in
  // length.
  const hsize_t rows = rows_of.empty() ? 0 : rows_of.front();
  const bool same_length =
      std::all_of(rows_of.begin(), rows_of.end(), [&](hsize_t r) { return r == rows; });
  if (rows > 0 && same_length && std::endian::native == std::endian::little) {
    const hsize_t chunk = std::min(kChunkRows, rows);
    std::size_t row_bytes = 0;
    for (const ColumnBytes& c : cols) row_bytes += c.size;
    const hsize_t batch = std::max<hsize_t>(1, kBatchBytes / (row_bytes * chunk)) * chunk;
    for (hsize_t at = 0; at < rows; at += batch) {
      std::vector<ColumnBytes> part = cols;
      for (ColumnBytes& c : part) c.bytes += at * c.size;
      m.write_chunks(part, at, std::min(batch, rows - at), chunk);
    }
    return;
  }
  for (std::size_t k = 0; k < cols.size(); ++k)
    m.write_rows(cols[k].dataset, cols[k].type, 0, rows_of[k], cols[k].bytes, cols[k].what);
}

void Hdf5Results::write_series(const std::string& group, const StatSeries& series) {
  std::vector<Column> columns;
  Column segment{"segment", Column::Kind::kInteger, false, {}, {}};
  for (std::size_t r = 0; r < series.size(); ++r) segment.integer.push_back(std::int64_t(r));
  columns.push_back(std::move(segment));
  columns.push_back({"t", Column::Kind::kReal, false, series.t(), {}});
  const auto names = series.column_names();
  for (std::size_t k = 0; k < names.size(); ++k)
    columns.push_back({names[k], Column::Kind::kReal, false, series.column(k), {}});
  write_table(group, columns);
}

void Hdf5Results::write_summary(const nlohmann::ordered_json& s) {
  Impl& m = *impl_;
  const hid_t root = m.file.get();
  auto text = [&](const char* key) {
    if (s.contains(key) && s[key].is_string())
      m.string_attribute(root, key, s[key].get<std::string>());
  };
  auto real = [&](const char* key) {
    if (s.contains(key) && s[key].is_number())
      m.number_attribute(root, key, H5T_NATIVE_DOUBLE, s[key].get<double>());
  };
  auto integer = [&](const char* key) {
    if (s.contains(key) && s[key].is_number_integer())
      m.number_attribute(root, key, H5T_NATIVE_INT64, s[key].get<std::int64_t>());
  };
  for (const char* k : {"vigor_version", "model", "integrator", "backend", "device", "precision"})
    text(k);
  for (const char* k : {"trajectories", "steps", "trajectory_steps", "crossings_total"}) integer(k);
  for (const char* k : {"dt", "wall_seconds", "kernel_seconds", "trajectory_steps_per_second"})
    real(k);
  if (s.contains("job")) m.string_attribute(root, "job", s["job"].dump());
  m.string_attribute(root, "summary", s.dump(2));
}

void Hdf5Results::close() {
  Impl& m = *impl_;
  if (m.file.get() < 0) return;
  m.columns.clear();
  m.sections.reset();
  check(H5Fflush(m.file.get(), H5F_SCOPE_GLOBAL), m.path, "flush");
  check(m.file.reset(), m.path, "close");
}

#endif

}  // namespace vigor::host
