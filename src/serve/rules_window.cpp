#include "serve/rules_window.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "gpu/events.h"
#include "rules/watch.h"
#include "serve/client.h"
#include "util/error.h"

namespace gpuclk::serve {

using namespace std::chrono_literals;

RulesWindow watch_window(const std::vector<gpu::Device*>& devices, const Clock& clock,
                         telemetry::Duration duration, telemetry::Duration interval,
                         const WaitProgress& progress) {
  RulesWindow w;
  w.input = rules::watch(devices, clock, duration, interval, progress);
  return w;
}

RulesWindow look_back(Client& client, const Hello& hello, const Clock& clock,
                      telemetry::Duration duration, const std::vector<gpu::Device*>& devices,
                      const WaitProgress& progress) {
  RulesWindow out;
  out.from_service = true;
  const double interval_seconds = hello.interval_seconds.value_or(0.1);
  const double history_seconds = hello.history_seconds.value_or(3600.0);
  const double want = std::chrono::duration<double>(duration).count();
  out.slow_tier = want <= 600;
  if (!out.slow_tier && want > history_seconds) {
    throw bad_argument(
        fmt::format("--duration {:.0f} s is longer than gpuclk serve's history ({:.0f} s)", want,
                    history_seconds),
        "give a shorter --duration, or --direct to watch from now on");
  }
  HistoryRequest request;
  request.seconds = want;
  request.every_sample = out.slow_tier;
  auto now = clock.now();
  auto gpus = client.history(request, now);
  // How far back the history reaches: a service started a moment ago is waited for.
  const auto covered = [](const std::vector<HistoryGpu>& history, telemetry::TimePoint at) {
    double oldest = 0;
    for (const auto& g : history) {
      if (!g.samples.empty())
        oldest =
            std::min(oldest, std::chrono::duration<double>(g.samples.front().time - at).count());
    }
    return -oldest;
  };
  const double missing = want - covered(gpus, now) - 2 * interval_seconds;
  if (missing > 0) {
    // `missing` is in the GPUs' time base: as wall time (shorter under GPUCLK_SIM_SPEED).
    const auto ahead =
        std::chrono::duration_cast<telemetry::Duration>(std::chrono::duration<double>(missing));
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           clock.wall_time_until(clock.now() + ahead).value_or(ahead));
    while (std::chrono::steady_clock::now() < until) {
      if (progress)
        progress(std::chrono::duration<double>(until - std::chrono::steady_clock::now()).count());
      std::this_thread::sleep_for(100ms);
    }
    now = clock.now();
    gpus = client.history(request, now);
  }
  out.input.from = now - duration;
  out.input.to = now;
  for (auto* d : devices) {
    rules::GpuWindow w;
    w.facts = rules::read_facts(*d);
    for (const auto& g : gpus) {
      // By UUID; a GPU lost since (no UUID read now) by its index.
      const bool same = d->uuid().empty() ? g.key.index == d->index() : g.key.uuid == d->uuid();
      if (!same) continue;
      w.fast.insert(w.fast.end(), g.samples.begin(), g.samples.end());
      w.slow.insert(w.slow.end(), g.slow.begin(), g.slow.end());
      if (!g.events_kept) {
        out.events_kept = false;
        continue;
      }
      for (auto event : g.events) {
        event.gpu = d->index();
        if (event.time >= out.input.from) w.events.push_back(event);
      }
      for (auto kind : g.events_watched) {
        if (kind == gpu::EventKind::xid) w.xid_watched = true;
      }
    }
    w.health.lost = w.facts.unavailable_code != 0;
    out.input.gpus.push_back(std::move(w));
  }
  // The jobs' NCCL communicators the service reads (none where it reads no Inspector files).
  for (auto& job : client.collectives().jobs) {
    for (auto& c : job.communicators) out.input.communicators.push_back(std::move(c));
  }
  return out;
}

}  // namespace gpuclk::serve
