// The simulated H100 against `nvidia-smi -q` on the calibration card (sim_abi_h100_smi_q.txt: a
// real H100 80GB HBM3, driver 580.159.04, idle at its defaults; docs/calibration.md). Each line of
// the record that a static NVML answer prints is rebuilt from the simulator's answer, formatted
// the way nvidia-smi prints it ("N/A" for NOT_SUPPORTED), and must read the same: present vs not
// supported, and the value. Lines that change with time (temperatures, power draw, throughput)
// are left to sim_calibration_test; lines no NVML call of ours answers are not listed.
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "entry_points.gen.h"
#include "sim_abi_fixture.h"

namespace gpuclk::sim::testing {
namespace {

class sim_abi_h100_smi_test : public sim_abi_test {};

// "Section/Subsection/Key" → value, for the GPU block of an `nvidia-smi -q` text.
std::map<std::string, std::string> read_smi_q(const std::string& file) {
  std::ifstream in(file);
  std::map<std::string, std::string> out;
  std::vector<std::string> sections;
  std::string line;
  bool in_gpu = false;
  while (std::getline(in, line)) {
    if (line.rfind("GPU ", 0) == 0) {
      in_gpu = true;
      continue;
    }
    if (!in_gpu || line.find_first_not_of(' ') == std::string::npos) continue;
    const std::size_t depth = (line.find_first_not_of(' ') / 4) - 1;  // GPU's children: 4 spaces
    sections.resize(std::min(sections.size(), depth));
    const std::size_t colon = line.find(" : ");
    auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(' '));
      s.erase(s.find_last_not_of(' ') + 1);
      return s;
    };
    std::string path;
    for (const std::string& s : sections) path += s + "/";
    if (colon == std::string::npos) {
      sections.push_back(trim(line));
    } else {
      out[path + trim(line.substr(0, colon))] = trim(line.substr(colon + 3));
    }
  }
  return out;
}

std::string format(const char* pattern, auto... values) {
  char text[128];
  std::snprintf(text, sizeof text, pattern, values...);
  return text;
}

// An NVML answer as nvidia-smi prints it: the value's text, "N/A" when not supported, the error
// otherwise (so a wrong status shows in the failure message).
std::string shown(nvmlReturn_t status, const std::function<std::string()>& value) {
  if (status == NVML_SUCCESS) return value();
  if (status == NVML_ERROR_NOT_SUPPORTED) return "N/A";
  return format("<NVML error %d>", static_cast<int>(status));
}

std::string enabled(unsigned v) { return v ? "Enabled" : "Disabled"; }
std::string yes_no(unsigned v) { return v ? "Yes" : "No"; }
std::string mhz(unsigned v) { return format("%u MHz", v); }
std::string mib(unsigned long long bytes) { return format("%llu MiB", bytes >> 20); }
std::string watts(unsigned mw) { return format("%.2f W", mw / 1000.0); }
std::string banks(unsigned v) { return format("%u bank(s)", v); }

using Check = std::pair<std::string, std::function<std::string(nvmlDevice_t)>>;

// An unsigned-int getter (device, &value) printed by `print`.
template <typename Fn>
std::function<std::string(nvmlDevice_t)> uint_of(Fn fn, std::string (*print)(unsigned)) {
  return [fn, print](nvmlDevice_t d) {
    unsigned v = 0;
    const nvmlReturn_t s = fn(d, &v);
    return shown(s, [&] { return print(v); });
  };
}

std::string plain(unsigned v) { return std::to_string(v); }

// One member of the struct a (device, &struct) getter fills, printed by `print`; `prepare` sets
// what the caller must set first (a struct version).
template <typename Struct, typename Member, typename Fn>
std::function<std::string(nvmlDevice_t)> member_of(Fn fn, Member Struct::*member,
                                                   std::string (*print)(Member),
                                                   void (*prepare)(Struct&) = nullptr) {
  return [fn, member, print, prepare](nvmlDevice_t d) {
    Struct value{};
    if (prepare) prepare(value);
    const nvmlReturn_t s = fn(d, &value);
    return shown(s, [&] { return print(value.*member); });
  };
}

// The first or second output of a (device, &a, &b) getter, printed by `print`.
template <typename T, typename Fn>
std::function<std::string(nvmlDevice_t)> one_of_two(Fn fn, bool first,
                                                    std::string (*print)(unsigned)) {
  return [fn, first, print](nvmlDevice_t d) {
    T a{}, b{};
    const nvmlReturn_t s = fn(d, &a, &b);
    return shown(s, [&] { return print(static_cast<unsigned>(first ? a : b)); });
  };
}

