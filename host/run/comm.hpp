/// @file comm.hpp
/// @brief The processes of one run: the MPI ranks when vigor was started by an MPI launcher
/// (mpirun, srun) in a build with MPI, else this process alone.
///
/// A distributed run gives each rank a contiguous shard of the trajectories; every exchange goes
/// through rank 0, which writes all the outputs (host/run/). Without MPI every call is the
/// trivial one-process answer, so the run loop has a single code path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vigor::host {

/// Trajectories [begin, end) of one rank: rank r of R takes [n r / R, n (r + 1) / R).
struct Shard {
  std::int64_t begin = 0, end = 0;
  std::int64_t size() const { return end - begin; }
};

namespace comm {

/// MPI_Init when an MPI launcher started this process (its environment says so) and the build has
/// MPI; otherwise nothing.
void init(int* argc, char*** argv);
void finalize();

int rank();
int size();
inline bool root() { return rank() == 0; }
inline bool distributed() { return size() > 1; }
/// "rank k of R: " before a message of one rank of a distributed run; empty in one process.
inline std::string rank_prefix() {
  if (!distributed()) return {};
  return "rank " + std::to_string(rank()) + " of " + std::to_string(size()) + ": ";
}

/// This process's rank among the ranks of its node, from the launcher's environment (Open MPI,
/// MPICH/Hydra, Slurm); -1 when no launcher started it. Chooses the rank's GPU
/// (host/backends/cuda_runtime.cu) in every build, with or without MPI.
int node_local_rank();

Shard shard(std::int64_t n, int rank, int size);
inline Shard my_shard(std::int64_t n) { return shard(n, rank(), size()); }

/// Rank 0 gets every rank's values in rank order, concatenated; other ranks get an empty vector.
std::vector<double> gather(const std::vector<double>& mine);
std::vector<std::int64_t> gather(const std::vector<std::int64_t>& mine);
std::vector<std::int32_t> gather(const std::vector<std::int32_t>& mine);
/// Rank 0 gets each rank's vector separately, in rank order.
std::vector<std::vector<double>> gather_parts(const std::vector<double>& mine);
std::vector<std::vector<std::int64_t>> gather_parts(const std::vector<std::int64_t>& mine);

bool any(bool flag);
double max(double x);
/// Whether every rank passed the same value.
bool all_equal(std::uint64_t x);

/// Ends every rank of a distributed run with `code` (MPI_Abort); a no-op in a single process.
[[noreturn]] void abort_all(int code);

}  // namespace comm
}  // namespace vigor::host
