// The node service's parts over libnvml-sim.so, as gpuclk serve runs them: the delegated
// writer (journaled writes, put back), the profile keeper (applied at start, drift corrected on
// its thread) and serve::Node (its socket answers, refuses settings without a policy, and a
// second Node on the same socket stops before touching a GPU), and its NcclJobs (a job's NCCL
// Inspector files read on its thread, served and judged). Simulated time is frozen; the
// keeper's checks run on wall time (1 s, the shortest --profile-check).
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include "control/journal_store.h"
#include "control/request.h"
#include "entry_points.gen.h"
#include "gpu/device.h"
#include "nvml/api.h"
#include "serve/client.h"
#include "serve/delegate_writer.h"
#include "serve/node.h"
#include "serve/profile_keeper.h"
#include "sim_abi_fixture.h"
#include "util/clock.h"
#include "util/error.h"

namespace gpuclk::sim::testing {
namespace {

using namespace std::chrono_literals;

// Named for the service, so scripts/ci/sanitizers.sh's TSan selection ("serve") takes them.
class serve_node_test : public sim_abi_test {
 protected:
  // Runs body(GPUs, the test's directory) in a child process on the default simulated node,
  // its time frozen at 10 s.
  void on_default_node(const std::function<void(gpu::DeviceSet&, const fs::path&)>& body);
};

std::unique_ptr<nvml::Api> open_sim() {
  // Appended, not `std::string(DIR) + "..."`: gcc 12's -Warray-bounds misreads that at -O2.
  std::string path = GPUCLK_BINARY_DIR;
  path += "/libnvml-sim.so";
  return nvml::Api::open(path);
}

void serve_node_test::on_default_node(
    const std::function<void(gpu::DeviceSet&, const fs::path&)>& body) {
  const auto dir = dir_;
  expect_passed(in_child(frozen("default", "10"), [&body, dir](Nvml&) {
    auto api = open_sim();
    gpu::DeviceSet set(*api);
    body(set, dir);
  }));
}

double watts(const gpu::Device& d) {
  const auto r = d.power_limit();
  return r ? r->value() : -1;
}

control::SessionOptions session_in(const fs::path& dir) {
  control::SessionOptions o;
  o.journal_dir = dir / "journal";
  o.name = "gpuclk serve";
  return o;
}

// A simulated node's options: its socket and journal in `dir`, every GPU selected.
serve::NodeOptions node_options(const fs::path& dir, const gpu::DeviceSet& set) {
  serve::NodeOptions options;
  options.service.simulated = "default";
  options.socket_path = (dir / "node.sock").string();
  options.session = session_in(dir);
  options.selected = set.all();
  return options;
}

// The value of series `name` for GPU position `gpu` (-1 when absent).
double series(const std::vector<serve::ExtraSeries>& all, const std::string& name,
              std::size_t gpu) {
  for (const auto& s : all)
    if (s.name == name && s.gpu == gpu) return s.value;
  return -1;
}

TEST_F(serve_node_test, delegate_writer_journals_its_write_and_puts_it_back) {
  on_default_node([](gpu::DeviceSet& set, const fs::path& dir) {
    const double before = watts(set[1]);
    ASSERT_GT(before, 500);
    serve::DelegateWriter writer(session_in(dir), set.all());
    auto backend = writer.backend();
    EXPECT_EQ(backend.journal, (dir / "journal" / "journal.json").string());

    control::Request request;
    request.power_limit = control::parse_power_limit("500", "power_limit_w");
    const auto checked = backend.validate({1}, request, false);
    ASSERT_EQ(checked.targets.size(), 1u);
    const auto applied = backend.apply({1}, checked.targets, "set (delegated)", false, false);
    EXPECT_EQ(applied.report.exit, ExitCode::ok) << applied.report.error;
    EXPECT_DOUBLE_EQ(watts(set[1]), 500);
    EXPECT_DOUBLE_EQ(watts(set[0]), before);  // only the GPU asked for
    ASSERT_EQ(applied.journaled.size(), 1u);
    EXPECT_FALSE(applied.journaled[0]);  // the journal had no entry for it before
    const auto journal = control::JournalStore(dir / "journal").load();
    ASSERT_NE(journal.find(set[1].uuid()), nullptr);
    EXPECT_EQ(journal.find(set[0].uuid()), nullptr);

    // A value the GPU cannot take is refused before anything is written (exit 2).
    control::Request too_high;
    too_high.power_limit = control::parse_power_limit("5000", "power_limit_w");
    try {
      backend.validate({1}, too_high, false);
      ADD_FAILURE() << "5000 W was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_argument) << e.what();
    }

    serve::DelegateBackend::PutBack back;
    back.position = 1;
    back.settings = applied.before[0];
    back.expected = checked.targets[0];
    back.drop_from_journal = true;
    const auto restored = backend.put_back({back}, "restore (delegated)");
    EXPECT_EQ(restored.exit, ExitCode::ok) << restored.error;
    EXPECT_DOUBLE_EQ(watts(set[1]), before);
    EXPECT_TRUE(control::JournalStore(dir / "journal").load().clean());
  });
}

TEST_F(serve_node_test, profile_keeper_applies_at_start_and_corrects_drift) {
  on_default_node([](gpu::DeviceSet& set, const fs::path& dir) {
    const auto profile = dir / "profile.toml";
    std::ofstream(profile) << "gpus = \"1,2\"\n[settings]\npower_limit_w = 450\n";
    serve::ProfileKeeper keeper(session_in(dir), profile.string(), 1000ms, false, set, set.all());
    EXPECT_DOUBLE_EQ(watts(set[1]), 450);
    EXPECT_DOUBLE_EQ(watts(set[2]), 450);
    EXPECT_GT(watts(set[0]), 450);  // not in the profile
    EXPECT_EQ(keeper.settings(), std::set<control::Setting>{control::Setting::power_limit});
    EXPECT_EQ(series(keeper.series(), "gpuclk_profile_in_sync", 2), 1);

    // Another tool changes GPU 2's limit: the next check puts the profile's back.
    nvmlDevice_t handle = nullptr;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetHandleByIndex_v2)(2, &handle), 0);
    ASSERT_EQ(SIM_FN(nvmlDeviceSetPowerManagementLimit)(handle, 600000), 0);
    EXPECT_DOUBLE_EQ(watts(set[2]), 600);
    keeper.start();
    const auto give_up = std::chrono::steady_clock::now() + 10s;
    while (series(keeper.series(), "gpuclk_profile_drift_corrections_total", 2) < 1 &&
           std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(50ms);
    keeper.stop();
    EXPECT_EQ(series(keeper.series(), "gpuclk_profile_drift_corrections_total", 2), 1);
    EXPECT_EQ(series(keeper.series(), "gpuclk_profile_drift_corrections_total", 1), 0);
    EXPECT_DOUBLE_EQ(watts(set[2]), 450);
  });
}

TEST_F(serve_node_test, node_answers_on_its_socket_and_stops_in_order) {
  on_default_node([](gpu::DeviceSet& set, const fs::path& dir) {
    ScaledClock clock(0);
    auto options = node_options(dir, set);
    serve::Node node(set, clock, options);
    const auto status = node.start();
    EXPECT_NE(status.find("4 GPUs (simulated: default)"), std::string::npos) << status;
    EXPECT_NE(status.find("no HTTP"), std::string::npos) << status;

    auto client = serve::Client::connect(options.socket_path);
    ASSERT_TRUE(client);
    const auto hello = client->request({{"request", "hello"}});
    EXPECT_EQ(hello.at("gpus").size(), 4u) << hello.dump();
    EXPECT_FALSE(hello.contains("delegation"));  // no policy
    // Settings from users need a policy: refused, exit 4.
    try {
      client->request({{"request", "set"}, {"settings", {{"power_limit_w", "500"}}}});
      ADD_FAILURE() << "a set was accepted without a policy";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::no_permission) << e.what();
    }
    // A second service on the same socket stops in its constructor.
    try {
      serve::Node second(set, clock, options);
      ADD_FAILURE() << "a second Node took the same socket";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(options.socket_path), std::string::npos) << e.what();
    }
    client.reset();
    EXPECT_EQ(node.stop(), ExitCode::ok);
    EXPECT_EQ(node.stop(), ExitCode::ok);  // idempotent
    EXPECT_FALSE(serve::Client::connect(options.socket_path));
  });
}