// A clock of one domain from a (device, type, &mhz) getter.
std::function<std::string(nvmlDevice_t)> clock_of(nvmlReturn_t (*fn)(nvmlDevice_t, nvmlClockType_t,
                                                                     unsigned*),
                                                  nvmlClockType_t type) {
  return [fn, type](nvmlDevice_t d) {
    unsigned v = 0;
    const nvmlReturn_t s = fn(d, type, &v);
    return shown(s, [&] { return mhz(v); });
  };
}

std::string text_of(nvmlReturn_t (*fn)(nvmlDevice_t, char*, unsigned), nvmlDevice_t d) {
  char text[96] = {};
  const nvmlReturn_t s = fn(d, text, sizeof text);
  return shown(s, [&] { return std::string(text); });
}

// The loops copy each table entry into a named variable: clang 14 cannot capture a structured
// binding in a lambda.
std::vector<Check> checks() {
  std::vector<Check> c;
  // Identity and modes.
  c.emplace_back("Product Name",
                 [](nvmlDevice_t d) { return text_of(SIM_FN(nvmlDeviceGetName), d); });
  c.emplace_back("Product Brand", [](nvmlDevice_t d) {
    nvmlBrandType_t brand{};
    const nvmlReturn_t s = SIM_FN(nvmlDeviceGetBrand)(d, &brand);
    return shown(s, [&] { return std::string(brand == NVML_BRAND_NVIDIA ? "NVIDIA" : "?"); });
  });
  c.emplace_back("Product Architecture", [](nvmlDevice_t d) {
    nvmlDeviceArchitecture_t arch = 0;
    const nvmlReturn_t s = SIM_FN(nvmlDeviceGetArchitecture)(d, &arch);
    return shown(s, [&] { return std::string(arch == 9 ? "Hopper" : "?"); });
  });
  c.emplace_back("Display Mode", [](nvmlDevice_t d) {
    nvmlEnableState_t v{};
    const nvmlReturn_t s = SIM_FN(nvmlDeviceGetDisplayMode)(d, &v);
    return s == NVML_ERROR_DEPRECATED ? "Requested functionality has been deprecated"
                                      : shown(s, [&] { return enabled(v); });
  });
  c.emplace_back("Display Active", [](nvmlDevice_t d) {
    nvmlEnableState_t v{};
    const nvmlReturn_t s = SIM_FN(nvmlDeviceGetDisplayActive)(d, &v);
    return shown(s, [&] { return enabled(v); });
  });
  c.emplace_back("Persistence Mode", [](nvmlDevice_t d) {
    nvmlEnableState_t v{};
    const nvmlReturn_t s = SIM_FN(nvmlDeviceGetPersistenceMode)(d, &v);
    return shown(s, [&] { return enabled(v); });
  });
  c.emplace_back("MIG Mode/Current",
                 one_of_two<unsigned>(SIM_FN(nvmlDeviceGetMigMode), true, enabled));
  c.emplace_back("MIG Mode/Pending",
                 one_of_two<unsigned>(SIM_FN(nvmlDeviceGetMigMode), false, enabled));
  c.emplace_back("Accounting Mode", [](nvmlDevice_t d) {
    nvmlEnableState_t v{};
    const nvmlReturn_t s = SIM_FN(nvmlDeviceGetAccountingMode)(d, &v);
    return shown(s, [&] { return enabled(v); });
  });
  c.emplace_back("Accounting Mode Buffer Size",
                 uint_of(SIM_FN(nvmlDeviceGetAccountingBufferSize), plain));
  c.emplace_back("Driver Model/Current", [](nvmlDevice_t d) {
    return shown(SIM_FN(nvmlDeviceGetDriverModel)(d), [] { return std::string("?"); });
  });
  c.emplace_back("Minor Number", uint_of(SIM_FN(nvmlDeviceGetMinorNumber), plain));
  c.emplace_back("VBIOS Version",
                 [](nvmlDevice_t d) { return text_of(SIM_FN(nvmlDeviceGetVbiosVersion), d); });
  c.emplace_back("MultiGPU Board", uint_of(SIM_FN(nvmlDeviceGetMultiGpuBoard), yes_no));
  c.emplace_back("Board ID", uint_of(SIM_FN(nvmlDeviceGetBoardId),
                                     [](unsigned v) { return format("0x%x", v); }));
  c.emplace_back("Board Part Number",
                 [](nvmlDevice_t d) { return text_of(SIM_FN(nvmlDeviceGetBoardPartNumber), d); });
  c.emplace_back("Inforom Version/Image Version", [](nvmlDevice_t d) {
    return text_of(SIM_FN(nvmlDeviceGetInforomImageVersion), d);
  });
  const std::pair<const char*, nvmlInforomObject_t> objects[] = {
      {"Inforom Version/OEM Object", NVML_INFOROM_OEM},
      {"Inforom Version/ECC Object", NVML_INFOROM_ECC},
      {"Inforom Version/Power Management Object", NVML_INFOROM_POWER}};
  for (const auto& entry : objects) {
    const auto object = entry.second;
    c.emplace_back(entry.first, [object](nvmlDevice_t d) {
      char text[64] = {};
      const nvmlReturn_t s = SIM_FN(nvmlDeviceGetInforomVersion)(d, object, text, sizeof text);
      return shown(s, [&] { return std::string(text); });
    });
  }
  c.emplace_back("GPU Operation Mode/Current", [](nvmlDevice_t d) {
    return shown(SIM_FN(nvmlDeviceGetGpuOperationMode)(d), [] { return std::string("?"); });
  });
  c.emplace_back("GSP Firmware Version", [](nvmlDevice_t d) {
    char text[96] = {};
    const nvmlReturn_t s = SIM_FN(nvmlDeviceGetGspFirmwareVersion)(d, text);
    return shown(s, [&] { return std::string(text); });
  });
  c.emplace_back("Fabric/State", [](nvmlDevice_t d) {  // a PCIe card: no NVLink fabric
    return shown(SIM_FN(nvmlDeviceGetGpuFabricInfo)(d), [] { return std::string("?"); });
  });
  c.emplace_back("Compute Mode", [](nvmlDevice_t d) {
    nvmlComputeMode_t v{};
    const nvmlReturn_t s = SIM_FN(nvmlDeviceGetComputeMode)(d, &v);
    return shown(s, [&] { return std::string(v == NVML_COMPUTEMODE_DEFAULT ? "Default" : "?"); });
  });
  c.emplace_back("Performance State", [](nvmlDevice_t d) {
    nvmlPstates_t v{};
    const nvmlReturn_t s = SIM_FN(nvmlDeviceGetPerformanceState)(d, &v);
    return shown(s, [&] { return format("P%d", static_cast<int>(v)); });
  });
  c.emplace_back("Fan Speed", uint_of(SIM_FN(nvmlDeviceGetFanSpeed), plain));
  c.emplace_back("Clock Policy/Auto Boost", [](nvmlDevice_t d) {
    nvmlEnableState_t now{}, fallback{};
    const nvmlReturn_t s = SIM_FN(nvmlDeviceGetAutoBoostedClocksEnabled)(d, &now, &fallback);
    return shown(s, [&] { return enabled(now); });
  });
  c.emplace_back("Processes", [](nvmlDevice_t d) {
    unsigned n = 0;
    const nvmlReturn_t s = SIM_FN(nvmlDeviceGetComputeRunningProcesses_v3)(d, &n, nullptr);
    return shown(s, [&] { return n == 0 ? std::string("None") : std::to_string(n); });
  });
  c.emplace_back("Clocks Event Reasons/Idle", [](nvmlDevice_t d) {
    unsigned long long v = 0;
    const nvmlReturn_t s = SIM_FN(nvmlDeviceGetCurrentClocksEventReasons)(d, &v);
    return shown(s, [&] { return std::string(v & 0x1 ? "Active" : "Not Active"); });
  });

  // PCI and the link.
  const std::pair<const char*, std::string (*)(const nvmlPciInfo_t&)> pci[] = {
      {"PCI/Bus", [](const nvmlPciInfo_t& p) { return format("0x%02X", p.bus); }},
      {"PCI/Device", [](const nvmlPciInfo_t& p) { return format("0x%02X", p.device); }},
      {"PCI/Domain", [](const nvmlPciInfo_t& p) { return format("0x%04X", p.domain); }},
      {"PCI/Device Id", [](const nvmlPciInfo_t& p) { return format("0x%08X", p.pciDeviceId); }},
      {"PCI/Bus Id", [](const nvmlPciInfo_t& p) { return std::string(p.busId); }},
      {"PCI/Sub System Id",
       [](const nvmlPciInfo_t& p) { return format("0x%08X", p.pciSubSystemId); }}};
  for (const auto& entry : pci) {
    const auto print = entry.second;
    c.emplace_back(entry.first, [print](nvmlDevice_t d) {
      nvmlPciInfo_t p{};
      const nvmlReturn_t s = SIM_FN(nvmlDeviceGetPciInfo_v3)(d, &p);
      return shown(s, [&] { return print(p); });
    });
  }
  c.emplace_back("PCI/GPU Link Info/PCIe Generation/Max",
                 uint_of(SIM_FN(nvmlDeviceGetMaxPcieLinkGeneration), plain));
  c.emplace_back("PCI/GPU Link Info/PCIe Generation/Current",
                 uint_of(SIM_FN(nvmlDeviceGetCurrPcieLinkGeneration), plain));
  c.emplace_back("PCI/GPU Link Info/PCIe Generation/Device Max",
                 uint_of(SIM_FN(nvmlDeviceGetGpuMaxPcieLinkGeneration), plain));
  c.emplace_back(
      "PCI/GPU Link Info/Link Width/Max",
      uint_of(SIM_FN(nvmlDeviceGetMaxPcieLinkWidth), [](unsigned v) { return format("%ux", v); }));
  c.emplace_back(
      "PCI/GPU Link Info/Link Width/Current",
      uint_of(SIM_FN(nvmlDeviceGetCurrPcieLinkWidth), [](unsigned v) { return format("%ux", v); }));
  c.emplace_back("PCI/Bridge Chip/Type", [](nvmlDevice_t d) {
    return shown(SIM_FN(nvmlDeviceGetBridgeChipInfo)(d), [] { return std::string("?"); });
  });
  c.emplace_back("PCI/Replays Since Reset", uint_of(SIM_FN(nvmlDeviceGetPcieReplayCounter), plain));

  // Memory.
  const std::pair<const char*, unsigned long long nvmlMemory_v2_t::*> fb[] = {
      {"FB Memory Usage/Total", &nvmlMemory_v2_t::total},
      {"FB Memory Usage/Reserved", &nvmlMemory_v2_t::reserved},
      {"FB Memory Usage/Used", &nvmlMemory_v2_t::used},
      {"FB Memory Usage/Free", &nvmlMemory_v2_t::free}};
  for (const auto& [key, member] : fb) {
    c.emplace_back(key, member_of(
                            SIM_FN(nvmlDeviceGetMemoryInfo_v2), member, mib,
                            +[](nvmlMemory_v2_t& m) { m.version = nvmlMemory_v2; }));
  }
  const std::pair<const char*, unsigned long long nvmlBAR1Memory_t::*> bar1[] = {
      {"BAR1 Memory Usage/Total", &nvmlBAR1Memory_t::bar1Total},
      {"BAR1 Memory Usage/Used", &nvmlBAR1Memory_t::bar1Used},
      {"BAR1 Memory Usage/Free", &nvmlBAR1Memory_t::bar1Free}};
  for (const auto& [key, member] : bar1) {
    c.emplace_back(key, member_of(SIM_FN(nvmlDeviceGetBAR1MemoryInfo), member, mib));
  }
  c.emplace_back("Conf Compute Protected Memory Usage/Total", [](nvmlDevice_t d) {
    nvmlMemory_t m{};
    const nvmlReturn_t s = SIM_FN(nvmlDeviceGetConfComputeProtectedMemoryUsage)(d, &m);
    return shown(s, [&] { return mib(m.total); });
  });

  // Engines.
  using Engine = nvmlReturn_t (*)(nvmlDevice_t, unsigned*, unsigned*);
  const std::pair<const char*, Engine> engines[] = {
      {"Utilization/Encoder", SIM_FN(nvmlDeviceGetEncoderUtilization)},
      {"Utilization/Decoder", SIM_FN(nvmlDeviceGetDecoderUtilization)},
      {"Utilization/JPEG", SIM_FN(nvmlDeviceGetJpgUtilization)},
      {"Utilization/OFA", SIM_FN(nvmlDeviceGetOfaUtilization)}};
  for (const auto& entry : engines) {
    const auto fn = entry.second;
    c.emplace_back(entry.first, [fn](nvmlDevice_t d) {
      unsigned percent = 0, period = 0;
      const nvmlReturn_t s = fn(d, &percent, &period);
      return shown(s, [&] { return format("%u %%", percent); });
    });
  }
  c.emplace_back("Encoder Stats/Active Sessions", [](nvmlDevice_t d) {
    unsigned sessions = 0, fps = 0, latency = 0;
    const nvmlReturn_t s = SIM_FN(nvmlDeviceGetEncoderStats)(d, &sessions, &fps, &latency);
    return shown(s, [&] { return plain(sessions); });
  });
  c.emplace_back("FBC Stats/Active Sessions", [](nvmlDevice_t d) {
    nvmlFBCStats_t stats{};
    const nvmlReturn_t s = SIM_FN(nvmlDeviceGetFBCStats)(d, &stats);
    return shown(s, [&] { return plain(stats.sessionsCount); });
  });

  // ECC, retired pages, remapped rows.
  c.emplace_back("ECC Mode/Current",
                 one_of_two<nvmlEnableState_t>(SIM_FN(nvmlDeviceGetEccMode), true, enabled));
  c.emplace_back("ECC Mode/Pending",
                 one_of_two<nvmlEnableState_t>(SIM_FN(nvmlDeviceGetEccMode), false, enabled));
  // nvidia-smi splits the counters by location: SRAM (caches, register files) and DRAM.
  for (const char* counter : {"Volatile", "Aggregate"}) {
    for (const char* where : {"SRAM", "DRAM"}) {
      for (const char* kind : {"Correctable", "Uncorrectable"}) {
        const std::string key = std::string("ECC Errors/") + counter + "/" + where + " " + kind;
        if (std::string(where) == "SRAM" && std::string(kind) == "Uncorrectable") continue;
        const auto type = std::string(kind) == "Correctable" ? NVML_MEMORY_ERROR_TYPE_CORRECTED
                                                             : NVML_MEMORY_ERROR_TYPE_UNCORRECTED;
        const auto which =
            std::string(counter) == "Volatile" ? NVML_VOLATILE_ECC : NVML_AGGREGATE_ECC;
        const auto location =
            std::string(where) == "SRAM" ? NVML_MEMORY_LOCATION_SRAM : NVML_MEMORY_LOCATION_DRAM;
        c.emplace_back(key, [type, which, location](nvmlDevice_t d) {
          unsigned long long v = 0;
          const nvmlReturn_t s =
              SIM_FN(nvmlDeviceGetMemoryErrorCounter)(d, type, which, location, &v);
          return shown(s, [&] { return std::to_string(v); });
        });
      }
    }
  }
  c.emplace_back("Retired Pages/Single Bit ECC", [](nvmlDevice_t d) {
    unsigned n = 0;
    const nvmlReturn_t s = SIM_FN(nvmlDeviceGetRetiredPages)(d, 0, &n, nullptr);
    return shown(s, [&] { return plain(n); });
  });
  c.emplace_back("Retired Pages/Pending Page Blacklist", [](nvmlDevice_t d) {
    nvmlEnableState_t v{};
    const nvmlReturn_t s = SIM_FN(nvmlDeviceGetRetiredPagesPendingStatus)(d, &v);
    return shown(s, [&] { return yes_no(v); });
  });
  const std::pair<const char*, int> rows[] = {{"Remapped Rows/Correctable Error", 0},
                                              {"Remapped Rows/Uncorrectable Error", 1},
                                              {"Remapped Rows/Pending", 2},
                                              {"Remapped Rows/Remapping Failure Occurred", 3}};
  for (const auto& entry : rows) {
    const auto slot = entry.second;
    c.emplace_back(entry.first, [slot](nvmlDevice_t d) {
      unsigned v[4] = {};
      const nvmlReturn_t s = SIM_FN(nvmlDeviceGetRemappedRows)(d, &v[0], &v[1], &v[2], &v[3]);
      return shown(s, [&] { return slot >= 2 ? yes_no(v[slot]) : plain(v[slot]); });
    });
  }
  const std::pair<const char*, unsigned nvmlRowRemapperHistogramValues_t::*> histogram[] = {
      {"Max", &nvmlRowRemapperHistogramValues_t::max},
      {"High", &nvmlRowRemapperHistogramValues_t::high},
      {"Partial", &nvmlRowRemapperHistogramValues_t::partial},
      {"Low", &nvmlRowRemapperHistogramValues_t::low},
      {"None", &nvmlRowRemapperHistogramValues_t::none}};
  for (const auto& [key, member] : histogram) {
    c.emplace_back(std::string("Remapped Rows/Bank Remap Availability Histogram/") + key,
                   member_of(SIM_FN(nvmlDeviceGetRowRemapperHistogram), member, banks));
  }

  // Power limits.
  c.emplace_back("GPU Power Readings/Current Power Limit",
                 uint_of(SIM_FN(nvmlDeviceGetEnforcedPowerLimit), watts));
  c.emplace_back("GPU Power Readings/Requested Power Limit",
                 uint_of(SIM_FN(nvmlDeviceGetPowerManagementLimit), watts));
  c.emplace_back("GPU Power Readings/Default Power Limit",
                 uint_of(SIM_FN(nvmlDeviceGetPowerManagementDefaultLimit), watts));
  c.emplace_back(
      "GPU Power Readings/Min Power Limit",
      one_of_two<unsigned>(SIM_FN(nvmlDeviceGetPowerManagementLimitConstraints), true, watts));
  c.emplace_back(
      "GPU Power Readings/Max Power Limit",
      one_of_two<unsigned>(SIM_FN(nvmlDeviceGetPowerManagementLimitConstraints), false, watts));
  c.emplace_back("Module Power Readings/Average Power Draw", [](nvmlDevice_t d) {
    nvmlValueType_t type{};
    unsigned n = 0;
    const nvmlReturn_t s =
        SIM_FN(nvmlDeviceGetSamples)(d, NVML_MODULE_POWER_SAMPLES, 0, &type, &n, nullptr);
    return shown(s, [] { return std::string("?"); });
  });

  // Clocks that do not move at idle.
  c.emplace_back("Clocks/Memory", clock_of(SIM_FN(nvmlDeviceGetClockInfo), NVML_CLOCK_MEM));
  const std::pair<const char*, nvmlClockType_t> two[] = {{"Graphics", NVML_CLOCK_GRAPHICS},
                                                         {"Memory", NVML_CLOCK_MEM}};
  for (const auto& entry : two) {
    const auto type = entry.second;
    c.emplace_back(std::string("Applications Clocks/") + entry.first,
                   clock_of(SIM_FN(nvmlDeviceGetApplicationsClock), type));
    c.emplace_back(std::string("Default Applications Clocks/") + entry.first,
                   clock_of(SIM_FN(nvmlDeviceGetDefaultApplicationsClock), type));
  }
  const std::pair<const char*, nvmlClockType_t> four[] = {
      {"Max Clocks/Graphics", NVML_CLOCK_GRAPHICS},
      {"Max Clocks/SM", NVML_CLOCK_SM},
      {"Max Clocks/Memory", NVML_CLOCK_MEM},
      {"Max Clocks/Video", NVML_CLOCK_VIDEO}};
  for (const auto& entry : four) {
    const auto type = entry.second;
    c.emplace_back(entry.first, clock_of(SIM_FN(nvmlDeviceGetMaxClockInfo), type));
  }
  c.emplace_back("Max Customer Boost Clocks/Graphics",
                 clock_of(SIM_FN(nvmlDeviceGetMaxCustomerBoostClock), NVML_CLOCK_GRAPHICS));
  return c;
}

