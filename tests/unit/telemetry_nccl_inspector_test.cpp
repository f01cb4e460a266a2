// The NCCL Inspector reader (telemetry/nccl_inspector.h, nccl_communicator.h) on files the real
// plugin wrote (tests/data/nccl_inspector/, README.md there says how) and on hand-made lines for
// what a recording does not hold (a line being written, damage, unknown operations).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "telemetry/nccl_communicator.h"
#include "telemetry/nccl_inspector.h"
#include "util/error.h"

namespace gpuclk::telemetry::nccl {
namespace {

std::string recording(const std::string& name) {
  std::string path = GPUCLK_SOURCE_DIR;
  path += "/tests/data/nccl_inspector/";
  path += name;
  return path;
}

// One line as the plugin writes it (format v4.0, inspector_json.cc's key order).
std::string coll_line(const std::string& id, int rank, int ranks, unsigned pid, std::uint64_t sn,
                      std::uint64_t exec_us, const std::string& op = "AllReduce",
                      std::uint64_t bytes = 1048576) {
  return fmt::format(
      R"({{"header":{{"id":"{}","comm_name":"unknown","rank":{},"n_ranks":{},"nnodes":1}},)"
      R"("metadata":{{"inspector_output_format_version":"v4.0","git_rev":"","rec_mechanism":)"
      R"("nccl_profiler_interface","dump_timestamp_us":{},"hostname":"node1","pid":{}}},)"
      R"("coll_perf":{{"coll":"{}","coll_sn":{},"coll_msg_size_bytes":{},"coll_exec_time_us":{},)"
      R"("coll_timing_source":"kernel_gpu","coll_algobw_gbs":1.000000,"coll_busbw_gbs":"nan"}}}})",
      id, rank, ranks, 1700000000000000ULL + sn * 1000, pid, op, sn, bytes, exec_us);
}

TEST(telemetry_nccl_inspector_test, every_line_the_plugin_wrote_is_a_record) {
  const std::vector<std::pair<std::string, std::size_t>> expected = {{"healthy_2gpu", 72},
                                                                     {"late_rank_4gpu", 80},
                                                                     {"late_rank_2gpu_plain", 48},
                                                                     {"comm_bound_pcie_2gpu", 32}};
  for (const auto& [name, records] : expected) {
    const ParsedText parsed = parse_inspector_directory(recording(name));
    EXPECT_EQ(parsed.records.size(), records) << name;
    EXPECT_TRUE(parsed.problems.empty()) << name << ": " << parsed.problems.front().message;
  }
}

TEST(telemetry_nccl_inspector_test, a_record_has_its_communicator_process_and_timing) {
  const ParsedText parsed = parse_inspector_directory(recording("healthy_2gpu"));
  auto it = std::find_if(parsed.records.begin(), parsed.records.end(), [](const auto& r) {
    return r.rank == 0 && r.sequence == 1 && !r.point_to_point;
  });
  ASSERT_NE(it, parsed.records.end());
  const InspectorRecord& r = *it;
  EXPECT_EQ(r.comm_id, "0x7f8c496ae9f661");
  EXPECT_EQ(r.comm_name, "DP");
  EXPECT_EQ(r.ranks, 2);
  EXPECT_EQ(r.nodes, 1u);
  EXPECT_EQ(r.format_version, "v4.0");
  EXPECT_FALSE(r.hostname.empty());
  EXPECT_GT(r.pid, 0u);
  EXPECT_EQ(r.operation, Operation::all_reduce);
  EXPECT_EQ(r.message_bytes, 25u << 20);
  EXPECT_EQ(r.timing_source, "kernel_gpu");
  EXPECT_GT(r.exec_time_us, 0u);
  EXPECT_GT(r.busbw_gbs, 0);
  // Verbose: the call, the first kernel start and the last kernel stop, in that order.
  ASSERT_TRUE(r.call_time_us && r.kernel_start_us && r.kernel_stop_us);
  EXPECT_LE(*r.call_time_us, *r.kernel_start_us);
  EXPECT_LT(*r.kernel_start_us, *r.kernel_stop_us);
}

TEST(telemetry_nccl_inspector_test, the_file_name_carries_the_pid_of_its_records) {
  for (const auto& entry : std::filesystem::directory_iterator(recording("healthy_2gpu"))) {
    const std::string name = entry.path().filename().string();
    ASSERT_TRUE(is_inspector_file_name(name)) << name;
    const ParsedText one = parse_inspector_file(entry.path().string());
    ASSERT_FALSE(one.records.empty());
    const std::string pid = name.substr(name.rfind("-pid") + 4);
    EXPECT_EQ(std::to_string(one.records.front().pid) + ".log", pid);
  }
  EXPECT_TRUE(is_inspector_file_name("gpu-node-07-pid123.log"));
  EXPECT_FALSE(is_inspector_file_name("node1-pid.log"));
  EXPECT_FALSE(is_inspector_file_name("-pid12.log"));
  EXPECT_FALSE(is_inspector_file_name("node1-pid12.prom"));
  EXPECT_FALSE(is_inspector_file_name("README.md"));
}

TEST(telemetry_nccl_inspector_test, point_to_point_records_name_the_peer) {
  const ParsedText parsed = parse_inspector_directory(recording("healthy_2gpu"));
  std::size_t sends = 0, recvs = 0;
  for (const auto& r : parsed.records) {
    if (!r.point_to_point) continue;
    EXPECT_EQ(r.message_bytes, 8u << 20);
    ASSERT_TRUE(r.peer);
    if (r.operation == Operation::send) {
      ++sends;
      EXPECT_EQ(r.rank, 0);
      EXPECT_EQ(*r.peer, 1);
    } else if (r.operation == Operation::recv) {
      ++recvs;
      EXPECT_EQ(r.rank, 1);
      EXPECT_EQ(*r.peer, 0);
    }
  }
  EXPECT_EQ(sends, 12u);
  EXPECT_EQ(recvs, 12u);
}

TEST(telemetry_nccl_inspector_test, plain_records_have_no_traces) {
  const ParsedText parsed = parse_inspector_directory(recording("late_rank_2gpu_plain"));
  for (const auto& r : parsed.records) {
    EXPECT_FALSE(r.call_time_us || r.kernel_start_us || r.kernel_stop_us);
    EXPECT_GT(r.dump_time_us, 0u);
  }
}

TEST(telemetry_nccl_inspector_test, a_line_still_being_written_is_left_for_the_next_read) {
  const std::string first = coll_line("0xabc", 0, 2, 7, 1, 100) + "\n";
  const std::string second = coll_line("0xabc", 0, 2, 7, 2, 100);
  const std::string text = first + second.substr(0, 40);
  const ParsedText parsed = parse_inspector_text(text, "t");
  EXPECT_EQ(parsed.records.size(), 1u);
  EXPECT_TRUE(parsed.problems.empty());
  EXPECT_EQ(parsed.consumed, first.size());
  // The next read starts there, with the line complete.
  const ParsedText next = parse_inspector_text(second + "\n", "t", 2);
  ASSERT_EQ(next.records.size(), 1u);
  EXPECT_EQ(next.records.front().sequence, 2u);
}

TEST(telemetry_nccl_inspector_test, damaged_lines_are_problems_with_their_line_number) {
  const std::string text = coll_line("0xabc", 0, 2, 7, 1, 100) + "\n" +  // 1: fine
                           "\n" +                                        // 2: blank, skipped
                           "{not json\n" +                               // 3
                           coll_line("0xabc", 0, 2, 7, 2, 100, "Gather") + "\n" +  // 4
                           coll_line("0xabc", 3, 2, 7, 3, 100) + "\n" +            // 5: rank 3 of 2
                           R"({"metadata":{"pid":1},"coll_perf":{}})"
                           "\n";  // 6: no header
  const ParsedText parsed = parse_inspector_text(text, "f.log");
  ASSERT_EQ(parsed.records.size(), 1u);
  ASSERT_EQ(parsed.problems.size(), 4u);
  EXPECT_EQ(parsed.problems[0].line, 3u);
  EXPECT_EQ(parsed.problems[0].message, "not a JSON object");
  EXPECT_EQ(parsed.problems[1].line, 4u);
  EXPECT_EQ(parsed.problems[1].message, "unknown operation \"Gather\"");
  EXPECT_EQ(parsed.problems[2].line, 5u);
  EXPECT_EQ(parsed.problems[2].message, "rank 3 of 2 ranks");
  EXPECT_EQ(parsed.problems[3].line, 6u);
  EXPECT_EQ(parsed.problems[3].message, "no \"header\"");
  EXPECT_EQ(parsed.problems[3].source, "f.log");
  // The plugin writes NaN as the string "nan": no bandwidth, not a problem.
  EXPECT_EQ(parsed.records.front().busbw_gbs, 0);
}

TEST(telemetry_nccl_inspector_test, a_file_cut_mid_line_says_so) {
  const auto dir = std::filesystem::temp_directory_path() / "gpuclk-inspector-cut";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "node1-pid7.log").string();
  std::ofstream(path) << coll_line("0xabc", 0, 2, 7, 1, 100) << "\n{\"header\":{";
  const ParsedText parsed = parse_inspector_file(path);
  EXPECT_EQ(parsed.records.size(), 1u);
  ASSERT_EQ(parsed.problems.size(), 1u);
  EXPECT_EQ(parsed.problems.front().line, 2u);
  EXPECT_NE(parsed.problems.front().message.find("incomplete last line"), std::string::npos);
  std::ofstream(dir / "notes.txt") << "not the plugin's\n";
  EXPECT_EQ(parse_inspector_directory(dir.string()).records.size(), 1u);  // notes.txt skipped
  std::filesystem::remove_all(dir);
  try {
    parse_inspector_directory(dir.string());
    FAIL() << "a missing directory must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_argument);
    EXPECT_NE(std::string(e.what()).find("cannot read NCCL Inspector directory"),
              std::string::npos);
  }
}

std::vector<Communicator> communicators_of(const std::string& name) {
  const ParsedText parsed = parse_inspector_directory(recording(name));
  return build_communicators(parsed.records);
}

TEST(telemetry_nccl_inspector_test, a_healthy_job_has_no_delayed_collectives) {
  const auto comms = communicators_of("healthy_2gpu");
  ASSERT_EQ(comms.size(), 1u);
  const Communicator& c = comms.front();
  EXPECT_EQ(c.id, "0x7f8c496ae9f661");
  EXPECT_EQ(c.name, "DP");
  EXPECT_TRUE(c.all_ranks_seen());
  EXPECT_EQ(c.arrival, ArrivalMethod::execution_time);
  EXPECT_EQ(c.shared_operations, 24u);
  EXPECT_EQ(c.delayed_operations, 0u);
  EXPECT_EQ(c.latest(), nullptr);
  EXPECT_FALSE(c.span_from_dump_times);
  // Per kind: all-reduce (24 of 25 MiB), send and recv (12 of 8 MiB each).
  ASSERT_EQ(c.operations.size(), 3u);
  const OperationTotals& ar = c.operations[0];
  EXPECT_EQ(ar.operation, Operation::all_reduce);
  EXPECT_EQ(ar.count, 24u);
  EXPECT_DOUBLE_EQ(ar.message_bytes, 24.0 * (25 << 20));
  EXPECT_DOUBLE_EQ(ar.bus_bytes, ar.algorithm_bytes);  // 2 ranks: factor 1
  // Recorded at 300 GB/s bus bandwidth (a few µs of rounding per 87 µs operation).
  ASSERT_TRUE(c.least_waiting[0].bus_bandwidth());
  EXPECT_GT(*c.least_waiting[0].bus_bandwidth(), 200e9);
  EXPECT_LT(*c.least_waiting[0].bus_bandwidth(), 320e9);
  EXPECT_EQ(c.operations[1].operation, Operation::send);
  EXPECT_EQ(c.operations[2].operation, Operation::recv);
  // 12 steps of 40 ms compute: the records span about half a second, of it ~0.6 % in NCCL.
  EXPECT_GT(c.span_seconds(), 0.4);
  EXPECT_LT(*c.mean_seconds() / c.span_seconds(), 0.02);
}

TEST(telemetry_nccl_inspector_test, the_planted_late_rank_is_last_at_every_delayed_collective) {
  const auto comms = communicators_of("late_rank_4gpu");
  ASSERT_EQ(comms.size(), 1u);
  const Communicator& c = comms.front();
  EXPECT_EQ(c.members.size(), 4u);
  EXPECT_EQ(c.shared_operations, 20u);
  // The first all-reduce of each of the 10 steps waited for rank 2's 12 ms.
  EXPECT_EQ(c.delayed_operations, 10u);
  const RankActivity* late = c.latest();
  ASSERT_NE(late, nullptr);
  EXPECT_EQ(late->rank, 2);
  EXPECT_EQ(late->last_arrivals, 10u);
  EXPECT_NEAR(late->lateness_us, 12000, 1500);
  for (const RankActivity& m : c.members) {
    if (m.rank == 2) {
      EXPECT_LT(m.waited_us, 5000);
    } else {
      EXPECT_NEAR(m.waited_us, 10 * 12000, 15000);  // 12 ms at each of 10 collectives
      EXPECT_GT(m.seconds, 40 * late->seconds);     // their time in NCCL is mostly the wait
    }
  }
}

TEST(telemetry_nccl_inspector_test, without_traces_execution_times_find_the_late_rank) {
  const auto comms = communicators_of("late_rank_2gpu_plain");
  ASSERT_EQ(comms.size(), 1u);
  const Communicator& c = comms.front();
  EXPECT_TRUE(c.span_from_dump_times);
  EXPECT_EQ(c.arrival, ArrivalMethod::execution_time);
  ASSERT_NE(c.latest(), nullptr);
  EXPECT_EQ(c.latest()->rank, 1);
  EXPECT_EQ(c.latest()->last_arrivals, c.delayed_operations);
  EXPECT_EQ(c.delayed_operations, 12u);
  EXPECT_NEAR(c.latest()->lateness_us, 20000, 2000);
}

TEST(telemetry_nccl_inspector_test, a_slow_link_shows_in_every_ranks_bandwidth) {
  const auto comms = communicators_of("comm_bound_pcie_2gpu");
  ASSERT_EQ(comms.size(), 1u);
  const Communicator& c = comms.front();
  EXPECT_EQ(c.name, "DP pcie");
  EXPECT_EQ(c.delayed_operations, 0u);
  ASSERT_TRUE(c.least_waiting.front().bus_bandwidth());
  EXPECT_NEAR(*c.least_waiting.front().bus_bandwidth(), 6e9, 0.3e9);  // recorded at 6 GB/s
  EXPECT_NEAR(*c.mean_seconds(), 16 * 104857600 / 6e9, 0.01);         // 16 × 100 MiB
  EXPECT_GT(*c.mean_seconds() / c.span_seconds(), 0.5);
}

TEST(telemetry_nccl_inspector_test, collectives_missing_on_a_rank_are_not_compared) {
  std::vector<InspectorRecord> records;
  for (std::uint64_t sn = 1; sn <= 4; ++sn) {
    for (int rank = 0; rank < 2; ++rank) {
      if (sn == 4 && rank == 1) continue;  // rank 1's last record was not written yet
      const auto parsed = parse_inspector_text(
          coll_line("0xabc", rank, 2, 100u + unsigned(rank), sn, rank == 1 ? 100 : 5100) + "\n",
          "t");
      records.push_back(parsed.records.at(0));
    }
  }
  const auto comms = build_communicators(records);
  ASSERT_EQ(comms.size(), 1u);
  EXPECT_EQ(comms[0].shared_operations, 3u);
  EXPECT_EQ(comms[0].delayed_operations, 3u);  // rank 1 ran 5 ms shorter: it came 5 ms late
  ASSERT_NE(comms[0].latest(), nullptr);
  EXPECT_EQ(comms[0].latest()->rank, 1);
  EXPECT_NEAR(comms[0].latest()->lateness_us, 5000, 1);
  EXPECT_EQ(comms[0].operations[0].count, 4u);  // the typical rank's count: the larger
  // A record of another rank count under the same id is dropped.
  const auto stray = parse_inspector_text(coll_line("0xabc", 0, 4, 999, 9, 100) + "\n", "t");
  records.push_back(stray.records.at(0));
  EXPECT_EQ(build_communicators(records)[0].members.size(), 2u);
}

TEST(telemetry_nccl_inspector_test, records_added_as_they_come_give_the_same_model) {
  // A service reads the ranks' files as they grow: records interleave across ranks. The model
  // is the one the whole files give, read one after the other.
  const ParsedText parsed = parse_inspector_directory(recording("late_rank_4gpu"));
  std::vector<InspectorRecord> by_time = parsed.records;
  std::stable_sort(by_time.begin(), by_time.end(),
                   [](const auto& a, const auto& b) { return a.dump_time_us < b.dump_time_us; });
  CommunicatorTracker tracker;
  for (const auto& r : by_time) tracker.add(r);
  const auto streamed = tracker.communicators();
  const auto whole = build_communicators(parsed.records);
  ASSERT_EQ(streamed.size(), 1u);
  EXPECT_EQ(tracker.records(), 80u);
  EXPECT_EQ(streamed[0].shared_operations, whole[0].shared_operations);
  EXPECT_EQ(streamed[0].delayed_operations, whole[0].delayed_operations);
  ASSERT_NE(streamed[0].latest(), nullptr);
  EXPECT_EQ(streamed[0].latest()->rank, 2);
  EXPECT_DOUBLE_EQ(streamed[0].latest()->lateness_us, whole[0].latest()->lateness_us);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(streamed[0].members[i].waited_us, whole[0].members[i].waited_us);
    EXPECT_DOUBLE_EQ(streamed[0].members[i].seconds, whole[0].members[i].seconds);
  }
}

