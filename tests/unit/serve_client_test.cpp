// serve::Client's typed requests (serve/client.h, serve/messages.h) against a running serve::Node
// over libnvml-sim.so: each answer comes back as the data models the commands print, for the
// GPUs asked; top's feed asks through it; a malformed answer is an Error naming the service, not
// a crash. Simulated time runs at wall speed (the sampler ticks on it).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "gpu/device.h"
#include "nvml/api.h"
#include "serve/client.h"
#include "serve/messages.h"
#include "serve/node.h"
#include "serve/protocol.h"
#include "sim_abi_fixture.h"
#include "tui/service_feed.h"
#include "util/clock.h"
#include "util/error.h"

namespace gpuclk::sim::testing {
namespace {

using namespace std::chrono_literals;

// Named for the service, so scripts/ci/sanitizers.sh's TSan selection ("serve") takes them.
class serve_client_test : public sim_abi_test {};

std::unique_ptr<nvml::Api> open_simulator() {
  std::string path = GPUCLK_BINARY_DIR;
  path += "/libnvml-sim.so";
  return nvml::Api::open(path);
}

// A serve::Node on `dir`/node.sock, sampling every 100 ms, with the `top` view.
std::unique_ptr<serve::Node> running_node(gpu::DeviceSet& set, const Clock& clock,
                                          const fs::path& dir) {
  serve::NodeOptions options;
  options.service.simulated = "default";
  options.socket_path = (dir / "node.sock").string();
  options.session.journal_dir = dir / "journal";
  options.selected = set.all();
  auto node = std::make_unique<serve::Node>(set, clock, options);
  node->start();
  return node;
}

telemetry::TimePoint local_now() {
  return telemetry::TimePoint(std::chrono::duration_cast<telemetry::Duration>(
      std::chrono::steady_clock::now().time_since_epoch()));
}

TEST_F(serve_client_test, typed_requests_answer_for_the_gpus_asked) {
  const auto dir = dir_;
  expect_passed(
      in_child({{"GPUCLK_SIM_SCENARIO", "default"}, {"GPUCLK_SIM_SPEED", "1"}}, [dir](Nvml&) {
        auto api = open_simulator();
        gpu::DeviceSet set(*api);
        ScaledClock clock(1);
        auto node = running_node(set, clock, dir);
        auto client = serve::Client::connect((dir / "node.sock").string());
        ASSERT_TRUE(client);

        const auto hello = client->hello();
        EXPECT_EQ(hello.service, "gpuclk serve");
        EXPECT_EQ(hello.simulated, "default");
        ASSERT_EQ(hello.gpus.size(), 4u);
        EXPECT_EQ(hello.gpus[3].index, 3u);
        EXPECT_EQ(hello.gpus[3].uuid, set[3].uuid());
        ASSERT_TRUE(hello.interval_seconds.has_value());
        EXPECT_GT(*hello.interval_seconds, 0);
        EXPECT_FALSE(hello.delegation.has_value());  // no policy: it takes no settings

        const auto status = client->status();
        ASSERT_EQ(status.status.size(), 4u);
        EXPECT_EQ(status.status[3].index, 3u);
        EXPECT_EQ(status.status[3].uuid, set[3].uuid());
        EXPECT_EQ(status.simulated, "default");

        const auto top = client->top_view();
        ASSERT_EQ(top.rows.size(), 4u);
        ASSERT_TRUE(top.rows[3].memory_total.has_value());
        EXPECT_GT(top.rows[3].memory_total->value(), 1e9);

        std::this_thread::sleep_for(1500ms);  // a second and more of history
        auto now = local_now();
        serve::HistoryRequest asked;
        asked.gpus = std::vector<unsigned>{3};
        asked.seconds = 5;
        asked.every_sample = true;
        const auto history = client->history(asked, now);
        ASSERT_EQ(history.size(), 1u);
        EXPECT_EQ(history[0].key.index, 3u);
        EXPECT_GE(history[0].samples.size(), 5u);
        EXPECT_FALSE(history[0].slow.empty());  // "interval" resolution brings the slow tier
        EXPECT_TRUE(history[0].events_kept);
        for (const auto& s : history[0].samples) EXPECT_LE(s.time, now);

        // A summary decoded and written again is the service's own (its times aside, which come
        // back in this side's time base to the nanosecond).
        const auto raw = client->request(serve::summary_request(std::vector<unsigned>{3}, 1.0));
        const auto summaries = serve::summaries_from_json(raw, now);
        ASSERT_EQ(summaries.size(), 1u);
        EXPECT_EQ(summaries[0].key.index, 3u);
        EXPECT_GT(summaries[0].summary.fast_samples, 0u);
        EXPECT_TRUE(summaries[0].summary.sm_clock.has_value());
        auto again = serve::to_json(summaries[0].summary, now);
        auto sent = raw.at("gpus").at(0).at("summary");
        for (const char* key : {"from", "to"}) {
          EXPECT_NEAR(again.at(key).get<double>(), sent.at(key).get<double>(), 1e-6) << key;
          again.erase(key);
          sent.erase(key);
        }
        EXPECT_EQ(again, sent);
        EXPECT_EQ(client->summary(std::vector<unsigned>{1, 3}, 1.0, now).size(), 2u);

        const auto snapshot = client->snapshot({3, 1}, true, now);
        ASSERT_EQ(snapshot.gpus.size(), 2u);
        EXPECT_EQ(snapshot.gpus[0].key.index, 3u);  // in the order asked
        EXPECT_TRUE(snapshot.gpus[0].fast.has_value());
        EXPECT_FALSE(snapshot.gpus[0].lost);
        EXPECT_TRUE(snapshot.now.has_value());
        EXPECT_GT(snapshot.timing.ticks, 5u);
        EXPECT_TRUE(snapshot.gpus[1].simulator_energy_j.has_value());

        const auto processes = client->processes();
        ASSERT_EQ(processes.gpus.size(), 4u);
        const auto document = processes.processes_document({3}, true);
        EXPECT_FALSE(document.contains("ok"));
        EXPECT_TRUE(document.contains("owners"));
        for (const auto& p : document.at("processes")) EXPECT_EQ(p.at("gpu"), 3);
        try {
          client->processes(std::string("slurm:999999"));
          ADD_FAILURE() << "an owner the service never saw was answered";
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), ExitCode::gpu_not_found) << e.what();
        }

        // A stream over a connection of its own: GPU 3's lines, then its end.
        auto stream = serve::Client::connect(client->path());
        serve::StreamRequest request;
        request.gpus = {3};
        request.interval_seconds = 0.1;
        request.count = 3;
        request.every_sample = true;
        stream->open_stream(request);
        int lines = 0;
        for (;;) {
          auto line = stream->next_line(10s);
          ASSERT_TRUE(line.has_value());
          if (line->end) break;
          ++lines;
          ASSERT_EQ(line->gpus.size(), 1u);
          EXPECT_EQ(line->gpus[0].key.index, 3u);
          EXPECT_TRUE(line->gpus[0].fast.has_value());
        }
        EXPECT_EQ(lines, 3);
        stream.reset();
        client.reset();
        node->stop();
      }));
}

