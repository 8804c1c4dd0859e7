/// @file hits.hpp
/// @brief The section hits of a run as they are drained: in memory (HitStore, for tools and tests
/// that drive an engine) or spilled to a binary file (HitSpill, the run's), and read back in
/// blocks.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "host/backends/engine.hpp"

namespace vigor::host {

/// All recorded hits of a run, kept in memory in drain order (tests and tools that drive an
/// Engine directly; the run loop spills to disk instead, see HitSpill).
struct HitStore {
  int dim = 0;
  std::vector<std::int64_t> trajectory;
  std::vector<double> values;  ///< (1 + dim) per hit
  void append(const HitBlock& b);
  std::size_t size() const { return trajectory.size(); }
};

/// The hits of a run, appended to a binary file as they are drained, so that memory holds only
/// the per-trajectory counts. Records in drain order: trajectory (int64), then t and the state
/// ((1 + dim) doubles), native byte order. The file is removed by remove() or the destructor.
class HitSpill {
 public:
  /// Creates `file`; throws std::runtime_error when it cannot be written.
  HitSpill(std::filesystem::path file, int dim, std::int64_t n);
  /// Reopens the spill of an interrupted run, keeping its first `records` records (those its
  /// checkpoint accounts for) and cutting off the rest. Throws std::runtime_error when the file
  /// holds fewer, or a record names a trajectory outside [0, n).
  HitSpill(std::filesystem::path file, int dim, std::int64_t n, std::int64_t records);
  ~HitSpill();
  HitSpill(const HitSpill&) = delete;
  HitSpill& operator=(const HitSpill&) = delete;

  /// Appends a drained block (throws std::runtime_error on a write error or a trajectory id
  /// outside [0, n)).
  void append(const HitBlock& b);
  /// Writes everything appended so far through to the disk (fsync): a checkpoint may count it.
  void sync();
  /// Flushes and closes the file for reading; append() is not allowed afterwards.
  void finish();
  /// Closes and deletes the file.
  void remove() noexcept;
  /// A checkpoint counts the file: destruction (an error unwinding the run) leaves it on disk.
  void keep() { kept_ = true; }

  int dim() const { return dim_; }
  std::int64_t trajectories() const { return n_; }
  std::int64_t total() const { return total_; }
  const std::vector<std::int64_t>& counts() const { return counts_; }
  const std::filesystem::path& file() const { return file_; }
  std::size_t record_bytes() const { return sizeof(std::int64_t) + std::size_t(dim_ + 1) * 8; }

 private:
  void flush();

  std::filesystem::path file_;
  int dim_ = 0;
  std::int64_t n_ = 0;
  std::int64_t total_ = 0;
  std::vector<std::int64_t> counts_;
  std::FILE* f_ = nullptr;
  std::vector<char> buf_;
  bool kept_ = false;
};

/// Hands the records of a finished spill to f in file (drain) order, as blocks of at most
/// `max_records` hits. Throws std::runtime_error on I/O errors.
void for_each_spill_block(const HitSpill& hits, std::size_t max_records,
                          const std::function<void(const HitBlock&)>& f);

/// Reads a finished spill file record by record, in chunks.
class SpillReader {
 public:
  explicit SpillReader(const HitSpill& spill);
  ~SpillReader();
  SpillReader(const SpillReader&) = delete;
  SpillReader& operator=(const SpillReader&) = delete;

  /// Calls f(trajectory, const double* values) for every record, in file order; throws
  /// std::runtime_error unless there are exactly `expected` of them.
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
    check(seen, expected);
  }

 private:
  void check(std::int64_t seen, std::int64_t expected) const;

  std::FILE* f_;
  std::filesystem::path path_;
  std::size_t words_;
  std::vector<double> buf_;
};

}  // namespace vigor::host
