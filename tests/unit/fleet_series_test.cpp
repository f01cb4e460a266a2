// Every /metrics family `gpuclk fleet` asks Prometheus for (fleet::series_read) is one a node's
// gpuclk serve exports: a simulated node running a two-GPU Slurm job, with a finding, serves
// each of them — so a series renamed on one side fails here, not silently in fleet (issue 43).
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "fleet/snapshot.h"
#include "gpu/device.h"
#include "nvml/api.h"
#include "serve/metrics.h"
#include "serve/node.h"
#include "sim_abi_fixture.h"
#include "util/clock.h"

namespace gpuclk::sim::testing {
namespace {

using namespace std::chrono_literals;

// Named for the service, so scripts/ci/sanitizers.sh's TSan selection ("serve") takes it.
class serve_fleet_series_test : public sim_abi_test {};

TEST_F(serve_fleet_series_test, every_family_fleet_reads_is_on_a_nodes_metrics) {
  const auto scenario = dir_ / "job.toml";
  std::ofstream(scenario) << R"(
[node]
gpu_model = "h100-sxm5-80gb"
gpu_count = 2
privileged = true

[gpu_defaults]
workload = "gemm"

[[gpu]]
index = 1
persistence_mode = false

[workloads.gemm]
start_s = 0
repeat = true
process = { pid = 47000, name = "python3 train.py", memory_gib = 40, slurm_job = 4242 }

[[workloads.gemm.phases]]
kind = "compute"
dtype = "bf16"
tflop = 1000
intensity = 850
)";
  const auto dir = dir_;
  expect_passed(in_child(
      {{"GPUCLK_SIM_SCENARIO", scenario.string()}, {"GPUCLK_SIM_SPEED", "1"}}, [dir](Nvml&) {
        auto api = nvml::Api::open(std::string(GPUCLK_BINARY_DIR) + "/libnvml-sim.so");
        gpu::DeviceSet set(*api);
        ScaledClock clock(1);
        serve::NodeOptions options;
        options.service.simulated = (dir / "job.toml").string();
        options.service.counters_every = 1;  // the attribution books every second
        options.socket_path = (dir / "node.sock").string();
        options.session.journal_dir = dir / "journal";
        options.selected = set.all();
        serve::Node node(set, clock, options);
        node.start();
        serve::MetricsText metrics(node.service());
        std::string missing;
        // The job's series per GPU come once the attribution booked an interval of it.
        for (int i = 0; i < 100; ++i) {
          const auto text = metrics.get();
          missing.clear();
          for (const auto& s : fleet::series_read()) {
            const bool there =
                text->find("# TYPE " + std::string(s.name) + " ") != std::string::npos;
            if (s.always && !there) missing += std::string(s.name) + " ";
          }
          if (missing.empty()) break;
          std::this_thread::sleep_for(200ms);
        }
        EXPECT_EQ(missing, "") << "families fleet reads that the node does not export";
        const auto text = metrics.get();
        EXPECT_NE(text->find("gpuclk_gpu_slurm_job_seconds_total{gpu=\"1\","), std::string::npos);
        EXPECT_NE(text->find("job=\"4242\""), std::string::npos);
        node.stop();
      }));
}

}  // namespace
}  // namespace gpuclk::sim::testing