TEST_F(serve_client_test, top_feed_shows_the_gpus_selected) {
  const auto dir = dir_;
  expect_passed(
      in_child({{"GPUCLK_SIM_SCENARIO", "default"}, {"GPUCLK_SIM_SPEED", "1"}}, [dir](Nvml&) {
        auto api = open_simulator();
        gpu::DeviceSet set(*api);
        ScaledClock clock(1);
        auto node = running_node(set, clock, dir);
        std::this_thread::sleep_for(2500ms);  // two samples of the 1 s history, under load too
        auto client = serve::Client::connect((dir / "node.sock").string());
        ASSERT_TRUE(client);
        const auto hello = client->hello();
        // GPUs 1 and 3 of the four, the second graphed.
        tui::ServiceFeed feed(std::move(client), hello.gpus, {1, 3}, 100ms, {});
        const auto frame = feed.frame(std::chrono::minutes(1), 1);
        ASSERT_EQ(frame.gpus.size(), 2u);
        EXPECT_EQ(frame.gpus[0].facts.index, 1u);
        EXPECT_EQ(frame.gpus[1].facts.index, 3u);
        for (const auto& g : frame.gpus) EXPECT_TRUE(g.fast.has_value());
        EXPECT_FALSE(frame.gpus[1].history.empty());  // the graphed GPU's history
        node->stop();
      }));
}

// A service that answers every request with `answer` (one connection).
class FakeService {
 public:
  FakeService(const fs::path& path, std::string answer) : path_(path.string()) {
    listener_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(listener_, 1), 0);
    thread_ = std::thread([this, answer = std::move(answer)] {
      const int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      char c;
      while (::read(fd, &c, 1) == 1) {
        if (c != '\n') continue;
        const auto line = answer + "\n";
        if (::write(fd, line.data(), line.size()) < 0) break;
      }
      ::close(fd);
    });
  }
  ~FakeService() {
    ::shutdown(listener_, SHUT_RDWR);
    thread_.join();
    ::close(listener_);
  }
  FakeService(const FakeService&) = delete;
  FakeService& operator=(const FakeService&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int listener_ = -1;
  std::thread thread_;
};

TEST_F(serve_client_test, a_malformed_answer_is_an_error_naming_the_service) {
  std::optional<FakeService> fake;
  fake.emplace(dir_ / "fake.sock", R"({"v":1,"ok":true,"gpus":[{"index":0}]})");
  {
    auto client = serve::Client::connect(fake->path());
    ASSERT_TRUE(client);
    try {
      client->status();
      ADD_FAILURE() << "a status answer without status was taken";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::other);
      EXPECT_NE(std::string(e.what()).find("the service on " + fake->path() +
                                           " sent a malformed status answer"),
                std::string::npos)
          << e.what();
    }
  }
  fake.reset();

  // A field an older service's query view lacks: named, not an internal error.
  serve::QueryView view;
  view.rows.emplace_back();
  try {
    (void)view.value(0, "clocks.sm");
    ADD_FAILURE() << "a missing field was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no field 'clocks.sm'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpuclk::sim::testing
