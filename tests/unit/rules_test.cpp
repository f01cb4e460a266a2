// The rules engine on hand-made inputs: a status snapshot (what `gpuclk status` shows) and
// windows of samples (what `gpuclk doctor` watches). The simulator scenarios are in
// tests/cli/doctor_test.sh.
#include <gtest/gtest.h>

#include "rules/jobs.h"
#include "rules/rule.h"
#include "rules/status_input.h"
#include "rules/xid.h"
#include "util/text.h"

namespace gpuclk::rules {
namespace {

using gpu::ClockReasons;
using gpu::PcieLink;
using gpu::StatusSnapshot;
using units::Ratio;

StatusSnapshot healthy(unsigned index) {
  StatusSnapshot s;
  s.index = index;
  s.name = "NVIDIA H100 80GB HBM3";
  s.sm_clock = Megahertz(1980);
  s.sm_max = Megahertz(1980);
  s.app_sm_clock = Megahertz(1980);
  s.app_memory_clock = Megahertz(2619);
  s.power_limit = Watts(700);
  s.default_power_limit = Watts(700);
  s.persistence_mode = true;
  s.pcie_link = PcieLink{5, 16};
  s.pcie_max = PcieLink{5, 16};
  s.utilization = gpu::Utilization{Ratio(0.9), Ratio(0.3)};
  s.clock_reasons = ClockReasons(0);
  s.temperature = Celsius(60);
  s.slowdown_temperature = Celsius(89);
  return s;
}

std::vector<Finding> check(const std::vector<StatusSnapshot>& gpus) {
  return evaluate(status_input(gpus));
}

const Finding* find(const std::vector<Finding>& f, const std::string& rule, unsigned gpu) {
  for (const auto& x : f) {
    if (x.rule == rule && std::find(x.gpus.begin(), x.gpus.end(), gpu) != x.gpus.end()) return &x;
  }
  return nullptr;
}

bool mentions(const std::vector<Finding>& f, const std::string& text, unsigned gpu) {
  for (const auto& x : f) {
    if (x.summary.find(text) != std::string::npos &&
        std::find(x.gpus.begin(), x.gpus.end(), gpu) != x.gpus.end())
      return true;
  }
  return false;
}

double evidence(const Finding& f, const std::string& key) {
  for (const auto& e : f.evidence) {
    if (e.key == key) return e.value;
  }
  ADD_FAILURE() << "no evidence " << key << " in " << f.rule;
  return -1;
}

// A window of `seconds` at 100 ms: every sample from `sample(i)`.
Input window(unsigned gpus, int samples,
             const std::function<telemetry::FastSample(unsigned gpu, int i)>& sample) {
  Input in;
  in.from = telemetry::TimePoint{};
  in.to = in.from + std::chrono::milliseconds(100) * samples;
  for (unsigned g = 0; g < gpus; ++g) {
    GpuWindow w;
    w.facts.index = g;
    w.facts.name = "NVIDIA H100 80GB HBM3";
    w.facts.max_sm_clock = Megahertz(1980);
    w.facts.power_limit = w.facts.default_power_limit = Watts(700);
    for (int i = 0; i < samples; ++i) {
      auto s = sample(g, i);
      s.time = in.from + std::chrono::milliseconds(100) * i;
      w.fast.push_back(s);
    }
    in.gpus.push_back(std::move(w));
  }
  return in;
}

telemetry::FastSample busy(double mhz, std::uint64_t reasons = 0, double util = 1.0) {
  telemetry::FastSample s;
  s.sm_clock = Megahertz(mhz);
  s.gpu_utilization = Ratio(util);
  s.clock_reasons = ClockReasons(reasons);
  s.gpu_temperature = Celsius(60);
  s.power = Watts(500);
  return s;
}

}  // namespace

TEST(rules_test, a_healthy_node_has_no_findings) {
  EXPECT_TRUE(check({healthy(0), healthy(1), healthy(2), healthy(3)}).empty());
}

TEST(rules_test, odd_application_clocks_and_power_limit_are_named) {
  auto gpus = std::vector{healthy(0), healthy(1), healthy(2), healthy(3)};
  gpus[2].app_sm_clock = Megahertz(1410);
  gpus[3].power_limit = Watts(500);
  auto f = check(gpus);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_TRUE(mentions(
      f, "application clocks (SM/memory) 1410/2619 MHz differ from the other GPUs' 1980/2619 MHz",
      2));
  EXPECT_TRUE(mentions(f, "power limits 500 W differ", 3));
  EXPECT_EQ(f[0].rule, "settings_differ");
  EXPECT_EQ(f[0].severity, Severity::warning);
}

TEST(rules_test, different_models_are_not_compared) {
  auto a100 = healthy(1);
  a100.name = "NVIDIA A100-SXM4-80GB";
  a100.app_sm_clock = Megahertz(1410);
  a100.power_limit = a100.default_power_limit = Watts(400);
  EXPECT_TRUE(check({healthy(0), a100}).empty());
}

TEST(rules_test, persistence_off_and_degraded_pcie_link) {
  auto gpus = std::vector{healthy(0), healthy(1)};
  gpus[0].persistence_mode = false;
  gpus[1].pcie_link = PcieLink{3, 8};
  auto f = check(gpus);
  EXPECT_TRUE(mentions(f, "GPU 0: persistence mode is off", 0));
  EXPECT_TRUE(mentions(f, "x8 of x16", 1));
  // Several GPUs: "GPUs 0,1", not "GPU 0,1" (issue 42).
  auto both = std::vector{healthy(0), healthy(1)};
  both[0].persistence_mode = false;
  both[1].persistence_mode = false;
  EXPECT_TRUE(mentions(check(both), "GPUs 0,1: persistence mode is off", 1));
  EXPECT_TRUE(mentions(f, "Gen3 of Gen5 while busy", 1));
  const auto* link = find(f, "pcie_link_degraded", 1);
  ASSERT_NE(link, nullptr);
  EXPECT_DOUBLE_EQ(evidence(*link, "bandwidth_share_pct"), 12.5);  // 1/4 per lane × 8/16 lanes
}

TEST(rules_test, a_lower_link_generation_at_idle_is_power_saving_not_a_fault) {
  auto idle = healthy(0);
  idle.utilization = gpu::Utilization{Ratio(0), Ratio(0)};
  idle.pcie_link = PcieLink{1, 16};
  EXPECT_TRUE(check({idle}).empty());
}

TEST(rules_test, thermal_slowdown_and_power_cap_in_a_snapshot) {
  auto hot = healthy(0);
  hot.clock_reasons = ClockReasons(ClockReasons::sw_thermal_slowdown);
  hot.temperature = Celsius(87);
  auto capped = healthy(1);
  capped.clock_reasons = ClockReasons(ClockReasons::sw_power_cap);
  capped.sm_clock = Megahertz(1410);
  auto f = check({hot, capped});
  EXPECT_TRUE(mentions(f, "thermal slowdown active", 0));
  EXPECT_TRUE(mentions(f, "within 5 C of its slowdown temperature", 0));
  EXPECT_TRUE(mentions(f, "holds the SM clock at 1410 of 1980 MHz", 1));
  const auto* cap = find(f, "power_capped", 1);
  ASSERT_NE(cap, nullptr);
  EXPECT_EQ(cap->severity, Severity::info);  // at the default limit: expected under tensor work
  EXPECT_EQ(exit_code(f), kExitWarning);
}

TEST(rules_test, a_clock_lock_is_not_blamed_on_application_clocks_at_the_maximum) {
  // NVML reports a lock (set --lock-gpu-clocks 1200) as "applications clocks setting".
  auto locked = healthy(0);
  locked.clock_reasons = ClockReasons(ClockReasons::applications_clocks_setting);
  locked.sm_clock = Megahertz(1200);
  EXPECT_EQ(find(check({locked}), "app_clocks_low", 0), nullptr);
  auto low = locked;
  low.app_sm_clock = Megahertz(1410);
  EXPECT_NE(find(check({low}), "app_clocks_low", 0), nullptr);
}

TEST(rules_test, application_clocks_under_another_limit_gain_nothing) {
  // misconfigured's GPU 1: application clocks 1410 MHz, but the power cap held it at 1365 MHz
  // like its peers: the reset it was advised gains nothing (issue 42). Info, saying why.
  auto capped = healthy(0);
  capped.app_sm_clock = Megahertz(1410);
  capped.sm_clock = Megahertz(1365);
  capped.clock_reasons =
      ClockReasons(ClockReasons::applications_clocks_setting | ClockReasons::sw_power_cap);
  const auto f = check({capped});
  const auto* held = find(f, "app_clocks_low", 0);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->severity, Severity::info);
  EXPECT_TRUE(mentions(f, "another limit (the power cap or heat) binds first", 0));
  // At the application clock: a warning that says what a reset may gain (1980/1410: +40 %).
  auto at_app = capped;
  at_app.sm_clock = Megahertz(1410);
  at_app.clock_reasons = ClockReasons(ClockReasons::applications_clocks_setting);
  const auto g = check({at_app});
  const auto* warn = find(g, "app_clocks_low", 0);
  ASSERT_NE(warn, nullptr);
  EXPECT_EQ(warn->severity, Severity::warning);
  EXPECT_TRUE(mentions(g, "up to 40% more clock without them", 0));
}

