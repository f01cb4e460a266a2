// Top's feed from `gpuclk serve` (its socket protocol, docs/serve.md): the latest samples from
// `snapshot`, the graphs' history at once from the service's 1 s ring buffers (`history`), and
// every 2 s the settings (`status`), the processes (the `top` view) and the findings over the
// last minute of history. No NVML is loaded on this path.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "tui/feed.h"
#include "tui/processes.h"
#include "tui/sampler_feed.h"

namespace gpuclk::gpu {
class Device;
class DeviceSet;
}  // namespace gpuclk::gpu

namespace gpuclk::tui {

// Sends one request to the service and returns its response; throws Error when it fails.
using Ask = std::function<nlohmann::json(const nlohmann::json&)>;

class ServiceFeed final : public Feed {
 public:
  // `positions`: the service's GPUs to show (positions in its "gpus"), in order. `interval`:
  // how often top asks (the service samples at its own interval).
  ServiceFeed(Ask ask, std::vector<std::size_t> positions, telemetry::Duration interval,
              NodeFacts node_facts);

  std::string source() const override { return "gpuclk serve"; }
  telemetry::Duration interval() const override { return interval_; }
  Frame frame(telemetry::Duration history, std::size_t graphed) override;

 private:
  nlohmann::json gpus_request(const char* request) const;
  void refresh_slow_parts(telemetry::TimePoint now);

  Ask ask_;
  std::vector<std::size_t> positions_;
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
