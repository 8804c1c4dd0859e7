/// @file array_file.hpp
/// @brief Tables of numbers from files: NumPy .npy (float64 or float32, C or Fortran order) and CSV
/// (optionally with a header row of column names). Used for initial states given as a file
/// (ensemble.file), so an ensemble made elsewhere — or a previous run's final.csv — starts a run.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace vigor::host {

/// A file that cannot be read as a table; what() says why, naming the file (and line or row).
struct ArrayFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A table read from a file: rows x cols numbers, row-major.
struct ArrayFile {
  std::int64_t rows = 0;
  int cols = 0;
  std::vector<std::string> names;  ///< CSV header (empty for .npy and header-less CSV)
  std::vector<double> data;        ///< data[r * cols + c]
  std::vector<std::int64_t> line;  ///< CSV: the file line of each row (1-based); empty for .npy
  /// CSV with a header: fields that are not numbers (final.csv's status column), by r * cols + c;
  /// their data entry is NaN. The caller judges only the columns it uses.
  std::map<std::size_t, std::string> text;
};

/// Read `file` by its extension: ".npy" (a 2-D array) or ".csv" (comma-separated; blank lines and
/// lines starting with '#' skipped; a first row that is not all numbers is the header; below a
/// header, fields that are not numbers are kept in `text`, without one they are errors). Values
/// are returned as read: NaN and Inf are the caller's to judge. Only regular files are read (a
/// directory, a device or a FIFO is refused), and a table of more than `max_rows` rows is refused
/// (a .npy file before its data is read). Throws ArrayFileError.
ArrayFile read_array_file(const std::string& file,
                          std::int64_t max_rows = std::numeric_limits<std::int64_t>::max());

}  // namespace vigor::host
