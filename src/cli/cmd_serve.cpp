// `gpuclk serve`: the resident node service (src/serve): one sampler and its history, the Unix
// socket every read command asks first, and /metrics for Prometheus. Runs until SIGTERM/SIGINT.
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "cli/cmd_control.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/governor_run.h"
#include "cli/serve_delegate.h"
#include "cli/serve_profile.h"
#include "cli/service_views.h"
#include "control/delegation.h"
#include "control/journal_store.h"
#include "control/restore.h"
#include "control/transaction.h"
#include "serve/delegate.h"
#include "serve/http.h"
#include "serve/listen_address.h"
#include "serve/notify.h"
#include "serve/protocol.h"
#include "serve/service.h"
#include "serve/socket_server.h"
#include "telemetry/interval.h"
#include "util/error.h"
#include "util/text.h"
#include "util/thread_name.h"

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
  // --profile FILE: the desired state, applied at start and kept (serve_profile.h).
  std::string profile;
  std::string profile_check = "5s";
  // --policy FILE: who may change what through the socket (control/delegation.h).
  std::string policy;
};

constexpr const char* kDefaultPolicy = "/etc/gpuclk/policy.toml";

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

// `serve --govern POLICY`: the governor on the selected GPUs (all without -i), on a thread of
// its own with its own sampler — it needs GPM every 20 ms and no energy reads, the service's
// sampler the opposite. Its writes go through src/control with the journal; the journal's lock
// is taken for each write only (ResidentSession), so a `gpuclk set` from a shell is not kept
// waiting, and a GPU whose clocks such a command takes over is left to it until released.
// SIGTERM/SIGINT stop it first and restore its clocks; after kill -9 `gpuclk restore` does.
// With --profile the profile's locked_gpu_clocks is left to the governor (serve_profile.h).
class ServeGovernor {
 public:
  // `keep_profile`: serve --profile keeps the GPUs' other settings, so stopping puts back only
  // the clock lock instead of restoring the GPUs whole.
  ServeGovernor(Context& ctx, const ServeOptions& o, const gpu::DeviceSet& all, bool keep_profile) {
    GovernSetup setup;
    setup.policy = o.govern;
    setup.policy_options.max_slowdown =
        parse_slowdown(o.govern_max_slowdown, "--govern-max-slowdown");
    setup.interval = parse_duration_option(o.govern_interval, "--govern-interval");
    setup.log = o.govern_log;
    setup.name = "gpuclk serve: ";
    setup.interrupted = [this] { return stop_.load(); };
    govern::make_policy(setup.policy, setup.policy_options);  // a bad name stops here
    setup.dry_run = o.govern_dry_run || ctx.read_only();
    if (ctx.read_only() && !o.govern_dry_run)
      std::cerr << "gpuclk serve: read-only mode: --govern runs as --govern-dry-run (decisions "
                   "logged, nothing written)\n";
    const auto devices = ctx.selected();
    for (const auto* d : devices) {
      std::size_t i = 0;
      for (const auto& a : all) {
        if (a->uuid() == d->uuid()) position_[d->uuid()] = i;
        ++i;
      }
    }
    policy_ = setup.policy;
    dry_run_ = setup.dry_run;

    const std::string command = "serve --govern " + o.govern;
    if (setup.dry_run) {
      dry_session_.emplace(ctx, command, true);
      controls_ = dry_session_->open(devices);
    } else {
      session_.emplace(ctx, command);
      if (auto journal = session_->peek()) refuse_held_clocks(*journal, devices);
      controls_ = session_->open(devices);
      const long self = static_cast<long>(::getpid());
      setup.held_by = [this, self](const gpu::Device& d) -> std::optional<std::string> {
        const auto journal = session_->peek();
        return journal ? clocks_held_by(*journal, d.uuid(), self) : std::nullopt;
      };
    }
    std::vector<control::GpuControl*> raw;
    for (auto& c : controls_) raw.push_back(c.get());
    const std::string stop_command = command + " (stop)";
    run_.emplace(
        devices, raw, ctx.clock(), setup,
        [this](control::GpuControl& gpu, const control::Settings& target) {
          GovernWriteResult result;
          const long self = static_cast<long>(::getpid());
          result.report = session_->with_journal([&](control::Journal& journal,
                                                     const control::PersistJournal& persist) {
            if (auto who = clocks_held_by(journal, gpu.facts().uuid, self)) {
              result.held_by = *who;
              return control::ChangeReport{};
            }
            return control::apply_changes({{&gpu, target}}, journal, persist, session_->options());
          });
          return result;
        },
        [this, stop_command, keep_profile](const std::vector<control::GpuControl*>& gpus,
                                           const std::vector<std::string>& uuids) {
          return session_->with_journal(
              [&](control::Journal& journal, const control::PersistJournal& persist) {
                auto options = session_->options();
                options.command = stop_command;
                if (!keep_profile) return control::restore(gpus, journal, persist, options, uuids);
                // With --profile the GPUs' other settings are the profile's, which stays applied:
                // only the clock lock goes back to what it was before the governor.
                std::vector<control::GpuChange> changes;
                for (auto* gpu : gpus) {
                  control::Settings target;
                  const auto* entry = journal.find(gpu->facts().uuid);
                  target.locked_gpu_clocks = entry && entry->original.locked_gpu_clocks
                                                 ? *entry->original.locked_gpu_clocks
                                                 : control::ClockLock::none();
                  changes.push_back({gpu, target});
                }
                return control::apply_changes(changes, journal, persist, options);
              });
        });
  }

