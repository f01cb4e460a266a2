// The read seams (src/serve/reading_feed.h, run_watch.h, rules_window.h) over libnvml-sim.so:
// each source gives a read command the same shape of data whether its own sampler read NVML or
// a running serve::Node answered, and the service's side refuses what it cannot serve. Simulated
// time runs at wall speed (the samplers tick on it).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>

#include "gpu/device.h"
#include "nvml/api.h"
#include "serve/client.h"
#include "serve/node.h"
#include "serve/reading_feed.h"
#include "serve/rules_window.h"
#include "serve/run_watch.h"
#include "sim_abi_fixture.h"
#include "util/clock.h"

namespace gpuclk::sim::testing {
namespace {

using namespace std::chrono_literals;

// Named for the service, so scripts/ci/sanitizers.sh's TSan selection ("serve") takes them.
class serve_read_seam_test : public sim_abi_test {};

std::unique_ptr<nvml::Api> open_sim_library() {
  std::string path = GPUCLK_BINARY_DIR;
  path += "/libnvml-sim.so";
  return nvml::Api::open(path);
}

std::map<std::string, std::string> running(const char* scenario) {
  return {{"GPUCLK_SIM_SCENARIO", scenario}, {"GPUCLK_SIM_SPEED", "1"}};
}

// A serve::Node on `dir`/node.sock, sampling every 100 ms (its views include the processes that
// stat asks for), and the hello it answers.
struct RunningNode {
  RunningNode(gpu::DeviceSet& set, const Clock& clock, const fs::path& dir) {
    serve::NodeOptions options;
    options.service.simulated = "default";
    options.socket_path = (dir / "node.sock").string();
    options.session.journal_dir = dir / "journal";
    options.selected = set.all();
    node = std::make_unique<serve::Node>(set, clock, options);
    node->start();
    socket = options.socket_path;
    client = serve::Client::connect(socket);
    hello = client->hello();
  }
  std::unique_ptr<serve::Node> node;
  std::string socket;
  std::unique_ptr<serve::Client> client;
  serve::Hello hello;
};

void expect_readings(serve::ReadingFeed& feed, const std::vector<unsigned>& indexes) {
  SCOPED_TRACE(feed.source());
  for (int row = 0; row < 3; ++row) {
    const auto r = feed.next();
    ASSERT_TRUE(r.has_value()) << "row " << row;
    ASSERT_EQ(r->gpus.size(), indexes.size());
    ASSERT_EQ(r->energy.size(), indexes.size());
    for (std::size_t k = 0; k < indexes.size(); ++k) {
      EXPECT_EQ(r->gpus[k].info.index, indexes[k]);
      ASSERT_TRUE(r->gpus[k].fast.has_value());
      ASSERT_TRUE(r->gpus[k].fast->power.has_value());
      EXPECT_GT(r->gpus[k].fast->power->value(), 10);
    }
  }
}

TEST_F(serve_read_seam_test, both_feeds_give_every_selected_gpu_each_interval) {
  const auto dir = dir_;
  expect_passed(in_child(running("default"), [dir](Nvml&) {
    auto api = open_sim_library();
    gpu::DeviceSet set(*api);
    ScaledClock clock(1);
    RunningNode service(set, clock, dir);
    const serve::FeedOptions options{100ms, telemetry::FieldSet::standard(), 3};

    auto own = serve::open_sampler_feed({&set[0], &set[2]}, clock, options);
    EXPECT_EQ(own->source(), "own sampler");
    expect_readings(*own, {0, 2});

    auto served = serve::open_service_feed(*service.client, service.hello, {0, 2}, options);
    ASSERT_TRUE(served);
    EXPECT_EQ(served->source(), "gpuclk serve");
    expect_readings(*served, {0, 2});
    EXPECT_FALSE(served->next().has_value());  // the stream ends after its count

    // Rows more often than the service samples: it cannot serve them (read NVML instead).
    EXPECT_FALSE(serve::open_service_feed(*service.client, service.hello, {0},
                                          {10ms, telemetry::FieldSet::standard(), 1}));
    service.client.reset();
    service.node->stop();
  }));
}

TEST_F(serve_read_seam_test, both_watches_summarise_the_same_run) {
  const auto dir = dir_;
  expect_passed(in_child(running("default"), [dir](Nvml&) {
    auto api = open_sim_library();
    gpu::DeviceSet set(*api);
    ScaledClock clock(1);
    RunningNode service(set, clock, dir);
    telemetry::SamplerOptions sampling;
    sampling.fast_interval = 100ms;
    sampling.slow_interval = 1s;
    sampling.fields = telemetry::FieldSet::standard();

    auto own = serve::open_sampler_watch({&set[1]}, clock, sampling);
    const auto second = [](const std::vector<gpu::DeviceKey>&) {
      return std::vector<std::size_t>{1};
    };
    auto served = serve::open_service_watch(*service.client, service.hello, second, 100ms);
    ASSERT_TRUE(served);
    // A service sampling at another interval cannot be summarised as asked.
    EXPECT_FALSE(serve::open_service_watch(*service.client, service.hello, second, 50ms));

    served->start();
    own->start();
    std::set<unsigned> used;
    for (int i = 0; i < 4; ++i) {
      std::this_thread::sleep_for(400ms);
      const auto nobody = [](pid_t) { return false; };
      own->attribute(nobody, used);
      served->attribute(nobody, used);
    }
    EXPECT_TRUE(used.empty());
    const auto a = own->finish();
    const auto b = served->finish();
    EXPECT_EQ(a.sampled_by, "this process");
    EXPECT_EQ(b.sampled_by, "gpuclk serve");
    ASSERT_EQ(a.gpus.size(), 1u);
    ASSERT_EQ(b.gpus.size(), 1u);
    EXPECT_EQ(a.gpus[0].info.uuid, b.gpus[0].info.uuid);
    EXPECT_EQ(b.gpus[0].info.index, 1u);
    for (const auto* w : {&a, &b}) {
      SCOPED_TRACE(w->sampled_by);
      const auto& s = w->gpus[0].summary;
      EXPECT_GE(s.fast_samples, 5u);
      ASSERT_TRUE(s.energy && s.power_mean);
      // The simulator's exact energy over the window, beside the counter's.
      ASSERT_TRUE(w->gpus[0].truth_energy_j.has_value());
      EXPECT_NEAR(s.energy->value(), *w->gpus[0].truth_energy_j, 0.1 * *w->gpus[0].truth_energy_j);
    }
    // The same GPU over the same 1.6 s: the same mean power, whoever sampled it.
    EXPECT_NEAR(a.gpus[0].summary.power_mean->value(), b.gpus[0].summary.power_mean->value(),
                0.1 * a.gpus[0].summary.power_mean->value());
    service.client.reset();
    service.node->stop();
  }));
}

TEST_F(serve_read_seam_test, look_back_reads_the_services_history) {
  const auto dir = dir_;
  expect_passed(in_child(running("default"), [dir](Nvml&) {
    auto api = open_sim_library();
    gpu::DeviceSet set(*api);
    ScaledClock clock(1);
    RunningNode service(set, clock, dir);
    std::this_thread::sleep_for(1500ms);
    int waits = 0;
    const auto window = serve::look_back(*service.client, service.hello, clock, 1s,
                                         {&set[0], &set[3]}, [&waits](double) { ++waits; });
    EXPECT_TRUE(window.from_service);
    EXPECT_TRUE(window.slow_tier);
    EXPECT_TRUE(window.events_kept);
    EXPECT_EQ(waits, 0);  // 1.5 s of history covers 1 s: no waiting
    ASSERT_EQ(window.input.gpus.size(), 2u);
    EXPECT_EQ(window.input.gpus[1].facts.index, 3u);
    for (const auto& g : window.input.gpus) EXPECT_GE(g.fast.size(), 5u);
    // Longer than the service keeps: a bad argument naming both.
    try {
      serve::look_back(*service.client, service.hello, clock, std::chrono::hours(2), {&set[0]}, {});
      ADD_FAILURE() << "a 2 h look back was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_argument);
      EXPECT_NE(std::string(e.what()).find("7200 s"), std::string::npos) << e.what();
    }
    service.client.reset();
    service.node->stop();
  }));
}

}  // namespace
}  // namespace gpuclk::sim::testing
