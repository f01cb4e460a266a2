#include "views/clocks.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <initializer_list>

#include "gpu/clock_list.h"

namespace gpuclk::views {
namespace {

using gpu::ClockDomain;
namespace out = output;

struct DomainName {
  ClockDomain domain;
  const char* key;
  const char* label;
};
constexpr DomainName kDomains[] = {{ClockDomain::graphics, "graphics", "Graphics"},
                                   {ClockDomain::sm, "sm", "SM"},
                                   {ClockDomain::memory, "memory", "Memory"},
                                   {ClockDomain::video, "video", "Video"}};

void clock_section(out::Node& parent, const char* key, const char* label,
                   const std::function<gpu::Reading<units::Megahertz>(ClockDomain)>& read,
                   std::initializer_list<ClockDomain> domains) {
  auto& s = parent.section(key, label);
  for (const auto& d : kDomains) {
    if (std::find(domains.begin(), domains.end(), d.domain) == domains.end()) continue;
    s.add(d.key, d.label, out::mhz(read(d.domain)));
  }
}

}  // namespace

out::Node clocks_tree(const gpu::Device& d, const control::Settings& settings) {
  const auto& id = d.identity();
  const auto& limits = d.clock_limits();
  out::Node n;
  n.key = "gpu";
  n.label = fmt::format("GPU {}: {} ({})", d.index(), d.name(), id.pci ? id.pci->bus_id : d.uuid());
  n.add("index", "Index", out::integer(d.index()));
  n.add("uuid", "UUID", out::text(d.uuid()));
  auto pstate = d.pstate();
  n.add("performance_state", "Performance State",
        pstate ? out::text("P" + std::to_string(*pstate)) : out::na());

  const auto all = {ClockDomain::graphics, ClockDomain::sm, ClockDomain::memory,
                    ClockDomain::video};
  clock_section(
      n, "clocks", "Clocks", [&](ClockDomain c) { return d.clock(c); }, all);
  // From the settings already read: on an H100 each application-clock read takes ~1 ms.
  const auto& app = settings.application_clocks;
  clock_section(
      n, "applications_clocks", "Applications Clocks",
      [&](ClockDomain c) -> gpu::Reading<units::Megahertz> {
        if (!app) return gpu::Reading<units::Megahertz>::not_supported();
        return units::Megahertz(c == ClockDomain::memory ? app->memory_mhz : app->graphics_mhz);
      },
      {ClockDomain::graphics, ClockDomain::memory});
  clock_section(n, "default_applications_clocks", "Default Applications Clocks",
                [&](ClockDomain c) { return limits.default_app_clock[int(c)]; },
                {ClockDomain::graphics, ClockDomain::memory});
  clock_section(
      n, "max_clocks", "Max Clocks", [&](ClockDomain c) { return limits.max(c); }, all);
  clock_section(n, "max_customer_boost_clocks", "Max Customer Boost Clocks",
                [&](ClockDomain c) { return limits.max_boost_clock[int(c)]; },
                {ClockDomain::graphics, ClockDomain::sm, ClockDomain::memory});

  if (pstate) {
    auto& range = n.section("pstate_clock_range", fmt::format("P{} Clock Range", *pstate));
    for (auto domain : {ClockDomain::sm, ClockDomain::memory}) {
      auto r = d.pstate_clock_range(domain, *pstate);
      const char* key = domain == ClockDomain::sm ? "sm" : "memory";
      auto& s = range.section(key, domain == ClockDomain::sm ? "SM" : "Memory");
      s.add("min", "Min", r ? out::integer((long long)r->min.value(), "MHz") : out::na());
      s.add("max", "Max", r ? out::integer((long long)r->max.value(), "MHz") : out::na());
    }
  }

  auto active = d.clock_reasons();
  const auto& supported = id.supported_clock_reasons;
  auto& reasons = n.section("clock_event_reasons", "Clock Event Reasons");
  reasons.add("active_mask", "Active (bitmask)",
              active ? out::text(fmt::format("0x{:016X}", active->bits())) : out::na());
  for (const auto& r : gpu::clock_reasons()) {
    auto& item = reasons.section(std::string(r.key), std::string(r.key));
    std::string state = !active                                 ? "N/A"
                        : (supported && !supported->has(r.bit)) ? "Not Supported"
                        : active->has(r.bit)                    ? "Active"
                                                                : "Not Active";
    item.add("state", "State", out::text(state));
    item.add("meaning", "Meaning", out::text(std::string(r.meaning)));
  }

  // Time the clocks were held down per policy, since the driver loaded (nvidia-smi: "Clocks
  // Event Reasons Counters").
  struct Counter {
    gpu::ViolationPolicy policy;
    const char* key;
    const char* label;
  };
  const Counter counters[] = {
      {gpu::ViolationPolicy::power, "sw_power_cap", "SW Power Capping"},
      {gpu::ViolationPolicy::thermal, "thermal", "Thermal Slowdown"},
      {gpu::ViolationPolicy::sync_boost, "sync_boost", "Sync Boost"},
      {gpu::ViolationPolicy::board_limit, "board_limit", "Board Limit"},
      {gpu::ViolationPolicy::low_utilization, "low_utilization", "Low Utilization"},
      {gpu::ViolationPolicy::reliability, "reliability", "Board Reliability"}};
  auto& times = n.section("clock_event_reason_counters", "Clock Event Reason Counters");
  const auto all_times = d.violation_times();
  for (const auto& c : counters) {
    const auto& t = all_times[static_cast<std::size_t>(c.policy)];
    times.add(c.key, c.label, t ? out::integer(t->count() / 1000, "us") : out::na());
  }

  auto& sup = n.section("supported_clocks", "Supported Clocks", true);
  if (limits.supported_clocks) {
    for (const auto& entry : *limits.supported_clocks) {
      auto& m = sup.section("memory", fmt::format("Memory {:.0f} MHz", entry.memory.value()));
      m.add("memory", "Memory", out::integer((long long)entry.memory.value(), "MHz"));
      m.add("graphics", "Graphics", out::text(gpu::describe_clocks(entry.graphics)));
      auto s = gpu::summarize_clocks(entry.graphics);
      m.add("graphics_min", "Graphics Min", out::integer((long long)s.min.value(), "MHz"));
      m.add("graphics_max", "Graphics Max", out::integer((long long)s.max.value(), "MHz"));
      // A V100's 7.5 MHz grid (listed as 7 and 8 MHz gaps) reads 7.5.
      m.add("graphics_step", "Graphics Step",
            s.step.value() <= 0 ? out::na()
            : s.step_rounded    ? out::number(s.step.value(), "MHz", 1)
                                : out::integer((long long)s.step.value(), "MHz"));
      m.add("graphics_count", "Graphics Values", out::integer((long long)s.count));
    }
  } else {
    sup.value = out::na();
  }
  return n;
}

}  // namespace gpuclk::views
