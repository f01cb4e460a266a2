#include "serve/run_watch.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "gpu/simulator.h"
#include "serve/client.h"
#include "serve/protocol.h"
#include "util/error.h"

namespace gpuclk::serve {
namespace {

using namespace std::chrono_literals;

// ---------------------------------------------------------------------------------------------
// The command's own sampler

class SamplerWatch : public RunWatch {
 public:
  SamplerWatch(const std::vector<gpu::Device*>& devices, const Clock& clock,
               const telemetry::SamplerOptions& options)
      : devices_(devices),
        sampler_(telemetry::device_sources(devices, options.fields), clock, options),
        truth_start_(devices.size()) {}
  ~SamplerWatch() override { sampler_.stop(); }
  SamplerWatch(const SamplerWatch&) = delete;
  SamplerWatch& operator=(const SamplerWatch&) = delete;

  void start() override {
    // On the simulator, its exact energy counter beside NVML's (not_supported on real GPUs),
    // read right before start() and right after stop(), which read the counters first and last:
    // the two windows match to a millisecond or so.
    for (std::size_t i = 0; i < devices_.size(); ++i)
      truth_start_[i] = gpu::simulator_energy(*devices_[i]);
    sampler_.start();
  }

  // NVML lists the processes holding a context on each GPU.
  void attribute(const std::function<bool(pid_t)>& owns, std::set<unsigned>& used) override {
    for (const auto* d : devices_) {
      auto processes = d->processes();
      if (!processes) continue;
      for (const auto& p : *processes) {
        if (owns(static_cast<pid_t>(p.pid))) used.insert(d->index());
      }
    }
  }

  Watched finish() override {
    sampler_.stop();
    Watched w;
    w.sampled_by = "this process";
    w.sampling = sampler_.options();
    w.timing = sampler_.timing();
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      WatchedGpu g{sampler_.info(i), sampler_.summary(i), sampler_.health(i), std::nullopt};
      if (const auto truth_end = gpu::simulator_energy(*devices_[i]);
          truth_start_[i] && truth_end && !g.summary.lost) {
        g.truth_energy_j = truth_end->value() - truth_start_[i]->value();
      }
      w.gpus.push_back(std::move(g));
    }
    return w;
  }

 private:
  std::vector<gpu::Device*> devices_;
  telemetry::Sampler sampler_;
  std::vector<gpu::Reading<units::Joules>> truth_start_;
};

// ---------------------------------------------------------------------------------------------
// The service's stream

telemetry::TimePoint time_point_of(double seconds) {
  return telemetry::TimePoint(
      std::chrono::duration_cast<telemetry::Duration>(std::chrono::duration<double>(seconds)));
}

// The selected GPUs' static facts, from the service's status answer.
std::vector<telemetry::GpuInfo> gpu_infos(const nlohmann::json& status,
                                          const std::vector<std::size_t>& positions) {
  std::vector<telemetry::GpuInfo> infos;
  for (auto pos : positions) {
    const auto st = status_from_json(status.at("status").at(pos));
    telemetry::GpuInfo info;
    info.index = st.index;
    info.uuid = st.uuid;
    info.name = st.name;
    info.max_sm_clock = st.sm_max.optional();
    info.max_memory_clock = st.memory_max.optional();
    info.power_limit = st.power_limit.optional();
    infos.push_back(std::move(info));
  }
  return infos;
}

// The service sampler's ticks, missed ticks and lateness between two of its snapshots.
telemetry::TimingStats timing_between(const nlohmann::json& from, const nlohmann::json& to) {
  telemetry::TimingStats t;
  t.ticks = to.value("ticks", std::uint64_t{0}) - from.value("ticks", std::uint64_t{0});
  t.missed_ticks =
      to.value("missed_ticks", std::uint64_t{0}) - from.value("missed_ticks", std::uint64_t{0});
  t.lateness_p99 = std::chrono::duration_cast<telemetry::Duration>(
      std::chrono::duration<double, std::milli>(to.value("lateness_p99_ms", 0.0)));
  return t;
}

// The service's stream, as one stat run sees it: a summary per GPU from the window's start (the
// counter read the service made for the stream), the read errors after the first line, a loss.
struct StreamWindow {
  explicit StreamWindow(std::size_t gpus) : builders(gpus), health(gpus), errors_before(gpus) {}

