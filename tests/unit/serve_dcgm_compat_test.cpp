// /metrics under dcgm-exporter's names (src/serve/dcgm_compat.h) over a serve::Node on
// libnvml-sim.so: each DCGM_FI_* family's type, its value in dcgm-exporter's unit against the
// gpuclk_* series of the same text (MHz = Hz / 1e6, mJ = J × 1000, % = ratio × 100, MiB), each
// GPU's labels in dcgm-exporter's spelling with the owners given; the gpuclk_* families are the
// same with the option as without; the last Xid of a GPU that fell off the bus; each set's
// families (name, type, HELP) as its release's default-counters.csv gives them, the older set's
// labels; the option's values checked.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "gpu/device.h"
#include "nvml/api.h"
#include "serve/dcgm_compat.h"
#include "serve/metrics.h"
#include "serve/node.h"
#include "sim_abi_fixture.h"
#include "util/clock.h"
#include "util/error.h"

namespace gpuclk::sim::testing {
namespace {

using namespace std::chrono_literals;

// Named for the service, so scripts/ci/sanitizers.sh's TSan selection ("serve") takes them.
class serve_dcgm_compat_test : public sim_abi_test {};

// A text's families (name → "gauge"/"counter") and series ("name{labels}" → value).
struct Exposition {
  std::map<std::string, std::string> types;
  std::map<std::string, double> series;
  std::vector<std::string> family_order;  // as the HELP lines come
};

Exposition parse_exposition(const std::string& text) {
  Exposition e;
  std::istringstream in(text);
  std::string line;
  const std::regex sample(R"(^([A-Za-z_:][A-Za-z0-9_:]*(\{[^}]*\})?) (\S+)$)");
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0) {
      e.family_order.push_back(line.substr(7, line.find(' ', 7) - 7));
    } else if (line.rfind("# TYPE ", 0) == 0) {
      const auto space = line.find(' ', 7);
      e.types[line.substr(7, space - 7)] = line.substr(space + 1);
    } else {
      std::smatch m;
      if (std::regex_match(line, m, sample))
        e.series[m[1].str()] = std::stod(m[3].str());
      else
        ADD_FAILURE() << "not a sample line: " << line;
    }
  }
  return e;
}

struct Started {
  std::unique_ptr<nvml::Api> api;
  std::unique_ptr<gpu::DeviceSet> set;
  std::unique_ptr<ScaledClock> clock;
  std::unique_ptr<serve::Node> node;
};

Started start_node(const std::filesystem::path& dir, const std::string& scenario) {
  Started s;
  s.api = nvml::Api::open(std::string(GPUCLK_BINARY_DIR) + "/libnvml-sim.so");
  s.set = std::make_unique<gpu::DeviceSet>(*s.api);
  s.clock = std::make_unique<ScaledClock>(1);
  serve::NodeOptions options;
  options.service.simulated = scenario;
  options.service.counters_every = 1;  // two slow samples soon: the NVLink rate needs them
  options.socket_path = (dir / "node.sock").string();
  options.session.journal_dir = dir / "journal";
  options.selected = s.set->all();
  s.node = std::make_unique<serve::Node>(*s.set, *s.clock, options);
  s.node->start();
  return s;
}

