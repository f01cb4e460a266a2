// Every shipped scenario loads; per-GPU overrides land; mistakes are reported with file and key.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "node_model.h"
#include "scenario.h"
#include "sim_test_support.h"

namespace gpuclk::sim {
namespace {

namespace fs = std::filesystem;

TEST(sim_scenario_test, every_shipped_scenario_loads_and_runs) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator(testing::scenarios_dir())) {
    if (entry.path().extension() != ".toml") continue;
    ++count;
    SCOPED_TRACE(entry.path().string());
    const Scenario s = load_scenario(entry.path(), {testing::scenarios_dir()});
    ASSERT_FALSE(s.gpus.empty());
    std::set<std::string> uuids;
    std::set<std::uint32_t> buses;
    for (const GpuConfig& g : s.gpus) {
      uuids.insert(g.uuid);
      buses.insert(g.pci_bus);
      EXPECT_EQ(g.uuid.size(), 40u) << g.uuid;
      EXPECT_EQ(g.uuid.rfind("GPU-", 0), 0u);
    }
    EXPECT_EQ(uuids.size(), s.gpus.size());
    EXPECT_EQ(buses.size(), s.gpus.size());
    NodeModel model(std::make_shared<const Scenario>(s));
    model.advance_to(30);
  }
  EXPECT_GE(count, 9);
}

TEST(sim_scenario_test, default_is_four_h100_with_the_calibration_identity) {
  const Scenario s = testing::load("default");
  ASSERT_EQ(s.gpus.size(), 4u);
  EXPECT_TRUE(s.privileged);
  const GpuConfig& g = s.gpus[0];
  EXPECT_EQ(g.spec->name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.uuid, "GPU-cba78776-3017-caf5-5d64-a73aee97faac");
  EXPECT_EQ(g.spec->pci_device_id, 0x233010DEu);
  EXPECT_EQ(g.spec->supported_sm_clocks().size(), 110u);
  EXPECT_EQ(g.spec->memory_clocks_mhz, (std::vector<std::uint32_t>{2619, 1593}));
  EXPECT_EQ(g.power_limit_mw, 700000u);
  EXPECT_EQ(g.app_sm_mhz, 1980u);
  EXPECT_EQ(g.spec->slowdown_c, 89);
  EXPECT_EQ(g.spec->shutdown_c, 95);
  EXPECT_EQ(g.spec->gpu_max_c, 87);
  EXPECT_EQ(s.gpus[1].workload.process.pid, g.workload.process.pid + 1);
}

TEST(sim_scenario_test, misconfigured_overrides_one_thing_per_gpu) {
  const Scenario s = testing::load("misconfigured");
  ASSERT_EQ(s.gpus.size(), 4u);
  EXPECT_EQ(s.gpus[0].app_sm_mhz, 1980u);
  EXPECT_EQ(s.gpus[1].app_sm_mhz, 1410u);
  EXPECT_EQ(s.gpus[2].pcie_generation, 3u);
  EXPECT_EQ(s.gpus[2].pcie_width, 8u);
  EXPECT_EQ(s.gpus[2].pcie_slot_max_generation, 5u);
  EXPECT_DOUBLE_EQ(s.gpus[3].cooling_factor, 2.2);
  EXPECT_DOUBLE_EQ(s.gpus[0].cooling_factor, 1.0);
}

