// Rules on the GPU's health and settings: lost GPUs, ECC errors, remapped rows and retired
// pages, PCIe link and replays, persistence mode, settings that differ across GPUs of one model,
// Xid errors (NVML events).
#include <cmath>
#include <map>

#include "rules/window.h"
#include "rules/xid.h"
#include "util/text.h"

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

void ecc_errors(const Input& in, const Thresholds& t, std::vector<Finding>& out) {
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
                    fmt::format("GPU {}: {} since the driver loaded: "
                                "results on this GPU are at risk",
                                g.index, text::counted(*last_uncorrected, "uncorrected ECC error")),
                    "failing device memory", fix);
      add(f, "uncorrected_volatile", static_cast<double>(*last_uncorrected));
      out.push_back(std::move(f));
      continue;
    }
    if (g.ecc_uncorrected_aggregate && *g.ecc_uncorrected_aggregate > 0) {
      auto f =
          make("ecc_errors", Severity::warning, {g.index},
               fmt::format("GPU {}: {} over its lifetime", g.index,
                           text::counted(*g.ecc_uncorrected_aggregate, "uncorrected ECC error")),
               "device memory failed before", fix);
      add(f, "uncorrected_aggregate", static_cast<double>(*g.ecc_uncorrected_aggregate));
      out.push_back(std::move(f));
      continue;
    }
    if (first_corrected && last_corrected && *last_corrected > *first_corrected && !in.snapshot()) {
      const double n = static_cast<double>(*last_corrected - *first_corrected);
      if (n < t.ecc_rate_min_errors) {
        // Too few to give a rate: a count, and the rule to watch it with.
        auto f = make("ecc_errors", Severity::info, {g.index},
                      fmt::format("GPU {}: {:.0f} corrected ECC {} during the {:.0f} s window "
                                  "(too few for a rate: {} or more give one)",
                                  g.index, n, n == 1 ? "error" : "errors", in.seconds(),
                                  t.ecc_rate_min_errors),
                      "single-bit errors the memory corrected",
                      "watch longer: gpuclk doctor --rules ecc_errors --duration 10m");
        add(f, "corrected_in_window", n);
        add(f, "corrected_volatile", static_cast<double>(*last_corrected));
        out.push_back(std::move(f));
        continue;
      }
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
                    fmt::format("GPU {}: {} over its lifetime, none now", g.index,
                                text::counted(*g.ecc_corrected_aggregate, "corrected ECC error")),
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
      f = make(
          "row_remapping", Severity::info, {g.index},
          fmt::format("GPU {}: {} of device memory remapped to spares ({} after "
                      "uncorrectable errors), none pending",
                      g.index, text::counted(r.corrected + r.uncorrected, "row"), r.uncorrected),
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

void retired_pages(const Input& in, const Thresholds& t, std::vector<Finding>& out) {
  for (const auto& w : in.gpus) {
    const auto& g = w.facts;
    if (!g.retired_pages) continue;
    const auto& p = *g.retired_pages;
    const unsigned total = p.total();
    if (total == 0 && !p.pending) continue;
    const std::string counts = fmt::format(
        "{} after double-bit errors, {} after repeated "
        "single-bit errors",
        p.dbe, p.multiple_sbe);
    const std::string reset = fmt::format(
        "drain GPU {0}, then reset it (nvidia-smi -r -i {0}) or reboot so the driver reloads "
        "and stops using the page; gpuclk never resets a GPU",
        g.index);
    const std::string rma = fmt::format(
        "drain GPU {} and have it replaced (RMA; NVIDIA's field diagnostic confirms it)", g.index);
    std::optional<Finding> f;
    if (total >= t.retired_pages_limit) {
      f = make("retired_pages", Severity::critical, {g.index},
               fmt::format("GPU {}: {} of device memory retired ({}){}: at NVIDIA's limit "
                           "of {} for replacing the GPU",
                           g.index, text::counted(total, "page"), counts,
                           p.pending ? ", one pending" : "", t.retired_pages_limit),
               "device memory keeps failing; the GPU can retire only 64 pages in its life",
               p.pending ? rma + "; until then reset it so the pending page is retired" : rma);
    } else if (p.pending) {
      f = make("retired_pages", Severity::critical, {g.index},
               fmt::format("GPU {}: a page retirement is pending: the failing page stays in use "
                           "until the GPU is reset ({} retired: {})",
                           g.index, text::counted(total, "page"), counts),
               "an ECC error retired a page of device memory; the retirement takes effect when "
               "the driver next attaches the GPU",
               reset);
    } else if (p.dbe > 0 || total >= t.retired_pages_near) {
      std::string why;
      if (total >= t.retired_pages_near)
        why = fmt::format(": within {} of the {} at which NVIDIA replaces a GPU",
                          t.retired_pages_limit - total, t.retired_pages_limit);
      else if (p.dbe > t.retired_dbe_pages_soft)
        why = fmt::format(
            ": more than {} after double-bit errors, NVIDIA's health check fails "
            "the GPU if more follow within a week",
            t.retired_dbe_pages_soft);
      f = make("retired_pages", Severity::warning, {g.index},
               fmt::format("GPU {}: {} of device memory retired ({}){}", g.index,
                           text::counted(total, "page"), counts, why),
               p.dbe > 0 ? "double-bit ECC errors: the data in those pages was lost when they "
                           "happened; the pages are no longer used"
                         : "device memory degrading: single-bit errors repeat at addresses",
               fmt::format("watch the count (gpuclk doctor --rules retired_pages,ecc_errors); "
                           "plan to replace GPU {} as it nears {} pages",
                           g.index, t.retired_pages_limit));
    } else {
      f = make("retired_pages", Severity::info, {g.index},
               fmt::format("GPU {}: {} of device memory retired after repeated single-bit "
                           "errors, none pending",
                           g.index, text::counted(total, "page")),
               "single-bit errors the memory corrected; the driver stopped using those pages",
               "watch: gpuclk doctor --rules retired_pages,ecc_errors");
    }
    add(*f, "retired_dbe", static_cast<double>(p.dbe));
    add(*f, "retired_sbe", static_cast<double>(p.multiple_sbe));
    add(*f, "retired_total", static_cast<double>(total));
    add(*f, "pending", p.pending ? 1.0 : 0.0);
    add(*f, "limit", static_cast<double>(t.retired_pages_limit));
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
                fmt::format("{}: persistence mode is off: the driver tears the GPU down when "
                            "no process uses it, so each job starts slower and settings may be "
                            "lost",
                            gpus_label(off)),
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
                  fmt::format("{}: {} {} differ from the other GPUs' {}; a multi-GPU job "
                              "runs at the pace of its slowest GPU",
                              gpus_label(it->second), what, it->first, majority->first),
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

namespace gpuclk::rules {

XidInfo xid_info(std::uint64_t xid) {
  switch (xid) {
    case 79:
      return {XidClass::bus, Severity::critical, "GPU has fallen off the bus"};
    case 48:
      return {XidClass::memory, Severity::critical, "double-bit ECC error"};
    case 63:
      return {XidClass::memory, Severity::critical, "row remapping / page retirement event"};
    case 64:
      return {XidClass::memory, Severity::critical, "row remapping / page retirement failure"};
    case 94:
      return {XidClass::memory, Severity::critical, "contained ECC error"};
    case 95:
      return {XidClass::memory, Severity::critical, "uncontained ECC error"};
    case 74:
      return {XidClass::nvlink, Severity::critical, "NVLink error"};
    case 62:
      return {XidClass::firmware, Severity::critical, "internal micro-controller halt"};
    case 119:
      return {XidClass::firmware, Severity::critical, "GSP RPC timeout"};
    case 120:
      return {XidClass::firmware, Severity::critical, "GSP error"};
    case 92:
      return {XidClass::memory, Severity::warning, "high single-bit ECC error rate"};
    case 13:
      return {XidClass::other, Severity::warning, "graphics engine exception"};
    case 31:
      return {XidClass::other, Severity::warning, "GPU memory page fault"};
    case 43:
      return {XidClass::other, Severity::warning, "GPU stopped processing"};
    case 45:
      return {XidClass::other, Severity::warning, "preemptive cleanup"};
    default:
      return {XidClass::other, Severity::warning, ""};
  }
}

namespace detail {
namespace {

struct XidAdvice {
  const char* cause;
  const char* fix;  // {0}: the GPU's index
};

XidAdvice advice(XidClass cls) {
  switch (cls) {
    case XidClass::bus:
      return {
          "the GPU stopped answering on PCIe: a power or thermal event, a hardware fault or "
          "a driver fault",
          "check `dmesg` for the Xid; drain GPU {0} and reset it (nvidia-smi -r -i {0}) or "
          "reboot; if it falls off again, check its power cabling and seating, then RMA"};
    case XidClass::memory:
      return {
          "an uncorrectable or recorded error of device memory: results computed on this "
          "GPU may be corrupt",
          "check `dmesg` for the Xid; drain GPU {0}, reset it (nvidia-smi -r -i {0}) so the "
          "driver remaps the rows; replace it (RMA) if the errors come back"};
    case XidClass::nvlink:
      return {"an NVLink error: transfers between GPUs failed",
              "check `dmesg` and `nvidia-smi nvlink -e -i {0}`; reset the GPUs of the link "
              "(nvidia-smi -r -i {0}); if it repeats, the NVLink/NVSwitch path needs service"};
    case XidClass::firmware:
      return {"the GPU's firmware (GSP or a micro-controller) stopped answering the driver",
              "check `dmesg` for the Xid; reset GPU {0} (nvidia-smi -r -i {0}) or reboot; "
              "update the driver; RMA if it repeats"};
    case XidClass::other:
      break;
  }
  return {
      "an error the driver logged; most Xids outside the critical list are an "
      "application's fault (a bad memory access, a kernel that stopped)",
      "check `dmesg` for the Xid and the job's log on GPU {0}; if it repeats with "
      "different jobs, update the driver"};
}

}  // namespace

void xid_errors(const Input& in, const Thresholds&, std::vector<Finding>& out) {
  for (const auto& w : in.gpus) {
    std::map<std::uint64_t, std::size_t> counts;
    std::optional<telemetry::TimePoint> first;
    for (const auto& e : w.events) {
      if (e.kind != gpu::EventKind::xid) continue;
      ++counts[e.xid];
      if (!first || e.time < *first) first = e.time;
    }
    if (counts.empty()) continue;
    // The worst code decides the severity, the cause and the fix.
    std::uint64_t worst_xid = counts.begin()->first;
    for (const auto& [xid, n] : counts) {
      if (xid_info(xid).severity > xid_info(worst_xid).severity) worst_xid = xid;
    }
    const XidInfo worst = xid_info(worst_xid);
    std::string codes, listed;
    std::size_t total = 0;
    for (const auto& [xid, n] : counts) {
      const auto name = xid_info(xid).name;
      codes += fmt::format("{}{}", codes.empty() ? "" : ",", xid);
      listed += fmt::format("{}Xid {}{}{}{} {}", listed.empty() ? "" : ", ", xid,
                            name.empty() ? "" : " (", name, name.empty() ? "" : ")",
                            n == 1 ? std::string("once") : fmt::format("{} times", n));
      total += n;
    }
    const double first_s = std::chrono::duration<double>(*first - in.from).count();
    const auto adv = advice(worst.cls);
    auto f = make("xid_errors", worst.severity, {w.facts.index},
                  fmt::format("GPU {}: {} during the window, the first {:.1f} s in{}",
                              w.facts.index, listed, first_s,
                              worst.severity == Severity::critical
                                  ? ": the GPU needs a reset or its results are at risk"
                                  : ""),
                  adv.cause, fmt::format(fmt::runtime(adv.fix), w.facts.index));
    f.evidence.push_back({"xids", "", 0, 0, codes});
    for (const auto& [xid, n] : counts)
      add(f, fmt::format("xid_{}_count", xid), static_cast<double>(n));
    add(f, "events", static_cast<double>(total));
    add(f, "first_after_s", first_s, "s", 1);
    out.push_back(std::move(f));
  }
}

}  // namespace detail
}  // namespace gpuclk::rules