TEST(telemetry_nccl_inspector_test, ranks_on_other_nodes_are_waited_for_within_a_bound) {
  // Ranks 0 and 1 of a 4-rank communicator write here; 2 and 3 on another node. Their
  // collectives never complete here: judged among the ranks seen, when the model is taken or
  // when more than max_pending wait.
  BuildOptions bounded;
  bounded.max_pending = 3;
  CommunicatorTracker tracker(bounded);
  for (std::uint64_t sn = 1; sn <= 10; ++sn) {
    for (int rank = 0; rank < 2; ++rank) {
      const auto parsed = parse_inspector_text(
          coll_line("0xn", rank, 4, 50u + unsigned(rank), sn, rank == 0 ? 100 : 3100) + "\n", "t");
      tracker.add(parsed.records.at(0));
    }
  }
  const auto comms = tracker.communicators();
  ASSERT_EQ(comms.size(), 1u);
  EXPECT_FALSE(comms[0].all_ranks_seen());
  EXPECT_EQ(comms[0].shared_operations, 10u);  // 7 judged when evicted, 3 when taken
  EXPECT_EQ(comms[0].delayed_operations, 10u);
  EXPECT_EQ(comms[0].latest()->rank, 0);  // rank 0 ran 3 ms shorter: it came 3 ms late
}

