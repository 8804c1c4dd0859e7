/// @file ranks.hpp
/// @brief What the run loop exchanges between MPI ranks (host/run/comm.hpp): each rank's shard of
/// the initial states, its drained hits, its final data and engine arrays gathered on rank 0 in
/// trajectory order, and failures that end every rank together. In one process every call is the
/// identity, so the run loop has a single code path.
#pragma once

#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <stdexcept>
#include <vector>

#include "host/backends/engine.hpp"
#include "host/errors.hpp"
#include "host/run/comm.hpp"

namespace vigor::host {

/// Thrown on the ranks of an MPI run that did not fail themselves when another rank did: the
/// failing rank reports the error, the others exit with its code and say nothing.
class PeerFailure : public std::runtime_error {
 public:
  explicit PeerFailure(int exit_code)
      : std::runtime_error("another rank failed"), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

/// Receives each block of hits as it is drained: trajectory order within a block, chronological
/// per trajectory across blocks.
using HitSink = std::function<void(const HitBlock&)>;

/// This rank's share of the ensemble's initial states (SoA: component c of trajectory i at
/// c n + i).
std::vector<double> shard_states(const std::vector<double>& soa, std::int64_t n, int dim, Shard s);

/// Slot-major arrays ([slot * local_n + i]) of every rank, joined on rank 0 into [slot * n + i]
/// in trajectory order. `slots` is the same on every rank (collective calls must match).
std::vector<double> gather_slots(const std::vector<double>& mine, int slots, std::int64_t local_n);

/// Every rank's final data joined on rank 0, in trajectory order (other ranks get nothing).
FinalData gather_final(const FinalData& f, int dim, int tangent_slots, std::int64_t local_n);

/// Every rank's engine arrays joined on rank 0 into whole-ensemble arrays in trajectory order.
std::vector<StateArray> gather_arrays(std::vector<StateArray> mine, std::int64_t local_n);

/// Hands a drained block to the sink: directly in one process; under MPI every rank's block of
/// this round goes to rank 0, which hands them on in rank order (= trajectory order). `delivered`
/// counts the hits handed on.
void deliver(const HitBlock& block, const HitSink& sink, std::int64_t& delivered);

/// Runs f on every rank and fails on every rank when it failed on any, so no rank is left
/// waiting in a collective call: the ranks that did not fail throw PeerFailure with the worst
/// exit code. A rank that failed at run time rethrows its exception (each says why). Bad input
/// (JobError) is said once, by the lowest rank that found it: rank 0 rethrows it (the CLI reports
/// it as it does in one process); another rank writes it to stderr with its rank and throws
/// PeerFailure. Ranks may be given command lines of their own, so one rank may find bad input the
/// others were not given.
template <class F>
void together(F&& f) {
  std::exception_ptr error;
  int code = kExitOk;
  try {
    f();
  } catch (const JobError&) {
    error = std::current_exception();
    code = kExitBadInput;
  } catch (...) {
    error = std::current_exception();
    code = kExitRuntime;
  }
  if (!comm::distributed()) {
    if (error) std::rethrow_exception(error);
    return;
  }
  const int worst = int(comm::max(double(code)));
  if (worst == kExitOk) return;
  const bool bad_input = code == kExitBadInput;
  const int reporter = -int(comm::max(bad_input ? -double(comm::rank()) : -double(comm::size())));
  if (bad_input && comm::rank() == reporter && !comm::root()) {
    try {
      std::rethrow_exception(error);
    } catch (const JobError& e) {
      std::fprintf(stderr, "error: %s%s\n", comm::rank_prefix().c_str(), e.what());
    }
    throw PeerFailure(worst);
  }
  if (error && (!bad_input || comm::rank() == reporter)) std::rethrow_exception(error);
  throw PeerFailure(worst);
}

}  // namespace vigor::host
