// Top's own sampler (when no service answers): the telemetry Sampler over the selected GPUs at
// top's interval, a one-per-second history of its own (empty at start, growing), and every 2 s
// the settings, the processes and the findings.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "telemetry/ring_buffer.h"
#include "telemetry/sampler.h"
#include "tui/feed.h"
#include "tui/processes.h"

namespace gpuclk::gpu {
class Device;
class DeviceSet;
}  // namespace gpuclk::gpu

namespace gpuclk::tui {

// Adds what the node knows beyond NVML (the journal's clock locks) to each GPU's facts.
using NodeFacts = std::function<void(std::vector<rules::GpuWindow>&)>;

class SamplerFeed final : public Feed {
 public:
  // `devices` (of `set`) must outlive the feed. Starts the sampler.
  SamplerFeed(const gpu::DeviceSet& set, std::vector<gpu::Device*> devices, const Clock& clock,
              telemetry::Duration interval, NodeFacts node_facts);
  ~SamplerFeed() override;

  std::string source() const override { return "own sampler"; }
  telemetry::Duration interval() const override { return interval_; }
  Frame frame(telemetry::Duration history, std::size_t graphed) override;

 private:
  void take_history(const telemetry::Snapshot& snapshot);
  void refresh_slow_parts(telemetry::TimePoint now);  // facts, processes, findings

  const gpu::DeviceSet& set_;
  std::vector<gpu::Device*> devices_;
  telemetry::Duration interval_;
  NodeFacts node_facts_;
  std::unique_ptr<telemetry::Sampler> sampler_;
  std::vector<telemetry::RingBuffer<telemetry::FastSample>> history_;  // ~1 per second, 1 h
  std::vector<rules::GpuFacts> facts_;
  std::vector<std::vector<ProcessRow>> processes_;
  std::vector<rules::Finding> findings_;
  std::optional<std::chrono::steady_clock::time_point> refreshed_at_;
  ProcessTable process_table_;
};

}  // namespace gpuclk::tui