  void consume(const nlohmann::json& line) {
    const auto now = time_point_of(line.at("time").get<double>());
    const auto& gpus = line.at("gpus");
    if (!start) {
      // The first line comes after a counter read the service made for this stream: the window
      // starts there, so that the energy counter covers it from its first moment.
      start = now;
      for (const auto& g : gpus) {
        for (const auto& sl : g.at("slow_samples"))
          start = std::min(*start, slow_sample_from_json(sl, now).time);
      }
    }
    last = now;
    for (std::size_t k = 0; k < builders.size() && k < gpus.size(); ++k) add(k, gpus[k], now);
  }

  // The samples up to the command's end: every line up to the service's time in `asked` (a
  // snapshot taken once the command has ended), then the next one. The counters are read once a
  // second: the window's last part, after the last read, comes from the power readings. (A
  // service that does not say its time, an older gpuclk serve: the next line.)
  void read_to(Client& client, const nlohmann::json& asked, double line_seconds) {
    const auto end = asked.contains("time")
                         ? std::optional(time_point_of(asked.at("time").get<double>()))
                         : std::nullopt;
    const auto wait = std::chrono::milliseconds(static_cast<long long>(line_seconds * 1000) + 5000);
    do {
      auto line = client.read_line(wait);
      if (!line) break;
      consume(*line);
    } while (end && (!last || *last < *end));
  }

  std::optional<telemetry::TimePoint> start, last;
  std::vector<std::optional<telemetry::SummaryBuilder>> builders;
  std::vector<telemetry::GpuHealth> health;

 private:
  void add(std::size_t k, const nlohmann::json& g, telemetry::TimePoint now) {
    if (!builders[k]) builders[k].emplace(*start);
    for (const auto& f : g.at("samples")) builders[k]->add(fast_sample_from_json(f, now));
    for (const auto& sl : g.at("slow_samples")) builders[k]->add(slow_sample_from_json(sl, now));
    // The service counts read errors since it started: the run's are those after its first line.
    const auto errors = g.value("read_errors", std::uint64_t{0});
    if (!errors_before[k]) errors_before[k] = errors;
    health[k].read_errors = errors - std::min(errors, *errors_before[k]);
    if (health[k].read_errors > 0) {
      health[k].last_error = g.value("last_error", 0);
      health[k].last_error_field = g.value("last_error_field", std::string());
    }
    if (g.contains("lost_t") && !health[k].lost) {
      health[k].lost = true;
      health[k].lost_at = now + std::chrono::duration_cast<telemetry::Duration>(
                                    std::chrono::duration<double>(g.at("lost_t").get<double>()));
      builders[k]->mark_lost(*health[k].lost_at);
    }
  }
  std::vector<std::optional<std::uint64_t>> errors_before;
};

using Ask = std::function<std::optional<nlohmann::json>(const nlohmann::json&)>;

class ServiceWatch : public RunWatch {
 public:
  ServiceWatch(Ask ask, std::unique_ptr<Client> client, nlohmann::json status,
               std::vector<std::size_t> positions, telemetry::Duration interval,
               telemetry::Duration slow_interval)
      : ask_(std::move(ask)),
        client_(std::move(client)),
        status_(std::move(status)),
        positions_(std::move(positions)),
        infos_(gpu_infos(status_, positions_)),
        window_(infos_.size()),
        line_seconds_(std::chrono::duration<double>(interval).count()) {
    sampling_.fast_interval = interval;
    sampling_.slow_interval = slow_interval;
    for (const auto& info : infos_) indexes_.push_back(info.index);
    // Which GPUs the command uses: the processes in the service's `top` view (asked once now,
    // so that the service reads it while the command runs).
    (void)ask_({{"request", "view"}, {"name", "top"}});
    // A line per sampling interval: the window ends at most one interval after the command.
    client_->send({{"request", "stream"},
                   {"gpus", indexes_},
                   {"interval_seconds", line_seconds_},
                   {"samples", "all"}});
  }

  void start() override {
    auto first = client_->read_line(10000ms);
    if (!first) throw Error(ExitCode::other, "the service (gpuclk serve) did not start streaming");
    window_.consume(*first);
    // After the first line (which waits for the service's next slow read, up to a second): the
    // window starts here, and so do the ticks and the simulator's energy counted for it.
    snapshot_start_ = snapshot_now();
  }

