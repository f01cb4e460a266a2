// The node service as one object: what `gpuclk serve` runs, built from plain options.
//   Service          the sampler, its history and the cached views (service.h);
//   SocketServer     the Unix socket every read command asks first, with the request router:
//                    `set`/`restore` go to Delegation, everything else to Service;
//   HttpExporter     /metrics and /healthz (when `listen` is given);
//   JournalLocks     the clock locks gpuclk's journal records, as series;
//   NcclJobs         `--nccl-inspector-dir`: each job's NCCL collectives from the NCCL
//                    Inspector's files, as series, the `collectives` answer and findings;
//   ProfileKeeper    `--profile`: the desired state, applied at start and kept;
//   ServiceGovernor  `--govern`: the energy governor on the selected GPUs;
//   Delegation       `--policy`: settings users who are not root may change, written by a
//                    DelegateWriter.
// The constructor checks and applies everything that can fail (the socket path, the profile, the
// governor's journal checks) before any thread starts — unless another gpuclk holds the
// journal's lock then: start() serves the reads first, says who holds the lock, waits for it
// (a stop signal ends the wait: control::LockWaitStopped), then builds and starts the writers.
// start() starts them, stop() stops them in order: the governor first (its clocks go back while the
// service still answers), then what users hold through the service, the profile keeper (its
// settings stay applied), HTTP, the socket, the service.
//
// Thread-safety: construct, start() and stop() from one controlling thread.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "control/delegation.h"
#include "control/session.h"
#include "gpu/device.h"
#include "serve/governor.h"
#include "serve/listen_address.h"
#include "serve/metrics.h"
#include "serve/service.h"
#include "util/clock.h"
#include "util/error.h"

namespace gpuclk::serve {

class SocketServer;
class HttpExporter;
class Delegation;
class JournalLocks;
class NcclJobs;
class ProfileKeeper;
class DelegateWriter;

struct NodeOptions {
  ServiceOptions service;  // its settings_watch and delegation_policy are set by Node
  std::string socket_path;
  std::optional<ListenAddress> listen;  // nullopt: no HTTP side
  MetricsOptions metrics;               // what /metrics shows besides gpuclk's series
  // Where the journal is, read-only mode, the simulated node: every writer's session starts
  // from these (each sets its own command).
  control::SessionOptions session;
  // The GPUs -i selects: what --profile and --govern act on (the service samples them all).
  std::vector<gpu::Device*> selected;
  std::string profile;  // empty: none
  std::chrono::milliseconds profile_check{5000};
  std::optional<GovernOptions> govern;
  // Who may change what through the socket; nullopt: nobody who is not root.
  std::optional<control::DelegationPolicy> policy;
  // Views besides the node's own (node_views.h: query, clocks, info, topo, top).
  std::vector<View> views;
  // The NCCL Inspector's dump directories' root (nccl_jobs.h); empty: none read.
  std::string nccl_inspector_dir;
};

class Node {
 public:
  // Throws Error before any thread starts: a socket path in use (another service), a profile
  // that does not load or apply, a governor that cannot start (its exit code).
  Node(gpu::DeviceSet& devices, const Clock& clock, NodeOptions options);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Starts every part; returns the line the service prints once ready ("4 GPUs, sampling every
  // 100 ms; socket …; metrics http://…/metrics"). Throws Error (exit 255) when the HTTP side
  // cannot listen.
  std::string start();
  // Stops every part in order; ok, or the governor's exit code when restoring its clocks failed.
  // Idempotent.
  ExitCode stop();

  const Service& service() const { return *service_; }
  Service& service() { return *service_; }
  // The HTTP address actually bound ("127.0.0.1:41234" for port 0); empty without HTTP.
  std::string http_address() const;

 private:
  // The profile keeper, the governor and the delegation, built from the options (each may
  // throw Error: a profile that does not apply, a governor that cannot start).
  void build_writers();
  void start_writers();

  gpu::DeviceSet& devices_;
  const Clock& clock_;
  NodeOptions options_;
  bool started_ = false, stopped_ = false;
  // Another gpuclk held the journal's lock at construction: the writers are built in start(),
  // once the reads are served (the socket answers while the service waits for the lock).
  bool writers_deferred_ = false;
  // The writers as the socket's and the metrics' threads see them (set once built).
  std::atomic<Delegation*> delegation_seen_{nullptr};
  std::atomic<ServiceGovernor*> governor_seen_{nullptr};
  std::atomic<ProfileKeeper*> keeper_seen_{nullptr};
  std::unique_ptr<Service> service_;
  std::unique_ptr<Delegation> delegation_;
  std::unique_ptr<SocketServer> socket_;
  std::unique_ptr<ProfileKeeper> keeper_;
  std::unique_ptr<ServiceGovernor> governor_;
  std::unique_ptr<DelegateWriter> writer_;
  std::unique_ptr<JournalLocks> locks_;
  std::unique_ptr<NcclJobs> nccl_;
  std::unique_ptr<HttpExporter> http_;
};

}  // namespace gpuclk::serve