// Status and a view are serialized once per node state and shared by every request until the
// next refresh; the shared text is what handle() builds, and a bad view is still an error.
TEST_F(serve_node_test, state_answers_are_built_once_per_refresh_and_shared) {
  on_default_node([](gpu::DeviceSet& set, const fs::path& dir) {
    ScaledClock clock(0);
    auto options = node_options(dir, set);
    options.views.push_back({"rows", [](const gpu::Device& d, const gpu::DeviceSet&) {
                               return nlohmann::json{{"index", d.index()}};
                             }});
    serve::Node node(set, clock, options);
    node.start();
    auto& service = node.service();
    const serve::Peer peer;
    const nlohmann::json status{{"v", 1}, {"request", "status"}};
    const nlohmann::json view{{"v", 1}, {"request", "view"}, {"name", "rows"}};
    // The view's first request puts it in demand; its answer waits for the refresh that reads
    // it as a one-line stream, so the socket's other clients do not wait with it.
    const auto v0 = service.answer(view, peer);
    ASSERT_TRUE(v0.stream);
    EXPECT_FALSE(v0.text);
    std::optional<std::string> first;
    bool last = false;
    for (int i = 0; i < 500 && !first; ++i) {
      first = v0.stream->next(last);
      if (!first) std::this_thread::sleep_for(10ms);
    }
    ASSERT_TRUE(first);
    EXPECT_TRUE(last);
    EXPECT_EQ(nlohmann::json::parse(*first).at("rows").size(), 4u) << *first;
    const auto generation = service.state()->generation;
    const auto a = service.answer(status, peer);
    const auto b = service.answer(status, peer);
    const auto v1 = service.answer(view, peer);  // in demand now: answered at once
    const auto v2 = service.answer(view, peer);
    ASSERT_TRUE(a.text && b.text && v1.text && v2.text);
    if (service.state()->generation == generation) {
      EXPECT_EQ(a.text, b.text);  // one text
      EXPECT_EQ(v1.text, v2.text);
    }
    EXPECT_EQ(nlohmann::json::parse(*v2.text).at("rows"), service.handle(view, peer).at("rows"));
    EXPECT_EQ(nlohmann::json::parse(*v2.text).at("rows").size(), 4u) << *v2.text;
    const auto parsed = nlohmann::json::parse(*a.text);
    EXPECT_TRUE(parsed.at("ok").get<bool>()) << *a.text;
    EXPECT_EQ(parsed.at("status").size(), 4u);
    // The next refresh (every second) brings a new text.
    const auto seen = service.state()->generation;
    for (int i = 0; i < 100 && service.state()->generation == seen; ++i)
      std::this_thread::sleep_for(50ms);
    ASSERT_GT(service.state()->generation, seen);
    const auto c = service.answer(status, peer);
    ASSERT_TRUE(c.text);
    EXPECT_NE(c.text, b.text);
    EXPECT_EQ(nlohmann::json::parse(*c.text), service.handle(status, peer));
    // Errors are answers of their own, never shared.
    const auto bad = service.answer({{"v", 1}, {"request", "view"}, {"name", "nope"}}, peer);
    EXPECT_FALSE(bad.text);
    EXPECT_FALSE(bad.response.at("ok").get<bool>()) << bad.response.dump();
    EXPECT_EQ(bad.response.at("code"), static_cast<int>(ExitCode::bad_argument));
    EXPECT_NE(bad.response.value("hint", std::string()).find("rows"), std::string::npos);
    const auto odd = service.answer({{"v", "one"}, {"request", "status"}}, peer);
    EXPECT_FALSE(odd.text);
    EXPECT_FALSE(odd.response.at("ok").get<bool>()) << odd.response.dump();
    node.stop();
  });
}

