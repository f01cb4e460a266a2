// The NCCL Inspector's JSON-lines output, read: NVIDIA's NCCL profiler plugin
// (plugins/profiler/inspector in NCCL) writes, from a thread inside each NCCL process, one JSON
// object per line per completed operation of each communicator of the process, into
// `$NCCL_INSPECTOR_DUMP_DIR/<hostname>-pid<pid>.log` (NCCL_INSPECTOR_DUMP_DIR unset: the
// directory `nccl-inspector-<SLURM_JOB_ID>`, or `nccl-inspector-unknown-jobid`).
//
// A line (format v4.0, as its inspector_json.cc writes it):
//   {"header":{"id":"0x7f8c496ae9f661","comm_name":"DP","rank":0,"n_ranks":2,"nnodes":1},
//    "metadata":{"inspector_output_format_version":"v4.0","git_rev":"…",
//                "rec_mechanism":"nccl_profiler_interface","dump_timestamp_us":…,
//                "hostname":"node1","pid":1044},
//    "coll_perf":{"coll":"AllReduce","coll_sn":1,"coll_msg_size_bytes":26214400,
//                 "coll_exec_time_us":98,"coll_timing_source":"kernel_gpu",
//                 "coll_algobw_gbs":267.49,"coll_busbw_gbs":267.49,
//                 "event_trace_sn":{…},"event_trace_ts":{"coll_start_ts":…,"coll_stop_ts":…,
//                 "kernel_events":[{"channel_id":0,"kernel_start_ts":…,"kernel_stop_ts":…,
//                 "kernel_record_ts":…}]}}}
// or "p2p_perf" with "p2p", "p2p_sn", "p2p_peer", "p2p_msg_size_bytes", "p2p_exec_time_us",
// "p2p_timing_source", "p2p_algobw_gbs", "p2p_busbw_gbs" and "p2p_start_ts"/"p2p_stop_ts".
// The event traces come only with NCCL_INSPECTOR_DUMP_VERBOSE=1. Times are the host's
// gettimeofday in µs; exec time is the longest kernel channel's GPU time (kernel_gpu) where the
// GPU timer was read. The file names no GPU: a rank's GPU comes from its process (pid).
//
// Pure: text in, records out; the reader of a live file keeps its offset (ParsedText::consumed).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/nccl.h"

namespace gpuclk::telemetry::nccl {

// One completed operation of one rank: one line.
struct InspectorRecord {
  // header: the communicator (its hash, the same on every rank) and this rank in it.
  std::string comm_id;    // "0x7f8c496ae9f661"
  std::string comm_name;  // "unknown" where the application named none
  int rank = 0, ranks = 0;
  std::uint64_t nodes = 0;
  // metadata: who wrote the line and when.
  std::string format_version;  // "v4.0"
  std::string hostname;
  unsigned pid = 0;
  std::uint64_t dump_time_us = 0;  // when the plugin's thread wrote the line (gettimeofday)
  // coll_perf or p2p_perf.
  Operation operation = Operation::all_reduce;
  bool point_to_point = false;
  std::uint64_t sequence = 0;  // coll_sn: the same operation has the same number on every rank
  std::optional<int> peer;     // p2p_peer
  std::uint64_t message_bytes = 0;
  std::uint64_t exec_time_us = 0;
  std::string timing_source;            // kernel_gpu, kernel_cpu or collective_cpu
  double algbw_gbs = 0, busbw_gbs = 0;  // as the plugin computed them (All2All: 0, it has none)
  // Verbose traces (NCCL_INSPECTOR_DUMP_VERBOSE=1), host µs: the application's call, the first
  // kernel channel seen starting and the last one seen stopping.
  std::optional<std::uint64_t> call_time_us, kernel_start_us, kernel_stop_us;
};

struct ParseProblem {
  std::string source;  // file (or what the caller named the text)
  std::size_t line = 0;
  std::string message;
};

struct ParsedText {
  std::vector<InspectorRecord> records;
  std::vector<ParseProblem> problems;  // lines that are not Inspector records, and why
  // Bytes up to the end of the last complete line: a line the plugin is still writing (no
  // newline yet) is left for the next read, from this offset.
  std::size_t consumed = 0;
};

// Parses the complete lines of `text` (a file's content from a line's start). `first_line` is
// the number of the first line, for problems.
ParsedText parse_inspector_text(std::string_view text, const std::string& source,
                                std::size_t first_line = 1);

// Reads one file's complete lines; a last line without its newline (the plugin still writing
// it) is a problem of its own. Throws gpuclk::Error (exit 2) naming a file that cannot be read.
ParsedText parse_inspector_file(const std::string& path);

// Every `*.log` file of `directory` (the plugin's dump directory), in name order. Throws
// gpuclk::Error (exit 2) when the directory cannot be read.
ParsedText parse_inspector_directory(const std::string& directory);

// Whether `name` is a file name the plugin writes: "<hostname>-pid<digits>.log".
bool is_inspector_file_name(std::string_view name);

}  // namespace gpuclk::telemetry::nccl
