#include "host/chunks.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "host/checkpoint.hpp"

namespace vigor::host {

namespace fs = std::filesystem;

std::int64_t chunk_size_for(std::int64_t n, std::size_t budget, std::size_t per_trajectory,
                            std::size_t fixed) {
  if (budget == 0 || n == 0) return n;
  if (budget <= fixed || (budget - fixed) / per_trajectory < 1)
    throw std::runtime_error("a memory budget of " + std::to_string(budget) +
                             " bytes does not hold one trajectory (" +
                             std::to_string(per_trajectory) + " bytes each, plus " +
                             std::to_string(fixed) + " for the section buffers)");
  return std::min<std::int64_t>(n, std::int64_t((budget - fixed) / per_trajectory));
}

Chunks::Chunks(Engine& engine, const std::vector<double>& initial, std::int64_t n,
               std::int64_t size, int count, const fs::path& scratch)
    : engine_(engine),
      initial_(initial),
      n_(n),
      size_(std::max<std::int64_t>(1, size)),
      count_(std::max(1, count)),
      dim_(engine.dim()),
      layout_(std::size_t(std::max(1, count))),
      sizes_(std::size_t(std::max(1, count))) {
  if (count_ == 1) {
    engine_.upload(initial_, n_);
    on_engine_ = 0;
    return;
  }
  if (!scratch.empty()) {
    file_ = scratch / "chunks.bin";
    f_ = std::fopen(file_.c_str(), "w+b");
    if (!f_)
      throw std::runtime_error("cannot write " + file_.string() + ": " + std::strerror(errno));
  }
  try {
    for (int c = 0; c < count_; ++c) {
      engine_.upload(initial_of(c), range(c).size());
      on_engine_ = c;
      put(c, engine_.save_state());
    }
  } catch (...) {
    close_store();  // a throwing constructor runs no destructor
    throw;
  }
}

Chunks::~Chunks() { close_store(); }

void Chunks::close_store() noexcept {
  if (!f_) return;
  std::fclose(f_);
  f_ = nullptr;
  std::error_code ec;
  fs::remove(file_, ec);
}

ChunkRange Chunks::range(int c) const {
  ChunkRange r;
  r.begin = std::min(n_, std::int64_t(c) * size_);
  r.end = std::min(n_, r.begin + size_);
  if (count_ == 1) r = {0, n_};
  return r;
}

std::vector<double> Chunks::initial_of(int c) const {
  const ChunkRange r = range(c);
  std::vector<double> out;
  out.reserve(std::size_t(r.size()) * std::size_t(dim_));
  for (int k = 0; k < dim_; ++k) {
    const auto first = initial_.begin() + std::ptrdiff_t(std::int64_t(k) * n_ + r.begin);
    out.insert(out.end(), first, first + std::ptrdiff_t(r.size()));
  }
  return out;
}

void Chunks::activate(int c) {
  if (count_ == 1) return;
  // Same size: the engine's buffers fit as they are and restore_state overwrites every array a
  // launch reads. Another size: upload resizes them (and computes energies restore overwrites).
  if (on_engine_ < 0 || range(on_engine_).size() != range(c).size())
    engine_.upload(initial_of(c), range(c).size());
  engine_.restore_state(get(c));
  on_engine_ = c;
}

void Chunks::park(int c) {
  if (count_ == 1) return;
  put(c, engine_.save_state());
}

void Chunks::put(int c, const std::vector<StateArray>& arrays) {
  auto& layout = layout_[std::size_t(c)];
  if (!f_) {
    layout = arrays;
    return;
  }
  std::size_t total = 0;
  for (const auto& a : arrays) total += a.bytes.size();
  // Chunk 0 is the largest: its size reserves every chunk's place in the file.
  if (slot_bytes_ == 0) slot_bytes_ = std::max<std::size_t>(1, total);
  if (total > slot_bytes_)
    throw std::runtime_error("chunk " + std::to_string(c) + " does not fit its place in " +
                             file_.string() + " (arrays of another run?)");
  layout.clear();
  sizes_[std::size_t(c)].clear();
  auto at = off_t(std::size_t(c) * slot_bytes_);
  for (const auto& a : arrays) {
    const char* p = reinterpret_cast<const char*>(a.bytes.data());
    std::size_t left = a.bytes.size();
    while (left > 0) {
      const ssize_t w = ::pwrite(::fileno(f_), p, left, at);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)
        throw std::runtime_error("cannot write " + file_.string() + ": " + std::strerror(errno));
      p += w;
      at += w;
      left -= std::size_t(w);
    }
    StateArray shape;
    shape.name = a.name;
    shape.elem_bytes = a.elem_bytes;
    shape.bytes.resize(0);
    layout.push_back(std::move(shape));
    sizes_[std::size_t(c)].push_back(a.bytes.size());
  }
}

std::vector<StateArray> Chunks::get(int c) {
  auto& layout = layout_[std::size_t(c)];
  if (!f_) return layout;
  std::vector<StateArray> out = layout;
  auto at = off_t(std::size_t(c) * slot_bytes_);
  for (std::size_t k = 0; k < out.size(); ++k) {
    out[k].bytes.resize(sizes_[std::size_t(c)][k]);
    char* p = reinterpret_cast<char*>(out[k].bytes.data());
    std::size_t left = out[k].bytes.size();
    while (left > 0) {
      const ssize_t r = ::pread(::fileno(f_), p, left, at);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0)
        throw std::runtime_error("cannot read " + file_.string() + " back: " +
                                 (r == 0 ? std::string("short file") : std::strerror(errno)));
      p += r;
      at += r;
      left -= std::size_t(r);
    }
  }
  return out;
}

std::vector<StateArray> Chunks::save_all() {
  if (count_ == 1) return engine_.save_state();
  // One chunk in memory at a time, copied into place: [slot * n + begin + i].
  std::vector<StateArray> all;
  for (int c = 0; c < count_; ++c) {
    const ChunkRange r = range(c);
    const std::vector<StateArray> part = get(c);
    if (c == 0) {
      all = part;
      for (auto& a : all) {
        const std::size_t slots =
            r.size() > 0 ? a.bytes.size() / (std::size_t(a.elem_bytes) * std::size_t(r.size())) : 0;
        a.bytes.assign(slots * std::size_t(a.elem_bytes) * std::size_t(n_), 0);
      }
    }
    if (r.size() == 0) continue;
    for (std::size_t k = 0; k < all.size(); ++k) {
      const std::size_t e = std::size_t(all[k].elem_bytes);
      const std::size_t len = std::size_t(r.size()) * e;
      const std::size_t slots = part[k].bytes.size() / len;
      for (std::size_t s = 0; s < slots; ++s)
        std::memcpy(all[k].bytes.data() + (s * std::size_t(n_) + std::size_t(r.begin)) * e,
                    part[k].bytes.data() + s * len, len);
    }
  }
  return all;
}

void Chunks::restore_all(const std::vector<StateArray>& arrays) {
  if (count_ == 1) {
    engine_.restore_state(arrays);
    return;
  }
  for (int c = 0; c < count_; ++c) {
    const ChunkRange r = range(c);
    put(c, slice_arrays(arrays, n_, r.begin, r.end));
  }
}

}  // namespace vigor::host