TEST(rules_test, a_few_corrected_ecc_errors_are_counted_not_extrapolated) {
  const auto ecc_window = [](std::uint64_t first, std::uint64_t last) {
    auto in = window(1, 200, [](unsigned, int) { return busy(1980); });  // 20 s
    for (auto [count, i] : {std::pair{first, 0}, std::pair{last, 199}}) {
      telemetry::SlowSample s;
      s.time = in.from + std::chrono::milliseconds(100) * i;
      s.ecc_corrected = count;
      s.ecc_uncorrected = 0;
      in.gpus[0].slow.push_back(s);
    }
    return evaluate(in);
  };
  // One error in 20 s is not "180 per hour".
  auto f = ecc_window(7, 8);
  const auto* one = find(f, "ecc_errors", 0);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->severity, Severity::info);
  EXPECT_NE(one->summary.find("1 corrected ECC error during"), std::string::npos) << one->summary;
  EXPECT_EQ(one->summary.find("per hour"), std::string::npos) << one->summary;
  f = ecc_window(7, 27);
  const auto* many = find(f, "ecc_errors", 0);
  ASSERT_NE(many, nullptr);
  EXPECT_EQ(many->severity, Severity::warning);
  EXPECT_NEAR(evidence(*many, "corrected_per_hour"), 20 * 3600 / 20.0, 1e-6);
}

