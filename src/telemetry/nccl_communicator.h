// What the NCCL Inspector's records (nccl_inspector.h) say about each communicator: per rank its
// process, host and (once joined) GPU, per operation kind the count, bytes, time and bandwidth,
// the share of the rank's time spent in them, and when each rank arrived at the collectives it
// shared with the others: the "late rank" the others wait for.
//
// Arrival of a rank at a collective (same communicator, same sequence number on every rank):
//   execution_time  all-reduce, all-gather, reduce-scatter, all-to-all end together on every rank
//                   (the last step needs everybody's data), so a rank that arrived d later ran d
//                   shorter: arrival = longest execution − its own. Each GPU's own timer, no
//                   common clock needed (ranks on other nodes too).
//   kernel_start    broadcast and reduce, whose ranks end apart: the first kernel channel's
//                   start, host time (verbose records: NCCL_INSPECTOR_DUMP_VERBOSE=1);
//   call_time       the same where only the host call was traced.
// A broadcast or reduce without traces is not compared.
// An operation is "delayed" when its last arrival came at least BuildOptions::delayed_us after
// its first; on each delayed one, the last rank to arrive is the one everybody waited for.
//
// Pure: records in, model out. Units: bytes, seconds, B/s, µs where named.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "telemetry/nccl.h"
#include "telemetry/nccl_inspector.h"

namespace gpuclk::telemetry::nccl {

// Operations of one kind, summed.
struct OperationTotals {
  Operation operation = Operation::all_reduce;
  std::uint64_t count = 0;
  double message_bytes = 0;    // Σ the Inspector's message sizes
  double algorithm_bytes = 0;  // Σ nccl-tests' S (algorithm_bytes())
  double bus_bytes = 0;        // Σ S × bus_factor()
  double seconds = 0;          // Σ execution times
  // Over the totals (time-weighted means), B/s; nullopt without time.
  std::optional<double> algorithm_bandwidth() const;
  std::optional<double> bus_bandwidth() const;
};

enum class ArrivalMethod { none, kernel_start, call_time, execution_time };
std::string_view to_string(ArrivalMethod method);  // "kernel_start", …, "none"

// A GPU a process holds (for attach_gpus): NVML index, bus id, and the memory the process has
// on it (where the driver says).
struct GpuRef {
  unsigned index = 0;
  std::string bus_id;
  std::optional<std::uint64_t> process_memory_bytes;
};

struct RankActivity {
  int rank = 0;
  std::string hostname;
  unsigned pid = 0;
  std::optional<GpuRef> gpu;                // set by attach_gpus: the Inspector's file names no GPU
  std::vector<OperationTotals> operations;  // kinds seen, in Operation order
  double seconds = 0;                       // Σ execution times of all its operations
  // The span its records cover, host µs: verbose records' calls to kernel stops, else the
  // dump times (written within NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS of completion,
  // or all at teardown when that interval is -1: then the span says nothing).
  std::uint64_t first_us = 0, last_us = 0;
  // Late rank: of the communicator's delayed operations, those it arrived last at, and by how
  // much after the first rank on them (mean, µs); the time it waited for others on all the
  // collectives it shared (µs).
  std::size_t last_arrivals = 0;
  double lateness_us = 0;
  double waited_us = 0;
};

struct Communicator {
  std::string id, name;  // the Inspector's header: hash and name
  int ranks = 0;         // ranks in the communicator (not all need be on this node)
  std::uint64_t nodes = 0;
  std::vector<RankActivity> members;  // the ranks seen, by rank
  // Per kind, a typical rank: the largest count and bytes of any member, the mean time.
  std::vector<OperationTotals> operations;
  // Per kind, the member that waited least (the shortest total time): closest to the transfer
  // alone, so its bandwidth is what the links delivered.
  std::vector<OperationTotals> least_waiting;
  ArrivalMethod arrival = ArrivalMethod::none;
  std::size_t shared_operations = 0;   // collectives seen on every member (two or more)
  std::size_t delayed_operations = 0;  // of them, delayed
  bool span_from_dump_times = false;   // first_us/last_us are dump times (no verbose traces)
  std::uint64_t first_us = 0, last_us = 0;

  bool all_ranks_seen() const { return int(members.size()) == ranks; }
  double span_seconds() const { return last_us > first_us ? double(last_us - first_us) * 1e-6 : 0; }
  // Mean over members of the time in NCCL operations; nullopt without members.
  std::optional<double> mean_seconds() const;
  // The member that arrived last at most delayed operations, nullptr when none did (no
  // delayed operations).
  const RankActivity* latest() const;
};

struct BuildOptions {
  double delayed_us = 1000;  // an operation whose arrivals spread this much is delayed
  // Collectives kept waiting for the other ranks' records, per communicator (0: no bound).
  // Past it the oldest is judged with the ranks it has: a rank on another node never writes
  // here, so a service that reads files as they grow bounds what it keeps.
  std::size_t max_pending = 0;
};

// Communicators built record by record in the memory of their totals and of the collectives
// still waiting for a rank's record (BuildOptions::max_pending): what a reader of files that
// grow keeps. A collective is judged once every rank of the communicator has recorded it, or,
// when the model is taken, if every rank seen so far has. Not thread-safe.
class CommunicatorTracker {
 public:
  explicit CommunicatorTracker(BuildOptions options = {});
  ~CommunicatorTracker();
  CommunicatorTracker(CommunicatorTracker&&) noexcept;
  CommunicatorTracker& operator=(CommunicatorTracker&&) noexcept;

  // A record of a communicator whose rank count differs from its first record's is dropped.
  void add(const InspectorRecord& record);
  // The communicators so far, ordered by id (as build_communicators over every record added).
  std::vector<Communicator> communicators() const;
  std::size_t records() const;  // added and kept

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// One communicator per id, from its records in any order, ordered by id. A record whose rank
// count differs from its communicator's first record's is dropped.
std::vector<Communicator> build_communicators(std::span<const InspectorRecord> records,
                                              const BuildOptions& options = {});

// Joins ranks with GPUs by process: `gpus_by_pid` lists the GPUs each process holds. A process
// running k ranks of a communicator gets the k GPUs it holds the most memory on (all of them
// when it holds exactly k), assigned in rank order to ascending NVML index, as ncclCommInitAll
// and nccl-tests' -g give consecutive ranks consecutive devices. Ranks whose process holds
// fewer GPUs than ranks, or is not listed, keep no GPU.
void attach_gpus(std::vector<Communicator>& communicators,
                 const std::map<unsigned, std::vector<GpuRef>>& gpus_by_pid);

}  // namespace gpuclk::telemetry::nccl
