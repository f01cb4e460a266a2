// Rules on the GPU's health and settings: lost GPUs, ECC errors, PCIe link and replays,
// persistence mode, settings that differ across GPUs of one model.
#include <cmath>
#include <map>

#include "rules/window.h"

namespace gpuclk::rules::detail {

void gpu_lost(const Input& in, const Thresholds&, std::vector<Finding>& out) {
  for (const auto& w : in.gpus) {
    const auto& g = w.facts;
    if (g.unavailable_code != 0) {
      auto f = make("gpu_lost", Severity::critical, {g.index},
                    fmt::format("GPU {}: cannot be read: {} (NVML error {})", g.index, g.name,
                                g.unavailable_code),
                    g.unavailable_code == 15 ? "the GPU fell off the bus (Xid 79 or a shutdown)"
                                             : "the driver cannot open the GPU",
                    g.unavailable_code == 15
                        ? "the GPU fell off the bus: check `dmesg` for Xid errors; it needs a "
                          "reset or reboot"
                        : "check `nvidia-smi` and `dmesg`");
      add(f, "nvml_error", g.unavailable_code);
      out.push_back(std::move(f));
    } else if (w.health.lost) {
      double at = 0;
      if (w.health.lost_at) at = std::chrono::duration<double>(*w.health.lost_at - in.from).count();
      auto f = make("gpu_lost", Severity::critical, {g.index},
                    fmt::format("GPU {}: fell off the bus {:.1f} s into the window (GPU is lost)",
                                g.index, at),
                    "the GPU fell off the bus (Xid 79 or a shutdown)",
                    "check `dmesg` for Xid errors; the GPU needs a reset (nvidia-smi -r -i " +
                        std::to_string(g.index) + ") or a reboot");
      add(f, "lost_after_s", at, "s", 1);
      out.push_back(std::move(f));
    }
  }
}

void ecc_errors(const Input& in, const Thresholds&, std::vector<Finding>& out) {
  for (const auto& w : in.gpus) {
    const auto& g = w.facts;
    std::optional<std::uint64_t> first_corrected, last_corrected, last_uncorrected;
    for (const auto& s : w.slow) {
      if (s.ecc_corrected) {
        if (!first_corrected) first_corrected = s.ecc_corrected;
        last_corrected = s.ecc_corrected;
      }
      if (s.ecc_uncorrected) last_uncorrected = s.ecc_uncorrected;
    }
    const std::string fix = fmt::format(
        "drain GPU {0}, reset it so the driver retires/remaps the rows (nvidia-smi -r -i {0}); "
        "replace it if errors come back",
        g.index);
    if (last_uncorrected && *last_uncorrected > 0) {
      auto f = make("ecc_errors", Severity::critical, {g.index},
                    fmt::format("GPU {}: {} uncorrected ECC errors since the driver loaded: "
                                "results on this GPU are at risk",
                                g.index, *last_uncorrected),
                    "failing device memory", fix);
      add(f, "uncorrected_volatile", static_cast<double>(*last_uncorrected));
      out.push_back(std::move(f));
      continue;
    }
    if (g.ecc_uncorrected_aggregate && *g.ecc_uncorrected_aggregate > 0) {
      auto f = make("ecc_errors", Severity::warning, {g.index},
                    fmt::format("GPU {}: {} uncorrected ECC errors over its lifetime", g.index,
                                *g.ecc_uncorrected_aggregate),
                    "device memory failed before", fix);
      add(f, "uncorrected_aggregate", static_cast<double>(*g.ecc_uncorrected_aggregate));
      out.push_back(std::move(f));
      continue;
    }
    if (first_corrected && last_corrected && *last_corrected > *first_corrected && !in.snapshot()) {
      const double n = static_cast<double>(*last_corrected - *first_corrected);
      auto f = make("ecc_errors", Severity::warning, {g.index},
                    fmt::format("GPU {}: {:.0f} corrected ECC errors during the {:.0f} s window "
                                "({:.0f} per hour)",
                                g.index, n, in.seconds(), n * 3600 / in.seconds()),
                    "device memory degrading: corrected errors come before uncorrected ones", fix);
      add(f, "corrected_in_window", n);
      add(f, "corrected_per_hour", n * 3600 / in.seconds());
      add(f, "corrected_volatile", static_cast<double>(*last_corrected));
      out.push_back(std::move(f));
      continue;
    }
    if (g.ecc_corrected_aggregate && *g.ecc_corrected_aggregate > 0) {
      auto f = make("ecc_errors", Severity::info, {g.index},
                    fmt::format("GPU {}: {} corrected ECC errors over its lifetime, none now",
                                g.index, *g.ecc_corrected_aggregate),
                    "single-bit errors the memory corrected",
                    "watch: gpuclk doctor --rules "
                    "ecc_errors");
      add(f, "corrected_aggregate", static_cast<double>(*g.ecc_corrected_aggregate));
      out.push_back(std::move(f));
    }
  }
}

void row_remapping(const Input& in, const Thresholds&, std::vector<Finding>& out) {
  for (const auto& w : in.gpus) {
    const auto& g = w.facts;
    if (!g.remapped_rows) continue;
    const auto& r = *g.remapped_rows;
    std::optional<Finding> f;
    if (r.failure) {
      f = make("row_remapping", Severity::critical, {g.index},
               fmt::format("GPU {}: a row remap failed: no spare row was left for a failing "
                           "row of device memory",
                           g.index),
               "device memory has more failing rows than the GPU has spares",
               fmt::format("drain GPU {} and have it replaced (RMA): it cannot repair its "
                           "memory any more",
                           g.index));
    } else if (r.pending) {
      f = make("row_remapping", Severity::critical, {g.index},
               fmt::format("GPU {}: a row remap is pending: the failing row stays in use until "
                           "the GPU is reset",
                           g.index),
               "an uncorrectable memory error; the driver remaps the row at the next reset",
               fmt::format("drain GPU {0}, then reset it (nvidia-smi -r -i {0}) or reboot; "
                           "gpuclk never resets a GPU",
                           g.index));
    } else if (r.uncorrected > 0 || r.corrected > 0) {
      f = make("row_remapping", Severity::info, {g.index},
               fmt::format("GPU {}: {} rows of device memory remapped to spares ({} after "
                           "uncorrectable errors), none pending",
                           g.index, r.corrected + r.uncorrected, r.uncorrected),
               "memory errors the GPU repaired with spare rows",
               "watch: gpuclk doctor --rules row_remapping,ecc_errors");
    }
    if (!f) continue;
    add(*f, "remapped_corrected", static_cast<double>(r.corrected));
    add(*f, "remapped_uncorrected", static_cast<double>(r.uncorrected));
    add(*f, "pending", r.pending ? 1.0 : 0.0);
    add(*f, "failure", r.failure ? 1.0 : 0.0);
    out.push_back(std::move(*f));
  }
}

void persistence_off(const Input& in, const Thresholds&, std::vector<Finding>& out) {
  std::vector<unsigned> off;
  for (const auto& w : in.gpus) {
    if (w.facts.persistence_mode && !*w.facts.persistence_mode) off.push_back(w.facts.index);
  }
  if (off.empty()) return;
  auto f = make("persistence_off", Severity::warning, off,
                fmt::format("GPU {}: persistence mode is off: the driver tears the GPU down when "
                            "no process uses it, so each job starts slower and settings may be "
                            "lost",
                            gpu_list(off)),
                "persistence mode off (the driver's default without nvidia-persistenced)",
                "gpuclk set --all --persistence on (or enable nvidia-persistenced at boot)");
  add(f, "gpus_off", static_cast<double>(off.size()));
  out.push_back(std::move(f));
}

void pcie_link_degraded(const Input& in, const Thresholds& t, std::vector<Finding>& out) {
  for (const auto& w : in.gpus) {
    const auto& g = w.facts;
    if (!g.pcie_link || !g.pcie_max) continue;
    const auto now = *g.pcie_link;
    const auto max = *g.pcie_max;
    const bool narrow = now.width < max.width;
    // Links train down at idle to save power; a lower generation matters only under load.
    const auto busy_n = busy_samples(w, t).size();
    const bool slow_gen = now.generation < max.generation && busy_n > 0;
    if (!narrow && !slow_gen) continue;
    // Per-lane rates double with each generation from Gen3 on (8, 16, 32 GT/s); at idle only
    // the width counts (the generation there is power saving).
    double share = narrow ? static_cast<double>(now.width) / static_cast<double>(max.width) : 1;
    if (slow_gen)
      share *=
          std::pow(2.0, static_cast<double>(now.generation) - static_cast<double>(max.generation));
    std::string what;
    if (narrow) what = fmt::format("runs x{} of x{}", now.width, max.width);
    if (slow_gen)
      what += fmt::format("{}at Gen{} of Gen{} while busy", narrow ? ", " : "", now.generation,
                          max.generation);
    auto f = make("pcie_link_degraded", Severity::warning, {g.index},
                  fmt::format("GPU {}: PCIe link {}: host transfers get about {:.0f}% of what "
                              "the slot allows",
                              g.index, what, 100 * share),
                  narrow ? "the card is not seated fully or the riser/slot lost lanes"
                         : "the link trained down (BIOS PCIe setting, riser, slot)",
                  "reseat the card, check the riser and the BIOS PCIe settings; `gpuclk info` "
                  "shows the link");
    add(f, "generation", now.generation);
    add(f, "max_generation", max.generation);
    add(f, "width", now.width);
    add(f, "max_width", max.width);
    add(f, "bandwidth_share_pct", 100 * share, "%");
    if (!in.snapshot()) add(f, "busy_s", held_seconds(in, w, busy_n), "s", 1);
    out.push_back(std::move(f));
  }
}

void pcie_replays(const Input& in, const Thresholds&, std::vector<Finding>& out) {
  if (in.snapshot()) return;
  for (const auto& w : in.gpus) {
    std::optional<std::uint64_t> first, last;
    for (const auto& s : w.slow) {
      if (!s.pcie_replay) continue;
      if (!first) first = s.pcie_replay;
      last = s.pcie_replay;
    }
    if (!first || *last <= *first) continue;
    const double n = static_cast<double>(*last - *first);
    auto f = make("pcie_replays", Severity::warning, {w.facts.index},
                  fmt::format("GPU {}: {:.0f} PCIe replays during the {:.0f} s window ({:.1f} "
                              "per minute, {} since the driver loaded)",
                              w.facts.index, n, in.seconds(), n * 60 / in.seconds(), *last),
                  "link errors make the link resend packets (riser, slot, signal integrity)",
                  "reseat the card or riser; if it persists, the slot or card needs service");
    add(f, "replays_in_window", n);
    add(f, "replays_per_minute", n * 60 / in.seconds(), "", 1);
    add(f, "replays_total", static_cast<double>(*last));
    out.push_back(std::move(f));
  }
}

namespace {

// Groups GPUs of one model by a setting's text; the GPUs off the majority value get a finding.
// A tie (two GPUs, one each) goes to the driver's default value where one is known.
using SettingText = std::function<std::string(const GpuFacts&)>;
void differ(const std::vector<const GpuWindow*>& same, const SettingText& key,
            const SettingText& default_key, const std::string& what, const std::string& setting_key,
            const std::string& fix, std::vector<Finding>& out) {
  std::map<std::string, std::vector<unsigned>> groups;
  for (const auto* w : same) {
    auto k = key(w->facts);
    if (!k.empty()) groups[k].push_back(w->facts.index);
  }
  if (groups.size() < 2) return;
  std::string default_value;
  for (const auto* w : same) {
    if (default_value.empty()) default_value = default_key(w->facts);
  }
  auto majority = groups.begin();
  for (auto it = groups.begin(); it != groups.end(); ++it) {
    const bool more = it->second.size() > majority->second.size();
    const bool tie_to_default = it->second.size() == majority->second.size() &&
                                !default_value.empty() && it->first == default_value;
    if (more || tie_to_default) majority = it;
  }
  for (auto it = groups.begin(); it != groups.end(); ++it) {
    if (it == majority) continue;
    auto f = make("settings_differ", Severity::warning, it->second,
                  fmt::format("GPU {}: {} {} differ from the other GPUs' {}; a multi-GPU job "
                              "runs at the pace of its slowest GPU",
                              gpu_list(it->second), what, it->first, majority->first),
                  what + " set on some GPUs only", fix);
    f.evidence.push_back({"setting", "", 0, 0, setting_key});
    f.evidence.push_back({"value", "", 0, 0, it->first});
    f.evidence.push_back({"others", "", 0, 0, majority->first});
    out.push_back(std::move(f));
  }
}

std::string app_clocks_text(const std::optional<Megahertz>& sm,
                            const std::optional<Megahertz>& memory) {
  return sm && memory ? fmt::format("{:.0f}/{:.0f} MHz", sm->value(), memory->value())
                      : std::string();
}
std::string watts_text(const std::optional<Watts>& w) {
  return w ? fmt::format("{:.0f} W", w->value()) : std::string();
}
std::string no_default(const GpuFacts&) { return {}; }

}  // namespace

void settings_differ(const Input& in, const Thresholds&, std::vector<Finding>& out) {
  for (const auto& [model, same] : by_model(in)) {
    const auto before = out.size();
    differ(
        same, [](const GpuFacts& g) { return app_clocks_text(g.app_sm_clock, g.app_memory_clock); },
        [](const GpuFacts& g) {
          return app_clocks_text(g.default_app_sm_clock, g.default_app_memory_clock);
        },
        "application clocks (SM/memory)", "app_clocks",
        "gpuclk set --all --app-clocks MEM,SM (the same on every GPU), or gpuclk reset "
        "--app-clocks",
        out);
    differ(
        same, [](const GpuFacts& g) { return watts_text(g.power_limit); },
        [](const GpuFacts& g) { return watts_text(g.default_power_limit); }, "power limits",
        "power_limit", "gpuclk set --all --power-limit WATTS (the same on every GPU)", out);
    differ(
        same, [](const GpuFacts& g) { return g.locked_gpu_clocks; }, no_default,
        "locked GPU clocks", "locked_gpu_clocks",
        "gpuclk set --all --lock-gpu-clocks MIN[,MAX] (the same on every GPU), or gpuclk restore",
        out);
    differ(
        same, [](const GpuFacts& g) { return g.locked_memory_clocks; }, no_default,
        "locked memory clocks", "locked_memory_clocks",
        "gpuclk set --all --lock-memory-clocks MIN[,MAX] (the same on every GPU), or gpuclk "
        "restore",
        out);
    // The journal's locks are what gpuclk applied: say where the value comes from.
    for (auto i = before; i < out.size(); ++i) {
      const auto& setting = out[i].evidence.front().text;
      if (setting == "locked_gpu_clocks" || setting == "locked_memory_clocks") {
        out[i].summary.insert(out[i].summary.find(" differ from"), " (gpuclk journal)");
      }
    }
  }
}

}  // namespace gpuclk::rules::detail
