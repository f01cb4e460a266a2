#include "tui/sampler_feed.h"

#include "gpu/device.h"
#include "gpu/status.h"
#include "rules/process_owners.h"
#include "rules/rule.h"
#include "rules/status_input.h"

namespace gpuclk::tui {
namespace {

using namespace std::chrono_literals;

template <class T>
std::optional<T> opt(const gpu::Reading<T>& r) {
  return r ? std::optional<T>(*r) : std::nullopt;
}

}  // namespace

SamplerFeed::SamplerFeed(const gpu::DeviceSet& set, std::vector<gpu::Device*> devices,
                         const Clock& clock, telemetry::Duration interval, NodeFacts node_facts)
    : set_(set),
      devices_(std::move(devices)),
      interval_(interval),
      node_facts_(std::move(node_facts)),
      process_table_([this](unsigned pid) { return opt(set_.process_name(pid)); }) {
  telemetry::SamplerOptions so;
  so.fast_interval = interval;
  so.slow_interval = std::max<telemetry::Duration>(interval, 1s);
  // NVLink state and counters on the slow tier, for the findings (a link down or erroring);
  // nothing is read on a GPU without NVLink.
  so.fields = telemetry::FieldSet::standard().add(telemetry::Field::nvlink);
  // The sampler keeps the findings window; top's own history keeps the rest.
  so.fast_capacity = static_cast<std::size_t>(kFindingsWindow / interval) + 16;
  so.slow_capacity = static_cast<std::size_t>(kFindingsWindow / so.slow_interval) + 16;
  sampler_ = std::make_unique<telemetry::Sampler>(telemetry::device_sources(devices_, so.fields),
                                                  clock, so);
  history_.assign(devices_.size(), telemetry::RingBuffer<telemetry::FastSample>(3600));
  sampler_->start();
  // The first frame shows readings, not N/A: wait for the first tick (at once, normally).
  sampler_->wait_for_tick(0, std::chrono::milliseconds(2000));
}

SamplerFeed::~SamplerFeed() { sampler_->stop(); }

void SamplerFeed::take_history(const telemetry::Snapshot& snapshot) {
  // One sample per second (every sample at intervals of 1 s and more), like the service's.
  const telemetry::Duration step = interval_ >= 1s ? interval_ / 2 : 1s - interval_ / 2;
  for (std::size_t i = 0; i < history_.size(); ++i) {
    auto& ring = history_[i];
    const auto from = ring.empty() ? snapshot.time - 1h : ring.back().time + step;
    for (auto& s : sampler_->fast_samples(i, from, snapshot.time)) {
      if (!ring.empty() && s.time < ring.back().time + step) continue;
      ring.push(s);
    }
  }
}

void SamplerFeed::refresh_slow_parts(telemetry::TimePoint now) {
  std::vector<gpu::StatusSnapshot> status;
  for (auto* d : devices_) status.push_back(gpu::take_status(*d));
  auto input = rules::status_input(status);
  input.from = now - kFindingsWindow;
  input.to = now;
  processes_.assign(devices_.size(), {});
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    auto& w = input.gpus[i];
    w.fast = sampler_->fast_samples(i, input.from, input.to);
    w.slow = sampler_->slow_samples(i, input.from, input.to);
    w.health = sampler_->health(i);
    const auto& ratings = devices_[i]->ratings();
    w.facts.max_operating_temperature = opt(ratings.thresholds.gpu_max);
    if (auto list = devices_[i]->processes()) {
      std::vector<ProcessTable::Entry> entries;
      w.facts.processes.emplace();
      for (const auto& p : *list) {
        w.facts.processes->push_back(p.pid);
        entries.push_back({p.pid, opt(p.used_memory)});
      }
      processes_[i] = process_table_.rows(entries);
    }
  }
  if (node_facts_) node_facts_(input.gpus);
  rules::add_process_owners(input, set_.api());
  findings_ = rules::evaluate(input);
  facts_.clear();
  for (auto& w : input.gpus) facts_.push_back(std::move(w.facts));
}

Frame SamplerFeed::frame(telemetry::Duration history, std::size_t graphed) {
  const auto snapshot = sampler_->snapshot();
  take_history(snapshot);
  const auto wall = std::chrono::steady_clock::now();
  if (!refreshed_at_ || wall - *refreshed_at_ >= kRefreshEvery) {
    refresh_slow_parts(snapshot.time);
    refreshed_at_ = wall;
  }
  Frame f;
  f.time = snapshot.time;
  f.findings = findings_;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    GpuFrame g;
    const auto& s = snapshot.gpus[i];
    g.facts = facts_[i];
    g.max_memory_clock = s.info.max_memory_clock;
    g.memory_total = opt(devices_[i]->identity().memory_total);
    g.health = s.health;
    g.fast = s.fast;
    g.slow = s.slow;
    if (i == graphed) g.history = history_[i].between(snapshot.time - history, snapshot.time);
    g.processes = processes_[i];
    f.gpus.push_back(std::move(g));
  }
  return f;
}

}  // namespace gpuclk::tui
