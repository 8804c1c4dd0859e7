#include "host/run/comm.hpp"

#include <cstdlib>
#include <string>

#if defined(VIGOR_HAVE_MPI)
#include <mpi.h>
#endif

namespace vigor::host::comm {

int node_local_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char* s = std::getenv(v)) return std::atoi(s);
  return -1;
}

Shard shard(std::int64_t n, int r, int s) {
  // n <= 1e9 trajectories (the job's limit) and r < 2^31 keep n r below 2^61.
  return {n * r / s, n * (r + 1) / s};
}

#if !defined(VIGOR_HAVE_MPI)

void init(int*, char***) {}
void finalize() {}
int rank() { return 0; }
int size() { return 1; }
std::vector<double> gather(const std::vector<double>& mine) { return mine; }
std::vector<std::int64_t> gather(const std::vector<std::int64_t>& mine) { return mine; }
std::vector<std::int32_t> gather(const std::vector<std::int32_t>& mine) { return mine; }
std::vector<std::vector<double>> gather_parts(const std::vector<double>& mine) { return {mine}; }
std::vector<std::vector<std::int64_t>> gather_parts(const std::vector<std::int64_t>& mine) {
  return {mine};
}
bool any(bool flag) { return flag; }
double max(double x) { return x; }
bool all_equal(std::uint64_t) { return true; }
void abort_all(int code) { std::exit(code); }

#else

namespace {

bool g_active = false;  ///< MPI_Init was called here
int g_rank = 0, g_size = 1;

/// Set by mpirun/mpiexec (Open MPI, MPICH/Hydra) or srun (PMI, PMIx).
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

template <class T>
MPI_Datatype type_of();
template <>
MPI_Datatype type_of<double>() {
  return MPI_DOUBLE;
}
template <>
MPI_Datatype type_of<std::int64_t>() {
  return MPI_INT64_T;
}
template <>
MPI_Datatype type_of<std::int32_t>() {
  return MPI_INT32_T;
}

/// Counts and displacements for MPI_Gatherv (element counts fit int: callers gather per array,
/// and one rank's array of a run is far below 2^31 elements).
template <class T>
std::vector<T> gather_concat(const std::vector<T>& mine, std::vector<int>* counts_out) {
  if (!g_active) return mine;
  const int count = int(mine.size());
  std::vector<int> counts(g_rank == 0 ? std::size_t(g_size) : 0);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> displs;
  std::vector<T> all;
  if (g_rank == 0) {
    displs.resize(counts.size());
    long long total = 0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
      displs[k] = int(total);
      total += counts[k];
    }
    all.resize(std::size_t(total));
  }
  MPI_Gatherv(mine.data(), count, type_of<T>(), all.data(), counts.data(), displs.data(),
              type_of<T>(), 0, MPI_COMM_WORLD);
  if (counts_out) *counts_out = counts;
  return all;
}

template <class T>
std::vector<std::vector<T>> split(const std::vector<T>& all, const std::vector<int>& counts) {
  std::vector<std::vector<T>> parts;
  std::size_t at = 0;
  for (const int c : counts) {
    parts.emplace_back(all.begin() + std::ptrdiff_t(at), all.begin() + std::ptrdiff_t(at + c));
    at += std::size_t(c);
  }
  return parts;
}

}  // namespace

void init(int* argc, char*** argv) {
  if (g_active || !launched_by_mpi()) return;
  MPI_Init(argc, argv);
  g_active = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
}

void finalize() {
  if (g_active) MPI_Finalize();
  g_active = false;
}

int rank() { return g_rank; }
int size() { return g_size; }

std::vector<double> gather(const std::vector<double>& mine) { return gather_concat(mine, nullptr); }
std::vector<std::int64_t> gather(const std::vector<std::int64_t>& mine) {
  return gather_concat(mine, nullptr);
}
std::vector<std::int32_t> gather(const std::vector<std::int32_t>& mine) {
  return gather_concat(mine, nullptr);
}
std::vector<std::vector<double>> gather_parts(const std::vector<double>& mine) {
  if (!g_active) return {mine};
  std::vector<int> counts;
  const auto all = gather_concat(mine, &counts);
  return split(all, counts);
}
std::vector<std::vector<std::int64_t>> gather_parts(const std::vector<std::int64_t>& mine) {
  if (!g_active) return {mine};
  std::vector<int> counts;
  const auto all = gather_concat(mine, &counts);
  return split(all, counts);
}

bool any(bool flag) {
  if (!g_active) return flag;
  int in = flag ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  return out != 0;
}

double max(double x) {
  if (!g_active) return x;
  double out = x;
  MPI_Allreduce(&x, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

bool all_equal(std::uint64_t x) {
  if (!g_active) return true;
  std::uint64_t lo = x, hi = x;
  MPI_Allreduce(&x, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&x, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

void abort_all(int code) {
  if (g_active) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

#endif

}  // namespace vigor::host::comm