// A view's first request waits for the refresh that reads it without holding up the socket:
// while that read is held (the view's reader blocks until the test lets it go), another client
// is answered, and the view's answer comes once the read is done.
TEST_F(serve_node_test, a_views_first_request_does_not_hold_up_the_other_clients) {
  on_default_node([](gpu::DeviceSet& set, const fs::path& dir) {
    struct Gate {
      std::mutex m;
      std::condition_variable cv;
      bool open = false;
      int waiting = 0;
      void pass() {
        std::unique_lock lock(m);
        ++waiting;
        cv.notify_all();
        cv.wait(lock, [&] { return open; });
      }
      void let_go() {
        std::lock_guard lock(m);
        open = true;
        cv.notify_all();
      }
      bool held(std::chrono::milliseconds wait) {
        std::unique_lock lock(m);
        return cv.wait_for(lock, wait, [&] { return waiting > 0; });
      }
    };
    auto gate = std::make_shared<Gate>();
    ScaledClock clock(0);
    auto options = node_options(dir, set);
    options.views.push_back({"held", [gate](const gpu::Device& d, const gpu::DeviceSet&) {
                               gate->pass();
                               return nlohmann::json{{"index", d.index()}};
                             }});
    serve::Node node(set, clock, options);
    // Destroyed before the node: a failed assertion still lets the refresher go.
    struct LetGoAtEnd {
      Gate& gate;
      ~LetGoAtEnd() { gate.let_go(); }
    } let_go_at_end{*gate};
    node.start();
    auto a = serve::Client::connect(options.socket_path);
    auto b = serve::Client::connect(options.socket_path);
    ASSERT_TRUE(a && b);
    a->send({{"request", "view"}, {"name", "held"}});
    ASSERT_TRUE(gate->held(10s)) << "the refresher never read the view";
    const auto status = b->request({{"request", "status"}});
    EXPECT_EQ(status.at("status").size(), 4u) << status.dump();
    EXPECT_FALSE(a->read_line(0ms));  // its answer waits for the read
    gate->let_go();
    const auto line = a->read_line(10s);
    ASSERT_TRUE(line);
    EXPECT_EQ(line->at("rows").size(), 4u) << line->dump();
    a.reset();
    b.reset();
    node.stop();
  });
}

}  // namespace
}  // namespace gpuclk::sim::testing

