// NCCL's operations as gpuclk names them, with nccl-tests' definitions of algorithm and bus
// bandwidth (its doc/PERFORMANCE.md) and the NCCL Inspector's names for them, and the NCCL
// environment settings that bound or steer bandwidth. Pure tables: `bench nccl` measures with
// them, the Inspector reader (nccl_inspector.h) and the communication rules judge with them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuclk::telemetry::nccl {

enum class Operation {
  all_reduce,
  all_gather,
  reduce_scatter,
  broadcast,
  reduce,
  all_to_all,
  send_recv,  // nccl-tests' sendrecv: each rank sends to the next and receives from the previous
  send,       // the Inspector's point-to-point records, one per side
  recv,
  all_gather_v,
};

struct OperationInfo {
  Operation operation;
  std::string_view key;             // "all_reduce": JSON, CSV, --ops
  std::string_view label;           // "all-reduce": tables
  std::string_view inspector_name;  // "AllReduce": the Inspector's "coll" / "p2p" value
  std::string_view nccl_tests;      // "all_reduce_perf"; empty where nccl-tests has none
  bool point_to_point = false;      // send/recv: no collective over the communicator
  // The Inspector's message size is one rank's part (sendcount for all-gather, recvcount for
  // reduce-scatter, the count per peer for all-to-all): the algorithm's bytes are ranks × it.
  bool message_per_rank = false;
};
const std::vector<OperationInfo>& all_operations();  // in Operation's order
const OperationInfo& info(Operation operation);
std::optional<Operation> parse_key(std::string_view key);
std::optional<Operation> parse_inspector_name(std::string_view name);

// Bus bandwidth = algorithm bandwidth × this factor (nccl-tests doc/PERFORMANCE.md), for `ranks`
// ≥ 1: all-reduce 2(n−1)/n; all-gather, reduce-scatter and all-to-all (n−1)/n; broadcast, reduce
// and point-to-point 1. One rank gives 0 where the factor has n−1: nothing crosses a link.
double bus_factor(Operation operation, int ranks);

// The bytes algorithm bandwidth divides by time (nccl-tests' S) for an Inspector record of
// `message_bytes` on a communicator of `ranks`: ranks × message where the message is one rank's
// part (OperationInfo::message_per_rank), else the message.
double algorithm_bytes(Operation operation, double message_bytes, int ranks);

// A setting in a process's environment that bounds or steers NCCL's bandwidth.
struct SettingEffect {
  std::string name, value;
  std::string effect;  // what it does to bandwidth, one clause
  bool limits = true;  // false: it steers (a choice NCCL would make anyway may be taken from it)
};

// The NCCL_* variables in `environment` that bound or steer bandwidth (NCCL_P2P_DISABLE,
// NCCL_P2P_LEVEL, NCCL_ALGO, NCCL_PROTO, NCCL_NVLS_ENABLE, NCCL_SHM_DISABLE, NCCL_IB_DISABLE,
// NCCL_MAX_NCHANNELS, NCCL_MAX_CTAS, NCCL_NET_GDR_LEVEL), in that order. A setting at its
// default value (NCCL_P2P_DISABLE=0) is left out.
std::vector<SettingEffect> bandwidth_settings(
    const std::map<std::string, std::string>& environment);

// "NCCL_P2P_DISABLE=1 (peer-to-peer off: …)": one setting as a verdict's clause.
std::string describe(const SettingEffect& setting);

// NCCL's version code (ncclGetVersion) as text: 22703 → "2.27.3"; codes before 2.9 used
// major × 1000 + minor × 100 + patch (2804 → "2.8.4").
std::string version_text(int code);

}  // namespace gpuclk::telemetry::nccl