TEST(rules_test, counts_take_the_singular_for_one) {
  // Issue 32: "its 1 peers", "1 corrected ECC errors".
  auto one = healthy(0);
  one.retired_pages = gpu::RetiredPages{1, 0, false};
  auto f = check({one});
  EXPECT_TRUE(mentions(f, "1 page of device memory retired", 0));
  EXPECT_EQ(text::counted(1, "peer"), "1 peer");
  EXPECT_EQ(text::counted(2, "peer"), "2 peers");
  EXPECT_EQ(text::counted(0, "error"), "0 errors");
}

TEST(rules_test, a_lost_gpu_is_critical) {
  auto lost = healthy(1);
  lost.unavailable_code = 15;
  auto f = check({healthy(0), lost});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "gpu_lost");
  EXPECT_EQ(f[0].severity, Severity::critical);
  EXPECT_EQ(exit_code(f), kExitCritical);
}

TEST(rules_test, power_cap_at_a_lowered_limit_is_a_warning_with_its_clock_cost) {
  auto in = window(1, 100, [](unsigned, int) { return busy(990, ClockReasons::sw_power_cap); });
  in.gpus[0].facts.power_limit = Watts(450);
  auto f = evaluate(in);
  const auto* cap = find(f, "power_capped", 0);
  ASSERT_NE(cap, nullptr);
  EXPECT_EQ(cap->severity, Severity::warning);
  EXPECT_DOUBLE_EQ(evidence(*cap, "capped_pct_of_busy"), 100);
  EXPECT_DOUBLE_EQ(evidence(*cap, "sm_clock_median_mhz"), 990);
  EXPECT_DOUBLE_EQ(evidence(*cap, "clock_cost_pct"), 50);
  EXPECT_NEAR(evidence(*cap, "capped_s"), 10, 1e-9);
}

