// `gpuclk clocks`: all of nvidia-smi -q -d CLOCK,PERFORMANCE,SUPPORTED_CLOCKS, per GPU, with a
// one-line meaning for each clock event reason and the supported clocks written compactly.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/cmd_control.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/service_views.h"
#include "control/consistency.h"
#include "gpu/clock_list.h"
#include "serve/client.h"
#include "serve/protocol.h"

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

// The "Set by gpuclk" section, before the supported clocks (last: the longest).
void add_applied_section(out::Node& n, const AppliedView& view) {
  const auto at = std::find_if(n.children.begin(), n.children.end(),
                               [](const out::Node& c) { return c.key == "supported_clocks"; });
  out::Node& s = *n.children.insert(at, out::Node{"gpuclk", "Set by gpuclk", {}, {}, false});
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

nlohmann::json clocks_view_row(const gpu::Device& d) {
  const auto settings = control::read_settings(d);
  return {{"tree", serve::to_json(clocks_tree(d, settings))},
          {"name", d.name()},
          {"settings", control::settings_to_json(settings)}};
}

namespace {

int run_clocks(Context& ctx) {
  out::Node root;
  auto& gpus = root.section("gpus", "GPUs", true);
  // Every GPU of the node (the settings are compared with those -i leaves out too), and the
  // positions -i selects; from the service when one answers, else read here.
  std::vector<control::GpuSettingsView> views;
  std::vector<out::Node> trees;
  std::vector<std::size_t> selected;
  if (auto* service = ctx.service()) {
    auto view = service->clocks_view();
    for (std::size_t i = 0; i < view.gpus.size(); ++i) {
      const auto& key = view.gpus[i];
      auto& row = view.rows.at(i);
      views.push_back({key.index, key.uuid, row.name, row.settings});
      trees.push_back(std::move(row.tree));
    }
    selected = ctx.select_from(view.gpus);
  } else {
    const auto chosen = ctx.selected();
    const auto all = ctx.devices().all();
    for (const auto* d : all) {
      views.push_back({d->index(), d->uuid(), d->name(), control::read_settings(*d)});
      const bool wanted = std::find(chosen.begin(), chosen.end(), d) != chosen.end();
      trees.push_back(wanted ? clocks_tree(*d, views.back().settings) : out::Node{});
    }
    for (const auto* d : chosen) {
      selected.push_back(
          static_cast<std::size_t>(std::find(all.begin(), all.end(), d) - all.begin()));
    }
  }
  // The "Set by gpuclk" section appears only where gpuclk changed something or settings differ.
  const auto journal = peek_journal(ctx).value_or(control::Journal{});
  for (auto& v : views) control::add_journal_locks(v.settings, journal, v.uuid);
  auto differences = control::settings_that_differ(views);
  for (auto pos : selected) {
    const auto& uuid = views[pos].uuid;
    AppliedView view{journal.find(uuid), differences[uuid]};
    if (view.entry || !view.differences.empty()) add_applied_section(trees[pos], view);
    gpus.children.push_back(std::move(trees[pos]));
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
