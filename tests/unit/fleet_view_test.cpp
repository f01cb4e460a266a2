// What `gpuclk fleet` and `fleet --job` show (fleet/fleet_view.h, fleet/job_report.h) over
// hand-made snapshots: the rules each GPU broke in its row, N/A for what Prometheus lacks, the
// --dmon status line's sums, and the job view's rows and lines under its table.
#include "fleet/fleet_view.h"

#include <gtest/gtest.h>

#include <sstream>

#include "fleet/job_report.h"

namespace gpuclk::fleet {
namespace {

Snapshot two_gpus() {
  Snapshot s;
  s.range_s = 600;
  s.nodes.push_back({"a:9400", 1.0, true, 2.5e6, 2});
  for (unsigned i = 0; i < 2; ++i) {
    GpuState g;
    g.instance = "a:9400";
    g.index = i;
    g.model = "NVIDIA H100 80GB HBM3";
    g.sm_clock_mhz = 1980;
    g.power_limit_w = 700;
    g.reason_fraction = {{"sw_power_cap", 0.5}};
    s.gpus.push_back(g);
  }
  return s;
}

FleetFinding finding_on(const std::string& rule, unsigned gpu) {
  FleetFinding f;
  f.instance = "a:9400";
  f.finding.rule = rule;
  f.finding.severity = rules::Severity::warning;
  f.finding.gpus = {gpu};
  f.finding.summary = rule + " on GPU " + std::to_string(gpu);
  f.finding.fix = "look";
  return f;
}

std::string cell(const output::Table& t, std::size_t row, const std::string& key) {
  for (std::size_t c = 0; c < t.columns.size(); ++c)
    if (t.columns[c].key == key) return output::to_text(t.rows[row][c], false);
  return "no column " + key;
}

TEST(fleet_view_test, each_gpu_row_names_the_rules_it_broke) {
  const auto snap = two_gpus();
  const std::vector<FleetFinding> findings = {finding_on("throttled", 1),
                                              finding_on("settings_differ", 1)};
  const auto t = gpu_table(snap, findings);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(cell(t, 0, "findings"), "-");
  EXPECT_EQ(cell(t, 1, "findings"), "settings_differ,throttled");
  EXPECT_EQ(cell(t, 1, "sm_clock_mhz"), "1980");
  EXPECT_EQ(cell(t, 1, "power_w"), "N/A");
  const auto nodes = node_table(snap);
  EXPECT_EQ(nodes.columns.back().header, "Energy kJ (600 s)");
  EXPECT_EQ(cell(nodes, 0, "energy_j"), "2500.0");
  std::ostringstream lines;
  print_findings(lines, findings);
  EXPECT_EQ(lines.str().rfind("warning: throttled on GPU 1  [throttled]\n", 0), 0u) << lines.str();
}

TEST(fleet_view_test, the_dmon_status_line_sums_the_nodes) {
  NodeLine a, b;
  a.instance = "a";
  a.gpus = 8, a.lost = 1, a.power_w = 3000, a.power_limit_w = 5600, a.critical = 1;
  b.instance = "b";
  b.gpus = 8, b.power_w = 2500, b.power_limit_w = 5600, b.warning = 2;
  EXPECT_EQ(node_lines_heading({a, b}, "12:00:00", 5),
            "12:00:00  2 nodes, 16 GPUs (1 lost), 5.5 of 11.2 kW; findings: 1 critical, 2 "
            "warnings  (every 5 s, Ctrl-C ends)\n");
  EXPECT_EQ(node_line_columns({a, b}, true).front().key, "time");
  EXPECT_EQ(node_line_row(a, "").size(), node_line_columns({a}, false).size());
}

TEST(fleet_view_test, a_job_shows_its_gpus_totals_and_why_no_straggler) {
  auto snap = two_gpus();
  for (unsigned i = 0; i < 2; ++i)
    snap.jobs.push_back({"a:9400", i, "slurm:7", "Slurm job 7", "ana", 1800, 900, 1.5e5});
  JobReport job;
  job.key = "slurm:7";
  job.name = "Slurm job 7";
  job.user = "ana";
  job.gpus = job_gpus(snap, job.key);
  job.nodes = 1;
  job.energy_j = 3e5;
  job.gpu_hours = 1;
  ASSERT_EQ(job.gpus.size(), 2u);
  EXPECT_EQ(job_heading(job, snap.range_s),
            "Slurm job 7 (user ana): 2 GPUs on 1 node over the last 600 s\n");
  const auto t = job_table(job, snap.range_s);
  EXPECT_EQ(cell(t, 0, "held_back"), "sw_power_cap 300 s");
  EXPECT_EQ(cell(t, 0, "energy_kj"), "150.0");
  EXPECT_EQ(cell(t, 0, "busy_pct"), "50");
  EXPECT_EQ(job_totals(job),
            "\nTotal: 300.0 kJ booked to the job, 1.000 GPU-hours\nNo straggler: no GPU of the "
            "job ran clearly slower than its others.\n");
}

}  // namespace
}  // namespace gpuclk::fleet
