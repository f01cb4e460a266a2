// /metrics's text (src/serve/metrics.h) over a serve::Node on libnvml-sim.so: well-formed text
// format 0.0.4 (each family's HELP and TYPE once, before its series; no series twice; integers
// without a fraction), within the default set's budget of series per GPU, and built once per
// sample, not once per scrape; --metrics-detail's values.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "gpu/device.h"
#include "nvml/api.h"
#include "serve/metrics.h"
#include "serve/metrics_detail.h"
#include "serve/node.h"
#include "sim_abi_fixture.h"
#include "util/clock.h"
#include "util/error.h"

namespace gpuclk::sim::testing {
namespace {

using namespace std::chrono_literals;

// Named for the service, so scripts/ci/sanitizers.sh's TSan selection ("serve") takes them.
class serve_metrics_test : public sim_abi_test {};

TEST_F(serve_metrics_test, text_is_well_formed_and_built_once_per_sample) {
  const auto dir = dir_;
  expect_passed(
      in_child({{"GPUCLK_SIM_SCENARIO", "2xh200"}, {"GPUCLK_SIM_SPEED", "1"}}, [dir](Nvml&) {
        std::string path = GPUCLK_BINARY_DIR;
        path += "/libnvml-sim.so";
        auto api = nvml::Api::open(path);
        gpu::DeviceSet set(*api);
        ScaledClock clock(1);
        serve::NodeOptions options;
        options.service.simulated = "2xh200";
        options.socket_path = (dir / "node.sock").string();
        options.session.journal_dir = dir / "journal";
        options.selected = set.all();
        serve::Node node(set, clock, options);
        node.start();
        std::this_thread::sleep_for(1500ms);  // a slow read and a refresh of the node state

        serve::MetricsText metrics(node.service());
        const auto text = metrics.get();
        // Scrapers that come between two samples share one build.
        const int scrapes = 200;
        std::shared_ptr<const std::string> last;
        for (int i = 0; i < scrapes; ++i) last = metrics.get();
        EXPECT_LT(metrics.builds(), 50u)
            << "built " << metrics.builds() << " times for " << scrapes + 1 << " scrapes";
        EXPECT_GE(metrics.builds(), 1u);

        std::istringstream in(*text);
        std::string line, family;
        std::set<std::string> helped, typed, series;
        const std::regex sample(R"(^([a-z_:][a-z0-9_:]*)(\{[^}]*\})? (\S+)$)");
        int samples = 0;
        const std::regex gpu_label(R"re(\{gpu="([0-9]+)")re");
        std::map<std::string, int> per_gpu;
        while (std::getline(in, line)) {
          SCOPED_TRACE(line);
          if (line.rfind("# HELP ", 0) == 0) {
            family = line.substr(7, line.find(' ', 7) - 7);
            EXPECT_TRUE(helped.insert(family).second) << "HELP twice";
            continue;
          }
          if (line.rfind("# TYPE ", 0) == 0) {
            EXPECT_TRUE(line == "# TYPE " + family + " gauge" ||
                        line == "# TYPE " + family + " counter");
            EXPECT_TRUE(typed.insert(family).second) << "TYPE twice";
            continue;
          }
          std::smatch m;
          ASSERT_TRUE(std::regex_match(line, m, sample));
          EXPECT_EQ(m[1].str(), family) << "a series outside its family";
          EXPECT_TRUE(series.insert(m[1].str() + m[2].str()).second) << "a series twice";
          ++samples;
          if (std::smatch g; std::regex_search(line, g, gpu_label)) ++per_gpu[g[1].str()];
        }
        EXPECT_GT(samples, 60);
        // The default set's budget (serve/metrics_detail.h): at most 40 series per GPU.
        EXPECT_EQ(per_gpu.size(), 2u);
        for (const auto& [gpu, n] : per_gpu) EXPECT_LE(n, 40) << "GPU " << gpu;
        EXPECT_EQ(helped, typed);
        // Whole numbers are written whole (the H200's 1980 MHz, in hertz), labels in order.
        EXPECT_NE(text->find("gpuclk_gpu_max_sm_clock_hertz{gpu=\"0\",uuid=\"GPU-"),
                  std::string::npos);
        EXPECT_NE(text->find("\"} 1980000000\n"), std::string::npos);
        EXPECT_NE(text->find("# TYPE gpuclk_gpu_energy_joules_total counter\n"), std::string::npos);
        // The NVLinks per GPU; no link has series of its own on the healthy pair.
        EXPECT_NE(text->find("gpuclk_gpu_nvlinks_up{gpu=\"1\","), std::string::npos);
        EXPECT_EQ(text->find("gpuclk_nvlink_up{"), std::string::npos);
        EXPECT_EQ(serve::health_text(node.service()).find("gpuclk_serve_healthy 1\n") ==
                      std::string::npos,
                  false);
        node.stop();
      }));
}

// --metrics-detail's list: each group, "all", "none"; anything else is exit 2 naming it.
TEST(serve_metrics, metrics_detail_takes_its_groups) {
  using serve::parse_metrics_detail;
  EXPECT_EQ(parse_metrics_detail("nvlink"), (serve::MetricsDetail{.nvlink = true}));
  EXPECT_EQ(parse_metrics_detail("gpu,attribution"),
            (serve::MetricsDetail{.gpu = true, .attribution = true}));
  EXPECT_EQ(parse_metrics_detail("all"),
            (serve::MetricsDetail{.nvlink = true, .gpu = true, .attribution = true}));
  EXPECT_EQ(parse_metrics_detail("none"), serve::MetricsDetail{});
  EXPECT_EQ(serve::to_string(parse_metrics_detail("attribution,nvlink")), "nvlink,attribution");
  EXPECT_EQ(serve::to_string(serve::MetricsDetail{}), "none");
  for (const char* bad : {"", ",", "NVLink", "nvlink,links", "gpus"}) {
    try {
      parse_metrics_detail(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::bad_argument) << bad;
    }
  }
}

}  // namespace
}  // namespace gpuclk::sim::testing