  void start() {
    thread_ = std::thread([this] {
      util::name_this_thread("gpuclk-govern");
      try {
        run_->run();
      } catch (const Error& e) {
        std::cerr << "gpuclk serve: governor: " << e.what() << "\n";
        failed_ = e.code();
      }
    });
  }

  // Stops the governor and restores its clocks; the exit code of that (0 when all went well).
  ExitCode stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return failed_;
  }

  std::vector<serve::ExtraSeries> series() const {
    std::vector<serve::ExtraSeries> out;
    out.push_back({"gpuclk_governor_info",
                   "The governor running in the service (value 1)",
                   false,
                   std::nullopt,
                   {{"policy", policy_}, {"dry_run", dry_run_ ? "1" : "0"}},
                   1.0});
    for (const auto& g : run_->state()) {
      const auto at = position_.find(g.uuid);
      if (at == position_.end()) continue;
      const auto gpu = std::optional<std::size_t>(at->second);
      for (int c = 0; c < govern::kPhaseClassCount; ++c) {
        const auto phase = static_cast<govern::PhaseClass>(c);
        out.push_back({"gpuclk_governor_class",
                       "1 for the class the governor gave the GPU's last interval",
                       false,
                       gpu,
                       {{"class", std::string(govern::to_string(phase))}},
                       g.phase_class == phase ? 1.0 : 0.0});
      }
      out.push_back({"gpuclk_governor_clocks_locked",
                     "1 while the governor holds the SM clock in a range (written, or would be in "
                     "a dry run)",
                     false,
                     gpu,
                     {},
                     g.decision.locked ? 1.0 : 0.0});
      if (g.decision.locked)
        out.push_back({"gpuclk_governor_clock_max_hertz",
                       "Highest SM clock the governor allows",
                       false,
                       gpu,
                       {},
                       g.decision.max.value() * 1e6});
      out.push_back({"gpuclk_governor_standing_aside",
                     "1 while another command holds the GPU's clocks and the governor leaves it",
                     false,
                     gpu,
                     {},
                     g.held_by.empty() ? 0.0 : 1.0});
      out.push_back({"gpuclk_governor_decisions_total",
                     "Governor decisions taken",
                     true,
                     gpu,
                     {},
                     static_cast<double>(g.decisions)});
      out.push_back({"gpuclk_governor_writes_total",
                     "Clock locks the governor wrote",
                     true,
                     gpu,
                     {},
                     static_cast<double>(g.writes)});
      out.push_back({"gpuclk_governor_gpu_lost",
                     "1 when the governed GPU was lost",
                     false,
                     gpu,
                     {},
                     g.lost ? 1.0 : 0.0});
    }
    return out;
  }

 private:
  std::atomic<bool> stop_{false};
  std::optional<ResidentSession> session_;
  std::optional<ControlSession> dry_session_;
  std::vector<std::unique_ptr<control::GpuControl>> controls_;
  std::optional<GovernorRun> run_;
  std::map<std::string, std::size_t> position_;
  std::string policy_;
  bool dry_run_ = false;
  std::thread thread_;
  ExitCode failed_ = ExitCode::ok;
};

