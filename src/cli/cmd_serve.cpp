// `gpuclk serve`: the resident node service (src/serve): one sampler and its history, the Unix
// socket every read command asks first, and /metrics for Prometheus. Runs until a signal
// that ends a process (SIGTERM, SIGINT, SIGHUP…: util/stop_signal.h) stops it in order.
#include <fmt/format.h>
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/cmd_control.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/service_views.h"
#include "control/delegation.h"
#include "govern/run.h"
#include "serve/dcgm_compat.h"
#include "serve/kubelet_client.h"
#include "serve/listen_address.h"
#include "serve/metrics_detail.h"
#include "serve/node.h"
#include "serve/notify.h"
#include "serve/protocol.h"
#include "telemetry/interval.h"
#include "util/error.h"
#include "util/parse.h"
#include "util/stop_signal.h"

namespace gpuclk::cli {
namespace {

struct ServeOptions {
  std::string listen = "127.0.0.1:9400";
  std::string interval = "100ms";
  std::string history = "1h";
  std::string counters_interval = "5s";
  // --govern POLICY: the energy governor (docs/govern.md) inside the service.
  std::string govern;
  std::string govern_interval = "20ms";
  std::string govern_max_slowdown = "3%";
  std::string govern_log;
  bool govern_dry_run = false;
  // --profile FILE: the desired state, applied at start and kept (serve/profile_keeper.h).
  std::string profile;
  std::string profile_check = "5s";
  // --policy FILE: who may change what through the socket (control/delegation.h).
  std::string policy;
  // --metrics-compat dcgm-exporter[:4.8|:3]: dcgm-exporter's series beside gpuclk's
  // (serve/dcgm_compat.h).
  std::string metrics_compat;
  // --metrics-detail nvlink,gpu,attribution|all: series beyond the default set
  // (serve/metrics_detail.h).
  std::string metrics_detail;
  // --kubelet-socket PATH: pods' names from the kubelet's pod-resources API (serve/pod_names.h).
  std::string kubelet_socket = serve::kKubeletPodResourcesSocket;
};

constexpr const char* kDefaultPolicy = "/etc/gpuclk/policy.toml";
// How long a stopping service still waits for another gpuclk's journal lock.
constexpr auto kStopGrace = std::chrono::seconds(5);

// The delegation policy: --policy, else /etc/gpuclk/policy.toml when it exists; nullopt: none
// (users who are not root change nothing through the service). Refused with exit 2 when others
// than root could change it, or when it is malformed.
std::optional<control::DelegationPolicy> load_policy(const ServeOptions& o) {
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

// "3600", "3600s", "90m", "1h": at least a minute, at most a week.
telemetry::Duration parse_history(const std::string& text) {
  const double seconds =
      parse::duration_seconds(text, "--history", 60, 7 * 86400, "3600s, 90m, 1h");
  return std::chrono::duration_cast<telemetry::Duration>(std::chrono::duration<double>(seconds));
}

// --profile-check: "5s", "1m"… from 1 s to 1 h.
std::chrono::milliseconds parse_profile_check(const std::string& text) {
  const double seconds = parse::duration_seconds(text, "--profile-check", 1, 3600, "5s, 30s, 10m");
  return std::chrono::milliseconds(static_cast<long long>(std::llround(seconds * 1000)));
}

int run_serve(Context& ctx, const ServeOptions& o) {
  const auto interval = telemetry::parse_interval(o.interval);
  if (!interval)
    throw bad_argument(fmt::format("bad --interval '{}'", o.interval),
                       "give seconds or milliseconds from 10ms to 24h, e.g. 100ms, 1s");
  // glibc gives each thread that allocates an arena of its own (up to 8 per core): with the
  // sampler's threads, the socket's and civetweb's 32 workers, the RSS rose by 10 MiB under 10
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
  serve::NodeOptions node;
  auto& so = node.service;
  so.interval = *interval;
  so.history = parse_history(o.history);
  so.counters_every = parse_counters_interval(o.counters_interval);
  if (o.kubelet_socket != "off") so.kubelet_socket = o.kubelet_socket;
  // --listen before anything starts: a bad address is exit 2, a port in use exit 255, and
  // nothing was touched either way.
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

  // Every signal that would end the service (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1…) is
  // blocked in every thread (the Node's threads inherit the mask); this thread waits for them
  // and stops the Node in order, so the governor's clocks and users' grants go back. A log
  // reader that goes away (`serve 2>&1 | head`, journald restarting) must not end it either:
  // SIGPIPE is ignored and stderr's write errors are dropped.
  util::ignore_write_signals();
  util::StopWaiter stop;
  auto& devices = ctx.devices();
  if (ctx.simulated()) {
    so.simulated = ctx.options.sim.empty() ? "default" : ctx.options.sim;
    if (const char* state = std::getenv("GPUCLK_SIM_STATE")) so.sim_state = state;
  }
  // The policy before anything: a policy others could change, or a malformed one, stops here.
  node.policy = load_policy(o);
  if (node.policy && ctx.read_only()) {
    std::cerr << "gpuclk serve: read-only mode: no delegated settings (" << node.policy->source
              << " is not used)" << std::endl;
    node.policy.reset();
  }
  node.socket_path = serve::socket_path(ctx.options.socket);
  node.session = session_options(ctx, "serve", true);
  node.session.name = "gpuclk serve";
  // Waits for another gpuclk's journal lock end kStopGrace after a stop signal: at start nothing
  // was written yet; at stop, the governor's clocks stay in the journal for `gpuclk restore`.
  // Asked from the writers' threads: when the stop was first seen is one atomic.
  node.session.give_up = [](std::chrono::steady_clock::duration) {
    static std::atomic<std::int64_t> asked_ns{0};
    if (!util::StopWaiter::requested()) return false;
    const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count();
    std::int64_t expected = 0;
    asked_ns.compare_exchange_strong(expected, now);
    return now - asked_ns.load() >= std::chrono::nanoseconds(kStopGrace).count();
  };
  node.selected = ctx.selected();
  node.views = service_views(ctx);

  // Another gpuclk holding the journal's lock is waited for (the service serving reads
  // meanwhile, serve/node.h); a stop signal ends that wait before anything was written.
  const auto stopped_waiting = [&stop] {
    std::cerr << "gpuclk serve: " << util::signal_name(stop.wait())
              << " while waiting for the journal's lock: stopped; nothing was written" << std::endl;
    return 0;
  };
  std::optional<serve::Node> built;
  try {
    built.emplace(devices, ctx.clock(), std::move(node));
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

void add_serve_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ServeOptions>();
  auto* sub = app.add_subcommand(
      "serve",
      "Resident node service: one sampler and its history for every read command (Unix socket), "
      "Prometheus /metrics");
  sub->add_option("--listen", o->listen,
                  "HTTP address for /metrics and /healthz: PORT, IPV4:PORT or [IPV6]:PORT (default "
                  "127.0.0.1:9400; port 0: any free one; off: none)");
  sub->add_option("--interval", o->interval, "sampling interval (default 100ms)");
  sub->add_option("--history", o->history, "history kept at 1 s (default 1h)");
  sub->add_option("--counters-interval", o->counters_interval,
                  "energy, violation, ECC, replay and GPM counters every N s while no dmon/stat "
                  "streams (default 5s; every second while one does)");
  sub->add_option("--govern", o->govern,
                  "run the energy governor with this policy: threshold | geopm | phase | bandit");
  sub->add_option("--govern-interval", o->govern_interval, "governor's interval (default 20ms)");
  sub->add_option("--govern-max-slowdown", o->govern_max_slowdown,
                  "governor's slowdown budget (default 3%)");
  sub->add_option("--govern-log", o->govern_log, "governor's decision log (JSON Lines)");
  sub->add_flag("--govern-dry-run", o->govern_dry_run, "governor decides and logs, writes nothing");
  auto* profile = sub->add_option(
      "--profile", o->profile,
      "apply this profile (as `gpuclk apply`) at start and re-apply it when a GPU drifts");
  sub->add_option("--profile-check", o->profile_check,
                  "how often the GPUs are compared with --profile (default 5s; 1s to 1h)")
      ->needs(profile);
  sub->add_option("--policy", o->policy,
                  "who may change which settings through the socket (default "
                  "/etc/gpuclk/policy.toml when it exists; docs/serve.md)");
  sub->add_option("--kubelet-socket", o->kubelet_socket,
                  "the kubelet's pod-resources socket, asked for pods' names and namespaces "
                  "while it exists (default /var/lib/kubelet/pod-resources/kubelet.sock; off: "
                  "never; docs/attribution.md)");
  sub->add_option("--metrics-compat", o->metrics_compat,
                  "also export these names on /metrics: dcgm-exporter (the DCGM_FI_* "
                  "default counters of its 4.8 release, units and labels), dcgm-exporter:3 "
                  "(its 2.x-3.x set, PCIe throughput in KB; docs/exporter.md)");
  sub->add_option("--metrics-detail", o->metrics_detail,
                  "also export these series on /metrics: nvlink (every link's), gpu (every "
                  "per-GPU reading and limit), attribution (each GPU's energy split), all; "
                  "default: at most 40 per GPU (docs/exporter.md)");
  sub->callback([&ctx, o] { ctx.run = [&ctx, o] { return run_serve(ctx, *o); }; });
}

}  // namespace gpuclk::cli
