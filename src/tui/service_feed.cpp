#include "tui/service_feed.h"

#include "gpu/device.h"
#include "gpu/status.h"
#include "host/owner.h"
#include "rules/process_owners.h"
#include "rules/rule.h"
#include "rules/status_input.h"
#include "serve/client.h"

namespace gpuclk::tui {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// Top's own time base for one response: the service's times are relative to its answer.
telemetry::TimePoint local_now() {
  return telemetry::TimePoint(std::chrono::duration_cast<telemetry::Duration>(
      std::chrono::steady_clock::now().time_since_epoch()));
}

}  // namespace

ServiceFeed::ServiceFeed(std::unique_ptr<serve::Client> client,
                         const std::vector<gpu::DeviceKey>& gpus,
                         std::vector<std::size_t> positions, telemetry::Duration interval,
                         NodeFacts node_facts)
    : client_(std::move(client)),
      positions_(std::move(positions)),
      interval_(interval),
      node_facts_(std::move(node_facts)),
      process_table_([this](unsigned pid) -> std::optional<std::string> {
        auto it = driver_names_.find(pid);
        if (it == driver_names_.end()) return std::nullopt;
        return it->second;
      }) {
  for (auto p : positions_) indexes_.push_back(gpus.at(p).index);
}

ServiceFeed::~ServiceFeed() = default;

void ServiceFeed::refresh_slow_parts(telemetry::TimePoint now) {
  const auto status = client_->status();
  std::vector<gpu::StatusSnapshot> snapshots;
  for (auto p : positions_) snapshots.push_back(status.status.at(p));
  auto input = rules::status_input(snapshots);
  input.from = now - kFindingsWindow;
  input.to = now;

  // The last minute of 1 s history: the findings' window.
  serve::HistoryRequest request;
  request.gpus = indexes_;
  request.seconds = std::chrono::duration<double>(kFindingsWindow).count();
  request.slow = true;  // the slow tier too: NVLink, ECC and violation counters
  auto history = client_->history(request, now);
  for (std::size_t i = 0; i < positions_.size() && i < history.size(); ++i) {
    auto& w = input.gpus[i];
    w.fast = std::move(history[i].samples);
    w.slow = std::move(history[i].slow);
  }

  // Processes and memory size (the `top` view); pids and names for the process rows.
  const auto view = client_->top_view();
  processes_.assign(positions_.size(), {});
  memory_total_.assign(positions_.size(), std::nullopt);
  driver_names_.clear();
  for (std::size_t i = 0; i < positions_.size(); ++i) {
    const auto& row = view.rows.at(positions_[i]);
    memory_total_[i] = row.memory_total;
    if (!row.processes) continue;
    std::vector<ProcessTable::Entry> entries;
    auto& pids = input.gpus[i].facts.processes.emplace();
    for (const auto& p : *row.processes) {
      ProcessTable::Entry e;
      e.pid = p.pid;
      e.gpu_memory = p.used_memory;
      if (p.name) driver_names_[e.pid] = *p.name;
      if (p.owner) input.process_owners[e.pid] = *p.owner;
      pids.push_back(e.pid);
      entries.push_back(e);
    }
    processes_[i] = process_table_.rows(entries);
  }

  if (node_facts_) node_facts_(input.gpus);
  findings_ = rules::evaluate(input);
  facts_.clear();
  max_memory_clock_.clear();
  for (std::size_t i = 0; i < input.gpus.size(); ++i) {
    facts_.push_back(std::move(input.gpus[i].facts));
    max_memory_clock_.push_back(snapshots[i].memory_max ? std::optional(*snapshots[i].memory_max)
                                                        : std::nullopt);
  }
}

Frame ServiceFeed::frame(telemetry::Duration history, std::size_t graphed) {
  const auto now = local_now();
  const auto wall = std::chrono::steady_clock::now();
  if (!refreshed_at_ || wall - *refreshed_at_ >= kRefreshEvery) {
    refresh_slow_parts(now);
    refreshed_at_ = wall;
  }
  auto snapshot = client_->snapshot(indexes_, false, now);
  if (graphed < positions_.size() && (!history_ || history_->graphed != graphed ||
                                      history_->span != history || wall - history_->at >= 1s)) {
    serve::HistoryRequest request;
    request.gpus = std::vector<unsigned>{indexes_[graphed]};
    request.seconds = std::chrono::duration<double>(history).count();
    auto reply = client_->history(request, now);
    History h{graphed, history, wall, std::move(reply.at(0).samples), now};
    history_ = std::move(h);
  }

  Frame f;
  f.time = now;
  f.findings = findings_;
  auto& gpus = snapshot.gpus;
  for (std::size_t i = 0; i < positions_.size() && i < gpus.size(); ++i) {
    auto& j = gpus[i];
    GpuFrame g;
    g.facts = facts_[i];
    g.max_memory_clock = max_memory_clock_[i];
    g.memory_total = memory_total_[i];
    g.health.lost = j.lost;
    g.health.read_errors = j.read_errors;
    g.fast = j.fast;
    g.slow = std::move(j.slow);
    if (history_ && i == graphed) {
      // Asked up to a second ago: shift to this frame's time base.
      const auto shift = now - history_->base;
      for (auto s : history_->samples) {
        s.time += shift;
        g.history.push_back(s);
      }
    }
    g.processes = processes_[i];
    f.gpus.push_back(std::move(g));
  }
  return f;
}

}  // namespace gpuclk::tui