  void attribute(const std::function<bool(pid_t)>& owns, std::set<unsigned>& used) override {
    if (failed_) return;
    try {
      drain(200ms);
      auto view = ask_({{"request", "view"}, {"name", "top"}});
      if (!view) return;
      const auto& rows = view->at("rows");
      for (auto pos : positions_) {
        for (const auto& p : rows.at(pos).value("processes", nlohmann::json::array())) {
          if (owns(static_cast<pid_t>(p.value("pid", 0))))
            used.insert(status_.at("gpus").at(pos).at("index").get<unsigned>());
        }
      }
    } catch (const Error& e) {
      failed_ = e;
    }
  }

  Watched finish() override {
    if (failed_) throw *failed_;
    window_.read_to(*client_, snapshot_now(), line_seconds_);
    const auto snapshot_end = snapshot_now();
    Watched w;
    w.sampled_by = "gpuclk serve";
    w.sampling = sampling_;
    w.timing = timing_between(snapshot_start_.at("timing"), snapshot_end.at("timing"));
    for (std::size_t k = 0; k < infos_.size(); ++k) {
      WatchedGpu g{
          infos_[k],
          window_.builders[k] ? window_.builders[k]->finish(*window_.last) : telemetry::Summary{},
          window_.health[k], std::nullopt};
      const auto truth_start = truth_of(snapshot_start_, k), truth_end = truth_of(snapshot_end, k);
      if (truth_start && truth_end && !g.summary.lost) g.truth_energy_j = *truth_end - *truth_start;
      w.gpus.push_back(std::move(g));
    }
    return w;
  }

 private:
  // The sampler's timing, and on the simulator each GPU's exact energy (in `indexes_` order).
  nlohmann::json snapshot_now() {
    auto r = ask_({{"request", "snapshot"}, {"gpus", indexes_}});
    if (!r) throw Error(ExitCode::other, "the service (gpuclk serve) stopped answering");
    return *r;
  }
  static std::optional<double> truth_of(const nlohmann::json& snapshot, std::size_t k) {
    const auto& g = snapshot.at("gpus").at(k);
    if (!g.contains("simulator_energy_j")) return std::nullopt;
    return g.at("simulator_energy_j").get<double>();
  }
  // The lines that have come, for at most `budget` of wall time: where parsing them is slower
  // than the service sends them (a sanitized build on a loaded machine), an unbounded drain never
  // returned, no other request went out, and the service dropped the idle connection.
  void drain(std::chrono::milliseconds budget) {
    const auto until = std::chrono::steady_clock::now() + budget;
    while (std::chrono::steady_clock::now() < until) {
      auto line = client_->read_line(0ms);
      if (!line) break;
      window_.consume(*line);
    }
  }

  Ask ask_;
  std::unique_ptr<Client> client_;
  nlohmann::json status_;
  std::vector<std::size_t> positions_;
  std::vector<telemetry::GpuInfo> infos_;
  nlohmann::json indexes_ = nlohmann::json::array();
  StreamWindow window_;
  double line_seconds_;
  telemetry::SamplerOptions sampling_;
  nlohmann::json snapshot_start_;
  std::optional<Error> failed_;
};

}  // namespace

std::unique_ptr<RunWatch> open_sampler_watch(const std::vector<gpu::Device*>& devices,
                                             const Clock& clock,
                                             const telemetry::SamplerOptions& options) {
  return std::make_unique<SamplerWatch>(devices, clock, options);
}

std::unique_ptr<RunWatch> open_service_watch(
    const std::function<std::optional<nlohmann::json>(const nlohmann::json&)>& ask,
    const std::string& socket, const nlohmann::json& hello,
    const std::function<std::vector<std::size_t>(const nlohmann::json& keys)>& select,
    telemetry::Duration interval) {
  const double sampling = hello.value("interval_seconds", 0.0);
  if (std::abs(sampling - std::chrono::duration<double>(interval).count()) > 1e-6) return nullptr;
  auto status = ask({{"request", "status"}});
  if (!status) return nullptr;
  auto positions = select(status->at("gpus"));
  auto client = Client::connect(socket);
  if (!client) throw Error(ExitCode::other, "the service (gpuclk serve) stopped answering");
  const auto slow = std::chrono::duration_cast<telemetry::Duration>(
      std::chrono::duration<double>(hello.value("slow_interval_seconds", 1.0)));
  return std::make_unique<ServiceWatch>(ask, std::move(client), std::move(*status),
                                        std::move(positions), interval, slow);
}

}  // namespace gpuclk::serve
