/// @file slots.hpp
/// @brief Per-trajectory arrays are slot-major: value k of trajectory i of n sits at [k * n + i]
/// (the state's components, the tangent diagnostics, every engine array). Copying a range of
/// trajectories between two such arrays of different lengths is what shards, chunks and
/// checkpoints do with them.
#pragma once

#include <algorithm>
#include <cstdint>

namespace vigor::host {

/// Copies trajectories [from_begin, from_begin + count) of each of `slots` slots of `from` (from_n
/// trajectories per slot) to [to_begin, to_begin + count) of `to` (to_n per slot). `width`
/// elements of T make one value (the bytes of a value when T is a byte).
template <class T>
void copy_slots(const T* from, std::int64_t from_n, std::int64_t from_begin, T* to,
                std::int64_t to_n, std::int64_t to_begin, std::int64_t count, std::int64_t slots,
                std::int64_t width = 1) {
  for (std::int64_t k = 0; k < slots; ++k)
    std::copy_n(from + (k * from_n + from_begin) * width, count * width,
                to + (k * to_n + to_begin) * width);
}

}  // namespace vigor::host