TEST(rules_test, jitter_counts_only_samples_no_limiter_explains) {
  // GPU 0 alternates 1980/1500 MHz with no reason; GPU 1 does the same under the power cap.
  auto in = window(2, 100, [](unsigned g, int i) {
    return busy(i % 2 ? 1500 : 1980, g == 1 && i % 2 ? ClockReasons::sw_power_cap : 0);
  });
  auto f = evaluate(in, {find_rule("clock_jitter")});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].gpus, std::vector<unsigned>{0});
  EXPECT_DOUBLE_EQ(evidence(f[0], "sm_clock_p5_mhz"), 1500);
  // Every 1980 → 1500 step among samples 1..98 (the first and last lack a neighbour).
  EXPECT_DOUBLE_EQ(evidence(f[0], "drops"), 48);
}

TEST(rules_test, a_clock_read_at_the_edge_of_a_capped_phase_is_not_jitter) {
  // Capped phases of 5 samples at 1410 MHz, then 5 free at 1980. The first sample after each
  // capped phase read the clock while capped and the reasons after: 1410 with no limiter.
  auto in = window(1, 100, [](unsigned, int i) {
    const int phase = i % 10;
    if (phase < 5) return busy(1410, ClockReasons::sw_power_cap);
    return busy(phase == 5 ? 1410 : 1980);
  });
  EXPECT_TRUE(evaluate(in, {find_rule("clock_jitter")}).empty());
}

// GPU g runs process pids[g] (0: no process); owners by pid.
void run(Input& in, const std::vector<unsigned>& pids,
         const std::map<unsigned, host::Owner>& owners = {}) {
  for (std::size_t g = 0; g < pids.size(); ++g) {
    in.gpus[g].facts.processes = std::vector<unsigned>{};
    if (pids[g] != 0) in.gpus[g].facts.processes->push_back(pids[g]);
  }
  in.process_owners = owners;
}

const host::Owner kSlurm1234{host::OwnerKind::slurm_job, "1234", "alice"};
const host::Owner kSession9{host::OwnerKind::session, "9", "bob"};

std::string text_evidence(const Finding& f, const std::string& key) {
  for (const auto& e : f.evidence) {
    if (e.key == key) return e.text;
  }
  return "(none)";
}

TEST(rules_test, a_straggler_is_named_with_its_cause_and_job) {
  auto in = window(3, 50, [](unsigned g, int) {
    return g == 2 ? busy(1410, ClockReasons::applications_clocks_setting) : busy(1980);
  });
  in.gpus[2].facts.app_sm_clock = Megahertz(1410);
  run(in, {41000, 41001, 41002}, {{41000, kSlurm1234}, {41001, kSlurm1234}, {41002, kSlurm1234}});
  auto f = evaluate(in, {find_rule("straggler")});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].gpus, std::vector<unsigned>{2});
  EXPECT_NE(f[0].cause.find("application clocks (1410 MHz)"), std::string::npos);
  EXPECT_DOUBLE_EQ(evidence(f[0], "peers_sm_clock_median_mhz"), 1980);
  EXPECT_EQ(f[0].summary.rfind("GPU 2 of Slurm job 1234 (GPUs 0-2): median SM clock", 0), 0u)
      << f[0].summary;
  EXPECT_EQ(text_evidence(f[0], "job"), "slurm:1234");
  EXPECT_EQ(text_evidence(f[0], "job_gpus"), "0-2");
  EXPECT_EQ(text_evidence(f[0], "job_user"), "alice");
}

