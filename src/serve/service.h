// The resident node service: owns the telemetry sampler, each GPU's history, and a cache of what
// the read commands show (status rows, query fields), refreshed on its own thread (the
// refresher, which also feeds the attribution and asks the kubelet). Requests and scrapes read
// only these: no NVML call happens on a request's path.
//
// History per GPU: the sampler's ring buffers (the last 10 min at the sampling interval, fast
// and slow tiers) and the service's own 1 s ring (one fast sample per second, `history` long,
// 1 h by default). Memory: about 200 bytes per fast sample, so 8 GPUs at 100 ms keep
// 8 × (6000 + 3600) × 200 B ≈ 15 MB (docs/serve.md).
//
// Its parts, each in a file of its own: the answers to requests (answers.h), the streams and
// what they want of the sampler (streams.h), the Xid and ECC event log and its thread
// (event_log.h). The Service starts and stops them with the sampler and the refresher.
//
// Thread-safety: handle(), answer(), state(), ask_view(), sampler() reads, history() and the
// event accessors may be called from any thread while the service runs; start()/stop() from
// one controlling thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "attribution/attribution.h"
#include "attribution/pod_names.h"
#include "gpu/device.h"
#include "gpu/events.h"
#include "gpu/selection.h"
#include "gpu/status.h"
#include "rules/finding.h"
#include "rules/input.h"
#include "serve/answers.h"
#include "serve/event_log.h"
#include "serve/findings.h"
#include "serve/reply.h"
#include "serve/streams.h"
#include "telemetry/packed_sample.h"
#include "telemetry/ring_buffer.h"
#include "telemetry/sampler.h"

namespace gpuclk::serve {

using nlohmann::json;

struct ServiceOptions {
  telemetry::Duration interval = std::chrono::milliseconds(100);  // sampler's fast interval
  telemetry::Duration history = std::chrono::hours(1);            // length of the 1 s history
  std::chrono::milliseconds refresh{1000};  // wall time between refreshes of the cached state
  std::string simulated;                    // the scenario under --sim; empty on real GPUs
  std::string sim_state;                    // the simulator's state file (GPUCLK_SIM_STATE)
  std::string http_listen;                  // what /metrics listens on ("" when off), for hello
  // The slow tier (energy, violation time, ECC, PCIe replays, GPM) every this many seconds while
  // no stream (dmon, stat) is open; every second while one is. On an H100 these reads cost ~7 ms
  // of driver time a second (docs/results/serve_h100.md).
  unsigned counters_every = 5;
  // Settings (application clocks, power limit, persistence) are read every `settings_every`
  // refreshes, and at once when this file changes (gpuclk's journal: every gpuclk write
  // records itself there first).
  unsigned settings_every = 10;
  std::string settings_watch;
  std::string delegation_policy;  // the policy file when users may send `set` (hello says so)
  // The kubelet's pod-resources socket, asked for pods' names and namespaces (pod_names.h)
  // while it exists; empty: never. `list_pod_resources` makes the call (serve::Node gives it
  // kubelet_client.h's); none: pods are named by UID.
  std::string kubelet_socket;
  attribution::ListPodResources list_pod_resources;
  // The NCCL communicators of the node's jobs (serve/nccl_jobs.h), judged by the window findings
  // at each refresh; none when not given.
  std::function<std::vector<rules::CommunicatorWindow>()> communicators;
};

// A per-GPU document the service keeps fresh for one read command (`gpuclk query`'s fields,
// say). Registered by the command layer, which knows how to read it; served from the cache.
// A view is read by the refresher only while it is in demand (asked for in the last
// kViewIdle): reading every query field of every GPU each second for nobody cost more than the
// sampler. The first request after an idle spell waits for one refresh (docs/serve.md); on the
// socket as a one-line Stream, so that the poll thread serves the other clients meanwhile.
struct View {
  std::string name;
  // One row per GPU; optional (topo's table is the node's alone: `rows` is then empty).
  std::function<json(const gpu::Device&, const gpu::DeviceSet&)> read;
  // What the view knows of the node as a whole (info's host section, topo's matrix); optional.
  std::function<json(const gpu::DeviceSet&)> node;
};

// A series another part of the service adds to /metrics (the governor's state): asked for at
// each scrape, on the HTTP thread.
struct ExtraSeries {
  std::string name, help;
  bool counter = false;
  std::optional<std::size_t> gpu;  // the GPU's position: it gets the GPU's labels
  std::vector<std::pair<std::string, std::string>> labels;  // more labels
  double value = 0;
};
using SeriesSource = std::function<std::vector<ExtraSeries>()>;

// Static facts read once at start (the `gpuclk_gpu_info` series, hello).
struct GpuFacts {
  gpu::DeviceKey key;
  std::string name;
  std::string compute_capability;  // "9.0"; empty when unknown
  std::string architecture;        // "hopper"; empty when unknown
  std::optional<units::Bytes> memory_total;
  std::optional<units::Watts> min_power_limit, max_power_limit, default_power_limit;
  std::optional<units::Megahertz> max_sm_clock, max_memory_clock;
};

// One refresh of the cached state.
struct NodeState {
  std::uint64_t generation = 0;                    // refreshes so far
  std::chrono::system_clock::time_point time;      // wall time of the refresh
  std::vector<gpu::StatusSnapshot> status;         // by GPU position
  std::vector<rules::Finding> findings;            // over `status` (see findings.h)
  std::map<std::string, std::vector<json>> views;  // the views in demand at this refresh
  std::map<std::string, json> view_nodes;          // their node-level parts
};

inline constexpr std::chrono::seconds kViewIdle{60};

class Service {
 public:
  Service(gpu::DeviceSet& devices, const Clock& clock, ServiceOptions options,
          std::vector<View> views = {});
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Reads the static facts and the first state (so the first request has data), then starts
  // the sampler, the refresher and the event log.
  void start();
  void stop();  // idempotent
  bool running() const { return running_; }

