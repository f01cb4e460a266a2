#include "serve/rules_window.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "gpu/events.h"
#include "rules/watch.h"
#include "serve/protocol.h"
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

std::optional<RulesWindow> look_back(
    const std::function<std::optional<nlohmann::json>(const nlohmann::json&)>& ask,
    const nlohmann::json& hello, const Clock& clock, telemetry::Duration duration,
    const std::vector<gpu::Device*>& devices, const WaitProgress& progress) {
  RulesWindow out;
  out.from_service = true;
  const double interval_seconds = hello.value("interval_seconds", 0.1);
  const double history_seconds = hello.value("history_seconds", 3600.0);
  const double want = std::chrono::duration<double>(duration).count();
  out.slow_tier = want <= 600;
  if (!out.slow_tier && want > history_seconds) {
    throw bad_argument(
        fmt::format("--duration {:.0f} s is longer than gpuclk serve's history ({:.0f} s)", want,
                    history_seconds),
        "give a shorter --duration, or --direct to watch from now on");
  }
  const nlohmann::json request{
      {"request", "history"}, {"seconds", want}, {"resolution", out.slow_tier ? "interval" : "1s"}};
  auto reply = ask(request);
  if (!reply) return std::nullopt;
  // How far back the history reaches: a service started a moment ago is waited for.
  const auto covered = [](const nlohmann::json& r) {
    double oldest = 0;
    for (const auto& g : r.at("gpus")) {
      const auto& samples = g.at("samples");
      if (!samples.empty()) oldest = std::min(oldest, samples.front().value("t", 0.0));
    }
    return -oldest;
  };
  const double missing = want - covered(*reply) - 2 * interval_seconds;
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
    reply = ask(request);
    if (!reply) return std::nullopt;
  }
  const auto now = clock.now();
  out.input.from = now - duration;
  out.input.to = now;
  const auto& gpus = reply->at("gpus");
  for (auto* d : devices) {
    rules::GpuWindow w;
    w.facts = rules::read_facts(*d);
    for (const auto& g : gpus) {
      // By UUID; a GPU lost since (no UUID read now) by its index.
      const bool same = d->uuid().empty() ? g.value("index", ~0u) == d->index()
                                          : g.value("uuid", std::string()) == d->uuid();
      if (!same) continue;
      for (const auto& f : g.at("samples")) w.fast.push_back(fast_sample_from_json(f, now));
      if (auto it = g.find("slow"); it != g.end()) {
        for (const auto& f : *it) w.slow.push_back(slow_sample_from_json(f, now));
      }
      const auto events = g.find("events");
      const auto watched = g.find("events_watched");
      if (events == g.end() || watched == g.end()) {
        out.events_kept = false;
        continue;
      }
      for (const auto& e : *events) {
        auto event = event_from_json(e, d->index(), now);
        if (event.time >= out.input.from) w.events.push_back(event);
      }
      for (const auto& kind : *watched) {
        if (kind.get<std::string>() == gpu::to_string(gpu::EventKind::xid)) w.xid_watched = true;
      }
    }
    w.health.lost = w.facts.unavailable_code != 0;
    out.input.gpus.push_back(std::move(w));
  }
  return out;
}

}  // namespace gpuclk::serve