TEST(rules_test, an_idle_gpu_without_a_process_is_no_straggler) {
  // Issue 26: a GEMM on GPU 1 alone, GPU 0 idle with no process.
  auto in = window(2, 50, [](unsigned g, int) { return g == 0 ? busy(345, 0, 0) : busy(1410); });
  run(in, {0, 44001}, {{44001, kSession9}});
  EXPECT_TRUE(evaluate(in, {find_rule("straggler")}).empty());
  // Processes not listed (NVML could not tell): no job, no peers either.
  for (auto& w : in.gpus) w.facts.processes.reset();
  EXPECT_TRUE(evaluate(in, {find_rule("straggler")}).empty());
}

TEST(rules_test, gpus_of_different_jobs_are_not_peers) {
  // GPUs 0-1: a Slurm job, busy; GPUs 2-3: a session at half the load. Each job is even.
  auto in = window(4, 50, [](unsigned g, int) { return g < 2 ? busy(1980) : busy(1980, 0, 0.45); });
  run(in, {100, 101, 200, 201},
      {{100, kSlurm1234}, {101, kSlurm1234}, {200, kSession9}, {201, kSession9}});
  EXPECT_TRUE(evaluate(in, {find_rule("straggler")}).empty());
  // One job over all four: GPUs 2 and 3 lag behind it.
  run(in, {100, 101, 200, 201},
      {{100, kSlurm1234}, {101, kSlurm1234}, {200, kSlurm1234}, {201, kSlurm1234}});
  const auto f = evaluate(in, {find_rule("straggler")});
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].gpus, std::vector<unsigned>{2});
  EXPECT_EQ(f[1].gpus, std::vector<unsigned>{3});
}

TEST(rules_test, processes_without_an_owner_are_jobs_of_their_own) {
  auto in = window(2, 50, [](unsigned g, int) { return busy(g == 0 ? 1410 : 1980); });
  run(in, {300, 301});  // two processes, owners unknown: two jobs
  EXPECT_TRUE(evaluate(in, {find_rule("straggler")}).empty());
  run(in, {300, 300});  // one process on both GPUs: one job
  const auto f = evaluate(in, {find_rule("straggler")});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].gpus, std::vector<unsigned>{0});
  EXPECT_NE(f[0].summary.find("GPU 0 of process 300 (GPUs 0-1)"), std::string::npos)
      << f[0].summary;
}

TEST(rules_test, jobs_group_gpus_by_the_owner_of_their_processes) {
  auto in = window(5, 1, [](unsigned, int) { return busy(1980); });
  run(in, {100, 0, 200, 101, 300}, {{100, kSlurm1234}, {101, kSlurm1234}, {200, kSession9}});
  in.gpus[2].facts.processes->push_back(102);  // GPU 2 also runs a process of the Slurm job
  in.process_owners[102] = kSlurm1234;
  const auto found = jobs(in);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(host::owner_key(found[0].owner), "slurm:1234");
  EXPECT_EQ(found[0].gpus, (std::vector<unsigned>{0, 2, 3}));
  EXPECT_EQ(host::owner_key(found[1].owner), "session:9");
  EXPECT_EQ(found[1].gpus, std::vector<unsigned>{2});
  EXPECT_EQ(host::owner_key(found[2].owner), "process:300");  // GPU 1 has no process: no job
  EXPECT_EQ(found[2].gpus, std::vector<unsigned>{4});
}

TEST(rules_test, idle_with_a_process_holding_the_gpu_is_input_starvation) {
  auto in = window(2, 100, [](unsigned g, int) { return busy(1980, 0, g == 0 ? 0.1 : 0.9); });
  for (auto& w : in.gpus) w.facts.processes = std::vector<unsigned>{41000};
  auto f = evaluate(in, {find_rule("input_starved")});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].gpus, std::vector<unsigned>{0});
  EXPECT_NEAR(evidence(f[0], "utilization_pct"), 10, 1e-9);
}