namespace gpuclk::sim::testing {
namespace {

// --nccl-inspector-dir: the Node's NcclJobs follows a job directory's Inspector files (a recorded
// 4-rank job whose rank 2 is late, its ranks renamed to the default node's processes 41000-41003)
// on its thread while the socket, the refresher and a scrape read what it publishes.
TEST_F(serve_node_test, node_reads_a_jobs_nccl_files_and_judges_its_late_rank) {
  on_default_node([](gpu::DeviceSet& set, const fs::path& dir) {
    fs::create_directories(dir / "nccl" / "77");
    for (int rank = 0; rank < 4; ++rank) {
      std::ifstream in(std::string(GPUCLK_SOURCE_DIR) +
                       "/tests/data/nccl_inspector/late_rank_4gpu/vm-pid" +
                       std::to_string(4373 + rank) + ".log");
      std::ofstream out(dir / "nccl" / "77" / ("vm-pid" + std::to_string(41000 + rank) + ".log"));
      for (std::string line; std::getline(in, line);) {
        const auto at = line.find("\"pid\":");
        const auto end = line.find_first_not_of("0123456789", at + 6);
        out << line.substr(0, at + 6) << 41000 + rank << line.substr(end) << '\n';
      }
    }
    ScaledClock clock(0);
    auto options = node_options(dir, set);
    options.nccl_inspector_dir = (dir / "nccl").string();
    serve::Node node(set, clock, options);
    node.start();
    auto client = serve::Client::connect(options.socket_path);
    ASSERT_TRUE(client);
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    serve::CollectivesAnswer answer;
    bool judged = false;
    while (std::chrono::steady_clock::now() < deadline && !judged) {
      answer = client->collectives();
      // The state held while its findings are read: a range-for over a member of the
      // temporary shared_ptr reads freed memory once the refresher replaces the state.
      const auto state = node.service().state();
      for (const auto& f : state->findings) judged = judged || f.rule == "late_rank";
      std::this_thread::sleep_for(100ms);
    }
    EXPECT_TRUE(judged) << "no late_rank finding in the service's state";
    EXPECT_TRUE(answer.enabled);
    EXPECT_EQ(answer.records, 80u);
    EXPECT_EQ(answer.errors, 0u);
    ASSERT_EQ(answer.jobs.size(), 1u);
    EXPECT_EQ(answer.jobs[0].ranks, 4);
    ASSERT_EQ(answer.jobs[0].collectives.size(), 1u);
    EXPECT_EQ(answer.jobs[0].collectives[0].total.count, 80u);
    ASSERT_EQ(answer.jobs[0].communicators.size(), 1u);
    const auto* late = answer.jobs[0].communicators[0].communicator.latest();
    ASSERT_NE(late, nullptr);
    EXPECT_EQ(late->rank, 2);
    // The series of the job, one per kind, from every source the scrape asks.
    std::size_t operations = 0;
    for (const auto& source : node.service().series())
      for (const auto& s : source())
        if (s.name == "gpuclk_job_nccl_operations_total") {
          ++operations;
          EXPECT_EQ(s.value, 80);
        }
    EXPECT_EQ(operations, 1u);
    client.reset();
    EXPECT_EQ(node.stop(), ExitCode::ok);
  });
}

}  // namespace
}  // namespace gpuclk::sim::testing
