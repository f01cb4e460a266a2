// `gpuclk clocks`: all of nvidia-smi -q -d CLOCK,PERFORMANCE,SUPPORTED_CLOCKS, per GPU, with a
// one-line meaning for each clock event reason and the supported clocks written compactly.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/cmd_control.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "control/consistency.h"
#include "gpu/clock_list.h"

namespace gpuclk::cli {
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

// What gpuclk applied to this GPU (its journal) and where the GPU differs from the others of its
// model; null when there is nothing to say.
struct AppliedView {
  const control::JournalEntry* entry = nullptr;
  std::vector<control::Difference> differences;
};

void applied_section(out::Node& n, const AppliedView& view) {
  auto& s = n.section("gpuclk", "Set by gpuclk");
  if (view.entry) {
    for (auto setting : control::kWriteOrder) {
      if (!view.entry->touched.count(setting)) continue;
      const auto& e = *view.entry;
      std::string value = e.pending.has(setting) ? control::describe(e.pending, setting) +
                                                       " (interrupted: run gpuclk restore)"
                          : e.applied.has(setting) ? control::describe(e.applied, setting)
                                                   : "N/A";
      value += " (original " + control::describe(e.original, setting) + ")";
      s.add(std::string(control::key_of(setting)), std::string(control::label_of(setting)),
            out::text(value));
    }
  }
  std::string differs;
  for (const auto& d : view.differences) {
    differs += fmt::format("{}{} {} (others: {})", differs.empty() ? "" : "; ",
                           control::label_of(d.setting), d.value, d.majority);
  }
  s.add("differs_from_other_gpus", "Differs From Other GPUs",
        out::text(differs.empty() ? "no" : differs));
}

out::Node clocks_of(const gpu::Device& d, const AppliedView* applied = nullptr) {
  const auto& id = d.identity();
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
  clock_section(n, "applications_clocks", "Applications Clocks",
                [&](ClockDomain c) { return d.app_clock(c); },
                {ClockDomain::graphics, ClockDomain::memory});
  clock_section(n, "default_applications_clocks", "Default Applications Clocks",
                [&](ClockDomain c) { return id.default_app_clock[int(c)]; },
                {ClockDomain::graphics, ClockDomain::memory});
  clock_section(
      n, "max_clocks", "Max Clocks", [&](ClockDomain c) { return id.max(c); }, all);
  clock_section(n, "max_customer_boost_clocks", "Max Customer Boost Clocks",
                [&](ClockDomain c) { return id.max_boost_clock[int(c)]; },
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
  for (const auto& c : counters) {
    auto t = d.violation_time(c.policy);
    times.add(c.key, c.label, t ? out::integer(t->count() / 1000, "us") : out::na());
  }

  if (applied) applied_section(n, *applied);

  auto& sup = n.section("supported_clocks", "Supported Clocks", true);
  if (id.supported_clocks) {
    for (const auto& entry : *id.supported_clocks) {
      auto& m = sup.section("memory", fmt::format("Memory {:.0f} MHz", entry.memory.value()));
      m.add("memory", "Memory", out::integer((long long)entry.memory.value(), "MHz"));
      m.add("graphics", "Graphics", out::text(gpu::describe_clocks(entry.graphics)));
      auto s = gpu::summarize_clocks(entry.graphics);
      m.add("graphics_min", "Graphics Min", out::integer((long long)s.min.value(), "MHz"));
      m.add("graphics_max", "Graphics Max", out::integer((long long)s.max.value(), "MHz"));
      m.add("graphics_step", "Graphics Step",
            s.step.value() > 0 ? out::integer((long long)s.step.value(), "MHz") : out::na());
      m.add("graphics_count", "Graphics Values", out::integer((long long)s.count));
    }
  } else {
    sup.value = out::na();
  }
  return n;
}

int run_clocks(Context& ctx) {
  out::Node root;
  auto& gpus = root.section("gpus", "GPUs", true);
  const auto selected = ctx.selected();
  // The "Set by gpuclk" section appears only where gpuclk changed something or settings differ.
  const auto journal = peek_journal(ctx).value_or(control::Journal{});
  std::vector<control::GpuSettingsView> views;
  // Compared with every GPU of the node, also those -i leaves out.
  for (const auto* d : ctx.devices().all()) {
    control::GpuSettingsView v{d->index(), d->uuid(), d->name(), control::read_settings(*d)};
    control::add_journal_locks(v.settings, journal, d->uuid());
    views.push_back(std::move(v));
  }
  auto differences = control::settings_that_differ(views);
  for (const auto* d : selected) {
    AppliedView view{journal.find(d->uuid()), differences[d->uuid()]};
    const bool show = view.entry || !view.differences.empty();
    gpus.children.push_back(clocks_of(*d, show ? &view : nullptr));
  }
  // Tables and CSV read better without the list wrapper; JSON keeps it.
  if (ctx.format().kind == out::Format::Kind::json)
    ctx.printer()->print_tree(root);
  else
    ctx.printer()->print_tree(gpus);
  return 0;
}

}  // namespace

void add_clocks_command(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("clocks",
                                 "Clocks in detail: current, application, max, boost, P-state "
                                 "range, clock event reasons and counters, supported clocks");
  sub->callback([&ctx] { ctx.run = [&ctx] { return run_clocks(ctx); }; });
}

}  // namespace gpuclk::cli
