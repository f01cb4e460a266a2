// Rules on what holds the SM clock down: the power cap, application clocks, heat, hardware
// slowdown / power brake, and clocks that jitter with no limiter to explain them.
#include <cmath>

#include "rules/window.h"
#include "util/text.h"

namespace gpuclk::rules::detail {

using gpu::ClockReasons;

namespace {

constexpr std::uint64_t kThermal =
    ClockReasons::sw_thermal_slowdown | ClockReasons::hw_thermal_slowdown;
constexpr std::uint64_t kHardware =
    ClockReasons::hw_slowdown | ClockReasons::hw_power_brake_slowdown;
// Reasons that explain a busy clock below the max: what jitter is not.
constexpr std::uint64_t kLimiters = ClockReasons::sw_power_cap | kThermal | kHardware |
                                    ClockReasons::applications_clocks_setting |
                                    ClockReasons::sync_boost | ClockReasons::display_clock_setting;

double pct(double fraction) { return 100 * fraction; }

}  // namespace

void power_capped(const Input& in, const Thresholds& t, std::vector<Finding>& out) {
  for (const auto& w : in.gpus) {
    const auto& g = w.facts;
    const auto busy = busy_samples(w, t);
    const auto fraction = reason_fraction(busy, ClockReasons::sw_power_cap);
    if (!fraction || *fraction < t.power_capped_fraction) continue;
    const auto capped = select(w, [&](const FastSample& s) {
      return busy_sample(s, t) && s.clock_reasons &&
             s.clock_reasons->has(ClockReasons::sw_power_cap);
    });
    const auto clock = sm_clock_percentile(capped, 0.5);
    const bool lowered =
        g.power_limit && g.default_power_limit &&
        g.power_limit->value() < t.power_limit_lowered * g.default_power_limit->value();
    const double max = g.max_sm_clock ? g.max_sm_clock->value() : 0;
    const double cost = clock && max > 0 ? 1 - *clock / max : 0;
    std::string summary;
    if (in.snapshot()) {
      summary = fmt::format("GPU {}: the power limit holds the SM clock at {:.0f} of {:.0f} MHz",
                            g.index, clock.value_or(0), max);
    } else {
      summary = fmt::format(
          "GPU {}: power-capped {:.0f}% of the busy time: median SM clock "
          "{:.0f} of {:.0f} MHz ({:.0f}% below max)",
          g.index, pct(*fraction), clock.value_or(0), max, pct(cost));
    }
    if (lowered) {
      summary += fmt::format("; power limit {:.0f} W of the default {:.0f} W",
                             g.power_limit->value(), g.default_power_limit->value());
    }
    auto f = make("power_capped", lowered ? Severity::warning : Severity::info, {g.index},
                  std::move(summary),
                  lowered ? "a power limit below the default: the job runs at a fraction of "
                            "its peak"
                          : "heavy tensor work reaches the power limit: normal at the default "
                            "limit",
                  lowered ? fmt::format("gpuclk set -i {} --power-limit {:.0f} (or gpuclk reset "
                                        "--power-limit)",
                                        g.index, g.default_power_limit->value())
                          : "expected for heavy tensor work; `gpuclk stat -- CMD` shows how "
                            "often");
    add(f, "capped_pct_of_busy", pct(*fraction), "%", 1);
    if (!in.snapshot()) add(f, "capped_s", held_seconds(in, w, capped.size()), "s", 1);
    if (clock) add(f, "sm_clock_median_mhz", *clock, "MHz");
    if (max > 0) add(f, "sm_clock_max_mhz", max, "MHz");
    add(f, "clock_cost_pct", pct(cost), "%", 1);
    if (g.power_limit) add(f, "power_limit_w", g.power_limit->value(), "W");
    if (g.default_power_limit) add(f, "default_power_limit_w", g.default_power_limit->value(), "W");
    out.push_back(std::move(f));
  }
}

void app_clocks_low(const Input& in, const Thresholds& t, std::vector<Finding>& out) {
  for (const auto& w : in.gpus) {
    const auto& g = w.facts;
    const auto busy = busy_samples(w, t);
    const auto fraction = reason_fraction(busy, ClockReasons::applications_clocks_setting);
    if (!fraction || *fraction < t.app_clocks_fraction || !g.app_sm_clock || !g.max_sm_clock)
      continue;
    // NVML reports a clock lock (nvmlDeviceSetGpuLockedClocks) under the same reason: application
    // clocks at the maximum hold nothing, whatever the reason says.
    if (g.app_sm_clock->value() >= g.max_sm_clock->value()) continue;
    // Where the busy clock ran below the application clock, another limit (the power cap, heat)
    // bound first: resetting them gains nothing now (misconfigured's GPU 1 ran at 1365 MHz, the
    // power-capped clock of its peers, and was told a reset would help; issue 42). Below by more
    // than a clock step or two: the clock's own jitter is not another limit.
    const auto median = sm_clock_percentile(busy, 0.5);
    const bool other_limit = median && *median < 0.98 * g.app_sm_clock->value();
    const double gain_pct = pct(g.max_sm_clock->value() / g.app_sm_clock->value() - 1);
    auto f =
        other_limit
            ? make(
                  "app_clocks_low", Severity::info, {g.index},
                  fmt::format("GPU {}: application clocks are {:.0f} of {:.0f} MHz, but under load "
                              "it ran at {:.0f} MHz (median): another limit (the power cap or "
                              "heat) binds first, so resetting them gains nothing now",
                              g.index, g.app_sm_clock->value(), g.max_sm_clock->value(), *median),
                  "application clocks below the maximum, under another limit",
                  fmt::format("none now; gpuclk reset -i {} --app-clocks once the other limit is "
                              "gone",
                              g.index))
            : make("app_clocks_low", Severity::warning, {g.index},
                   fmt::format("GPU {}: application clocks hold the SM clock at {:.0f} of {:.0f} "
                               "MHz ({:.0f}% of the busy time): up to {:.0f}% more clock without "
                               "them, where no other limit binds",
                               g.index, g.app_sm_clock->value(), g.max_sm_clock->value(),
                               pct(*fraction), gain_pct),
                   "power-saving or benchmark application clocks left set",
                   fmt::format("gpuclk reset -i {} --app-clocks", g.index));
    if (median) add(f, "sm_clock_median_mhz", *median, "MHz");
    if (!other_limit) add(f, "clock_gain_max_pct", gain_pct, "%", 1);
    add(f, "app_sm_clock_mhz", g.app_sm_clock->value(), "MHz");
    add(f, "sm_clock_max_mhz", g.max_sm_clock->value(), "MHz");
    add(f, "held_pct_of_busy", pct(*fraction), "%", 1);
    if (!in.snapshot())
      add(f, "held_s",
          held_seconds(in, w, count_reason(busy, ClockReasons::applications_clocks_setting)), "s",
          1);
    out.push_back(std::move(f));
  }
}

void thermal_slowdown(const Input& in, const Thresholds& t, std::vector<Finding>& out) {
  for (const auto& w : in.gpus) {
    const auto& g = w.facts;
    const auto busy = busy_samples(w, t);
    // A snapshot looks at the one sample, busy or not.
    const auto looked = in.snapshot() ? select(w, [](const FastSample&) { return true; }) : busy;
    const auto fraction = reason_fraction(looked, kThermal);
    if (!fraction || *fraction <= 0 || (!in.snapshot() && *fraction < t.thermal_fraction)) continue;
    const auto hot = select(w, [&](const FastSample& s) {
      return s.clock_reasons && (s.clock_reasons->bits() & kThermal);
    });
    std::string names;
    for (const auto* s : hot) {
      if (names.empty()) names = s->clock_reasons->names();
    }
    const auto temp = max_temperature(w);
    const auto clock = sm_clock_percentile(hot, 0.5);
    std::string summary =
        in.snapshot() ? fmt::format(
                            "GPU {}: thermal slowdown active ({}): the GPU is too hot to run at "
                            "its clocks",
                            g.index, names)
                      : fmt::format(
                            "GPU {}: thermal slowdown {:.0f}% of the busy time ({:.0f} s), up to "
                            "{:.0f} C: median SM clock {:.0f} MHz while held",
                            g.index, pct(*fraction), held_seconds(in, w, hot.size()),
                            temp.value_or(0), clock.value_or(0));
    auto f = make("thermal_slowdown", Severity::warning, {g.index}, std::move(summary),
                  "the GPU is too hot to hold its clocks (airflow, fans, inlet temperature): "
                  "run times vary with the room",
                  "improve cooling (airflow, fan policy, inlet temperature)");
    add(f, "held_pct_of_busy", pct(*fraction), "%", 1);
    if (!in.snapshot()) add(f, "held_s", held_seconds(in, w, hot.size()), "s", 1);
    if (temp) add(f, "temperature_max_c", *temp, "C");
    if (g.max_operating_temperature)
      add(f, "max_operating_temperature_c", g.max_operating_temperature->value(), "C");
    if (clock) add(f, "sm_clock_median_held_mhz", *clock, "MHz");
    out.push_back(std::move(f));
  }
}

void near_slowdown_temperature(const Input& in, const Thresholds& t, std::vector<Finding>& out) {
  for (const auto& w : in.gpus) {
    const auto& g = w.facts;
    const auto temp = max_temperature(w);
    if (!temp || !g.slowdown_temperature) continue;
    if (*temp < g.slowdown_temperature->value() - t.near_slowdown_c) continue;
    auto f = make("near_slowdown_temperature", Severity::warning, {g.index},
                  fmt::format("GPU {}: {:.0f} C, within {:.0f} C of its slowdown temperature "
                              "{:.0f} C",
                              g.index, *temp, t.near_slowdown_c, g.slowdown_temperature->value()),
                  "cooling barely keeps up", "improve cooling before clocks drop");
    add(f, "temperature_max_c", *temp, "C");
    add(f, "slowdown_temperature_c", g.slowdown_temperature->value(), "C");
    out.push_back(std::move(f));
  }
}

void hotter_than_peers(const Input& in, const Thresholds& t, std::vector<Finding>& out) {
  for (const auto& [model, same] : by_model(in)) {
    for (const auto* w : same) {
      const auto temp = max_temperature(*w);
      const auto util = mean_utilization(*w);
      const auto power = mean_power(*w);
      if (!temp || !util || !power) continue;
      std::vector<double> peers;
      for (const auto* p : same) {
        if (p == w) continue;
        const auto pt = max_temperature(*p);
        const auto pu = mean_utilization(*p);
        const auto pp = mean_power(*p);
        if (pt && pu && pp && std::abs(*pu - *util) <= t.peers_utilization_delta &&
            std::abs(*pp - *power) <= t.peers_power_ratio * *power)
          peers.push_back(*pt);
      }
      const auto typical = median(peers);
      if (!typical || *temp <= *typical + t.hotter_than_peers_c) continue;
      auto f = make(
          "hotter_than_peers", Severity::warning, {w->facts.index},
          fmt::format("GPU {}: {:.0f} C, {:.0f} C hotter than its {} ({:.0f} C) "
                      "under the same load",
                      w->facts.index, *temp, *temp - *typical,
                      // "its peer", not "its 1 peer"
                      peers.size() == 1 ? std::string("peer") : text::counted(peers.size(), "peer"),
                      *typical),
          "this GPU's cooling (heat sink, fan, airflow path) is worse than its "
          "neighbours'",
          "inspect that slot's airflow and the heat sink");
      add(f, "temperature_max_c", *temp, "C");
      add(f, "peers_temperature_c", *typical, "C");
      add(f, "utilization_pct", pct(*util), "%", 1);
      add(f, "power_mean_w", *power, "W", 1);
      out.push_back(std::move(f));
    }
  }
}

void hw_slowdown(const Input& in, const Thresholds& t, std::vector<Finding>& out) {
  for (const auto& w : in.gpus) {
    const auto& g = w.facts;
    const auto all = select(w, [](const FastSample&) { return true; });
    const auto held = select(w, [](const FastSample& s) {
      return s.clock_reasons && (s.clock_reasons->bits() & kHardware) &&
             !s.clock_reasons->has(ClockReasons::hw_thermal_slowdown);
    });
    if (held.empty()) continue;
    const double fraction = static_cast<double>(held.size()) / static_cast<double>(all.size());
    if (!in.snapshot() && fraction < t.hw_slowdown_fraction) continue;
    // Events: runs of consecutive held samples.
    int events = 0;
    bool in_event = false;
    for (const auto& s : w.fast) {
      const bool h = s.clock_reasons && (s.clock_reasons->bits() & kHardware) &&
                     !s.clock_reasons->has(ClockReasons::hw_thermal_slowdown);
      if (h && !in_event) ++events;
      in_event = h;
    }
    const auto clock = sm_clock_percentile(held, 0.5);
    const auto normal = sm_clock_percentile(select(w,
                                                   [&](const FastSample& s) {
                                                     return busy_sample(s, t) && s.clock_reasons &&
                                                            !(s.clock_reasons->bits() & kHardware);
                                                   }),
                                            0.5);
    const std::string names = held.front()->clock_reasons->names();
    std::string summary =
        in.snapshot()
            ? fmt::format("GPU {}: hardware slowdown active ({})", g.index, names)
            : fmt::format(
                  "GPU {}: hardware slowdown ({}) {}, {:.1f} s in all: SM clock "
                  "dropped to {:.0f} MHz{}",
                  g.index, names, events == 1 ? std::string("once") : text::counted(events, "time"),
                  held_seconds(in, w, held.size()), clock.value_or(0),
                  normal ? fmt::format(" from {:.0f}", *normal) : std::string());
    auto f = make("hw_slowdown", Severity::warning, {g.index}, std::move(summary),
                  "the board's power supply or an external power-brake signal halves the clock",
                  "check power supply and temperatures; `gpuclk clocks` explains each reason");
    if (!in.snapshot()) {
      add(f, "events", events);
      add(f, "held_s", held_seconds(in, w, held.size()), "s", 1);
    }
    add(f, "held_pct", pct(fraction), "%", 1);
    if (clock) add(f, "sm_clock_median_held_mhz", *clock, "MHz");
    if (normal) add(f, "sm_clock_median_otherwise_mhz", *normal, "MHz");
    out.push_back(std::move(f));
  }
}

void clock_jitter(const Input& in, const Thresholds& t, std::vector<Finding>& out) {
  if (in.snapshot()) return;
  for (const auto& w : in.gpus) {
    const auto& g = w.facts;
    if (!g.max_sm_clock) continue;
    const double max = g.max_sm_clock->value();
    // A sample counts when it and both its neighbours show no limiter. The clock and its
    // reasons are two reads: at the edge of a power-capped phase one can see the cap and the
    // other not, which is not jitter (the capped clock is the cap's, power_capped's finding).
    auto unlimited = [](const FastSample& s) {
      return s.clock_reasons && !(s.clock_reasons->bits() & kLimiters);
    };
    std::vector<const FastSample*> unexplained;
    for (std::size_t i = 1; i + 1 < w.fast.size(); ++i) {
      const auto& s = w.fast[i];
      if (busy_sample(s, t) && s.sm_clock && unlimited(s) && unlimited(w.fast[i - 1]) &&
          unlimited(w.fast[i + 1]))
        unexplained.push_back(&s);
    }
    if (unexplained.size() < 10) continue;
    const double p5 = *sm_clock_percentile(unexplained, 0.05);
    const double p95 = *sm_clock_percentile(unexplained, 0.95);
    int drops = 0;
    for (std::size_t i = 1; i < unexplained.size(); ++i) {
      if (unexplained[i - 1]->sm_clock->value() - unexplained[i]->sm_clock->value() >=
          t.clock_drop * max)
        ++drops;
    }
    const double spread = p95 - p5;
    if (spread <= t.jitter_spread * max && drops < t.clock_drops) continue;
    auto f = make("clock_jitter", Severity::warning, {g.index},
                  fmt::format("GPU {}: SM clock jitters under load with no limiter: p5 {:.0f} "
                              "to p95 {:.0f} MHz ({:.0f}% of max), {} drops of {:.0f}%+",
                              g.index, p5, p95, pct(spread / max), drops, pct(t.clock_drop)),
                  "GPU boost moves the clock with load; kernels see varying speed",
                  "gpuclk set --all --persistence on --lock-gpu-clocks MHZ (a clock the GPU "
                  "holds under the job's power)");
    add(f, "sm_clock_p5_mhz", p5, "MHz");
    add(f, "sm_clock_p95_mhz", p95, "MHz");
    add(f, "spread_pct_of_max", pct(spread / max), "%", 1);
    add(f, "drops", drops);
    add(f, "samples", static_cast<double>(unexplained.size()));
    out.push_back(std::move(f));
  }
}

}  // namespace gpuclk::rules::detail
