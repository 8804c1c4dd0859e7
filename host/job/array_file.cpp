#include "host/job/array_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <sstream>
#include <string>
#include <vector>

namespace vigor::host {

namespace {

[[noreturn]] void bad(const std::string& file, const std::string& why) {
  throw ArrayFileError("'" + file + "': " + why);
}

/// Only plain files: a directory cannot be read as a table, and a device or a FIFO (/dev/zero, a
/// pipe) would be read without end or block forever. A missing file is left to the open, whose
/// error names the reason.
void check_regular_file(const std::string& file) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(file, ec);
  if (std::filesystem::is_directory(st)) bad(file, "is a directory, not a file");
  if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    bad(file, "is not a regular file");
}

/// Up to `n` bytes from `in` (fewer at the end of the file).
std::string read_bytes(std::ifstream& in, std::size_t n, const std::string& file) {
  std::string s(n, '\0');
  in.read(s.data(), std::streamsize(n));
  if (in.bad()) bad(file, "read error");
  s.resize(std::size_t(in.gcount()));
  return s;
}

/// A byte count for messages: exact below 2^63, else in exponent form.
std::string byte_count(double bytes) {
  if (bytes < 9.2e18) return std::to_string(std::int64_t(bytes));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", bytes);
  return buf;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The value text after 'key': in a .npy header (a Python dict literal), up to the next ',' or '}'
/// at depth 0 (a tuple's commas are inside parentheses).
std::string header_value(const std::string& header, const std::string& key,
                         const std::string& file) {
  const std::string quoted = "'" + key + "'";
  const std::size_t k = header.find(quoted);
  if (k == std::string::npos) bad(file, "the .npy header has no '" + key + "': " + header);
  std::size_t i = header.find(':', k + quoted.size());
  if (i == std::string::npos) bad(file, "malformed .npy header: " + header);
  ++i;
  int depth = 0;
  std::size_t j = i;
  for (; j < header.size(); ++j) {
    const char ch = header[j];
    if (ch == '(') ++depth;
    if (ch == ')') --depth;
    if (depth == 0 && (ch == ',' || ch == '}')) break;
  }
  std::string v = header.substr(i, j - i);
  const auto first = v.find_first_not_of(" \t");
  const auto last = v.find_last_not_of(" \t");
  return first == std::string::npos ? std::string() : v.substr(first, last - first + 1);
}

/// Where the header of a .npy file lies, as its magic and version say.
struct NpyHeaderSpan {
  std::size_t length = 0;  ///< bytes of header text
  std::size_t offset = 0;  ///< where the header text begins
};

/// The magic and version that open a .npy file: version 1.0 gives the header length in 2 bytes,
/// versions 2.0 and 3.0 in 4.
NpyHeaderSpan read_npy_preamble(std::ifstream& in, const std::string& file) {
  const std::string prefix = read_bytes(in, 10, file);
  static const char kMagic[] = "\x93NUMPY";
  if (prefix.size() < 10 || prefix.compare(0, 6, kMagic, 6) != 0)
    bad(file, "not a NumPy .npy file (no \\x93NUMPY magic)");
  const unsigned major = static_cast<unsigned char>(prefix[6]);
  const auto u8 = [](const std::string& b, std::size_t i) {
    return std::size_t(static_cast<unsigned char>(b[i]));
  };
  if (major == 1) return {u8(prefix, 8) | (u8(prefix, 9) << 8), 10};
  if (major == 2 || major == 3) {
    const std::string more = read_bytes(in, 2, file);
    if (more.size() < 2) bad(file, "truncated .npy header");
    return {u8(prefix, 8) | (u8(prefix, 9) << 8) | (u8(more, 0) << 16) | (u8(more, 1) << 24), 12};
  }
  bad(file, "unsupported .npy format version " + std::to_string(major));
}

/// The header of a .npy file (a Python dict literal) and where the data after it begins.
struct NpyHeader {
  std::string text;
  std::size_t data_offset = 0;
};

NpyHeader read_npy_header(std::ifstream& in, std::uintmax_t file_size, const std::string& file) {
  const NpyHeaderSpan span = read_npy_preamble(in, file);
  // NumPy writes headers of a few hundred bytes; a larger claim is not read into memory.
  if (span.length > (std::size_t(1) << 20))
    bad(file, "implausible .npy header length of " + std::to_string(span.length) + " bytes");
  if (span.length > file_size - std::min<std::uintmax_t>(file_size, span.offset))
    bad(file, "truncated .npy header");
  NpyHeader h{read_bytes(in, span.length, file), span.offset + span.length};
  if (h.text.size() != span.length) bad(file, "truncated .npy header");
  return h;
}

/// What a .npy header says of the data after it.
struct NpyLayout {
  std::string descr;          ///< the dtype, unquoted, for messages
  std::size_t item = 0;       ///< bytes per element: 8 (float64) or 4 (float32)
  bool column_major = false;  ///< fortran_order
  std::string shape;          ///< as written, for messages
  std::int64_t rows = 0, cols = 0;
};

std::string npy_descr(const std::string& header, const std::string& file) {
  std::string descr = header_value(header, "descr", file);
  if (descr.size() >= 2 && (descr.front() == '\'' || descr.front() == '"'))
    descr = descr.substr(1, descr.size() - 2);
  return descr;
}

/// Bytes per element of the only dtypes read: little-endian float64 and float32.
std::size_t npy_item_size(const std::string& descr, const std::string& file) {
  if (descr == "<f8" || descr == "=f8") return 8;
  if (descr == "<f4" || descr == "=f4") return 4;
  bad(file, "expected little-endian float64 or float32 data ('<f8' or '<f4'), got '" + descr + "'");
}

bool npy_fortran_order(const std::string& header, const std::string& file) {
  const std::string fortran = header_value(header, "fortran_order", file);
  if (fortran != "True" && fortran != "False")
    bad(file, "malformed fortran_order in the .npy header: " + fortran);
  return fortran == "True";
}

/// The dimensions of a shape tuple such as "(3, 4)" or "(4,)"; a negative one is malformed.
std::vector<std::int64_t> parse_npy_shape(const std::string& shape, const std::string& file) {
  std::vector<std::int64_t> dims;
  std::size_t i = shape.find('(');
  if (i == std::string::npos) bad(file, "malformed shape in the .npy header: " + shape);
  ++i;
  while (i < shape.size() && shape[i] != ')') {
    if (shape[i] == ' ' || shape[i] == ',') {
      ++i;
      continue;
    }
    char* end = nullptr;
    errno = 0;
    const long long d = std::strtoll(shape.c_str() + i, &end, 10);
    if (end == shape.c_str() + i || errno != 0 || d < 0)
      bad(file, "malformed shape in the .npy header: " + shape);
    dims.push_back(d);
    i = std::size_t(end - shape.c_str());
  }
  return dims;
}

NpyLayout npy_layout(const std::string& header, const std::string& file) {
  NpyLayout l;
  l.descr = npy_descr(header, file);
  l.item = npy_item_size(l.descr, file);
  l.column_major = npy_fortran_order(header, file);
  l.shape = header_value(header, "shape", file);
  const std::vector<std::int64_t> dims = parse_npy_shape(l.shape, file);
  if (dims.size() != 2)
    bad(file, "expected a 2-D array (trajectories, state components), got shape " + l.shape);
  l.rows = dims[0];
  l.cols = dims[1];
  if (l.cols > 1'000'000) bad(file, "shape " + l.shape + " has too many columns");
  return l;
}

/// Refuses a shape of more rows than allowed, or one that the `have` bytes of data after the
/// header do not hold exactly.
void check_npy_size(const NpyLayout& l, std::int64_t max_rows, double have,
                    const std::string& file) {
  if (l.rows > max_rows)
    bad(file, "shape " + l.shape + ": " + std::to_string(l.rows) + " rows is more than the " +
                  std::to_string(max_rows) + " allowed");
  const double want = double(l.rows) * double(l.cols) * double(l.item);
  if (want != have)
    bad(file, "shape " + l.shape + " of " + l.descr + " needs " + byte_count(want) +
                  " bytes of data, the file holds " + byte_count(have));
}

/// The table for a .npy layout, its data still to be read.
ArrayFile npy_table(const NpyLayout& l, const std::string& file) {
  ArrayFile a;
  a.rows = l.rows;
  a.cols = int(l.cols);
  try {
    a.data.resize(std::size_t(l.rows) * std::size_t(l.cols));
  } catch (const std::bad_alloc&) {
    bad(file, "shape " + l.shape + " does not fit in memory");
  }
  return a;
}

/// One stored element (float64 or float32, by `item`), widened to double.
double npy_element(const char* p, std::size_t item) {
  if (item == 8) {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  float f;
  std::memcpy(&f, p, 4);
  return f;
}

void read_npy_data(std::ifstream& in, const NpyLayout& l, ArrayFile& a, const std::string& file) {
  // Read in chunks, in storage order; element k of a Fortran-order array is (k % rows, k / rows).
  const std::size_t n = a.data.size(), rows = std::size_t(l.rows), cols = std::size_t(l.cols);
  constexpr std::size_t kChunk = std::size_t(1) << 16;  // elements per read
  std::vector<char> buf(kChunk * l.item);
  for (std::size_t k0 = 0; k0 < n; k0 += kChunk) {
    const std::size_t m = std::min(kChunk, n - k0);
    in.read(buf.data(), std::streamsize(m * l.item));
    if (std::size_t(in.gcount()) != m * l.item) bad(file, "read error (the file shrank?)");
    for (std::size_t j = 0; j < m; ++j) {
      const std::size_t k = k0 + j;
      a.data[l.column_major ? (k % rows) * cols + k / rows : k] =
          npy_element(buf.data() + j * l.item, l.item);
    }
  }
}

ArrayFile read_npy(const std::string& file, std::int64_t max_rows) {
  // The header first: the shape is checked against the limit and the file size before any data
  // is read (a header may claim any shape, and a sparse file any size).
  std::ifstream in(file, std::ios::binary);
  if (!in) bad(file, std::string("cannot open: ") + std::strerror(errno));
  std::error_code ec;
  const std::uintmax_t file_size = std::filesystem::file_size(file, ec);
  if (ec) bad(file, "cannot read its size: " + ec.message());
  const NpyHeader header = read_npy_header(in, file_size, file);
  const NpyLayout layout = npy_layout(header.text, file);
  check_npy_size(layout, max_rows, double(file_size - header.data_offset), file);
  ArrayFile a = npy_table(layout, file);
  read_npy_data(in, layout, a, file);
  return a;
}

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream s(line);
  while (std::getline(s, field, ',')) {
    const auto first = field.find_first_not_of(" \t\r");
    const auto last = field.find_last_not_of(" \t\r");
    out.push_back(first == std::string::npos ? std::string()
                                             : field.substr(first, last - first + 1));
  }
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

/// The whole field as a number (strtod: also "nan" and "inf"), or false.
bool parse_number(const std::string& f, double& v) {
  if (f.empty()) return false;
  char* end = nullptr;
  v = std::strtod(f.c_str(), &end);
  return end == f.c_str() + f.size();
}

bool blank_or_comment(const std::string& line) {
  return line.find_first_not_of(" \t") == std::string::npos || line[0] == '#';
}

/// Parses the fields into `row` up to the first that is not a number; true if all are numbers.
bool parse_numbers(const std::vector<std::string>& fields, std::vector<double>& row) {
  bool numeric = true;
  for (std::size_t c = 0; c < fields.size(); ++c)
    numeric = numeric && parse_number(fields[c], row[c]);
  return numeric;
}

/// Below a header, fields that are not numbers are kept as text (with NaN as their value);
/// without one they are errors.
void keep_text_fields(ArrayFile& a, const std::vector<std::string>& fields,
                      std::vector<double>& row, std::int64_t lineno, const std::string& file) {
  for (std::size_t c = 0; c < fields.size(); ++c) {
    // parse_numbers stopped at the first text field: the numbers after it are read here.
    if (parse_number(fields[c], row[c])) continue;
    if (a.names.empty())
      bad(file, "line " + std::to_string(lineno) + ", field " + std::to_string(c + 1) +
                    ": not a number: '" + fields[c] + "'");
    row[c] = std::numeric_limits<double>::quiet_NaN();
    a.text[std::size_t(a.rows) * std::size_t(a.cols) + c] = fields[c];
  }
}

void append_row(ArrayFile& a, const std::vector<double>& row, std::int64_t lineno,
                std::int64_t max_rows, const std::string& file) {
  if (a.rows == max_rows)
    bad(file, "line " + std::to_string(lineno) + ": more than the " + std::to_string(max_rows) +
                  " rows allowed");
  a.data.insert(a.data.end(), row.begin(), row.end());
  a.line.push_back(lineno);
  ++a.rows;
}

ArrayFile read_csv(const std::string& file, std::int64_t max_rows) {
  std::ifstream in(file);
  if (!in) bad(file, std::string("cannot open: ") + std::strerror(errno));
  ArrayFile a;
  std::string line;
  std::int64_t lineno = 0;
  bool first = true;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (blank_or_comment(line)) continue;
    const std::vector<std::string> fields = split_fields(line);
    std::vector<double> row(fields.size());
    const bool numeric = parse_numbers(fields, row);
    if (first) {
      first = false;
      a.cols = int(fields.size());
      if (!numeric) {
        a.names = fields;
        continue;
      }
    }
    if (int(fields.size()) != a.cols)
      bad(file, "line " + std::to_string(lineno) + " has " + std::to_string(fields.size()) +
                    " fields, expected " + std::to_string(a.cols));
    if (!numeric) keep_text_fields(a, fields, row, lineno, file);
    append_row(a, row, lineno, max_rows, file);
  }
  if (in.bad()) bad(file, "read error");
  return a;
}

}  // namespace

ArrayFile read_array_file(const std::string& file, std::int64_t max_rows) {
  const bool npy = ends_with(file, ".npy");
  if (!npy && !ends_with(file, ".csv"))
    bad(file, "unknown file type: expected a .npy or .csv file");
  check_regular_file(file);
  return npy ? read_npy(file, max_rows) : read_csv(file, max_rows);
}

}  // namespace vigor::host
