#include "host/run/chunks.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "host/run/checkpoint.hpp"
#include "host/run/slots.hpp"
#include "kernels/core/config.hpp"

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
      swap_(count_ > 1 && n > 0),
      layout_(std::size_t(std::max(1, count))),
      sizes_(std::size_t(std::max(1, count))) {
  if (!swap_) {
    engine_.upload(initial_, n_);
    return;
  }
  if (!scratch.empty()) {
    std::error_code ec;
    fs::create_directories(scratch, ec);  // the system's temp dir on other MPI ranks
    file_ = scratch / "chunks.bin";
    f_ = std::fopen(file_.c_str(), "w+b");
    if (!f_)
      throw std::runtime_error("cannot write " + file_.string() + ": " + std::strerror(errno));
  }
  try {
    for (int c = 0; c < count_; ++c) {
      engine_.upload(initial_of(c), size_);
      auto arrays = engine_.save_state();
      // Freeze the padding: kernels skip every trajectory whose status is not ok.
      for (auto& a : arrays) {
        if (a.name != "status") continue;
        const std::int32_t frozen = kernels::kStatusEscaped;
        for (std::int64_t i = range(c).size(); i < size_; ++i)
          std::memcpy(a.bytes.data() + std::size_t(i) * sizeof frozen, &frozen, sizeof frozen);
      }
      put(c, arrays);
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
  if (!swap_) return c == 0 ? ChunkRange{0, n_} : ChunkRange{n_, n_};
  ChunkRange r;
  r.begin = std::min(n_, std::int64_t(c) * size_);
  r.end = std::min(n_, r.begin + size_);
  return r;
}

std::vector<double> Chunks::initial_of(int c) const {
  const ChunkRange r = range(c);
  const std::int64_t pad_from = r.size() > 0 ? r.begin : 0;
  std::vector<double> out;
  out.reserve(std::size_t(size_) * std::size_t(dim_));
  for (int k = 0; k < dim_; ++k) {
    const auto row = initial_.begin() + std::ptrdiff_t(std::int64_t(k) * n_);
    out.insert(out.end(), row + std::ptrdiff_t(r.begin), row + std::ptrdiff_t(r.end));
    out.insert(out.end(), std::size_t(size_ - r.size()), row[std::ptrdiff_t(pad_from)]);
  }
  return out;
}

std::vector<double> Chunks::trim(std::vector<double> v, std::int64_t real, int slots) const {
  const std::int64_t m = engine_size();
  if (real == m || slots == 0) return v;
  std::vector<double> out(std::size_t(real) * std::size_t(slots));
  copy_slots(v.data(), m, 0, out.data(), real, 0, real, slots);
  return out;
}

void Chunks::activate(int c) {
  // Every chunk has the engine's size: restore_state overwrites every array a launch reads.
  if (swap_) engine_.restore_state(get(c));
}

void Chunks::park(int c) {
  if (swap_) put(c, engine_.save_state());
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
  if (!swap_) return engine_.save_state();
  // One chunk in memory at a time, its real trajectories copied into place:
  // [slot * size_ + i] of the chunk to [slot * n + begin + i] of the shard.
  std::vector<StateArray> all;
  for (int c = 0; c < count_; ++c) {
    const ChunkRange r = range(c);
    const std::vector<StateArray> part = get(c);
    if (c == 0) {
      all = part;
      for (auto& a : all) a.bytes.assign(a.bytes.size() / std::size_t(size_) * std::size_t(n_), 0);
    }
    for (std::size_t k = 0; k < all.size(); ++k) {
      const std::int64_t e = all[k].elem_bytes;
      const std::int64_t slots = std::int64_t(part[k].bytes.size()) / (e * size_);
      copy_slots(part[k].bytes.data(), size_, 0, all[k].bytes.data(), n_, r.begin, r.size(), slots,
                 e);
    }
  }
  return all;
}

void Chunks::restore_all(const std::vector<StateArray>& arrays) {
  if (!swap_) {
    engine_.restore_state(arrays);
    return;
  }
  // Each chunk's real trajectories from the shard's arrays; its frozen padding stays.
  for (int c = 0; c < count_; ++c) {
    const ChunkRange r = range(c);
    std::vector<StateArray> part = get(c);
    for (auto& p : part) {
      const StateArray* from = nullptr;
      for (const auto& a : arrays)
        if (a.name == p.name) from = &a;
      const std::int64_t e = p.elem_bytes;
      const std::int64_t slots = std::int64_t(p.bytes.size()) / (e * size_);
      if (!from || from->elem_bytes != e || std::int64_t(from->bytes.size()) != slots * n_ * e)
        throw std::runtime_error("checkpoint array " + p.name + " does not match this run");
      copy_slots(from->bytes.data(), n_, r.begin, p.bytes.data(), size_, 0, r.size(), slots, e);
    }
    put(c, part);
  }
}

/// Slot-major arrays of consecutive chunks ([slot * size_c + i] each) joined into one
/// [slot * sum(size_c) + i]. A single part is returned as it is.
std::vector<double> join_slots(std::vector<std::vector<double>>& parts, int slots) {
  if (parts.size() == 1) return std::move(parts[0]);
  std::int64_t total = 0;
  for (const auto& p : parts) total += std::int64_t(p.size()) / slots;
  std::vector<double> all(std::size_t(total) * std::size_t(slots));
  std::int64_t at = 0;
  for (const auto& p : parts) {
    const std::int64_t len = std::int64_t(p.size()) / slots;
    copy_slots(p.data(), len, 0, all.data(), total, at, len, slots);
    at += len;
  }
  return all;
}

/// Adds the first `real` trajectories of a chunk's final data (the rest is padding) as
/// [begin, begin + real) of a shard of n to the shard's `all`: the slot-major state and tangent
/// columns go into place, the per-trajectory ones are appended.
void place_final(FinalData& all, FinalData&& part, std::int64_t begin, std::int64_t real,
                 std::int64_t n, int dim, int tangent_slots) {
  const auto m = std::int64_t(part.step.size());
  const auto place = [&](std::vector<double>& to, const std::vector<double>& from, int slots) {
    to.resize(std::size_t(slots) * std::size_t(n));
    copy_slots(from.data(), m, 0, to.data(), n, begin, real, slots);
  };
  place(all.state, part.state, dim);
  if (tangent_slots > 0) place(all.tangent_out, part.tangent_out, tangent_slots);
  const auto append = [real](auto& to, const auto& from) {
    if (!from.empty()) to.insert(to.end(), from.begin(), from.begin() + std::ptrdiff_t(real));
  };
  append(all.energy0, part.energy0);
  append(all.energy_error, part.energy_error);
  append(all.momentum_error, part.momentum_error);
  append(all.newton_residual, part.newton_residual);
  append(all.step, part.step);
  append(all.crossings, part.crossings);
  append(all.recorded, part.recorded);
  append(all.status, part.status);
}

}  // namespace vigor::host
