#include "serve/node.h"

#include <fmt/format.h>

#include <iostream>
#include <set>

#include "control/journal_store.h"
#include "serve/collectives_json.h"
#include "serve/delegate.h"
#include "serve/delegate_writer.h"
#include "serve/http.h"
#include "serve/journal_locks.h"
#include "serve/kubelet_client.h"
#include "serve/nccl_jobs.h"
#include "serve/node_views.h"
#include "serve/profile_keeper.h"
#include "serve/protocol.h"
#include "serve/socket_server.h"
#include "util/text.h"

namespace gpuclk::serve {

namespace {

// One request line → the part that answers it: `set` and `restore` to the delegation (refused
// without a policy), everything else to the service.
Reply route(std::string_view line, const Peer& peer, Service& service, Delegation* delegation,
            const NcclJobs* nccl) {
  auto request = json::parse(line, nullptr, false);
  if (request.is_discarded())
    return Reply{
        error_response("malformed request: not JSON", static_cast<int>(ExitCode::bad_argument)),
        nullptr};
  if (request.is_object() && request.contains("request") && request["request"].is_string() &&
      Delegation::handles(request["request"].get<std::string>())) {
    if (!delegation)
      return Reply{error_response("this service takes no settings from users: it runs without a "
                                  "delegation policy",
                                  static_cast<int>(ExitCode::no_permission)),
                   nullptr};
    return delegation->answer(request, peer);
  }
  // `collectives`: the NCCL Inspector's jobs (an empty list where the service reads none).
  if (request.is_object() && request.value("request", std::string()) == "collectives") {
    try {
      json answer = nccl ? nccl->answer(request) : collectives_json({});
      answer["ok"] = true;
      answer["v"] = kProtocolVersion;
      return Reply{answer, nullptr};
    } catch (const std::exception& e) {
      return Reply{error_response(e.what(), static_cast<int>(ExitCode::bad_argument)), nullptr};
    }
  }
  return service.answer(request, peer);
}

}  // namespace

Node::Node(gpu::DeviceSet& devices, const Clock& clock, NodeOptions options)
    : devices_(devices), clock_(clock), options_(std::move(options)) {
  auto& so = options_.service;
  so.settings_watch = control::JournalStore(options_.session.journal_dir).file().string();
  if (options_.policy) so.delegation_policy = options_.policy->source;
  if (!so.kubelet_socket.empty() && !so.list_pod_resources)
    so.list_pod_resources = [path = so.kubelet_socket] { return list_pod_resources(path); };
  // dcgm-exporter's pod, namespace and container labels: each GPU's holder by the kubelet.
  if (!options_.metrics.owners) {
    options_.metrics.owners = [this] {
      std::vector<CompatOwner> owners;
      for (const auto& pod : service_->gpu_pods()) {
        owners.push_back(pod ? CompatOwner{pod->name, pod->pod_namespace, pod->container}
                             : CompatOwner{});
      }
      return owners;
    };
  }
  // A damaged journal hides what gpuclk set from every answer (and from its writers' checks):
  // said at start, naming the file and what to do.
  if (const auto damage = control::JournalStore(options_.session.journal_dir).damage())
    std::cerr << "gpuclk serve: warning: " << *damage << std::endl;
  // The socket first: a second service on the same path stops here, before touching a GPU.
  // Requests wait in the listen queue until start().
  socket_ = std::make_unique<SocketServer>(
      options_.socket_path, [this](std::string_view line, const Peer& peer) {
        return route(line, peer, *service_, delegation_seen_.load(), nccl_.get());
      });
  // The node's own views (query, clocks, info, topo, top), then any the options add.
  // The NCCL Inspector's communicators join the findings' rules (communication_bound, late_rank).
  if (!options_.nccl_inspector_dir.empty())
    so.communicators = [this] { return nccl_->communicators(); };
  auto views = node_views(devices_, so.simulated);
  for (auto& v : options_.views) views.push_back(std::move(v));
  service_ = std::make_unique<Service>(devices_, clock, so, std::move(views));
  locks_ = std::make_unique<JournalLocks>(options_.session.journal_dir, *service_);
  service_->add_series([this] { return locks_->series(); });
  if (!options_.nccl_inspector_dir.empty()) {
    NcclJobsOptions nccl{options_.nccl_inspector_dir};
    nccl.links = node_links(devices_.all());
    nccl_ = std::make_unique<NcclJobs>(std::move(nccl), *service_);
    service_->add_series([this] { return nccl_->series(); });
  }
  // The writers' series, once they exist (they may be built after start()).
  service_->add_series([this] {
    const auto* g = governor_seen_.load();
    return g ? g->series() : std::vector<ExtraSeries>{};
  });
  service_->add_series([this] {
    const auto* k = keeper_seen_.load();
    return k ? k->series() : std::vector<ExtraSeries>{};
  });
  service_->add_series([this] {
    const auto* d = delegation_seen_.load();
    return d ? d->series() : std::vector<ExtraSeries>{};
  });
  // A writer (--profile, --govern, --policy) needs the journal. Another gpuclk holding its lock
  // now (a `gpuclk set` waiting on a slow GPU, a sweep) would keep the whole service waiting,
  // its socket bound and silent: the writers are built in start() instead, after the reads are
  // served.
  const bool writes = !options_.session.read_only &&
                      (!options_.profile.empty() || options_.govern || options_.policy);
  writers_deferred_ =
      writes && control::JournalStore(options_.session.journal_dir).locked_by_another();
  if (!writers_deferred_) build_writers();
}

void Node::build_writers() {
  // The profile before the governor: applied (or refused) before anything else starts.
  if (!options_.profile.empty())
    keeper_ =
        std::make_unique<ProfileKeeper>(options_.session, options_.profile, options_.profile_check,
                                        options_.govern.has_value(), devices_, options_.selected);
  // The governor's checks (policy, journal, held clocks) before anything starts.
  if (options_.govern)
    governor_ =
        std::make_unique<ServiceGovernor>(options_.session, *options_.govern, options_.selected,
                                          devices_, clock_, keeper_ != nullptr);
  // Delegated settings: the settings the service keeps itself are no user's to change.
  if (options_.policy) {
    std::set<control::Setting> reserved;
    std::string by;  // what reserves them, for the refusal
    if (governor_) {
      reserved.insert(control::Setting::locked_gpu_clocks);
      by = "--govern holds the SM clock lock";
    }
    if (keeper_) {
      for (auto s : keeper_->settings()) reserved.insert(s);
      by += (by.empty() ? "" : "; ") + std::string("--profile keeps its settings");
    }
    writer_ = std::make_unique<DelegateWriter>(options_.session, devices_.all());
    std::vector<gpu::DeviceKey> keys;
    for (const auto& d : devices_) keys.push_back({d->index(), d->uuid(), d->bus_id()});
    delegation_ =
        std::make_unique<Delegation>(*options_.policy, keys, writer_->backend(), reserved, by);
    delegation_->set_wake([this] { socket_->wake(); });
    delegation_->set_changed([this] { service_->settings_changed(); });
    std::cerr << "gpuclk serve: delegated settings under " << options_.policy->source << " ("
              << options_.policy->rules.size() << " rules)" << std::endl;
  }
}

void Node::start_writers() {
  if (keeper_) keeper_->start();
  if (governor_) governor_->start();
  if (delegation_) delegation_->start();
  keeper_seen_ = keeper_.get();
  governor_seen_ = governor_.get();
  delegation_seen_ = delegation_.get();
}

Node::~Node() { stop(); }

std::string Node::start() {
  started_ = true;
  service_->start();
  locks_->start();
  if (nccl_) nccl_->start();
  if (!writers_deferred_) start_writers();
  if (options_.listen) {
    http_ = std::make_unique<HttpExporter>(*service_, options_.listen->text(), options_.metrics);
    service_->set_http_address(http_->address());
  }
  socket_->start();
  if (writers_deferred_) {
    // Reads are served meanwhile (status, dmon, /metrics); `set` and `restore` are refused
    // until the delegation runs. A stop signal ends the wait (LockWaitStopped).
    std::cerr << "gpuclk serve: serving reads on " << options_.socket_path
              << "; the writers start once the journal's lock is free" << std::endl;
    control::wait_for_journal(options_.session);
    build_writers();
    start_writers();
  }
  const auto& so = options_.service;
  return fmt::format(
      "{}{}, sampling every {} ms; socket {}; {}", text::counted(devices_.size(), "GPU"),
      so.simulated.empty() ? "" : " (simulated: " + so.simulated + ")",
      std::chrono::duration_cast<std::chrono::milliseconds>(so.interval).count(),
      options_.socket_path,
      http_ ? "metrics http://" + http_->address() + "/metrics" : std::string("no HTTP"));
}

ExitCode Node::stop() {
  if (stopped_) return ExitCode::ok;
  stopped_ = true;
  if (!started_) return ExitCode::ok;
  // The governor first: its clocks go back while the service still answers; then what users
  // hold through the service (no one watches their sessions any more).
  const auto governed = governor_ ? governor_->stop() : ExitCode::ok;
  if (delegation_) delegation_->stop();
  // The profile stays applied: it is the node's desired state (`gpuclk restore` undoes it).
  if (keeper_) {
    keeper_->stop();
    std::cerr << "gpuclk serve: profile " << options_.profile
              << " stays applied; `gpuclk restore` returns the GPUs to their original settings"
              << std::endl;
  }
  http_.reset();
  socket_->stop();
  if (nccl_) nccl_->stop();
  locks_->stop();
  service_->stop();
  return governed;
}

std::string Node::http_address() const { return http_ ? http_->address() : std::string(); }

}  // namespace gpuclk::serve