TEST_F(serve_dcgm_compat_test, names_units_types_and_labels_match_dcgm_exporter) {
  const auto dir = dir_;
  expect_passed(in_child(
      {{"GPUCLK_SIM_SCENARIO", "2xh200"}, {"GPUCLK_SIM_SPEED", "1"}, {"NODE_NAME", "node-7"}},
      [dir](Nvml&) {
        auto s = start_node(dir, "2xh200");
        std::this_thread::sleep_for(2500ms);  // slow samples a second apart, a state refresh
        const auto& service = s.node->service();

        // Every gpuclk series (--metrics-detail all), to compare the DCGM names' values with.
        serve::MetricsOptions options;
        options.detail = serve::parse_metrics_detail("all");
        serve::MetricsText plain(service, options);
        options.compat = serve::MetricsCompat::dcgm_exporter_4_8;
        options.owners = [] {
          return std::vector<serve::CompatOwner>{{}, {"train-0", "ml", "trainer"}};
        };
        serve::MetricsText compat(service, options);
        const auto text = compat.get();
        const auto plain_text = plain.get();
        const auto e = parse_exposition(*text);
        const auto p = parse_exposition(*plain_text);

        // gpuclk's families first and the same as without the option; DCGM's after them.
        EXPECT_EQ(plain_text->find("DCGM_"), std::string::npos);
        std::vector<std::string> gpuclk_families;
        bool dcgm_seen = false;
        for (const auto& family : e.family_order) {
          if (family.rfind("DCGM_FI_", 0) == 0) {
            dcgm_seen = true;
          } else {
            EXPECT_FALSE(dcgm_seen) << family << " after the DCGM families";
            gpuclk_families.push_back(family);
          }
        }
        EXPECT_EQ(gpuclk_families, p.family_order);

        // Every family of the table but the PCIe rates (read only while a dmon streams them),
        // with dcgm-exporter's type.
        for (const auto& family : serve::dcgm_families(serve::MetricsCompat::dcgm_exporter_4_8)) {
          const std::string name(family.name);
          if (name.find("PCIE_TX_BYTES") != std::string::npos ||
              name.find("PCIE_RX_BYTES") != std::string::npos) {
            EXPECT_EQ(e.types.count(name), 0u) << name << " without a PCIe throughput read";
            continue;
          }
          ASSERT_EQ(e.types.count(name), 1u) << name << " missing";
          EXPECT_EQ(e.types.at(name),
                    family.type == serve::MetricType::counter ? "counter" : "gauge")
              << name;
        }
        EXPECT_EQ(e.types.at("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"), "counter");
        EXPECT_EQ(e.types.at("DCGM_FI_DEV_PCIE_REPLAY_COUNTER"), "counter");
        EXPECT_EQ(e.types.at("DCGM_FI_DEV_XID_ERRORS"), "gauge");
        EXPECT_EQ(e.types.at("DCGM_FI_DEV_SM_CLOCK"), "gauge");

        const auto& facts = service.facts();
        ASSERT_EQ(facts.size(), 2u);
        for (std::size_t i = 0; i < facts.size(); ++i) {
          const auto& f = facts[i];
          SCOPED_TRACE("GPU " + std::to_string(i));
          const auto index = std::to_string(f.key.index);
          std::string dcgm = "{gpu=\"" + index + "\",UUID=\"" + f.key.uuid + "\",pci_bus_id=\"" +
                             f.key.bus_id + "\",device=\"nvidia" + index + "\",modelName=\"" +
                             f.name + "\",hostname=\"node-7\",DCGM_FI_DRIVER_VERSION=\"" +
                             service.driver_version() + "\"";
          if (i == 1) dcgm += ",container=\"trainer\",namespace=\"ml\",pod=\"train-0\"";
          dcgm += "}";
          const std::string ours = "gpu=\"" + index + "\",uuid=\"" + f.key.uuid +
                                   "\",pci_bus_id=\"" + f.key.bus_id + "\",model=\"" + f.name +
                                   "\"";
          ASSERT_FALSE(service.driver_version().empty());
          ASSERT_FALSE(f.key.bus_id.empty());
          const auto got = [&](const std::string& name) {
            const auto it = e.series.find(name + dcgm);
            EXPECT_NE(it, e.series.end()) << name << dcgm << " missing";
            return it == e.series.end() ? NAN : it->second;
          };
          const auto gpuclk = [&](const std::string& name, const std::string& more = "") {
            const auto it = e.series.find(name + "{" + ours + more + "}");
            EXPECT_NE(it, e.series.end()) << name << " missing";
            return it == e.series.end() ? NAN : it->second;
          };
          constexpr double kMiB = 1024.0 * 1024.0;
          EXPECT_EQ(got("DCGM_FI_DEV_SM_CLOCK"),
                    std::round(gpuclk("gpuclk_gpu_sm_clock_hertz") / 1e6));
          EXPECT_EQ(got("DCGM_FI_DEV_MEM_CLOCK"),
                    std::round(gpuclk("gpuclk_gpu_memory_clock_hertz") / 1e6));
          EXPECT_EQ(got("DCGM_FI_DEV_GPU_TEMP"),
                    std::round(gpuclk("gpuclk_gpu_temperature_celsius")));
          EXPECT_EQ(got("DCGM_FI_DEV_MEMORY_TEMP"),
                    std::round(gpuclk("gpuclk_gpu_memory_temperature_celsius")));
          EXPECT_EQ(got("DCGM_FI_DEV_POWER_USAGE"), gpuclk("gpuclk_gpu_power_watts"));
          EXPECT_EQ(got("DCGM_FI_DEV_POWER_MGMT_LIMIT"), gpuclk("gpuclk_gpu_power_limit_watts"));
          // mJ: the driver's counter in joules × 1000.
          const double joules = gpuclk("gpuclk_gpu_energy_joules_total");
          EXPECT_GT(joules, 0);
          EXPECT_NEAR(got("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"), joules * 1000, 0.5);
          EXPECT_EQ(got("DCGM_FI_DEV_PCIE_REPLAY_COUNTER"),
                    gpuclk("gpuclk_gpu_pcie_replays_total"));
          EXPECT_EQ(got("DCGM_FI_DEV_GPU_UTIL"),
                    std::round(gpuclk("gpuclk_gpu_utilization_ratio") * 100));
          EXPECT_EQ(got("DCGM_FI_DEV_MEM_COPY_UTIL"),
                    std::round(gpuclk("gpuclk_gpu_memory_utilization_ratio") * 100));
          const double used = gpuclk("gpuclk_gpu_memory_used_bytes");
          EXPECT_EQ(got("DCGM_FI_DEV_FB_USED"), std::floor(used / kMiB));
          EXPECT_EQ(got("DCGM_FI_DEV_FB_FREE"),
                    std::floor((gpuclk("gpuclk_gpu_memory_total_bytes") - used) / kMiB));
          EXPECT_EQ(got("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL"),
                    gpuclk("gpuclk_gpu_ecc_errors_total", ",type=\"corrected\""));
          EXPECT_EQ(got("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"),
                    gpuclk("gpuclk_gpu_ecc_errors_total", ",type=\"uncorrected\""));
          EXPECT_EQ(got("DCGM_FI_DEV_XID_ERRORS"), 0);  // no Xid yet
          EXPECT_GE(got("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"), 0);
          const std::pair<const char*, const char*> gpm[] = {
              {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "graphics"},
              {"DCGM_FI_PROF_SM_ACTIVE", "sm"},
              {"DCGM_FI_PROF_SM_OCCUPANCY", "sm_occupancy"},
              {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "tensor"},
              {"DCGM_FI_PROF_DRAM_ACTIVE", "dram"},
              {"DCGM_FI_PROF_PIPE_FP64_ACTIVE", "fp64"},
              {"DCGM_FI_PROF_PIPE_FP32_ACTIVE", "fp32"},
              {"DCGM_FI_PROF_PIPE_FP16_ACTIVE", "fp16"}};
          for (const auto& [name, activity] : gpm) {
            const double ratio = got(name);
            EXPECT_EQ(ratio, gpuclk("gpuclk_gpu_gpm_activity_ratio",
                                    std::string(",activity=\"") + activity + "\""))
                << name;
            EXPECT_TRUE(ratio >= 0 && ratio <= 1) << name << " " << ratio;
          }
        }
        s.node->stop();
      }));
}

