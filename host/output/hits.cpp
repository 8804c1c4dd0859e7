#include "host/output/hits.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace vigor::host {

namespace fs = std::filesystem;

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

SpillReader::SpillReader(const HitSpill& spill)
    : f_(std::fopen(spill.file().c_str(), "rb")),
      path_(spill.file()),
      words_(spill.record_bytes() / sizeof(double)) {
  if (!f_) throw std::runtime_error("cannot read " + path_.string() + ": " + std::strerror(errno));
  // A whole number of records, in 8-byte words: the trajectory id, then t and the state.
  buf_.resize(std::max<std::size_t>(1, (std::size_t(1) << 19) / words_) * words_);
}

SpillReader::~SpillReader() { std::fclose(f_); }

void SpillReader::check(std::int64_t seen, std::int64_t expected) const {
  if (std::ferror(f_) || seen != expected)
    throw std::runtime_error("cannot read " + path_.string() + " back (" + std::to_string(seen) +
                             " of " + std::to_string(expected) + " records)");
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

}  // namespace vigor::host