TEST(rules_test, input_starvation_names_the_holders_cpu_use) {
  auto in = window(1, 100, [](unsigned, int) { return busy(1980, 0, 0.1); });
  in.gpus[0].facts.processes = std::vector<unsigned>{41000};
  in.gpus[0].facts.process_cpu_percent[41000] = 99.5;  // preprocessing in the process itself
  auto f = evaluate(in, {find_rule("input_starved")});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NEAR(evidence(f[0], "process_cpu_pct"), 99.5, 1e-9);
  EXPECT_NE(f[0].cause.find("busy on the CPU (100% of a core)"), std::string::npos) << f[0].cause;
  in.gpus[0].facts.process_cpu_percent[41000] = 3;  // waiting for workers, storage, network
  f = evaluate(in, {find_rule("input_starved")});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].cause.find("uses only 3% of a core"), std::string::npos) << f[0].cause;
  in.gpus[0].facts.process_cpu_percent.clear();  // unknown: the general cause, no evidence
  f = evaluate(in, {find_rule("input_starved")});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].cause.find("does not feed the GPU"), std::string::npos);
  for (const auto& e : f[0].evidence) EXPECT_NE(e.key, "process_cpu_pct");
}

TEST(rules_test, findings_come_most_severe_first) {
  auto lost = healthy(0);
  lost.unavailable_code = 15;
  auto off = healthy(1);
  off.persistence_mode = false;
  auto capped = healthy(2);
  capped.clock_reasons = ClockReasons(ClockReasons::sw_power_cap);
  auto f = check({lost, off, capped});
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].severity, Severity::critical);
  EXPECT_EQ(f[1].severity, Severity::warning);
  EXPECT_EQ(f[2].severity, Severity::info);
  EXPECT_EQ(f[2].docs, "docs/doctor.md#power_capped");
}

// xid_errors: the codes NVIDIA documents as needing a reset or meaning corrupt data are
// critical, every other Xid a warning; one finding per GPU, its severity the worst code's.
TEST(rules_test, xid_severity_follows_what_the_code_means) {
  for (std::uint64_t xid : {79, 48, 63, 64, 74, 94, 95, 62, 119, 120}) {
    EXPECT_EQ(xid_info(xid).severity, Severity::critical) << "Xid " << xid;
  }
  for (std::uint64_t xid : {13, 31, 43, 45, 92, 999}) {
    EXPECT_EQ(xid_info(xid).severity, Severity::warning) << "Xid " << xid;
  }
  EXPECT_EQ(xid_info(79).cls, XidClass::bus);
  EXPECT_EQ(xid_info(48).cls, XidClass::memory);
  EXPECT_EQ(xid_info(74).cls, XidClass::nvlink);
  EXPECT_EQ(xid_info(120).cls, XidClass::firmware);
  EXPECT_EQ(xid_info(13).cls, XidClass::other);
  EXPECT_EQ(xid_info(999).name, "");
}

TEST(rules_test, xid_events_give_one_finding_per_gpu_with_counts_and_the_first_time) {
  auto in = window(3, 100, [](unsigned, int) { return busy(1980); });
  using gpu::EventKind;
  auto at = [&](int ms) { return in.from + std::chrono::milliseconds(ms); };
  // GPU 0: two application faults (warning); GPU 1: a fault, then an uncontained ECC error
  // (critical); GPU 2: only ECC events (not Xids: the ecc_errors rule reads the counters).
  in.gpus[0].events = {{0, EventKind::xid, 13, at(2500)}, {0, EventKind::xid, 13, at(4000)}};
  in.gpus[1].events = {{1, EventKind::xid, 31, at(1000)}, {1, EventKind::xid, 95, at(7000)}};
  in.gpus[2].events = {{2, EventKind::single_bit_ecc, 0, at(500)}};
  auto f = evaluate(in, {find_rule("xid_errors")});
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].gpus, std::vector<unsigned>{1});
  EXPECT_EQ(f[0].severity, Severity::critical);
  EXPECT_EQ(evidence(f[0], "xid_95_count"), 1);
  EXPECT_EQ(evidence(f[0], "xid_31_count"), 1);
  EXPECT_EQ(evidence(f[0], "events"), 2);
  EXPECT_DOUBLE_EQ(evidence(f[0], "first_after_s"), 1.0);
  EXPECT_NE(f[0].fix.find("nvidia-smi -r -i 1"), std::string::npos) << f[0].fix;
  EXPECT_NE(f[0].summary.find("Xid 95 (uncontained ECC error) once"), std::string::npos)
      << f[0].summary;
  EXPECT_EQ(f[1].gpus, std::vector<unsigned>{0});
  EXPECT_EQ(f[1].severity, Severity::warning);
  EXPECT_EQ(evidence(f[1], "xid_13_count"), 2);
  EXPECT_DOUBLE_EQ(evidence(f[1], "first_after_s"), 2.5);
  EXPECT_EQ(f[1].evidence.front().text, "13");
  EXPECT_EQ(f[1].docs, "docs/doctor.md#xid_errors");
}

