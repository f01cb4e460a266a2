#include "tui/service_feed.h"

#include "gpu/device.h"
#include "gpu/status.h"
#include "host/owner.h"
#include "rules/process_owners.h"
#include "rules/rule.h"
#include "rules/status_input.h"
#include "serve/protocol.h"

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

ServiceFeed::ServiceFeed(Ask ask, std::vector<std::size_t> positions, telemetry::Duration interval,
                         NodeFacts node_facts)
    : ask_(std::move(ask)),
      positions_(std::move(positions)),
      interval_(interval),
      node_facts_(std::move(node_facts)),
      process_table_([this](unsigned pid) -> std::optional<std::string> {
        auto it = driver_names_.find(pid);
        if (it == driver_names_.end()) return std::nullopt;
        return it->second;
      }) {}

json ServiceFeed::gpus_request(const char* request) const {
  json r{{"request", request}, {"gpus", json::array()}};
  for (auto p : positions_) r["gpus"].push_back(p);
  return r;
}

void ServiceFeed::refresh_slow_parts(telemetry::TimePoint now) {
  const auto status = ask_({{"request", "status"}});
  std::vector<gpu::StatusSnapshot> snapshots;
  for (auto p : positions_) snapshots.push_back(serve::status_from_json(status.at("status").at(p)));
  auto input = rules::status_input(snapshots);
  input.from = now - kFindingsWindow;
  input.to = now;

  // The last minute of 1 s history: the findings' window.
  auto request = gpus_request("history");
  request["seconds"] = std::chrono::duration<double>(kFindingsWindow).count();
  request["slow"] = true;  // the slow tier too: NVLink, ECC and violation counters
  const auto history = ask_(request);
  const auto& gpus = history.at("gpus");
  for (std::size_t i = 0; i < positions_.size() && i < gpus.size(); ++i) {
    auto& w = input.gpus[i];
    w.fast.clear();
    w.slow.clear();
    for (const auto& s : gpus[i].at("samples"))
      w.fast.push_back(serve::fast_sample_from_json(s, now));
    // (A service older than the "slow" option answers without them.)
    if (auto it = gpus[i].find("slow"); it != gpus[i].end() && it->is_array()) {
      for (const auto& s : *it) w.slow.push_back(serve::slow_sample_from_json(s, now));
    }
  }

  // Processes and memory size (the `top` view); pids and names for the process rows.
  const auto view = ask_({{"request", "view"}, {"name", "top"}});
  const auto& rows = view.at("rows");
  processes_.assign(positions_.size(), {});
  memory_total_.assign(positions_.size(), std::nullopt);
  driver_names_.clear();
  for (std::size_t i = 0; i < positions_.size(); ++i) {
    const auto& row = rows.at(positions_[i]);
    if (auto it = row.find("memory_total_bytes"); it != row.end() && it->is_number())
      memory_total_[i] = units::Bytes(it->get<double>());
    auto it = row.find("processes");
    if (it == row.end() || !it->is_array()) continue;
    std::vector<ProcessTable::Entry> entries;
    auto& pids = input.gpus[i].facts.processes.emplace();
    for (const auto& p : *it) {
      ProcessTable::Entry e;
      e.pid = p.value("pid", 0u);
      if (auto m = p.find("used_memory_bytes"); m != p.end() && m->is_number())
        e.gpu_memory = units::Bytes(m->get<double>());
      if (auto n = p.find("name"); n != p.end() && n->is_string()) driver_names_[e.pid] = *n;
      if (auto o = p.find("owner"); o != p.end() && o->is_string()) {
        if (auto owner = host::parse_owner_key(o->get<std::string>())) {
          owner->user = p.value("owner_user", std::string());
          input.process_owners[e.pid] = std::move(*owner);
        }
      }
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
  const auto snapshot = ask_(gpus_request("snapshot"));
  if (graphed < positions_.size() && (!history_ || history_->graphed != graphed ||
                                      history_->span != history || wall - history_->at >= 1s)) {
    json request{{"request", "history"},
                 {"gpus", json::array({positions_[graphed]})},
                 {"seconds", std::chrono::duration<double>(history).count()}};
    const auto reply = ask_(request);
    History h{graphed, history, wall, {}, now};
    for (const auto& s : reply.at("gpus").at(0).at("samples"))
      h.samples.push_back(serve::fast_sample_from_json(s, now));
    history_ = std::move(h);
  }

  Frame f;
  f.time = now;
  f.findings = findings_;
  const auto& gpus = snapshot.at("gpus");
  for (std::size_t i = 0; i < positions_.size() && i < gpus.size(); ++i) {
    const auto& j = gpus[i];
    GpuFrame g;
    g.facts = facts_[i];
    g.max_memory_clock = max_memory_clock_[i];
    g.memory_total = memory_total_[i];
    g.health.lost = j.value("lost", false);
    g.health.read_errors = j.value("read_errors", std::uint64_t{0});
    if (j.contains("fast")) g.fast = serve::fast_sample_from_json(j.at("fast"), now);
    if (j.contains("slow")) g.slow = serve::slow_sample_from_json(j.at("slow"), now);
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