TEST_F(sim_abi_h100_smi_test, reads_what_nvidia_smi_read_on_the_calibration_card) {
  const auto record =
      read_smi_q(std::string(GPUCLK_SOURCE_DIR) + "/tests/unit/sim_abi_h100_smi_q.txt");
  ASSERT_GT(record.size(), 150u);
  expect_passed(in_child(frozen("h100-calibration", "0"), [&record](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    const nvmlDevice_t d = n.handle(0);
    std::size_t compared = 0;
    for (const auto& [key, answer] : checks()) {
      const auto recorded = record.find(key);
      ASSERT_NE(recorded, record.end()) << key << " is not in the record";
      EXPECT_EQ(answer(d), recorded->second) << key;
      ++compared;
    }
    EXPECT_GE(compared, 80u);
  }));
}

// Where the simulated H100 differs from the calibration card on purpose: the card was rented
// as a VM's pass-through GPU; the simulated nodes are bare metal.
TEST_F(sim_abi_h100_smi_test, virtualization_mode_differs_the_card_was_a_vm_pass_through) {
  const auto record =
      read_smi_q(std::string(GPUCLK_SOURCE_DIR) + "/tests/unit/sim_abi_h100_smi_q.txt");
  EXPECT_EQ(record.at("GPU Virtualization Mode/Virtualization Mode"), "Pass-Through");
  expect_passed(in_child(frozen("h100-calibration", "0"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    nvmlGpuVirtualizationMode_t mode{};
    ASSERT_EQ(SIM_FN(nvmlDeviceGetVirtualizationMode)(n.handle(0), &mode), NVML_SUCCESS);
    EXPECT_EQ(mode, NVML_GPU_VIRTUALIZATION_MODE_NONE);
  }));
}

}  // namespace
}  // namespace gpuclk::sim::testing