// --counters-interval: whole seconds, 1 to 60 ("5s", "5").
unsigned parse_counters_interval(const std::string& text) {
  const auto d = telemetry::parse_interval(text);
  const double seconds = d ? std::chrono::duration<double>(*d).count() : 0;
  if (!d || seconds < 1 || seconds > 60 || seconds != std::floor(seconds))
    throw bad_argument(fmt::format("bad --counters-interval '{}'", text),
                       "give whole seconds from 1s to 60s, e.g. 5s (1s: always every second)");
  return static_cast<unsigned>(seconds);
}

// "3600", "3600s", "90m", "1h": at least a minute, at most a week.
telemetry::Duration parse_history(const std::string& text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 0;
  const double seconds = value * scale;
  if (ec != std::errc() || scale == 0 || seconds < 60 || seconds > 7 * 86400)
    throw bad_argument(fmt::format("bad --history '{}'", text),
                       "give a duration from 60s to 168h, e.g. 3600s, 90m, 1h");
  return std::chrono::duration_cast<telemetry::Duration>(std::chrono::duration<double>(seconds));
}

// Clock locks cannot be read back from NVML: these series say what gpuclk's journal records as
// applied (`gpuclk status`'s "Set by gpuclk"). A thread of its own rereads the journal every
// second (a small file, renamed into place whole, so no lock is needed); a scrape copies the
// result — civetweb's threads have small stacks and no time for file reads. A GPU without a
// journal entry is unlocked as far as gpuclk knows.
class JournalLocks {
 public:
  JournalLocks(Context& ctx, const serve::Service& service) : ctx_(ctx), service_(service) {}
  ~JournalLocks() { stop(); }
  JournalLocks(const JournalLocks&) = delete;
  JournalLocks& operator=(const JournalLocks&) = delete;

  void start() {
    refresh();
    thread_ = std::thread([this] {
      std::unique_lock lock(mutex_);
      while (!stop_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; })) {
        lock.unlock();
        refresh();
        lock.lock();
      }
    });
  }
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    stop_cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  std::vector<serve::ExtraSeries> series() const {
    std::lock_guard lock(mutex_);
    return series_;
  }

 private:
  void refresh() {
    auto fresh = read();
    std::lock_guard lock(mutex_);
    series_ = std::move(fresh);
  }
  std::vector<serve::ExtraSeries> read() const {
    std::vector<serve::ExtraSeries> out;
    const auto journal = peek_journal(ctx_);
    const auto& facts = service_.facts();
    for (std::size_t i = 0; i < facts.size(); ++i) {
      const auto* entry = journal ? journal->find(facts[i].key.uuid) : nullptr;
      for (const auto& [setting, domain] :
           {std::pair{control::Setting::locked_gpu_clocks, "sm"},
            std::pair{control::Setting::locked_memory_clocks, "memory"}}) {
        control::ClockLock lock;
        if (entry && entry->applied.has(setting))
          lock = setting == control::Setting::locked_gpu_clocks
                     ? *entry->applied.locked_gpu_clocks
                     : *entry->applied.locked_memory_clocks;
        out.push_back({"gpuclk_gpu_locked_clocks",
                       "1 while gpuclk's journal records a clock lock set on the GPU",
                       false,
                       i,
                       {{"domain", domain}},
                       lock.locked ? 1.0 : 0.0});
        if (!lock.locked) continue;
        if (!lock.min.symbolic())
          out.push_back({"gpuclk_gpu_locked_clock_min_hertz",
                         "Lower end of the clock lock gpuclk set",
                         false,
                         i,
                         {{"domain", domain}},
                         lock.min.mhz * 1e6});
        if (!lock.max.symbolic())
          out.push_back({"gpuclk_gpu_locked_clock_max_hertz",
                         "Upper end of the clock lock gpuclk set",
                         false,
                         i,
                         {{"domain", domain}},
                         lock.max.mhz * 1e6});
      }
    }
    return out;
  }

  Context& ctx_;
  const serve::Service& service_;
  mutable std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::vector<serve::ExtraSeries> series_;
  std::thread thread_;
};

