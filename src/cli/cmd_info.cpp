// `gpuclk info`: the inventory — CPU, driver, and each GPU's architecture, limits, peaks, link.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/service_views.h"
#include "gpu/arch.h"
#include "gpu/simulator.h"
#include "host/cpu.h"
#include "serve/client.h"

namespace gpuclk::cli {
namespace {

using gpu::ClockDomain;
namespace out = output;

out::Value tflops(double flops) { return out::number(flops / 1e12, "TFLOP/s", 1); }

}  // namespace

out::Node info_host_tree(Context& ctx, const host::CpuInfo& cpu) {
  out::Node h{"host", "Host", {}, {}, false};
  auto& c = h.section("cpu", "CPU");
  // On a simulated node, its host (the scenario's CPUs and NUMA nodes, which the GPUs' affinity
  // below refers to), never this machine's mixed in.
  c.add("source", "Source", out::text(cpu.source));
  const auto count = [](unsigned n) { return n > 0 ? out::integer(n) : out::na(); };
  c.add("vendor", "Vendor", cpu.vendor.empty() ? out::na() : out::text(cpu.vendor));
  c.add("model", "Model", cpu.model.empty() ? out::na() : out::text(cpu.model));
  c.add("microarchitecture", "Microarchitecture",
        cpu.microarchitecture.empty() ? out::na() : out::text(cpu.microarchitecture));
  c.add("sockets", "Sockets", count(cpu.sockets));
  c.add("cores", "Cores", count(cpu.cores));
  c.add("threads", "Threads", count(cpu.threads));
  auto& numa = c.section("numa_nodes", "NUMA Nodes", true);
  for (const auto& n : cpu.numa_nodes) {
    auto& node = numa.section("node", fmt::format("Node {}", n.os_index));
    node.add("index", "Index", out::integer(n.os_index));
    node.add("cpus", "CPUs", out::text(host::cpu_list(n.cpus)));
  }
  auto& set = ctx.devices();
  h.add("driver_version", "Driver Version", out::from(set.driver_version()));
  h.add("nvml_version", "NVML Version", out::from(set.nvml_version()));
  auto cuda = set.cuda_driver_version();
  h.add("cuda_driver_version", "CUDA Driver Version",
        cuda ? out::text(fmt::format("{}.{}", *cuda / 1000, (*cuda % 1000) / 10)) : out::na());
  h.add("nvml_library", "NVML Library", out::text(gpu::nvml_library_path(ctx.nvml())));
  h.add("simulated", "Simulated", out::flag(ctx.simulated()));
  h.add("gpu_count", "Attached GPUs", out::integer((long long)set.size()));
  return h;
}

namespace {

// Dense peaks per data type, at the max SM clock and at the clock it runs now.
void add_peaks(out::Node& n, const gpu::Device& d,
               const gpu::Reading<units::Megahertz>& current_sm) {
  const auto& id = d.identity();
  const auto& limits = d.clock_limits();
  auto& peaks = n.section("peak", "Peak (dense)");
  for (auto t : gpu::kAllDataTypes) {
    auto& p = peaks.section(std::string(gpu::to_string(t)), std::string(gpu::to_string(t)));
    bool known = id.arch && id.sm_count && id.arch->flop_per_clock(t) > 0;
    p.add("flop_per_clock_per_sm", "FLOP/clock/SM",
          known ? out::integer((long long)id.arch->flop_per_clock(t)) : out::na());
    p.add(
        "at_max_clock", "At Max Clock",
        known && limits.max(ClockDomain::sm)
            ? tflops(
                  gpu::peak_flops(*id.arch, t, *id.sm_count, *limits.max(ClockDomain::sm)).value())
            : out::na());
    p.add("at_current_clock", "At Current Clock",
          known && current_sm
              ? tflops(gpu::peak_flops(*id.arch, t, *id.sm_count, *current_sm).value())
              : out::na());
  }
}

// NVLink: what the links are (probed once) and how many are up now.
void add_nvlink(out::Node& n, const gpu::Device& d) {
  auto& nvlink = n.section("nvlink", "NVLink");
  const auto& links = d.nvlinks().links;
  if (links && !links->empty()) {
    const auto counters = d.nvlink_counters(gpu::NvLinkRead::state);
    long long up = 0;
    double bandwidth = 0;
    for (std::size_t k = 0; k < links->size(); ++k) {
      const auto& f = (*links)[k];
      if (!(k < counters.size() && counters[k].active ? *counters[k].active : f.active)) continue;
      ++up;
      bandwidth += f.gigabytes_per_s.value_or(0);
    }
    nvlink.add("links", "Links", out::integer((long long)links->size()));
    nvlink.add("links_up", "Links Up", out::integer(up));
    nvlink.add("version", "Version", out::from(links->front().version));
    nvlink.add("speed", "Speed per Link",
               links->front().gigabytes_per_s
                   ? out::number(*links->front().gigabytes_per_s, "GB/s", 3)
                   : out::na());
    nvlink.add("bandwidth", "Bandwidth (links up)", out::number(bandwidth, "GB/s", 1));
  } else {
    nvlink.add("links", "Links", links ? out::integer(0) : out::na());
  }
}

}  // namespace

out::Node info_gpu_tree(const gpu::Device& d, const host::CpuInfo& cpu) {
  const auto& id = d.identity();
  const auto& limits = d.clock_limits();
  const auto& ratings = d.ratings();
  out::Node n;
  n.key = "gpu";
  n.label = fmt::format("GPU {}: {}", d.index(), d.name());
  n.add("index", "Index", out::integer(d.index()));
  n.add("name", "Name", out::text(d.name()));
  n.add("uuid", "UUID", out::text(d.uuid()));
  n.add("serial", "Serial", out::from(id.serial));
  n.add("pci_bus_id", "PCI Bus Id", id.pci ? out::text(id.pci->bus_id) : out::na());
  n.add("pci_device_id", "PCI Device Id",
        id.pci ? out::text(fmt::format("0x{:08X}", id.pci->device_id)) : out::na());
  n.add("architecture", "Architecture",
        id.arch ? out::text(std::string(id.arch->family)) : out::na());
  n.add("compute_capability", "Compute Capability",
        id.compute_capability ? out::text(fmt::format("{}.{}", id.compute_capability->major,
                                                      id.compute_capability->minor))
                              : out::na());
  n.add("sm_count", "SMs", out::from(id.sm_count));
  n.add("cuda_cores", "CUDA Cores", out::from(id.cuda_cores));

  auto& mem = n.section("memory", "Memory");
  mem.add("total", "Total", out::mebibytes(id.memory_total));
  mem.add("bus_width", "Bus Width", out::from(id.memory_bus_width, "bit"));
  mem.add("max_clock", "Max Clock", out::mhz(limits.max(ClockDomain::memory)));
  if (id.memory_bus_width && limits.max(ClockDomain::memory)) {
    auto bw = gpu::peak_memory_bandwidth(*limits.max(ClockDomain::memory), *id.memory_bus_width);
    mem.add("peak_bandwidth", "Peak Bandwidth", out::number(bw.value() / 1e9, "GB/s", 0));
  } else {
    mem.add("peak_bandwidth", "Peak Bandwidth", out::na());
  }

  auto& clocks = n.section("clocks", "Clocks");
  clocks.add("max_sm", "Max SM", out::mhz(limits.max(ClockDomain::sm)));
  clocks.add("max_boost_sm", "Max Boost SM",
             out::mhz(limits.max_boost_clock[int(ClockDomain::sm)]));
  clocks.add("default_applications_graphics", "Default Applications Graphics",
             out::mhz(limits.default_app_clock[int(ClockDomain::graphics)]));
  clocks.add("default_applications_memory", "Default Applications Memory",
             out::mhz(limits.default_app_clock[int(ClockDomain::memory)]));
  auto current_sm = d.clock(ClockDomain::sm);
  clocks.add("current_sm", "Current SM", out::mhz(current_sm));

  add_peaks(n, d, current_sm);

  auto& power = n.section("power", "Power");
  power.add("default_limit", "Default Limit", out::watts(ratings.default_power_limit));
  power.add("limit", "Current Limit", out::watts(d.power_limit()));
  power.add("min_limit", "Min Limit",
            ratings.power_constraints ? out::number(ratings.power_constraints->min.value(), "W", 2)
                                      : out::na());
  power.add("max_limit", "Max Limit",
            ratings.power_constraints ? out::number(ratings.power_constraints->max.value(), "W", 2)
                                      : out::na());

  auto& temp = n.section("temperature_limits", "Temperature Limits");
  temp.add("slowdown", "Slowdown", out::celsius(ratings.thresholds.slowdown));
  temp.add("shutdown", "Shutdown", out::celsius(ratings.thresholds.shutdown));
  temp.add("gpu_max", "GPU Max Operating", out::celsius(ratings.thresholds.gpu_max));
  temp.add("memory_max", "Memory Max Operating", out::celsius(ratings.thresholds.memory_max));

  auto& pcie = n.section("pcie", "PCIe");
  auto link = d.pcie_link();
  pcie.add("generation_current", "Generation Current",
           link ? out::integer(link->generation) : out::na());
  pcie.add("generation_max", "Generation Max",
           ratings.pcie_max ? out::integer(ratings.pcie_max->generation) : out::na());
  pcie.add("generation_gpu_max", "Generation GPU Max", out::from(ratings.pcie_gpu_max_generation));
  pcie.add("width_current", "Width Current", link ? out::integer(link->width, "x") : out::na());
  pcie.add("width_max", "Width Max",
           ratings.pcie_max ? out::integer(ratings.pcie_max->width, "x") : out::na());

  add_nvlink(n, d);

  auto& aff = n.section("affinity", "Affinity");
  const auto& aff_of = d.affinity();
  aff.add("cpus", "CPUs",
          aff_of.cpu_affinity ? out::text(host::cpu_list(*aff_of.cpu_affinity)) : out::na());
  if (aff_of.cpu_affinity) {
    auto nodes = host::numa_nodes_for(cpu, *aff_of.cpu_affinity);
    aff.add("numa_nodes", "NUMA Nodes",
            nodes.empty() ? out::na() : out::text(host::cpu_list(nodes)));
  } else {
    aff.add("numa_nodes", "NUMA Nodes", out::na());
  }
  aff.add("gpu_numa_id", "GPU NUMA Id", out::from(aff_of.numa_node));
  return n;
}

namespace {

int run_info(Context& ctx) {
  out::Node root;
  if (auto* service = ctx.service()) {
    auto view = service->info_view();
    root.children.push_back(std::move(view.host));
    auto& gpus = root.section("gpus", "GPUs", true);
    for (auto pos : ctx.select_from(view.gpus)) gpus.children.push_back(view.rows.at(pos));
  } else {
    const auto cpu = ctx.host_cpu();
    root.children.push_back(info_host_tree(ctx, cpu));
    auto& gpus = root.section("gpus", "GPUs", true);
    for (const auto* d : ctx.selected()) gpus.children.push_back(info_gpu_tree(*d, cpu));
  }
  auto& gpus = root.children.back();
  if (ctx.format().kind == out::Format::Kind::json) {
    ctx.printer()->print_tree(root);
  } else {
    // Human and CSV: the host, then each GPU as its own top-level block.
    out::Node flat;
    flat.children.push_back(root.children.front());
    for (auto& g : gpus.children) flat.children.push_back(g);
    ctx.printer()->print_tree(flat);
  }
  return 0;
}

}  // namespace

void add_info_command(CLI::App& app, Context& ctx) {
  auto* sub =
      app.add_subcommand("info",
                         "Inventory: CPU, driver, and per GPU the architecture, SMs, "
                         "memory, max clocks, peak FLOP/s per data type, PCIe link, affinity");
  sub->callback([&ctx] { ctx.run = [&ctx] { return run_info(ctx); }; });
}

}  // namespace gpuclk::cli