// The last Xid: 0 while a GPU has none, the code once one comes (79 when GPU 1 of this scenario
// falls off the bus at 10 s), and it stays while the lost GPU's other series stop.
TEST_F(serve_dcgm_compat_test, xid_errors_is_the_last_xid_of_the_gpu) {
  const auto dir = dir_;
  const std::string scenario =
      std::string(GPUCLK_SOURCE_DIR) + "/sim/scenarios/doctor/gpu-lost.toml";
  expect_passed(in_child(
      {{"GPUCLK_SIM_SCENARIO", scenario}, {"GPUCLK_SIM_SPEED", "1"}, {"GPUCLK_SIM_START", "9"}},
      [dir, scenario](Nvml&) {
        auto s = start_node(dir, scenario);
        serve::MetricsOptions options;
        options.compat = serve::MetricsCompat::dcgm_exporter_4_8;
        serve::MetricsText metrics(s.node->service(), options);
        const std::regex xid0(R"(\nDCGM_FI_DEV_XID_ERRORS\{gpu="0",[^}]*\} (\S+)\n)");
        const std::regex xid1(R"(\nDCGM_FI_DEV_XID_ERRORS\{gpu="1",[^}]*\} (\S+)\n)");
        std::smatch m0, m1;
        std::string text;
        for (int i = 0; i < 100; ++i) {  // GPU 1 is lost ~1 s in; Xid 79 comes with it
          text = *metrics.get();
          if (std::regex_search(text, m1, xid1) && m1[1].str() == "79") break;
          std::this_thread::sleep_for(100ms);
        }
        ASSERT_TRUE(std::regex_search(text, m1, xid1)) << text;
        EXPECT_EQ(m1[1].str(), "79");
        ASSERT_TRUE(std::regex_search(text, m0, xid0));
        EXPECT_EQ(m0[1].str(), "0");
        EXPECT_NE(text.find("\nDCGM_FI_DEV_SM_CLOCK{gpu=\"0\","), std::string::npos);
        EXPECT_EQ(text.find("\nDCGM_FI_DEV_SM_CLOCK{gpu=\"1\","), std::string::npos)
            << "a lost GPU's readings stop";
        s.node->stop();
      }));
}