  // One protocol request (protocol.h) to its response (answers.h). Never throws: errors are
  // responses.
  json handle(const json& request, const Peer& peer) const {
    return answers_->handle(request, peer);
  }
  // As handle(), and the `stream` request: its lines come from the Reply's stream.
  Reply answer(const json& request, const Peer& peer) { return answers_->answer(request, peer); }

  std::shared_ptr<const NodeState> state() const;
  // Marks view `name` in demand and returns the state; when that state lacks the view, also
  // wakes the refresher (the next state will hold it). Throws when there is no such view.
  std::shared_ptr<const NodeState> ask_view(const std::string& name) const;
  // ask_view(), then waits for the state that holds the view (throws when it did not come).
  std::shared_ptr<const NodeState> state_with_view(const std::string& name) const;
  const std::vector<View>& views() const { return views_; }
  const telemetry::Sampler& sampler() const { return *sampler_; }
  const std::vector<GpuFacts>& facts() const { return facts_; }
  const ServiceOptions& options() const { return options_; }
  // Where /metrics listens, for hello; call before the socket server starts.
  void set_http_address(std::string address) { options_.http_listen = std::move(address); }
  const std::string& driver_version() const { return driver_version_; }
  // A writer of the service changed GPU settings (a delegated set or restore): the refresher
  // re-reads them now. Returns once a state with them is published (at most 2 s), so the
  // writer's answer and a status asked after it agree (a restore showed the old limit for up
  // to a refresh). Any thread but the refresher's.
  void settings_changed();
  // More series for /metrics; call before start().
  void add_series(SeriesSource source) { series_.push_back(std::move(source)); }
  const std::vector<SeriesSource>& series() const { return series_; }
  // The 1 s history of GPU `gpu` over the last `window`.
  std::vector<telemetry::FastSample> history(std::size_t gpu, telemetry::Duration window) const;
  // The event log's (event_log.h), for GPU `gpu` (a position): its events over the last
  // `window`, oldest first (GpuEvent::gpu is the GPU's index); the kinds watched (empty when
  // none: not supported, lost; set by start()); its Xid counts since the service started, by
  // Xid (/metrics); its last Xid (dcgm-exporter's DCGM_FI_DEV_XID_ERRORS).
  std::vector<gpu::GpuEvent> events(std::size_t gpu, telemetry::Duration window) const;
  const std::vector<gpu::EventKind>& events_watched(std::size_t gpu) const {
    return event_log_->watched(gpu);
  }
  std::map<std::uint64_t, std::uint64_t> xid_counts(std::size_t gpu) const {
    return event_log_->xid_counts(gpu);
  }
  std::optional<std::uint64_t> last_xid(std::size_t gpu) const { return event_log_->last_xid(gpu); }
  // Seconds since the last refresh finished; large when the refresher is stuck (/healthz).
  double state_age_seconds() const;
  // Who used the GPUs (attribution/attribution.h), brought up to date by every refresh from the
  // sampler's slow samples; null before start().
  const attribution::Attribution* attribution() const { return attribution_.get(); }
  // Each GPU's one holder by the kubelet's last answer (by position; dcgm-exporter's labels);
  // empty before start().
  std::vector<std::optional<attribution::PodName>> gpu_pods() const;