TEST(telemetry_nccl_inspector_test, ranks_get_the_gpus_their_processes_hold) {
  std::vector<InspectorRecord> records;
  // Communicator A: ranks 0 and 1 in pids 10 and 11; communicator B: ranks 0 and 1 in pid 20
  // (one process driving two GPUs, as nccl-tests -g 2).
  for (const auto& [id, rank, pid] : std::vector<std::tuple<std::string, int, unsigned>>{
           {"0xa", 0, 10}, {"0xa", 1, 11}, {"0xb", 0, 20}, {"0xb", 1, 20}}) {
    records.push_back(
        parse_inspector_text(coll_line(id, rank, 2, pid, 1, 100) + "\n", "t").records.at(0));
  }
  auto comms = build_communicators(records);
  const std::map<unsigned, std::vector<GpuRef>> held = {
      // pid 10: its own GPU 3 (70 GB) and a stray context on GPU 0 (500 MB).
      {10, {{0, "00000000:18:00.0", 500u << 20}, {3, "00000000:9A:00.0", 70ull << 30}}},
      {11, {{5, "00000000:BA:00.0", std::nullopt}}},
      {20, {{7, "00000000:DB:00.0", 1u << 30}, {6, "00000000:CB:00.0", 1u << 30}}}};
  attach_gpus(comms, held);
  ASSERT_EQ(comms.size(), 2u);
  ASSERT_TRUE(comms[0].members[0].gpu && comms[0].members[1].gpu);
  EXPECT_EQ(comms[0].members[0].gpu->index, 3u);
  EXPECT_EQ(comms[0].members[0].gpu->bus_id, "00000000:9A:00.0");
  EXPECT_EQ(comms[0].members[1].gpu->index, 5u);
  EXPECT_EQ(comms[1].members[0].gpu->index, 6u);  // rank order to ascending index
  EXPECT_EQ(comms[1].members[1].gpu->index, 7u);
  // A pid not listed, or holding fewer GPUs than ranks, keeps none.
  auto again = build_communicators(records);
  attach_gpus(again, {{20, {{6, "x", std::nullopt}}}});
  EXPECT_FALSE(again[0].members[0].gpu);
  EXPECT_FALSE(again[1].members[0].gpu);
}

}  // namespace
}  // namespace gpuclk::telemetry::nccl
