// NCCL telemetry per job (`gpuclk serve --nccl-inspector-dir DIR`, docs/nccl.md): a part of the
// service that follows the NCCL Inspector's files under DIR as they grow
// (telemetry/nccl_dump_reader.h), builds each dump directory's communicators
// (telemetry/nccl_communicator.h) and joins their ranks, by the files' pids, with the GPUs and
// owners the attribution knows (the service's `processes`). It serves:
//   series()         per job and collective kind on /metrics: operations, bytes and seconds
//                    (counters, Σ over the job's ranks on the node), bus bandwidth and the share
//                    of wall time in them (gauges over the window);
//   communicators()  the window's communicators for the findings (communication_bound,
//                    late_rank: rules/rules_communication.cpp);
//   answer()         the `collectives` request (`gpuclk ps`, `stat --job`, doctor).
// Bounded: counters per job and kind; per communicator its totals and at most `max_pending`
// collectives waiting for a rank's record, for the window and the one before; a job's state is
// dropped once none of its files is followed (its processes gone: DumpReaderOptions).
// Errors (unreadable files, lines that are not records) are counted and shown, never fatal.
//
// Thread-safety: start()/stop() from the controlling thread; the rest from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench/nccl_report.h"
#include "serve/service.h"
#include "telemetry/nccl_dump_reader.h"
#include "views/collectives.h"

namespace gpuclk::serve {

struct NcclJobsOptions {
  std::string root;  // the dump directories' root
  // The window of the gauges and the rules: communicators are rebuilt every `window`, judged over
  // the last one or the current (whichever holds more records).
  std::chrono::seconds window{60};
  std::chrono::milliseconds poll{1000};
  std::size_t max_pending = 256;  // per communicator
  telemetry::nccl::DumpReaderOptions reader;
  // The node's GPUs' links (node_links()): each communicator's peak, the bandwidth a rank has to
  // the others, that communication_bound judges against; empty: unknown.
  bench::nccl::Topology links;
};

// The links of `devices` as read now (NVML: NVLinks up and to the NVSwitch fabric, PCIe at its
// maximum: a link trained down at idle is not the one a transfer runs on).
bench::nccl::Topology node_links(const std::vector<gpu::Device*>& devices);

class NcclJobs {
 public:
  NcclJobs(NcclJobsOptions options, const Service& service);
  ~NcclJobs();
  NcclJobs(const NcclJobs&) = delete;
  NcclJobs& operator=(const NcclJobs&) = delete;

  void start();  // a first poll, then the thread
  void stop();   // idempotent

  std::vector<ExtraSeries> series() const;
  std::vector<rules::CommunicatorWindow> communicators() const;
  // The `collectives` request's answer: every job's, or `owner`'s alone (an owner key).
  nlohmann::json answer(const nlohmann::json& request) const;

 private:
  struct Directory;
  void poll();
  void publish();

  NcclJobsOptions options_;
  const Service& service_;
  telemetry::nccl::DumpReader reader_;                                   // the thread's
  std::map<std::string, std::unique_ptr<Directory>> directories_;        // the thread's
  std::map<unsigned, std::map<std::string, std::string>> environments_;  // by pid: NCCL_*

  mutable std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::vector<views::JobCollectives> jobs_;  // published
  std::vector<ExtraSeries> series_;
  std::size_t files_ = 0;
  std::uint64_t records_ = 0, errors_ = 0;
  std::vector<std::string> problems_;
  std::thread thread_;
};

}  // namespace gpuclk::serve