// Each set's families are its release's default-counters.csv rows (name, type, HELP as the file
// gives them, in its order) that gpuclk serves, then the rows sites commonly enable from it.
// 4.8: etc/default-counters.csv of dcgm-exporter 4.8.4 (active: its own rows; enabled: rows the
// file has commented out). 3: the 2.x-3.x file (PCIe throughput in KB), with 4.8's DCP rows.
struct CsvRow {
  const char* name;
  const char* type;
  const char* help;
};
constexpr CsvRow kCsv48[] = {
    {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."},
    {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."},
    {"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."},
    {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."},
    {"DCGM_FI_DEV_POWER_MGMT_LIMIT", "gauge", "Configured power management limit (in W)."},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
     "Total energy consumption since the driver was last reloaded (in mJ)."},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."},
    {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."},
    {"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."},
    {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."},
    {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."},
    {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors."},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors."},
    {"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "gauge",
     "Aggregate NVLink throughput across all lanes (in MB/s)."},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."},
    {"DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned."},
    {"DCGM_FI_PROF_SM_OCCUPANCY", "gauge", "The ratio of number of warps resident on an SM."},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge",
     "Ratio of cycles the tensor (HMMA) pipe is active."},
    {"DCGM_FI_PROF_DRAM_ACTIVE", "gauge",
     "Ratio of cycles the device memory interface is active sending or receiving data."},
    {"DCGM_FI_PROF_PIPE_FP64_ACTIVE", "gauge", "Ratio of cycles the fp64 pipes are active."},
    {"DCGM_FI_PROF_PIPE_FP32_ACTIVE", "gauge", "Ratio of cycles the fp32 pipes are active."},
    {"DCGM_FI_PROF_PIPE_FP16_ACTIVE", "gauge", "Ratio of cycles the fp16 pipes are active."},
    {"DCGM_FI_PROF_PCIE_TX_BYTES", "gauge",
     "The rate of data transmitted over the PCIe bus - including both protocol headers and data "
     "payloads - in bytes per second."},
    {"DCGM_FI_PROF_PCIE_RX_BYTES", "gauge",
     "The rate of data received over the PCIe bus - including both protocol headers and data "
     "payloads - in bytes per second."},
};
constexpr CsvRow kCsv3[] = {
    {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."},
    {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."},
    {"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."},
    {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
     "Total energy consumption since boot (in mJ)."},
    {"DCGM_FI_DEV_PCIE_TX_THROUGHPUT", "counter",
     "Total number of bytes transmitted through PCIe TX (in KB) via NVML."},
    {"DCGM_FI_DEV_PCIE_RX_THROUGHPUT", "counter",
     "Total number of bytes received through PCIe RX (in KB) via NVML."},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."},
    {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."},
    {"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."},
    {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."},
    {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."},
    {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors."},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors."},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."},
    {"DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned."},
    {"DCGM_FI_PROF_SM_OCCUPANCY", "gauge", "The ratio of number of warps resident on an SM."},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge",
     "Ratio of cycles the tensor (HMMA) pipe is active."},
    {"DCGM_FI_PROF_DRAM_ACTIVE", "gauge",
     "Ratio of cycles the device memory interface is active sending or receiving data."},
    {"DCGM_FI_PROF_PIPE_FP64_ACTIVE", "gauge", "Ratio of cycles the fp64 pipes are active."},
    {"DCGM_FI_PROF_PIPE_FP32_ACTIVE", "gauge", "Ratio of cycles the fp32 pipes are active."},
    {"DCGM_FI_PROF_PIPE_FP16_ACTIVE", "gauge", "Ratio of cycles the fp16 pipes are active."},
};

template <std::size_t N>
void expect_families(serve::MetricsCompat compat, const CsvRow (&csv)[N]) {
  const auto families = serve::dcgm_families(compat);
  ASSERT_EQ(families.size(), N);
  for (std::size_t i = 0; i < N; ++i) {
    SCOPED_TRACE(csv[i].name);
    EXPECT_EQ(families[i].name, csv[i].name);
    EXPECT_EQ(families[i].type == serve::MetricType::counter ? "counter" : "gauge",
              std::string_view(csv[i].type));
    EXPECT_EQ(families[i].help, csv[i].help);
  }
}

TEST(serve_dcgm_compat, each_set_is_its_releases_default_counters) {
  expect_families(serve::MetricsCompat::dcgm_exporter_4_8, kCsv48);
  expect_families(serve::MetricsCompat::dcgm_exporter_3, kCsv3);
}

// The older set's text: Hostname (not hostname), no driver label (that file has no label row),
// the PCIe throughput counters only while read, HELP and TYPE lines as its file's.
TEST_F(serve_dcgm_compat_test, the_older_set_writes_its_own_labels_and_help) {
  const auto dir = dir_;
  expect_passed(in_child(
      {{"GPUCLK_SIM_SCENARIO", "2xh200"}, {"GPUCLK_SIM_SPEED", "1"}, {"NODE_NAME", "node-3"}},
      [dir](Nvml&) {
        auto s = start_node(dir, "2xh200");
        std::this_thread::sleep_for(2500ms);
        serve::MetricsOptions options;
        options.compat = serve::MetricsCompat::dcgm_exporter_3;
        serve::MetricsText metrics(s.node->service(), options);
        const auto text = *metrics.get();
        EXPECT_NE(text.find("# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption "
                            "since boot (in mJ).\n# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION "
                            "counter\n"),
                  std::string::npos);
        EXPECT_NE(text.find(",modelName=\"NVIDIA H200\",Hostname=\"node-3\"} "), std::string::npos)
            << text.substr(text.find("DCGM_FI_DEV_SM_CLOCK{"), 300);
        EXPECT_EQ(text.find("hostname="), std::string::npos);
        EXPECT_EQ(text.find("DCGM_FI_DRIVER_VERSION="), std::string::npos);
        EXPECT_EQ(text.find("DCGM_FI_PROF_PCIE_"), std::string::npos);
        EXPECT_EQ(text.find("DCGM_FI_DEV_PCIE_TX_THROUGHPUT"), std::string::npos)
            << "PCIe throughput without a dmon reading it";
        EXPECT_EQ(text.find("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"), std::string::npos);
        EXPECT_NE(text.find("\nDCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"1\","), std::string::npos);
        EXPECT_NE(text.find("\nDCGM_FI_DEV_XID_ERRORS{gpu=\"0\","), std::string::npos);
        s.node->stop();
      }));
}

TEST(serve_dcgm_compat, metrics_compat_takes_dcgm_exporter_and_its_sets) {
  EXPECT_EQ(serve::parse_metrics_compat("dcgm-exporter"), serve::MetricsCompat::dcgm_exporter_4_8);
  EXPECT_EQ(serve::parse_metrics_compat("dcgm-exporter:4.8"),
            serve::MetricsCompat::dcgm_exporter_4_8);
  EXPECT_EQ(serve::parse_metrics_compat("dcgm-exporter:3"), serve::MetricsCompat::dcgm_exporter_3);
  for (const char* bad :
       {"dcgm", "DCGM-exporter", "", "prometheus", "dcgm-exporter:4.4", "dcgm-exporter:"}) {
    try {
      serve::parse_metrics_compat(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::bad_argument);
      const std::string message = error.what();
      EXPECT_NE(message.find(std::string("'") + bad + "'"), std::string::npos) << message;
      EXPECT_NE(message.find("dcgm-exporter:3"), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace gpuclk::sim::testing