 private:
  void refresh();
  void refresh_loop();
  // Feeds the slow samples that came since the last refresh to the attribution.
  void attribute();
  bool in_demand(const std::string& view) const;

  gpu::DeviceSet& devices_;
  const Clock& clock_;
  ServiceOptions options_;
  std::vector<View> views_;
  std::vector<SeriesSource> series_;
  std::vector<GpuFacts> facts_;
  std::string driver_version_;
  std::unique_ptr<telemetry::Sampler> sampler_;
  // The parts (each its file): built by the constructor, over the sampler and this service.
  std::unique_ptr<Streams> streams_;
  std::unique_ptr<Answers> answers_;
  std::unique_ptr<EventLog> event_log_;

  mutable std::mutex state_mutex_;
  mutable std::condition_variable state_cv_;  // a new state was published
  std::shared_ptr<const NodeState> state_;
  // When each view was last asked for (under state_mutex_).
  mutable std::map<std::string, std::chrono::steady_clock::time_point> asked_;

  mutable std::mutex history_mutex_;
  std::vector<telemetry::RingBuffer<telemetry::PackedFastSample>> second_history_;

  std::atomic<bool> running_{false};
  mutable std::mutex stop_mutex_;
  mutable std::condition_variable stop_cv_;
  bool stop_requested_ = false;
  mutable bool refresh_wanted_ = false;  // a request waits for a view (under stop_mutex_)
  std::thread refresher_;

  // The refresher's cached settings (gpu::read_status_settings) and when to read them again.
  std::vector<gpu::StatusSnapshot> settings_;
  unsigned refreshes_since_settings_ = 0;
  int settings_reread_ = 0;
  // settings_changed()'s tickets: asked by writers, done once a refresh that re-read the
  // settings after the ask has published its state (done under state_mutex_).
  std::atomic<std::uint64_t> settings_asked_{0};
  std::uint64_t settings_done_ = 0;
  std::filesystem::file_time_type settings_watch_stamp_{};
  // The attribution and, by position, the last slow sample it was given (refresher only).
  std::unique_ptr<attribution::Attribution> attribution_;
  std::vector<std::optional<telemetry::SlowSample>> attributed_;
  // Pods' names from the kubelet, asked on the refresher.
  std::unique_ptr<attribution::PodNamer> pods_;
  FindingsHold findings_hold_;  // the refresher's: /metrics' findings over a window
};

}  // namespace gpuclk::serve