TEST(sim_scenario_test, poorly_cooled_gpu_reaches_thermal_slowdown_and_not_shutdown) {
  NodeModel model(std::make_shared<const Scenario>(testing::load("misconfigured")));
  bool thermal = false;
  for (int s = 0; s < 400; ++s) {
    model.step(1);
    thermal = thermal || (model.gpu(3).dynamics.event_reasons & reason::sw_thermal);
    EXPECT_LT(model.gpu(3).dynamics.die_c, 95);
    EXPECT_FALSE(model.gpu(0).dynamics.event_reasons & reason::sw_thermal);
  }
  EXPECT_TRUE(thermal);
  EXPECT_GT(model.gpu(3).dynamics.violation_ns[static_cast<int>(Policy::thermal)],
            10'000'000'000ull);
  // It got less done than the well-cooled GPU 0.
  EXPECT_LT(model.gpu(3).dynamics.total_flops, 0.97 * model.gpu(0).dynamics.total_flops);
}

TEST(sim_scenario_test, faults_and_privileges_come_from_the_file) {
  const Scenario faults = testing::load("faults");
  EXPECT_DOUBLE_EQ(faults.gpus[1].read_error_rate, 0.05);
  EXPECT_EQ(faults.gpus[1].read_error_code, 999u);
  EXPECT_DOUBLE_EQ(faults.gpus[2].lost_at_s, 60);
  ASSERT_EQ(faults.gpus[3].errors.size(), 1u);
  EXPECT_EQ(faults.gpus[3].errors[0].function, "nvmlDeviceGetPowerUsage");
  EXPECT_EQ(faults.gpus[3].errors[0].code, 10u);  // NVML_ERROR_TIMEOUT
  EXPECT_FALSE(testing::load("unprivileged").privileged);
  EXPECT_EQ(testing::load("no-driver").init_error, 9u);  // NVML_ERROR_DRIVER_NOT_LOADED
  EXPECT_EQ(testing::load("8xh100").gpus.size(), 8u);
}

class sim_scenario_errors_test : public ::testing::Test {
 protected:
  fs::path write(const std::string& text) {
    const fs::path file =
        fs::temp_directory_path() /
        ("gpuclk_sim_scenario_" +
         std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".toml");
    std::ofstream(file) << text;
    files_.push_back(file);
    return file;
  }
  void TearDown() override {
    for (const auto& f : files_) fs::remove(f);
  }
  std::string error_of(const std::string& text) {
    try {
      load_scenario(write(text), {testing::scenarios_dir()});
    } catch (const ScenarioError& e) {
      return e.what();
    }
    return "";
  }
  std::vector<fs::path> files_;
};

TEST_F(sim_scenario_errors_test, an_unknown_key_is_refused_with_the_valid_ones) {
  // Issue 32: a misspelt key kept its default silently.
  const auto node = error_of(
      "[node]\ngpu_model = \"h100-sxm5-80gb\"\ngpu_count = 1\n"
      "privilegd = false\n");
  EXPECT_NE(node.find("unknown key 'privilegd'"), std::string::npos) << node;
  EXPECT_NE(node.find("privileged"), std::string::npos) << node;  // among the valid ones
  const auto gpu = error_of(
      "[node]\ngpu_model = \"h100-sxm5-80gb\"\ngpu_count = 1\n"
      "[[gpu]]\nindex = 0\nlost_at = 5\n");
  EXPECT_NE(gpu.find("[[gpu]]"), std::string::npos) << gpu;
  EXPECT_NE(gpu.find("unknown key 'lost_at'"), std::string::npos) << gpu;
  EXPECT_NE(gpu.find("lost_at_s"), std::string::npos) << gpu;
  EXPECT_EQ(error_of("[node]\ngpu_model = \"h100-sxm5-80gb\"\ngpu_count = 1\n"), "");
}

TEST_F(sim_scenario_errors_test, names_the_key_that_is_wrong) {
  EXPECT_NE(error_of("[node]\ngpu_count = 1\n").find("gpu_model"), std::string::npos);
  EXPECT_NE(error_of("[node]\ngpu_model = \"h100-sxm5-80gb\"\n").find("gpu_count"),
            std::string::npos);
  EXPECT_NE(error_of("[node]\ngpu_model = \"nope\"\ngpu_count = 1\n").find("models/nope.toml"),
            std::string::npos);
  EXPECT_NE(error_of("[node]\ngpu_model = \"h100-sxm5-80gb\"\ngpu_count = "
                     "1\n[gpu_defaults]\nworkload = \"w\"\n")
                .find("workloads.w"),
            std::string::npos);
  EXPECT_NE(error_of("[node]\ngpu_model = \"h100-sxm5-80gb\"\ngpu_count = 1\n[[gpu]]\nindex = 1\n")
                .find("index"),
            std::string::npos);
  EXPECT_NE(error_of("[node]\ngpu_model = \"h100-sxm5-80gb\"\ngpu_count = 1\n[[gpu]]\nindex = 0\n"
                     "applications_clocks = { sm_mhz = 1411 }\n")
                .find("sm_mhz"),
            std::string::npos);
  EXPECT_NE(error_of("[node]\ngpu_model = \"h100-sxm5-80gb\"\ngpu_count = "
                     "1\n[gpu_defaults]\nworkload = \"w\"\n"
                     "[workloads.w]\n[[workloads.w.phases]]\nkind = \"compute\"\n")
                .find("tflop"),
            std::string::npos);
  EXPECT_NE(
      error_of("[node]\ngpu_model = \"h100-sxm5-80gb\"\ngpu_count = 1\ninit_error = \"bogus\"\n")
          .find("bogus"),
      std::string::npos);
  EXPECT_NE(error_of("[node\n").find(":1"), std::string::npos);  // parse errors carry the line
}

TEST_F(sim_scenario_errors_test, a_scenario_outside_the_tree_finds_installed_models) {
  const fs::path file = write(
      "[node]\ngpu_model = \"l4\"\ngpu_count = 2\n[[gpu]]\nindex = 1\ngpu_model = "
      "\"a100-sxm4-80gb\"\n");
  const Scenario s = load_scenario(file, {file.parent_path(), testing::scenarios_dir()});
  EXPECT_EQ(s.gpus[0].spec->name, "NVIDIA L4");
  EXPECT_EQ(s.gpus[1].spec->name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(s.gpus[1].power_limit_mw, 400000u);
}

TEST_F(sim_scenario_errors_test, a_process_carries_one_owner_and_no_unknown_key) {
  const auto scenario = [](const std::string& process) {
    return "[node]\ngpu_model = \"h100-sxm5-80gb\"\ngpu_count = 2\n[gpu_defaults]\n"
           "workload = \"w\"\n[workloads.w]\nprocess = { pid = 500" +
           process + " }\n[[workloads.w.phases]]\nkind = \"idle\"\nseconds = 1\n";
  };
  const Scenario s =
      load_scenario(write(scenario(", slurm_job = 1234")), {testing::scenarios_dir()});
  EXPECT_EQ(s.gpus[0].workload.process.owner, "slurm:1234");
  EXPECT_EQ(s.gpus[1].workload.process.pid, 501u);  // one process per GPU, one job
  EXPECT_EQ(s.gpus[1].workload.process.owner, "slurm:1234");
  EXPECT_EQ(load_scenario(write(scenario(", pod = \"6f1e2d3c\"")), {testing::scenarios_dir()})
                .gpus[0]
                .workload.process.owner,
            "pod:6f1e2d3c");
  EXPECT_EQ(
      load_scenario(write(scenario("")), {testing::scenarios_dir()}).gpus[0].workload.process.owner,
      "");
  EXPECT_NE(error_of(scenario(", slurm_jobs = 1")).find("slurm_jobs"), std::string::npos);
  EXPECT_NE(error_of(scenario(", slurm_job = 1, session = 2")).find("one owner"),
            std::string::npos);
  EXPECT_NE(error_of(scenario(", container = \"a:b\"")).find("container"), std::string::npos);
}

TEST_F(sim_scenario_errors_test, a_busy_pipe_part_above_the_full_pipe_is_refused) {
  std::ifstream in(testing::scenarios_dir() / "models" / "h100-sxm5-80gb.toml");
  std::stringstream text;
  text << in.rdbuf();
  std::string model = text.str();
  const std::string busy = "pipe_busy_w = { tf32 = ";
  const std::size_t at = model.find(busy);
  ASSERT_NE(at, std::string::npos);
  model.replace(at, busy.size(), "pipe_busy_w = { tf32 = 9");  // 9702 W, above pipe_full_w
  try {
    load_gpu_spec(write(model));
    FAIL() << "pipe_busy_w.tf32 above pipe_full_w.tf32 loaded";
  } catch (const ScenarioError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("pipe_busy_w"), std::string::npos) << what;
    EXPECT_NE(what.find("tf32: must be in 0..pipe_full_w.tf32 (1242"), std::string::npos) << what;
  }
  // A model without the table (A100, L4): the pipes' power follows their utilisation alone.
  const auto a100 = load_gpu_spec(testing::scenarios_dir() / "models" / "a100-sxm4-80gb.toml");
  for (double w : a100->pipe_busy_w) EXPECT_EQ(w, 0);
}

// cooling_factor 0: an ideal sink held at ambient, so the die's temperature (and its leakage
// power) follows the power alone: the same after a minute of BF16 as after a second (the sweep
// test's best points rely on it). A negative factor is refused, naming what is valid.
TEST_F(sim_scenario_errors_test, an_ideal_heat_sink_holds_ambient_and_a_negative_one_is_refused) {
  const std::string node =
      "[node]\ngpu_model = \"h100-sxm5-80gb\"\ngpu_count = 2\n"
      "[gpu_defaults]\nworkload = \"w\"\n[[gpu]]\nindex = 1\ncooling_factor = 0\n"
      "[workloads.w]\nrepeat = true\n[[workloads.w.phases]]\nkind = \"compute\"\n"
      "dtype = \"bf16\"\ntflop = 1e6\n";
  NodeModel model(
      std::make_shared<const Scenario>(load_scenario(write(node), {testing::scenarios_dir()})));
  model.step(2);
  const double ideal_at_2s = model.gpu(1).dynamics.die_c;
  const double real_at_2s = model.gpu(0).dynamics.die_c;
  model.step(60);
  const auto& ideal = model.gpu(1);
  EXPECT_DOUBLE_EQ(ideal.dynamics.sink_c, model.scenario().gpus[1].ambient_c);
  EXPECT_NEAR(ideal.dynamics.die_c, ideal_at_2s, 0.2);
  EXPECT_GT(ideal.dynamics.power_w, 600);  // under load: the sink takes it all at ambient
  EXPECT_GT(model.gpu(0).dynamics.die_c, real_at_2s + 5);  // a real sink warms for minutes
  const auto error = error_of(
      "[node]\ngpu_model = \"h100-sxm5-80gb\"\ngpu_count = 1\n"
      "[[gpu]]\nindex = 0\ncooling_factor = -1\n");
  EXPECT_NE(error.find("cooling_factor"), std::string::npos) << error;
  EXPECT_NE(error.find(">= 0"), std::string::npos) << error;
}

TEST(sim_scenario_test, v100_clocks_step_by_seven_and_a_half_mhz_rounded_down) {
  const auto v100 = load_gpu_spec(testing::scenarios_dir() / "models" / "v100-sxm2-32gb.toml");
  EXPECT_EQ(v100->architecture, Architecture::volta);
  EXPECT_FALSE(v100->gpm_supported);
  EXPECT_EQ(v100->row_remapper_banks, 0u);
  EXPECT_TRUE(v100->page_retirement);
  const auto clocks = v100->supported_sm_clocks();
  ASSERT_EQ(clocks.size(), 187u);  // what nvidia-smi -q lists on the board
  EXPECT_EQ(std::vector<std::uint32_t>(clocks.begin(), clocks.begin() + 5),
            (std::vector<std::uint32_t>{1530, 1522, 1515, 1507, 1500}));
  EXPECT_EQ(clocks[29], 1312u);  // the default application clock
  EXPECT_EQ(clocks.back(), 135u);
  for (std::size_t k = 0; k + 1 < clocks.size(); ++k) {
    ASSERT_TRUE(v100->is_supported_sm_clock(clocks[k]));
    EXPECT_EQ(v100->lower_sm_clock(clocks[k]), clocks[k + 1]);
    EXPECT_EQ(v100->higher_sm_clock(clocks[k + 1]), clocks[k]);
    for (std::uint32_t f = clocks[k + 1] + 1; f < clocks[k]; ++f) {
      EXPECT_FALSE(v100->is_supported_sm_clock(f)) << f;
      EXPECT_EQ(v100->floor_sm_clock(f), clocks[k + 1]) << f;
      EXPECT_EQ(v100->ceil_sm_clock(f), clocks[k]) << f;
    }
  }
  // Ampere and later keep their 15 MHz grid.
  EXPECT_EQ(testing::h100()->supported_sm_clocks().size(), 110u);
  EXPECT_EQ(testing::h100()->lower_sm_clock(1980), 1965u);
  // The V100 nodes load, and a busy V100 settles on one of its clocks under a lowered cap.
  Scenario s = testing::load("v100");
  ASSERT_EQ(s.gpus.size(), 4u);
  s.gpus[0].power_limit_mw = 150000;
  NodeModel model(std::make_shared<const Scenario>(s));
  model.advance_to(20);
  EXPECT_TRUE(v100->is_supported_sm_clock(model.gpu(0).dynamics.sm_mhz))
      << model.gpu(0).dynamics.sm_mhz;
}

TEST_F(sim_scenario_errors_test, retired_pages_only_on_gpus_that_retire_pages) {
  EXPECT_NE(error_of("[node]\ngpu_model = \"h100-sxm5-80gb\"\ngpu_count = 1\n[[gpu]]\nindex = 0\n"
                     "retired_pages = { dbe = 1 }\n")
                .find("does not retire pages"),
            std::string::npos);
  EXPECT_NE(error_of("[node]\ngpu_model = \"v100-sxm2-32gb\"\ngpu_count = 1\n[[gpu]]\nindex = 0\n"
                     "retired_pages = { sbe = 60, dbe = 5 }\n")
                .find("at most 64"),
            std::string::npos);
  const Scenario s = testing::load("doctor/retired-pages");
  EXPECT_EQ(s.gpus[0].retired_dbe_pages, 2u);
  EXPECT_TRUE(s.gpus[0].retired_pages_pending);
  EXPECT_EQ(s.gpus[1].retired_sbe_pages, 44u);
  EXPECT_FALSE(s.gpus[1].retired_pages_pending);
}

}  // namespace
}  // namespace gpuclk::sim
