/// @file ranks.cpp
/// @brief The exchanges between MPI ranks of host/run/ranks.hpp.
#include "host/run/ranks.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

#include "host/run/slots.hpp"

namespace vigor::host {

std::vector<double> shard_states(const std::vector<double>& soa, std::int64_t n, int dim, Shard s) {
  std::vector<double> out(std::size_t(s.size()) * std::size_t(dim));
  copy_slots(soa.data(), n, s.begin, out.data(), s.size(), 0, s.size(), dim);
  return out;
}

std::vector<double> gather_slots(const std::vector<double>& mine, int slots, std::int64_t local_n) {
  if (!comm::distributed()) return mine;
  std::vector<double> all;
  for (int k = 0; k < slots; ++k) {
    const auto first = mine.begin() + std::ptrdiff_t(k) * std::ptrdiff_t(local_n);
    const auto part = comm::gather(std::vector<double>(first, first + std::ptrdiff_t(local_n)));
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

FinalData gather_final(const FinalData& f, int dim, int tangent_slots, std::int64_t local_n) {
  FinalData all;
  all.state = gather_slots(f.state, dim, local_n);
  all.energy0 = comm::gather(f.energy0);
  all.energy_error = comm::gather(f.energy_error);
  all.momentum_error = comm::gather(f.momentum_error);
  all.newton_residual = comm::gather(f.newton_residual);
  all.step = comm::gather(f.step);
  all.crossings = comm::gather(f.crossings);
  all.recorded = comm::gather(f.recorded);
  all.status = comm::gather(f.status);
  if (tangent_slots > 0) all.tangent_out = gather_slots(f.tangent_out, tangent_slots, local_n);
  return all;
}

std::vector<StateArray> gather_arrays(std::vector<StateArray> mine, std::int64_t local_n) {
  if (!comm::distributed()) return mine;
  std::vector<StateArray> all;
  for (auto& a : mine) {
    const std::size_t slot_bytes = std::size_t(a.elem_bytes) * std::size_t(local_n);
    // Every rank must make the same number of collective calls: agree on the slot count.
    const int slots = int(comm::max(slot_bytes > 0 ? double(a.bytes.size() / slot_bytes) : 0.0));
    StateArray joined;
    joined.name = a.name;
    joined.elem_bytes = a.elem_bytes;
    // Values are 4 or 8 bytes, so each slot travels as 32-bit words.
    for (int k = 0; k < slots; ++k) {
      std::vector<std::int32_t> words(slot_bytes / 4);
      if (slot_bytes > 0) std::memcpy(words.data(), a.bytes.data() + k * slot_bytes, slot_bytes);
      const auto part = comm::gather(words);
      const auto* p = reinterpret_cast<const unsigned char*>(part.data());
      joined.bytes.insert(joined.bytes.end(), p, p + part.size() * 4);
    }
    a.bytes.clear();
    a.bytes.shrink_to_fit();
    all.push_back(std::move(joined));
  }
  return all;
}

void deliver(const HitBlock& block, const HitSink& sink, std::int64_t& delivered) {
  if (!comm::distributed()) {
    delivered += std::int64_t(block.trajectory.size());
    if (sink && !block.trajectory.empty()) sink(block);
    return;
  }
  const auto ids = comm::gather_parts(
      std::vector<std::int64_t>(block.trajectory.begin(), block.trajectory.end()));
  const auto values =
      comm::gather_parts(std::vector<double>(block.values.begin(), block.values.end()));
  if (!comm::root()) return;
  HitBlock b;
  b.dim = block.dim;
  for (std::size_t r = 0; r < ids.size(); ++r) {
    b.trajectory.assign(ids[r].begin(), ids[r].end());
    b.values.assign(values[r].begin(), values[r].end());
    delivered += std::int64_t(b.trajectory.size());
    if (sink && !b.trajectory.empty()) sink(b);
  }
}

}  // namespace vigor::host
