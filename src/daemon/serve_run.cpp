#include "daemon/serve_run.h"

#include <fmt/format.h>
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "control/delegation.h"
#include "control/test_pause.h"
#include "govern/run.h"
#include "gpu/limits_cache.h"
#include "nvml/api.h"
#include "serve/dcgm_compat.h"
#include "serve/listen_address.h"
#include "serve/metrics_detail.h"
#include "serve/node.h"
#include "serve/notify.h"
#include "telemetry/interval.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/parse.h"
#include "util/stop_signal.h"

namespace gpuclk::daemon {
namespace {

constexpr const char* kDefaultPolicy = "/etc/gpuclk/policy.toml";
// How long a stopping service still waits for another gpuclk's journal lock.
constexpr auto kStopGrace = std::chrono::seconds(5);

// The delegation policy: --policy, else /etc/gpuclk/policy.toml when it exists; nullopt: none
// (users who are not root change nothing through the service). Refused with exit 2 when others
// than root could change it, or when it is malformed.
std::optional<control::DelegationPolicy> load_policy(const serve::ServeOptionTexts& o) {
  std::string path = o.policy;
  if (path.empty()) {
    std::error_code ec;
    if (!std::filesystem::exists(kDefaultPolicy, ec)) return std::nullopt;
    path = kDefaultPolicy;
  }
  return control::load_delegation_policy(path);
}

// --counters-interval: whole seconds, 1 to 60 ("5s", "5").
unsigned parse_counters_interval(const std::string& text) {
  const auto s = parse::try_duration_seconds(text, 60);
  const double seconds = s.value_or(0);
  if (seconds < 1 || seconds != std::floor(seconds))
    throw bad_argument(fmt::format("bad --counters-interval '{}'", text),
                       "give whole seconds from 1s to 60s, e.g. 5s (1s: always every second)");
  return static_cast<unsigned>(seconds);
}

// --profile-check: "5s", "1m"… from 1 s to 1 h.
std::chrono::milliseconds parse_profile_check(const std::string& text) {
  const double seconds = parse::duration_seconds(text, "--profile-check", 1, 3600, "5s, 30s, 10m");
  return std::chrono::milliseconds(static_cast<long long>(std::llround(seconds * 1000)));
}

// serve's options to the Node's, checked: a bad value is exit 2 naming the option, a --listen
// port in use exit 255, and nothing was touched either way.
serve::NodeOptions node_options(const serve::ServeOptionTexts& o) {
  const auto interval =
      telemetry::duration_option(o.interval, "--interval", 0.01, 86400, "100ms, 1s");
  serve::NodeOptions node;
  auto& so = node.service;
  so.interval = interval;
  // "3600", "3600s", "90m", "1h": at least a minute, at most a week.
  so.history = telemetry::duration_option(o.history, "--history", 60, 7 * 86400, "3600s, 90m, 1h");
  so.counters_every = parse_counters_interval(o.counters_interval);
  if (o.kubelet_socket != "off") so.kubelet_socket = o.kubelet_socket;
  if (!o.nccl_inspector_dir.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(o.nccl_inspector_dir, ec))
      throw bad_argument(
          fmt::format("--nccl-inspector-dir {}: not a directory", o.nccl_inspector_dir),
          "give the root the jobs' NCCL_INSPECTOR_DUMP_DIR are in (docs/nccl.md)");
    node.nccl_inspector_dir = o.nccl_inspector_dir;
  }
  if (!o.metrics_compat.empty())
    node.metrics.compat = serve::parse_metrics_compat(o.metrics_compat);
  if (!o.metrics_detail.empty())
    node.metrics.detail = serve::parse_metrics_detail(o.metrics_detail);
  if (o.listen != "off") {
    node.listen = serve::parse_listen_address(o.listen);
    serve::check_can_listen(*node.listen);
  }
  if (!o.govern.empty()) {
    serve::GovernOptions g;
    g.policy = o.govern;
    g.policy_options.max_slowdown =
        govern::parse_slowdown(o.govern_max_slowdown, "--govern-max-slowdown");
    g.interval = govern::parse_duration_option(o.govern_interval, "--govern-interval");
    g.log = o.govern_log;
    g.dry_run = o.govern_dry_run;
    node.govern = g;
  }
  if (!o.profile.empty()) {
    node.profile = o.profile;
    node.profile_check = parse_profile_check(o.profile_check);
  }
  return node;
}

// The process's limits for a long-lived service with many clients.
void set_process_limits() {
  // glibc gives each thread that allocates an arena of its own (up to 8 per core): with the
  // sampler's threads, the socket's and civetweb's workers, the RSS rose by 10 MiB under 10
  // scrapers (perf/serve_load.sh). The service allocates little; two arenas are enough. An
  // explicit MALLOC_ARENA_MAX wins.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
  // Each socket client is a descriptor: the soft limit (1024 under systemd) would end accepting
  // before the service's own caps (socket_server.h). The hard limit is the site's to set
  // (LimitNOFILE in the unit); up to 65536 of it is taken.
  if (rlimit files{}; ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = std::min<rlim_t>(files.rlim_max, 65536);
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
}

// The writers' session: the journal `gpuclk serve` resolved, and a wait for another gpuclk's
// journal lock that ends kStopGrace after a stop signal: at start nothing was written yet; at
// stop, the governor's clocks stay in the journal for `gpuclk restore`. Asked from the writers'
// threads: when the stop was first seen is one atomic.
control::SessionOptions session_options(const serve::DaemonArgs& args) {
  control::SessionOptions session;
  session.journal_dir = args.journal_dir;
  session.command = "serve";
  session.name = "gpuclk serve";
  session.read_only = args.read_only;
  const bool simulated = !args.simulated.empty();
  session.simulated = [simulated] { return simulated; };
  session.after_write = control::test_pause_hook([simulated] { return simulated; });
  session.give_up = [](std::chrono::steady_clock::duration) {
    static std::atomic<std::int64_t> asked_ns{0};
    if (!util::StopWaiter::requested()) return false;
    const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count();
    std::int64_t expected = 0;
    asked_ns.compare_exchange_strong(expected, now);
    return now - asked_ns.load() >= std::chrono::nanoseconds(kStopGrace).count();
  };
  return session;
}

// The GPUs `gpuclk serve` selected (by index) in this process's own set.
std::vector<gpu::Device*> selected_devices(gpu::DeviceSet& devices,
                                           const std::vector<unsigned>& indexes) {
  std::vector<gpu::Device*> out;
  for (auto index : indexes) {
    const auto all = devices.all();
    const auto it = std::find_if(all.begin(), all.end(),
                                 [index](const gpu::Device* d) { return d->index() == index; });
    if (it == all.end())
      throw Error(ExitCode::gpu_not_found, fmt::format("-i: no GPU with index {}", index));
    out.push_back(*it);
  }
  return out;
}

// Starts the Node and runs it until a stop signal; the governor's exit code when its clocks did
// not go back.
int run_node(gpu::DeviceSet& devices, const Clock& clock, serve::NodeOptions node,
             util::StopWaiter& stop) {
  // Another gpuclk holding the journal's lock is waited for (the service serving reads
  // meanwhile, serve/node.h); a stop signal ends that wait before anything was written.
  const auto stopped_waiting = [&stop] {
    std::cerr << "gpuclk serve: " << util::signal_name(stop.wait())
              << " while waiting for the journal's lock: stopped; nothing was written" << std::endl;
    return 0;
  };
  std::optional<serve::Node> built;
  try {
    built.emplace(devices, clock, std::move(node));
  } catch (const control::LockWaitStopped&) {
    return stopped_waiting();
  }
  serve::Node& service = *built;
  std::string status;
  try {
    status = service.start();
  } catch (const control::LockWaitStopped&) {
    service.stop();
    return stopped_waiting();
  }
  std::cerr << "gpuclk serve: " << status << std::endl;
  serve::notify_ready(status);

  const int signal_number = stop.wait();
  serve::notify_stopping();
  std::cerr << "gpuclk serve: " << util::signal_name(signal_number) << ", stopping" << std::endl;
  const auto governed = service.stop();
  if (governed != ExitCode::ok)
    throw Error(governed, "the governor did not stop cleanly (above)",
                "run `gpuclk restore` (the journal keeps the original settings)");
  return 0;
}

}  // namespace

int run_serve(const serve::DaemonArgs& args) {
  auto node = node_options(args.options);
  set_process_limits();
  // Every signal that would end the service (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1…) is
  // blocked in every thread (the Node's threads inherit the mask); this thread waits for them
  // and stops the Node in order, so the governor's clocks and users' grants go back. A log
  // reader that goes away (`serve 2>&1 | head`, journald restarting) must not end it either:
  // SIGPIPE is ignored and stderr's write errors are dropped.
  util::ignore_write_signals();
  util::StopWaiter stop;
  auto api = nvml::Api::open(args.nvml_library);
  // The process ends after the service stops: NVML need not be shut down.
  api->skip_shutdown_at_exit();
  gpu::DeviceSet devices(*api);
  devices.cache_clock_limits(gpu::LimitsCache::default_dir(api->simulated()));
  const ScaledClock clock(api->time_scale());
  auto& so = node.service;
  if (!args.simulated.empty()) {
    so.simulated = args.simulated;
    if (const char* state = std::getenv("GPUCLK_SIM_STATE")) so.sim_state = state;
  }
  // The policy before anything: a policy others could change, or a malformed one, stops here.
  node.policy = load_policy(args.options);
  if (node.policy && args.read_only) {
    std::cerr << "gpuclk serve: read-only mode: no delegated settings (" << node.policy->source
              << " is not used)" << std::endl;
    node.policy.reset();
  }
  node.socket_path = args.socket;
  node.session = session_options(args);
  node.selected = selected_devices(devices, args.selected);
  return run_node(devices, clock, std::move(node), stop);
}

}  // namespace gpuclk::daemon
