#include "host/cpu.h"

#include <fmt/format.h>
#include <hwloc.h>
#include <sched.h>

#include <algorithm>
#include <fstream>

namespace gpuclk::host {
namespace {

struct ModelRange {
  int family, first_model, last_model;
  const char* name;
};

// Server and recent client parts; Intel from its "Intel Architecture and Processor Identification"
// tables (family 6), AMD from its processor programming references (families 17h/19h/1Ah).
constexpr ModelRange kIntel[] = {
    {6, 0x3F, 0x3F, "Haswell"},
    {6, 0x4F, 0x4F, "Broadwell"},
    {6, 0x55, 0x55, "Skylake/Cascade Lake"},
    {6, 0x6A, 0x6C, "Ice Lake"},
    {6, 0x8F, 0x8F, "Sapphire Rapids"},
    {6, 0xCF, 0xCF, "Emerald Rapids"},
    {6, 0xAD, 0xAE, "Granite Rapids"},
    {6, 0xAF, 0xAF, "Sierra Forest"},
    {6, 0x8C, 0x8D, "Tiger Lake"},
    {6, 0x97, 0x9A, "Alder Lake"},
    {6, 0xB7, 0xB7, "Raptor Lake"},
    {6, 0xBA, 0xBA, "Raptor Lake"},
    {6, 0xBF, 0xBF, "Raptor Lake"},
    {6, 0xAA, 0xAC, "Meteor Lake"},
    {6, 0xC5, 0xC6, "Arrow Lake"},
    {6, 0x9E, 0x9E, "Coffee Lake"},
    {6, 0xA5, 0xA5, "Comet Lake"},
};
constexpr ModelRange kAmd[] = {
    {0x17, 0x00, 0x2F, "Zen/Zen+ (Naples)"},
    {0x17, 0x30, 0xFF, "Zen 2 (Rome/Matisse)"},
    {0x19, 0x00, 0x0F, "Zen 3 (Milan)"},
    {0x19, 0x10, 0x1F, "Zen 4 (Genoa)"},
    {0x19, 0x20, 0x5F, "Zen 3"},
    {0x19, 0x60, 0x7F, "Zen 4"},
    {0x19, 0xA0, 0xAF, "Zen 4c (Bergamo/Siena)"},
    {0x1A, 0x00, 0x1F, "Zen 5 (Turin)"},
    {0x1A, 0x20, 0xFF, "Zen 5"},
};

std::string info(hwloc_obj_t obj, const char* name) {
  const char* v = obj ? hwloc_obj_get_info_by_name(obj, name) : nullptr;
  return v ? v : "";
}

int to_int(const std::string& s) {
  try {
    return s.empty() ? -1 : std::stoi(s, nullptr, 0);
  } catch (...) {
    return -1;
  }
}

std::vector<unsigned> cpus_of(hwloc_const_bitmap_t set) {
  std::vector<unsigned> out;
  unsigned i = 0;
  hwloc_bitmap_foreach_begin(i, set) out.push_back(i);
  hwloc_bitmap_foreach_end();
  return out;
}

}  // namespace

std::string microarchitecture(const std::string& vendor, int family, int model) {
  auto find = [&](const auto& table) -> std::string {
    for (const auto& r : table) {
      if (r.family == family && model >= r.first_model && model <= r.last_model) return r.name;
    }
    return {};
  };
  std::string name;
  if (vendor == "GenuineIntel")
    name = find(kIntel);
  else if (vendor == "AuthenticAMD")
    name = find(kAmd);
  if (!name.empty()) return name;
  if (family < 0) return "unknown";
  return fmt::format("unknown (family {} model {})", family, model);
}

std::string cpu_list(const std::vector<unsigned>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out.empty() ? "N/A" : out;
}

CpuInfo read_cpu_info() {
  CpuInfo cpu;
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0) return cpu;
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return cpu;
  }
  cpu.sockets = unsigned(std::max(0, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE)));
  cpu.cores = unsigned(std::max(0, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE)));
  cpu.threads = unsigned(std::max(0, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU)));
  hwloc_obj_t package = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
  hwloc_obj_t root = hwloc_get_root_obj(topo);
  cpu.vendor = info(package, "CPUVendor");
  cpu.model = info(package, "CPUModel");
  if (cpu.vendor.empty()) cpu.vendor = info(root, "CPUVendor");
  if (cpu.model.empty()) cpu.model = info(root, "CPUModel");
  cpu.family = to_int(info(package, "CPUFamilyNumber"));
  cpu.model_number = to_int(info(package, "CPUModelNumber"));
  if (cpu.vendor.empty() && !info(package, "CPUImplementer").empty()) cpu.vendor = "ARM";
  cpu.microarchitecture = microarchitecture(cpu.vendor, cpu.family, cpu.model_number);
  if (cpu.vendor == "ARM") {
    // NVIDIA Grace is Neoverse V2 (part 0xd4f).
    auto part = info(package, "CPUPartNumber");
    cpu.microarchitecture = part == "0xd4f" ? "Neoverse V2 (Grace)" : "Arm (part " + part + ")";
  }
  int numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < numa; ++i) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, unsigned(i));
    cpu.numa_nodes.push_back({node->os_index, cpus_of(node->cpuset)});
  }
  hwloc_topology_destroy(topo);
  return cpu;
}

CpuInfo simulated_cpu_info(unsigned cpus, unsigned numa_nodes, std::string source) {
  CpuInfo cpu;
  cpu.source = std::move(source);
  cpu.threads = cpus;
  const unsigned nodes = std::max(1u, numa_nodes);
  const unsigned per_node = std::max(1u, cpus / nodes);
  for (unsigned k = 0; k < nodes; ++k) {
    NumaNode node{k, {}};
    for (unsigned c = k * per_node; c < (k + 1) * per_node && c < cpus; ++c) node.cpus.push_back(c);
    cpu.numa_nodes.push_back(std::move(node));
  }
  return cpu;
}

}  // namespace gpuclk::host

namespace gpuclk::host {
std::vector<unsigned> numa_nodes_for(const CpuInfo& info, const std::vector<unsigned>& cpus) {
  std::vector<unsigned> out;
  for (const auto& node : info.numa_nodes) {
    bool overlap = std::any_of(cpus.begin(), cpus.end(), [&](unsigned c) {
      return std::find(node.cpus.begin(), node.cpus.end(), c) != node.cpus.end();
    });
    if (overlap) out.push_back(node.os_index);
  }
  return out;
}
}  // namespace gpuclk::host

namespace gpuclk::host {

std::optional<std::vector<unsigned>> process_cpus(unsigned pid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(static_cast<pid_t>(pid), sizeof(set), &set) != 0) return std::nullopt;
  std::vector<unsigned> cpus;
  for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

}  // namespace gpuclk::host