TEST(rules_test, no_xid_events_no_finding) {
  auto in = window(2, 50, [](unsigned, int) { return busy(1980); });
  EXPECT_TRUE(evaluate(in, {find_rule("xid_errors")}).empty());
  // A snapshot (status) never has events.
  EXPECT_EQ(find(check({healthy(0)}), "xid_errors", 0), nullptr);
}

StatusSnapshot v100(unsigned index, unsigned sbe, unsigned dbe, bool pending) {
  auto s = healthy(index);
  s.name = "Tesla V100-SXM2-32GB";
  s.retired_pages = gpu::RetiredPages{sbe, dbe, pending};
  return s;
}

TEST(rules_test, a_pending_page_retirement_needs_a_reset_and_is_critical) {
  const auto f = check({v100(0, 0, 2, true), v100(1, 0, 0, false)});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "retired_pages");
  EXPECT_EQ(f[0].gpus, std::vector<unsigned>{0});
  EXPECT_EQ(f[0].severity, Severity::critical);
  EXPECT_NE(f[0].summary.find("pending"), std::string::npos) << f[0].summary;
  EXPECT_NE(f[0].fix.find("nvidia-smi -r -i 0"), std::string::npos) << f[0].fix;
  EXPECT_EQ(evidence(f[0], "pending"), 1);
  EXPECT_EQ(evidence(f[0], "retired_dbe"), 2);
  EXPECT_EQ(evidence(f[0], "retired_sbe"), 0);
  EXPECT_EQ(exit_code(f), kExitCritical);
}

TEST(rules_test, retired_pages_severity_follows_cause_and_count) {
  // Single-bit retirements only, well below the limit: info.
  auto f = check({v100(0, 3, 0, false)});
  ASSERT_NE(find(f, "retired_pages", 0), nullptr);
  EXPECT_EQ(find(f, "retired_pages", 0)->severity, Severity::info);
  EXPECT_EQ(exit_code(f), 0);
  // A page retired after a double-bit error: warning.
  f = check({v100(0, 3, 1, false)});
  EXPECT_EQ(find(f, "retired_pages", 0)->severity, Severity::warning);
  // Near the limit (48 of 64) with single-bit retirements only: warning, naming the distance.
  f = check({v100(0, 50, 0, false)});
  ASSERT_NE(find(f, "retired_pages", 0), nullptr);
  EXPECT_EQ(find(f, "retired_pages", 0)->severity, Severity::warning);
  EXPECT_TRUE(mentions(f, "within 13 of the 63", 0)) << f[0].summary;
  // More than 15 after double-bit errors: DCGM's soft limit is named.
  f = check({v100(0, 0, 16, false)});
  EXPECT_TRUE(mentions(f, "more than 15 after double-bit errors", 0)) << f[0].summary;
  // At NVIDIA's replacement limit: critical, the fix is an RMA.
  f = check({v100(0, 40, 23, false)});
  ASSERT_NE(find(f, "retired_pages", 0), nullptr);
  EXPECT_EQ(find(f, "retired_pages", 0)->severity, Severity::critical);
  EXPECT_NE(find(f, "retired_pages", 0)->fix.find("RMA"), std::string::npos);
  EXPECT_EQ(evidence(*find(f, "retired_pages", 0), "retired_total"), 63);
  // Nothing retired, nothing pending; and a GPU that remaps rows (not supported): no finding.
  EXPECT_EQ(find(check({v100(0, 0, 0, false)}), "retired_pages", 0), nullptr);
  EXPECT_EQ(find(check({healthy(0)}), "retired_pages", 0), nullptr);
}

}  // namespace gpuclk::rules