int run_serve(Context& ctx, const ServeOptions& o) {
  const auto interval = telemetry::parse_interval(o.interval);
  if (!interval)
    throw bad_argument(fmt::format("bad --interval '{}'", o.interval),
                       "give seconds or milliseconds from 10ms to 24h, e.g. 100ms, 1s");
  serve::ServiceOptions so;
  so.interval = *interval;
  so.history = parse_history(o.history);
  so.counters_every = parse_counters_interval(o.counters_interval);
  // --listen before anything starts: a bad address is exit 2, a port in use exit 255, and
  // nothing was touched either way.
  std::optional<serve::ListenAddress> listen;
  if (o.listen != "off") {
    listen = serve::parse_listen_address(o.listen);
    serve::check_can_listen(*listen);
  }
  so.settings_watch = control::JournalStore(ctx.state_dir()).file().string();

  // SIGINT/SIGTERM are blocked in every thread (the ones started below inherit the mask); this
  // thread waits for them and shuts down in order.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto& devices = ctx.devices();
  if (ctx.simulated()) {
    so.simulated = ctx.options.sim.empty() ? "default" : ctx.options.sim;
    if (const char* state = std::getenv("GPUCLK_SIM_STATE")) so.sim_state = state;
  }
  // The policy before anything: a policy others could change, or a malformed one, stops here.
  auto policy = load_policy(o);
  if (policy && ctx.read_only()) {
    std::cerr << "gpuclk serve: read-only mode: no delegated settings (" << policy->source
              << " is not used)" << std::endl;
    policy.reset();
  }
  if (policy) so.delegation_policy = policy->source;
  // The socket first: a second service on the same path stops here, before touching a GPU.
  const auto socket_path = serve::socket_path(ctx.options.socket);
  std::unique_ptr<serve::Service> service;
  std::unique_ptr<serve::Delegation> delegation;
  serve::SocketServer socket(
      socket_path, [&service, &delegation](std::string_view line, const serve::Peer& p) {
        auto request = nlohmann::json::parse(line, nullptr, false);
        if (request.is_discarded())
          return serve::Reply{serve::error_response("malformed request: not JSON",
                                                    static_cast<int>(ExitCode::bad_argument)),
                              nullptr};
        if (request.is_object() && request.contains("request") && request["request"].is_string() &&
            serve::Delegation::handles(request["request"].get<std::string>())) {
          if (!delegation)
            return serve::Reply{
                serve::error_response("this service takes no settings from users: it runs without "
                                      "a delegation policy",
                                      static_cast<int>(ExitCode::no_permission)),
                nullptr};
          return delegation->answer(request, p);
        }
        return service->answer(request, p);
      });
  auto views = service_views(ctx);
  // The profile before the governor: applied (or refused) before anything else starts.
  const auto profile_check = parse_profile_check(o.profile_check);
  std::unique_ptr<ProfileKeeper> keeper;
  if (!o.profile.empty())
    keeper =
        std::make_unique<ProfileKeeper>(ctx, o.profile, profile_check, !o.govern.empty(), devices);
  // The governor's checks (policy, journal, held clocks) before anything starts.
  std::unique_ptr<ServeGovernor> governor;
  if (!o.govern.empty())
    governor = std::make_unique<ServeGovernor>(ctx, o, devices, keeper != nullptr);
  // Delegated settings: the settings the service keeps itself are no user's to change.
  std::unique_ptr<DelegateWriter> writer;
  if (policy) {
    std::set<control::Setting> reserved;
    std::vector<std::string> by;
    if (governor) {
      reserved.insert(control::Setting::locked_gpu_clocks);
      by.push_back("--govern holds the SM clock lock");
    }
    if (keeper) {
      for (auto s : keeper->settings()) reserved.insert(s);
      by.push_back("--profile keeps its settings");
    }
    std::string reserved_by;
    for (const auto& b : by) reserved_by += (reserved_by.empty() ? "" : "; ") + b;
    writer = std::make_unique<DelegateWriter>(ctx);
    std::vector<gpu::DeviceKey> keys;
    for (const auto& d : devices) keys.push_back({d->index(), d->uuid(), d->bus_id()});
    delegation = std::make_unique<serve::Delegation>(*policy, keys, writer->backend(), reserved,
                                                     reserved_by);
    delegation->set_wake([&socket] { socket.wake(); });
    std::cerr << "gpuclk serve: delegated settings under " << policy->source << " ("
              << policy->rules.size() << " rules)" << std::endl;
  }
  std::unique_ptr<serve::HttpExporter> http;
  service = std::make_unique<serve::Service>(devices, ctx.clock(), so, std::move(views));
  JournalLocks locks(ctx, *service);
  service->add_series([&locks] { return locks.series(); });
  if (governor) service->add_series([&governor] { return governor->series(); });
  if (keeper) service->add_series([&keeper] { return keeper->series(); });
  if (delegation) service->add_series([&delegation] { return delegation->series(); });
  service->start();
  locks.start();
  if (keeper) keeper->start();
  if (governor) governor->start();
  if (delegation) delegation->start();
  if (listen) {
    http = std::make_unique<serve::HttpExporter>(*service, listen->text());
    service->set_http_address(http->address());
  }
  socket.start();

  const auto status = fmt::format(
      "{}{}, sampling every {} ms; socket {}; {}", text::counted(devices.size(), "GPU"),
      so.simulated.empty() ? "" : " (simulated: " + so.simulated + ")",
      std::chrono::duration_cast<std::chrono::milliseconds>(so.interval).count(), socket_path,
      http ? "metrics http://" + http->address() + "/metrics" : std::string("no HTTP"));
  std::cerr << "gpuclk serve: " << status << std::endl;
  serve::notify_ready(status);

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  serve::notify_stopping();
  std::cerr << "gpuclk serve: " << (signal_number == SIGTERM ? "SIGTERM" : "SIGINT") << ", stopping"
            << std::endl;
  // The governor first: its clocks go back while the service still answers; then what users
  // hold through the service (no one watches their sessions any more).
  const auto governed = governor ? governor->stop() : ExitCode::ok;
  if (delegation) delegation->stop();
  // The profile stays applied: it is the node's desired state (`gpuclk restore` undoes it).
  if (keeper) {
    keeper->stop();
    std::cerr << "gpuclk serve: profile " << o.profile
              << " stays applied; `gpuclk restore` returns the GPUs to their original settings"
              << std::endl;
  }
  http.reset();
  socket.stop();
  locks.stop();
  service->stop();
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
  sub->callback([&ctx, o] { ctx.run = [&ctx, o] { return run_serve(ctx, *o); }; });
}

}  // namespace gpuclk::cli
