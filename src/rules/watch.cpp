#include "rules/watch.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

#include "gpu/events.h"
#include "gpu/selection.h"
#include "host/cpu.h"
#include "host/process.h"

namespace gpuclk::rules {

using namespace std::chrono_literals;

namespace {

template <class T>
std::optional<T> opt(const gpu::Reading<T>& r) {
  return r ? std::optional<T>(*r) : std::nullopt;
}

}  // namespace

GpuFacts read_facts(const gpu::Device& d) {
  GpuFacts f;
  f.index = d.index();
  f.name = d.name();
  f.uuid = d.uuid();
  const auto& id = d.identity();
  const auto& limits = d.clock_limits();
  const auto& ratings = d.ratings();
  f.unavailable_code = id.unavailable_code;
  if (f.unavailable_code != 0) return f;
  f.max_sm_clock = opt(limits.max(gpu::ClockDomain::sm));
  f.app_sm_clock = opt(d.app_clock(gpu::ClockDomain::graphics));
  f.app_memory_clock = opt(d.app_clock(gpu::ClockDomain::memory));
  f.default_app_sm_clock = opt(limits.default_app_clock[int(gpu::ClockDomain::graphics)]);
  f.default_app_memory_clock = opt(limits.default_app_clock[int(gpu::ClockDomain::memory)]);
  f.power_limit = opt(d.power_limit());
  f.default_power_limit = opt(ratings.default_power_limit);
  f.max_operating_temperature = opt(ratings.thresholds.gpu_max);
  f.slowdown_temperature = opt(ratings.thresholds.slowdown);
  f.persistence_mode = opt(d.persistence_mode());
  f.pcie_link = opt(d.pcie_link());
  f.pcie_max = opt(ratings.pcie_max);
  f.bus_id = gpu::normalize_bus_id(d.bus_id());
  if (const auto& links = d.nvlinks().links) {
    for (const auto& l : *links) {
      if (l.active && l.remote_bus_id) f.nvlink_peers[*l.remote_bus_id]++;
    }
  }
  f.ecc_corrected_aggregate = opt(d.ecc_errors(false, true));
  f.ecc_uncorrected_aggregate = opt(d.ecc_errors(true, true));
  f.remapped_rows = opt(d.remapped_rows());
  f.retired_pages = opt(d.retired_pages());
  f.cpu_affinity = opt(d.affinity().cpu_affinity);
  f.numa_node = opt(d.affinity().numa_node);
  if (auto processes = d.processes()) {
    f.processes.emplace();
    for (const auto& p : *processes) {
      f.processes->push_back(p.pid);
      if (auto cpus = host::process_cpus(p.pid)) f.process_cpus[p.pid] = std::move(*cpus);
      if (auto info = host::read_process(p.pid); info && info->age.count() > 0)
        f.process_cpu_percent[p.pid] = 100 * info->cpu_time / info->age;
    }
  }
  return f;
}

Input watch(const std::vector<gpu::Device*>& devices, const Clock& clock,
            telemetry::Duration duration, telemetry::Duration interval,
            const std::function<void(double seconds_left)>& progress) {
  telemetry::SamplerOptions sampling;
  sampling.fast_interval = interval;
  sampling.slow_interval = std::max<telemetry::Duration>(interval, 1s);
  sampling.fields = telemetry::FieldSet::standard()
                        .add(telemetry::Field::pcie_replay)
                        .add(telemetry::Field::nvlink);
  sampling.fast_capacity = static_cast<std::size_t>(duration / interval) + 64;
  sampling.slow_capacity = static_cast<std::size_t>(duration / sampling.slow_interval) + 16;
  telemetry::Sampler sampler(telemetry::device_sources(devices, sampling.fields), clock, sampling);
  // Xid and ECC events: registered before the window opens, collected by a thread that waits on
  // the event set while the sampler runs (NVML delivers each event once, to a waiter).
  gpu::EventWatcher watcher(devices, clock);
  std::vector<gpu::GpuEvent> events;
  std::mutex events_mutex;
  // A jthread: an exception before the join below still stops and joins it.
  std::jthread event_thread([&](const std::stop_token& stop) {
    while (!stop.stop_requested()) {
      if (auto e = watcher.wait(100ms)) {
        const std::lock_guard lock(events_mutex);
        events.push_back(*e);
      }
    }
  });
  sampler.start();
  const auto start = sampler.started_at();
  std::uint64_t tick = 0;
  while (sampler.now() - start < duration) {
    if (progress)
      progress(std::chrono::duration<double>(duration - (sampler.now() - start)).count());
    tick = sampler.wait_for_tick(tick, 200ms);  // ends within one interval of the duration
  }
  sampler.stop();
  Input input;
  input.from = sampler.started_at();
  input.to = sampler.now();
  // The window ends here; joining waits out the thread's current wait (up to 100 ms of wall
  // time, seconds of simulated time under GPUCLK_SIM_SPEED).
  event_thread.request_stop();
  event_thread.join();
  for (std::size_t i = 0; i < devices.size(); ++i) {
    GpuWindow w;
    w.facts = read_facts(*devices[i]);
    w.fast = sampler.fast_samples(i, input.from, input.to);
    w.slow = sampler.slow_samples(i, input.from, input.to);
    w.health = sampler.health(i);
    const auto watched = watcher.watched(w.facts.index);
    w.xid_watched = watched && std::find(watched->begin(), watched->end(), gpu::EventKind::xid) !=
                                   watched->end();
    for (const auto& e : events) {
      if (e.gpu == w.facts.index) w.events.push_back(e);
    }
    input.gpus.push_back(std::move(w));
  }
  return input;
}

}  // namespace gpuclk::rules
