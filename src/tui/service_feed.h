// Top's feed from `gpuclk serve` (its socket protocol, docs/serve.md): the latest samples from
// `snapshot`, the graphs' history at once from the service's 1 s ring buffers (`history`), and
// every 2 s the settings (`status`), the processes (the `top` view) and the findings over the
// last minute of history. No NVML is loaded on this path.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "gpu/selection.h"
#include "tui/feed.h"
#include "tui/processes.h"
#include "tui/sampler_feed.h"

namespace gpuclk::gpu {
class Device;
class DeviceSet;
}  // namespace gpuclk::gpu
namespace gpuclk::serve {
class Client;
}

namespace gpuclk::tui {

class ServiceFeed final : public Feed {
 public:
  // Asks through `client` (a connection of its own). `gpus`: the service's GPUs (its hello's);
  // `positions`: those to show (positions in `gpus`), in order. `interval`: how often top asks
  // (the service samples at its own interval).
  ServiceFeed(std::unique_ptr<serve::Client> client, const std::vector<gpu::DeviceKey>& gpus,
              std::vector<std::size_t> positions, telemetry::Duration interval,
              NodeFacts node_facts);
  ~ServiceFeed() override;
  ServiceFeed(const ServiceFeed&) = delete;
  ServiceFeed& operator=(const ServiceFeed&) = delete;

  std::string source() const override { return "gpuclk serve"; }
  telemetry::Duration interval() const override { return interval_; }
  Frame frame(telemetry::Duration history, std::size_t graphed) override;

 private:
  void refresh_slow_parts(telemetry::TimePoint now);

  std::unique_ptr<serve::Client> client_;
  std::vector<std::size_t> positions_;
  std::vector<unsigned> indexes_;  // the shown GPUs' NVML indexes, as requests name them
  telemetry::Duration interval_;
  NodeFacts node_facts_;
  std::vector<rules::GpuFacts> facts_;
  std::vector<std::optional<units::Megahertz>> max_memory_clock_;
  std::vector<std::optional<units::Bytes>> memory_total_;
  std::vector<std::vector<ProcessRow>> processes_;
  std::vector<rules::Finding> findings_;
  std::map<unsigned, std::string> driver_names_;  // pid → the driver's name, from the view
  ProcessTable process_table_;
  std::optional<std::chrono::steady_clock::time_point> refreshed_at_;
  // The graphed GPU's history, asked for at most once a second (it has 1 s resolution).
  struct History {
    std::size_t graphed = 0;
    telemetry::Duration span{};
    std::chrono::steady_clock::time_point at;
    std::vector<telemetry::FastSample> samples;  // times relative to `base`
    telemetry::TimePoint base{};
  };
  std::optional<History> history_;
};

}  // namespace gpuclk::tui
