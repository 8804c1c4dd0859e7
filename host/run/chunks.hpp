/// @file chunks.hpp
/// @brief Ensembles larger than the engine's memory: the trajectories split into chunks that take
/// turns on the engine, one segment at a time, the others parked in a chunk store.
///
/// Within a segment the run loop advances chunk 0 to the segment end, then chunk 1, … Trajectories
/// are independent and every array a launch reads travels with its chunk (Engine::save_state), so
/// each trajectory computes exactly what it computes in an unchunked run; the per-segment series
/// are taken over all chunks, and sections.csv is sorted by trajectory, so the outputs are the
/// same. Only the drain order (results.h5's /sections rows, launches) differs.
///
/// Every chunk occupies the engine at the same size: the last one is padded with frozen copies of
/// one of its trajectories (status escaped, so no kernel advances them), which the run loop trims
/// from what the engine returns (trim()). The engine is uploaded once per chunk at the start and
/// never reallocated afterwards.
///
/// The chunk size follows from a memory budget: the engine's free device memory (CUDA), or
/// `--memory-limit` (any backend). Parked chunks live in a file in the run's temporary directory
/// (so host memory does not hold them twice), or in memory when no directory is given.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "host/backends/engine.hpp"

namespace vigor::host {

/// Trajectories [begin, end) of a shard.
struct ChunkRange {
  std::int64_t begin = 0, end = 0;
  std::int64_t size() const { return end - begin; }
};

/// Trajectories per chunk for `n` trajectories: all of them when everything fits `budget` bytes
/// (0: no limit). `per_trajectory` is what each needs in the engine, `fixed` what the engine needs
/// besides (its section buffers). Throws std::runtime_error when not even one trajectory fits.
std::int64_t chunk_size_for(std::int64_t n, std::size_t budget, std::size_t per_trajectory,
                            std::size_t fixed);

class Chunks {
 public:
  /// Splits the `n` trajectories of `initial` (SoA) into `count` chunks of `size` (the last ones
  /// shorter or empty: under MPI every rank makes the same number of turns) and uploads the first.
  /// With more than one chunk, each is uploaded once here and parked in `scratch`/chunks.bin (in
  /// memory when `scratch` is empty).
  Chunks(Engine& engine, const std::vector<double>& initial, std::int64_t n, std::int64_t size,
         int count, const std::filesystem::path& scratch);
  ~Chunks();
  Chunks(const Chunks&) = delete;
  Chunks& operator=(const Chunks&) = delete;

  int count() const { return count_; }
  ChunkRange range(int c) const;
  /// Trajectories on the engine per chunk (the chunk size, or the shard when unchunked).
  std::int64_t engine_size() const { return swap_ ? size_ : n_; }
  /// The first `real` of each of the `slots` slots of an engine array of engine_size() per slot
  /// (an unpadded array is returned as it is).
  std::vector<double> trim(std::vector<double> v, std::int64_t real, int slots) const;
  /// Puts chunk c on the engine (a no-op with a single chunk).
  void activate(int c);
  /// Parks the engine's chunk (c, the active one) in the store (a no-op with a single chunk).
  void park(int c);
  /// Every array of the shard in trajectory order (Engine::save_state of the whole shard).
  std::vector<StateArray> save_all();
  /// Overwrites every chunk from whole-shard arrays (a checkpoint's).
  void restore_all(const std::vector<StateArray>& arrays);

 private:
  /// Chunk c's initial states, padded to size_ with copies of its first trajectory (of the
  /// shard's first for an empty chunk).
  std::vector<double> initial_of(int c) const;
  void close_store() noexcept;
  void put(int c, const std::vector<StateArray>& arrays);
  std::vector<StateArray> get(int c);

  Engine& engine_;
  const std::vector<double>& initial_;
  std::int64_t n_, size_;
  int count_;
  int dim_;
  bool swap_ = false;  ///< chunks take turns (more than one, and a shard that is not empty)
  std::filesystem::path file_;
  std::FILE* f_ = nullptr;
  std::size_t slot_bytes_ = 0;  ///< bytes reserved per chunk in the file
  /// Per chunk: its arrays (in memory), or their names and value sizes (in the file, with the
  /// byte counts in sizes_).
  std::vector<std::vector<StateArray>> layout_;
  std::vector<std::vector<std::size_t>> sizes_;
};

/// Slot-major arrays of consecutive chunks ([slot * size_c + i] each) joined into one
/// [slot * sum(size_c) + i]. A single part is returned as it is.
std::vector<double> join_slots(std::vector<std::vector<double>>& parts, int slots);

/// Adds the first `real` trajectories of a chunk's final data (the rest is padding) as
/// [begin, begin + real) of a shard of n to the shard's `all`: the slot-major state and tangent
/// columns go into place, the per-trajectory ones are appended.
void place_final(FinalData& all, FinalData&& part, std::int64_t begin, std::int64_t real,
                 std::int64_t n, int dim, int tangent_slots);

}  // namespace vigor::host
