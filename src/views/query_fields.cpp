#include "views/query_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <tuple>

#include "output/value_json.h"
#include "util/error.h"
#include "util/text.h"

namespace gpuclk::views {
namespace {

using gpu::ClockDomain;
using gpu::ClockReasons;
using gpu::Device;
using gpu::DeviceSet;
namespace out = output;

out::Value reason_state(const Device& d, std::uint64_t bit) {
  auto r = d.clock_reasons();
  return r ? out::text(r->has(bit) ? "Active" : "Not Active") : out::na();
}

out::Value peak(const Device& d, gpu::DataType t, bool at_current_clock) {
  const auto& id = d.identity();
  const auto& limits = d.clock_limits();
  if (!id.arch || !id.sm_count) return out::na();
  auto clock = at_current_clock ? d.clock(ClockDomain::sm) : limits.max(ClockDomain::sm);
  if (!clock || id.arch->flop_per_clock(t) == 0) return out::na();
  return out::number(gpu::peak_flops(*id.arch, t, *id.sm_count, *clock).value() / 1e12, "TFLOP/s",
                     1);
}

// The field list build() fills: add() as nvidia-smi names a field, its aliases, unit, help and
// reader.
class FieldList {
 public:
  template <class Read>
  void operator()(std::string name, std::vector<std::string> aliases, std::string unit,
                  std::string description, Read read) {
    // Clock domains whose nvidia-smi nickname is their name ("sm") get no alias.
    std::erase(aliases, name);
    fields.push_back(
        {std::move(name), std::move(aliases), std::move(unit), std::move(description), read});
  }
  std::vector<QueryField> fields;
};

// Identity, driver and modes.
void add_identity(FieldList& add) {
  add("timestamp", {}, "", "time of the query, as nvidia-smi prints it",
      [](const Device&, const DeviceSet&) {
        // localtime_r: the service reads this on its refresher while civetweb's workers format
        // dates (gmtime's static buffer is localtime's too; ThreadSanitizer found the race).
        const auto now = std::time(nullptr);
        std::tm local{};
        localtime_r(&now, &local);
        char buf[64];
        std::strftime(buf, sizeof buf, "%Y/%m/%d %H:%M:%S", &local);
        return out::text(buf);
      });
  add("driver_version", {}, "", "NVIDIA driver version",
      [](const Device&, const DeviceSet& s) { return out::from(s.driver_version()); });
  add("count", {}, "", "number of GPUs",
      [](const Device&, const DeviceSet& s) { return out::integer((long long)s.size()); });
  add("index", {}, "", "GPU index (NVML order)",
      [](const Device& d, const DeviceSet&) { return out::integer(d.index()); });
  add("name", {"gpu_name"}, "", "product name",
      [](const Device& d, const DeviceSet&) { return out::text(d.name()); });
  add("uuid", {"gpu_uuid"}, "", "globally unique id",
      [](const Device& d, const DeviceSet&) { return out::text(d.uuid()); });
  add("serial", {}, "", "board serial number",
      [](const Device& d, const DeviceSet&) { return out::from(d.identity().serial); });
  add("pci.bus_id", {"gpu_bus_id"}, "", "PCI bus id domain:bus:device.function",
      [](const Device& d, const DeviceSet&) {
        return d.identity().pci ? out::text(d.identity().pci->bus_id) : out::na();
      });
  add("compute_cap", {}, "", "CUDA compute capability", [](const Device& d, const DeviceSet&) {
    const auto& cc = d.identity().compute_capability;
    return cc ? out::text(fmt::format("{}.{}", cc->major, cc->minor)) : out::na();
  });
  add("sm_count", {}, "", "streaming multiprocessors",
      [](const Device& d, const DeviceSet&) { return out::from(d.identity().sm_count); });
  add("pstate", {}, "", "performance state P0 (max) .. P12 (min)",
      [](const Device& d, const DeviceSet&) {
        auto p = d.pstate();
        return p ? out::text("P" + std::to_string(*p)) : out::na();
      });
  add("persistence_mode", {}, "", "Enabled or Disabled", [](const Device& d, const DeviceSet&) {
    auto p = d.persistence_mode();
    return p ? out::text(*p ? "Enabled" : "Disabled") : out::na();
  });
  add("compute_mode", {}, "", "Default, Exclusive_Thread, Prohibited, Exclusive_Process",
      [](const Device& d, const DeviceSet&) {
        static const char* names[] = {"Default", "Exclusive_Thread", "Prohibited",
                                      "Exclusive_Process"};
        auto m = d.compute_mode();
        return m && *m >= 0 && *m < 4 ? out::text(names[*m]) : out::na();
      });
}

// Clocks and clock event reasons.
void add_clocks(FieldList& add) {
  struct ClockSpec {
    const char* key;
    const char* nick;
    ClockDomain domain;
  };
  const ClockSpec clocks[] = {{"graphics", "gr", ClockDomain::graphics},
                              {"sm", "sm", ClockDomain::sm},
                              {"memory", "mem", ClockDomain::memory},
                              {"video", "video", ClockDomain::video}};
  for (const auto& c : clocks) {
    auto domain = c.domain;
    add(fmt::format("clocks.{}", c.nick), {fmt::format("clocks.current.{}", c.key)}, "MHz",
        fmt::format("current {} clock", c.key),
        [domain](const Device& d, const DeviceSet&) { return out::mhz(d.clock(domain)); });
    add(fmt::format("clocks.max.{}", c.nick), {fmt::format("clocks.max.{}", c.key)}, "MHz",
        fmt::format("maximum {} clock", c.key), [domain](const Device& d, const DeviceSet&) {
          return out::mhz(d.clock_limits().max(domain));
        });
    if (domain == ClockDomain::video) continue;
    add(fmt::format("clocks.max_boost.{}", c.nick), {fmt::format("clocks.max_boost.{}", c.key)},
        "MHz", fmt::format("maximum customer boost {} clock (gpuclk)", c.key),
        [domain](const Device& d, const DeviceSet&) {
          return out::mhz(d.clock_limits().max_boost_clock[int(domain)]);
        });
    if (domain == ClockDomain::sm) continue;
    add(fmt::format("clocks.applications.{}", c.key),
        {fmt::format("clocks.applications.{}", c.nick)}, "MHz",
        fmt::format("application {} clock (the target under load)", c.key),
        [domain](const Device& d, const DeviceSet&) { return out::mhz(d.app_clock(domain)); });
    add(fmt::format("clocks.default_applications.{}", c.key),
        {fmt::format("clocks.default_applications.{}", c.nick)}, "MHz",
        fmt::format("default application {} clock", c.key),
        [domain](const Device& d, const DeviceSet&) {
          return out::mhz(d.clock_limits().default_app_clock[int(domain)]);
        });
  }

  add("clocks_event_reasons.active", {"clocks_throttle_reasons.active"}, "",
      "bitmask of active clock event reasons", [](const Device& d, const DeviceSet&) {
        auto r = d.clock_reasons();
        return r ? out::text(fmt::format("0x{:016X}", r->bits())) : out::na();
      });
  add("clocks_event_reasons.supported", {"clocks_throttle_reasons.supported"}, "",
      "bitmask of supported clock event reasons", [](const Device& d, const DeviceSet&) {
        const auto& r = d.identity().supported_clock_reasons;
        return r ? out::text(fmt::format("0x{:016X}", r->bits())) : out::na();
      });
  add("clocks_event_reasons.names", {}, "", "active clock event reasons by name (gpuclk)",
      [](const Device& d, const DeviceSet&) {
        auto r = d.clock_reasons();
        return r ? out::text(r->names(" ")) : out::na();
      });
  for (const auto& r : gpu::clock_reasons()) {
    auto bit = r.bit;
    add(fmt::format("clocks_event_reasons.{}", r.key),
        {fmt::format("clocks_throttle_reasons.{}", r.key)}, "", std::string(r.meaning),
        [bit](const Device& d, const DeviceSet&) { return reason_state(d, bit); });
  }
}

// Power, energy, temperature, fan and utilization.
void add_power_temperature_utilization(FieldList& add) {
  add("power.draw", {"power.draw.average"}, "W",
      "power draw (the driver's reading; a 1 s average on Hopper)",
      [](const Device& d, const DeviceSet&) { return out::watts(d.power_draw()); });
  add("memory.power.draw.average", {}, "W",
      "the memory's share of power.draw, a 1 s average (gpuclk; H100 and later, as "
      "nvidia-smi's module.power.draw.average is the module's)",
      [](const Device& d, const DeviceSet&) { return out::watts(d.memory_power()); });
  add("power.limit", {"power.management_limit"}, "W", "power limit set",
      [](const Device& d, const DeviceSet&) { return out::watts(d.power_limit()); });
  add("enforced.power.limit", {}, "W", "power limit in force",
      [](const Device& d, const DeviceSet&) { return out::watts(d.enforced_power_limit()); });
  add("power.default_limit", {}, "W", "default power limit", [](const Device& d, const DeviceSet&) {
    return out::watts(d.ratings().default_power_limit);
  });
  add("power.min_limit", {}, "W", "lowest power limit allowed",
      [](const Device& d, const DeviceSet&) {
        const auto& c = d.ratings().power_constraints;
        return c ? out::number(c->min.value(), "W", 2) : out::na();
      });
  add("power.max_limit", {}, "W", "highest power limit allowed",
      [](const Device& d, const DeviceSet&) {
        const auto& c = d.ratings().power_constraints;
        return c ? out::number(c->max.value(), "W", 2) : out::na();
      });
  add("energy.total", {"total_energy_consumption"}, "J",
      "energy since the driver loaded (gpuclk; slow read)", [](const Device& d, const DeviceSet&) {
        auto e = d.energy();
        return e ? out::number(e->value(), "J", 3) : out::na();
      });
  add("temperature.gpu", {}, "", "GPU core temperature, degrees C",
      [](const Device& d, const DeviceSet&) {
        auto t = d.temperature();
        return t ? out::integer((long long)t->value()) : out::na();
      });
  // dmon's JSON has it under this name too (nvidia-smi's: HBM/GDDR temperature).
  add("temperature.memory", {}, "", "memory (HBM) temperature, degrees C",
      [](const Device& d, const DeviceSet&) {
        auto t = d.memory_temperature();
        return t ? out::integer((long long)t->value()) : out::na();
      });
  add("temperature.gpu.tlimit.slowdown", {}, "", "slowdown temperature, degrees C (gpuclk)",
      [](const Device& d, const DeviceSet&) {
        const auto& t = d.ratings().thresholds.slowdown;
        return t ? out::integer((long long)t->value()) : out::na();
      });
  add("fan.speed", {}, "%", "fan speed",
      [](const Device& d, const DeviceSet&) { return out::percent(d.fan_speed()); });
  add("utilization.gpu", {}, "%", "time a kernel ran over the last sample period",
      [](const Device& d, const DeviceSet&) {
        auto u = d.utilization();
        return u ? out::percent(gpu::Reading<units::Ratio>(u->gpu)) : out::na();
      });
  add("utilization.memory", {}, "%", "time memory was read or written",
      [](const Device& d, const DeviceSet&) {
        auto u = d.utilization();
        return u ? out::percent(gpu::Reading<units::Ratio>(u->memory)) : out::na();
      });
}

// Device memory and the PCIe link.
void add_memory_pcie(FieldList& add) {
  auto memory = [](auto pick) {
    return [pick](const Device& d, const DeviceSet&) {
      auto m = d.memory();
      return m ? out::mebibytes(gpu::Reading<units::Bytes>(pick(*m))) : out::na();
    };
  };
  add("memory.total", {}, "MiB", "total device memory",
      memory([](const gpu::MemoryUsage& m) { return m.total; }));
  add("memory.used", {}, "MiB", "device memory in use",
      memory([](const gpu::MemoryUsage& m) { return m.used; }));
  add("memory.free", {}, "MiB", "free device memory",
      memory([](const gpu::MemoryUsage& m) { return m.free; }));
  add("pcie.link.gen.current", {"pcie.link.gen.gpucurrent"}, "", "current PCIe generation",
      [](const Device& d, const DeviceSet&) {
        auto l = d.pcie_link();
        return l ? out::integer(l->generation) : out::na();
      });
  add("pcie.link.gen.max", {}, "", "maximum PCIe generation of GPU and slot",
      [](const Device& d, const DeviceSet&) {
        const auto& l = d.ratings().pcie_max;
        return l ? out::integer(l->generation) : out::na();
      });
  add("pcie.link.width.current", {}, "", "current PCIe lanes",
      [](const Device& d, const DeviceSet&) {
        auto l = d.pcie_link();
        return l ? out::integer(l->width) : out::na();
      });
  add("pcie.link.width.max", {}, "", "maximum PCIe lanes", [](const Device& d, const DeviceSet&) {
    const auto& l = d.ratings().pcie_max;
    return l ? out::integer(l->width) : out::na();
  });
}

// ECC mode and error counts.
void add_ecc(FieldList& add) {
  add("ecc.mode.current", {}, "", "Enabled or Disabled", [](const Device& d, const DeviceSet&) {
    auto e = d.ecc_enabled();
    return e ? out::text(*e ? "Enabled" : "Disabled") : out::na();
  });
  // nvidia-smi's four ECC totals: corrected or not, since the driver loaded (volatile) or over
  // the GPU's life (aggregate).
  for (const auto& [name, what, uncorrected, aggregate] :
       {std::tuple{"ecc.errors.corrected.volatile.total",
                   "corrected ECC errors since the driver "
                   "loaded",
                   false, false},
        std::tuple{"ecc.errors.uncorrected.volatile.total",
                   "uncorrected ECC errors since the "
                   "driver loaded",
                   true, false},
        std::tuple{"ecc.errors.corrected.aggregate.total",
                   "corrected ECC errors over the GPU's "
                   "life",
                   false, true},
        std::tuple{"ecc.errors.uncorrected.aggregate.total",
                   "uncorrected ECC errors over the "
                   "GPU's life",
                   true, true}}) {
    const bool want_uncorrected = uncorrected, want_aggregate = aggregate;
    add(name, {}, "", what, [=](const Device& d, const DeviceSet&) {
      auto e = d.ecc_errors(want_uncorrected, want_aggregate);
      return e ? out::integer((long long)*e) : out::na();
    });
  }
}

void add_nvlink(FieldList& add) {
  // NVLink (gpuclk's: nvidia-smi has no --query-gpu field for links; `nvidia-smi nvlink -s/-e/-gt
  // d` prints the same figures). N/A on GPUs without NVLink.
  add("nvlink.link_count", {"nvlink.links"}, "", "NVLinks the GPU has (gpuclk)",
      [](const Device& d, const DeviceSet&) {
        const auto& l = d.nvlinks().links;
        return l ? out::integer((long long)l->size()) : out::na();
      });
  add("nvlink.active", {"nvlink.links.active"}, "", "NVLinks up now (gpuclk)",
      [](const Device& d, const DeviceSet&) {
        const auto& l = d.nvlinks().links;
        if (!l) return out::na();
        long long up = 0;
        for (const auto& c : d.nvlink_counters(gpu::NvLinkRead::state))
          up += c.active.value_or(false) ? 1 : 0;
        return out::integer(up);
      });
  add("nvlink.version", {}, "", "NVLink version, as nvidia-smi nvlink -s (gpuclk)",
      [](const Device& d, const DeviceSet&) {
        const auto& l = d.nvlinks().links;
        return l && !l->empty() ? out::from(l->front().version) : out::na();
      });
  add("nvlink.speed", {}, "GB/s", "speed of one link per direction (gpuclk)",
      [](const Device& d, const DeviceSet&) {
        const auto& l = d.nvlinks().links;
        if (!l || l->empty() || !l->front().gigabytes_per_s) return out::na();
        return out::number(*l->front().gigabytes_per_s, "GB/s", 3);
      });
  add("nvlink.bandwidth", {}, "GB/s",
      "the active links together, per direction: count x speed (gpuclk)",
      [](const Device& d, const DeviceSet&) {
        const auto& l = d.nvlinks().links;
        if (!l) return out::na();
        // Up now (the counters' read), at each link's speed (the probe's).
        const auto counters = d.nvlink_counters(gpu::NvLinkRead::state);
        double total = 0;
        for (std::size_t k = 0; k < counters.size() && k < l->size(); ++k) {
          if (counters[k].active.value_or(false) && (*l)[k].gigabytes_per_s)
            total += *(*l)[k].gigabytes_per_s;
        }
        return out::number(total, "GB/s", 1);
      });
  struct ErrorField {
    const char* key;
    gpu::NvLinkError kind;
    const char* what;
  };
  for (const ErrorField& e :
       {ErrorField{"replay", gpu::NvLinkError::replay, "DL replay errors"},
        ErrorField{"recovery", gpu::NvLinkError::recovery, "DL recovery errors"},
        ErrorField{"crc", gpu::NvLinkError::crc, "DL CRC (flit) errors"},
        ErrorField{"ecc", gpu::NvLinkError::ecc, "DL data ECC errors"}}) {
    const auto kind = e.kind;
    add(fmt::format("nvlink.errors.{}", e.key), {}, "",
        fmt::format("{} since the driver loaded, every link summed (gpuclk)", e.what),
        [kind](const Device& d, const DeviceSet&) {
          const auto counters = d.nvlink_counters(gpu::NvLinkRead::errors);
          std::optional<long long> total;
          for (const auto& c : counters) {
            if (const auto& n = c.errors[std::size_t(kind)])
              total = total.value_or(0) + (long long)*n;
          }
          return total ? out::integer(*total) : out::na();
        });
  }
  for (const bool tx : {true, false}) {
    add(tx ? "nvlink.tx_data" : "nvlink.rx_data", {}, "KiB",
        fmt::format("data {} over NVLink since the driver loaded, every link (gpuclk; "
                    "nvidia-smi nvlink -gt d)",
                    tx ? "sent" : "received"),
        [tx](const Device& d, const DeviceSet&) {
          std::optional<long long> total;
          for (const auto& c : d.nvlink_counters(gpu::NvLinkRead::data)) {
            if (const auto& b = tx ? c.tx_bytes : c.rx_bytes)
              total = total.value_or(0) + (long long)(*b / 1024);
          }
          return total ? out::integer(*total, "KiB") : out::na();
        });
  }
}

void add_retired_pages_and_peaks(FieldList& add) {
  // Page retirement (pre-Ampere; N/A on GPUs that remap rows), with nvidia-smi's names.
  add("retired_pages.sbe", {"retired_pages.single_bit_ecc.count"}, "",
      "pages retired after repeated single-bit ECC errors", [](const Device& d, const DeviceSet&) {
        auto p = d.retired_pages();
        return p ? out::integer(p->multiple_sbe) : out::na();
      });
  add("retired_pages.dbe", {"retired_pages.double_bit.count"}, "",
      "pages retired after double-bit ECC errors", [](const Device& d, const DeviceSet&) {
        auto p = d.retired_pages();
        return p ? out::integer(p->dbe) : out::na();
      });
  add("retired_pages.pending", {}, "", "Yes: a retired page is still in use until the GPU resets",
      [](const Device& d, const DeviceSet&) {
        auto p = d.retired_pages();
        return p ? out::text(p->pending ? "Yes" : "No") : out::na();
      });
  for (auto t : gpu::kAllDataTypes) {
    auto name = std::string(gpu::to_string(t));
    add(fmt::format("peak.{}.max", name), {}, "TFLOP/s",
        fmt::format("{} dense peak at the max SM clock (gpuclk)", name),
        [t](const Device& d, const DeviceSet&) { return peak(d, t, false); });
    add(fmt::format("peak.{}.current", name), {}, "TFLOP/s",
        fmt::format("{} dense peak at the current SM clock (gpuclk)", name),
        [t](const Device& d, const DeviceSet&) { return peak(d, t, true); });
  }
}

std::vector<QueryField> build() {
  FieldList add;
  add_identity(add);
  add_clocks(add);
  add_power_temperature_utilization(add);
  add_memory_pcie(add);
  add_ecc(add);
  add_nvlink(add);
  add_retired_pages_and_peaks(add);
  return std::move(add.fields);
}

std::string normalize(std::string_view s) { return text::lower_without_space(s); }

}  // namespace

const std::vector<QueryField>& query_fields() {
  static const std::vector<QueryField> fields = build();
  return fields;
}

std::vector<const QueryField*> parse_query_fields(std::string_view list) {
  std::vector<const QueryField*> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    auto comma = list.find(',', start);
    auto item = normalize(list.substr(start, comma == list.npos ? list.npos : comma - start));
    start = comma == list.npos ? list.size() + 1 : comma + 1;
    if (item.empty())
      throw bad_argument(fmt::format("empty field name in '{}'", list),
                         "fields are comma separated, e.g. clocks.sm,power.draw");
    const QueryField* found = nullptr;
    for (const auto& f : query_fields()) {
      if (f.name == item ||
          std::find(f.aliases.begin(), f.aliases.end(), item) != f.aliases.end()) {
        found = &f;
        break;
      }
    }
    if (!found) {
      std::vector<std::pair<std::size_t, std::string>> near;
      for (const auto& f : query_fields())
        near.emplace_back(text::edit_distance(item, f.name), f.name);
      std::sort(near.begin(), near.end());
      throw bad_argument(
          fmt::format("unknown field '{}'", item),
          fmt::format("did you mean {}, {} or {}? `gpuclk query --help-fields` lists all",
                      near[0].second, near[1].second, near[2].second));
    }
    out.push_back(found);
  }
  return out;
}

nlohmann::json read_all_query_fields(const gpu::Device& device, const gpu::DeviceSet& set) {
  nlohmann::json row = nlohmann::json::object();
  for (const auto& f : query_fields()) row[f.name] = to_json(f.read(device, set));
  return row;
}

}  // namespace gpuclk::views
