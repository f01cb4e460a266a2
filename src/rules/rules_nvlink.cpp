// NVLink rules: a link down where the GPU's other links or its peers' are up, DL error counters
// that grow during the window, and a GPU pair joined by fewer links than the node's other pairs.
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>

#include "rules/window.h"

namespace gpuclk::rules::detail {
namespace {

// The window's last slow sample that read the GPU's links (null: none did).
const telemetry::SlowSample* last_with_links(const GpuWindow& w) {
  for (auto it = w.slow.rbegin(); it != w.slow.rend(); ++it) {
    if (!it->nvlinks.empty()) return &*it;
  }
  return nullptr;
}

unsigned links_up(const telemetry::SlowSample& s) {
  return static_cast<unsigned>(std::count_if(
      s.nvlinks.begin(), s.nvlinks.end(), [](const auto& l) { return l.active.value_or(false); }));
}

struct LinkCounter {
  const char* name;
  std::optional<std::uint64_t> telemetry::NvLinkSample::*member;
  bool corrected;  // data ECC: the link corrected the errors; replays, recoveries and CRC resend
};
constexpr LinkCounter kLinkCounters[] = {
    {"replay", &telemetry::NvLinkSample::replay, false},
    {"recovery", &telemetry::NvLinkSample::recovery, false},
    {"crc", &telemetry::NvLinkSample::crc, false},
    {"ecc", &telemetry::NvLinkSample::ecc, true},
};

}  // namespace

void nvlink_down(const Input& in, const Thresholds&, std::vector<Finding>& out) {
  for (const auto& [model, same] : by_model(in)) {
    for (const auto* w : same) {
      const auto* s = last_with_links(*w);
      if (!s) continue;
      std::vector<unsigned> down;
      for (const auto& l : s->nvlinks) {
        if (l.active && !*l.active) down.push_back(l.link);
      }
      if (down.empty()) continue;
      const unsigned up = links_up(*s);
      unsigned peers_up = 0;
      for (const auto* p : same) {
        if (p == w) continue;
        if (const auto* ps = last_with_links(*p)) peers_up = std::max(peers_up, links_up(*ps));
      }
      // Every link down and no peer with one up: a board without NVLink bridges, not a fault.
      if (up == 0 && peers_up == 0) continue;
      const auto total = static_cast<unsigned>(s->nvlinks.size());
      auto f = make("nvlink_down", Severity::warning, {w->facts.index},
                    fmt::format("GPU {}: NVLink {} {} {} ({} of {} links up{}): transfers between "
                                "GPUs get {:.0f}% of the bandwidth",
                                w->facts.index, down.size() == 1 ? "link" : "links",
                                fmt::join(down, ","), "down", up, total,
                                peers_up > up ? fmt::format(", its peers have {}", peers_up) : "",
                                100.0 * up / std::max(1u, std::max(total, peers_up))),
                    "a link failed to train or dropped: a cable, connector or bridge (NVSwitch "
                    "tray) fault, or a link disabled after errors",
                    fmt::format("`nvidia-smi nvlink -s -i {0}` and `nvidia-smi nvlink -e -i {0}`; "
                                "reset the GPUs (nvidia-smi -r) and if the link stays down, "
                                "reseat or service the link",
                                w->facts.index));
      f.evidence.push_back({"links_down", "", 0, 0, fmt::format("{}", fmt::join(down, ","))});
      add(f, "links_up", up);
      add(f, "links", total);
      add(f, "peers_links_up", peers_up);
      out.push_back(std::move(f));
    }
  }
}

void nvlink_errors(const Input& in, const Thresholds& t, std::vector<Finding>& out) {
  if (in.snapshot()) return;
  for (const auto& w : in.gpus) {
    // Per link and counter, the first and last reading of the window: of the samples where the
    // counters were read (they are read every 10 s), so the rate is over the time between reads.
    std::map<std::pair<unsigned, int>, std::pair<std::uint64_t, std::uint64_t>> range;
    std::optional<telemetry::TimePoint> first_read, last_read;
    for (const auto& s : w.slow) {
      if (!s.nvlink_errors_fresh || s.nvlinks.empty()) continue;
      if (!first_read) first_read = s.time;
      last_read = s.time;
      for (const auto& l : s.nvlinks) {
        for (int c = 0; c < 4; ++c) {
          const auto& v = l.*kLinkCounters[c].member;
          if (!v) continue;
          auto [it, fresh] = range.try_emplace(std::pair<unsigned, int>(l.link, c), *v, *v);
          if (!fresh) it->second.second = *v;
        }
      }
    }
    if (!first_read || *last_read <= *first_read) continue;
    const double minutes = std::chrono::duration<double>(*last_read - *first_read).count() / 60;
    std::vector<std::string> parts;
    Severity severity = Severity::info;
    Finding f;
    std::uint64_t total = 0;
    for (const auto& [key, first_last] : range) {
      const auto [first, last] = first_last;
      if (last <= first) continue;
      const auto& counter = kLinkCounters[key.second];
      const double n = static_cast<double>(last - first);
      if (counter.corrected && n / minutes < t.nvlink_ecc_per_minute) continue;
      total += last - first;
      if (!counter.corrected) severity = Severity::warning;
      parts.push_back(
          fmt::format("link {} {} +{:.0f} ({:.1f}/min)", key.first, counter.name, n, n / minutes));
      f.evidence.push_back(
          {fmt::format("link{}_{}_per_minute", key.first, counter.name), "", n / minutes, 1, ""});
    }
    if (parts.empty()) continue;
    auto g = make(
        "nvlink_errors", severity, {w.facts.index},
        fmt::format("GPU {}: NVLink error counters grew during the {:.0f} s window: {}",
                    w.facts.index, in.seconds(), fmt::join(parts, ", ")),
        severity == Severity::warning
            ? "a marginal link: replays, recoveries and CRC errors resend data (signal "
              "integrity of the cable, connector or NVSwitch tray)"
            : "the link corrects data errors with ECC: no data is lost yet, but a rising count "
              "is a link wearing out",
        fmt::format("watch `nvidia-smi nvlink -e -i {}`; if the count keeps rising, reset the "
                    "GPUs (nvidia-smi -r) and service the link",
                    w.facts.index));
    g.evidence = std::move(f.evidence);
    add(g, "errors_in_window", static_cast<double>(total));
    out.push_back(std::move(g));
  }
}

void nvlink_fewer_links(const Input& in, const Thresholds&, std::vector<Finding>& out) {
  // Active links per GPU pair, from both ends' facts (each pair counted once, from the lower
  // index's side; switch links are not pairs).
  std::map<std::string, unsigned> index_of_bus;
  for (const auto& w : in.gpus) {
    if (!w.facts.bus_id.empty()) index_of_bus[w.facts.bus_id] = w.facts.index;
  }
  std::map<std::pair<unsigned, unsigned>, unsigned> pairs;
  for (const auto& w : in.gpus) {
    for (const auto& [remote, links] : w.facts.nvlink_peers) {
      auto it = index_of_bus.find(remote);
      if (it == index_of_bus.end() || it->second <= w.facts.index) continue;
      pairs[{w.facts.index, it->second}] = links;
    }
  }
  if (pairs.size() < 2) return;
  unsigned most = 0;
  for (const auto& [pair, links] : pairs) most = std::max(most, links);
  for (const auto& [pair, links] : pairs) {
    if (links >= most) continue;
    auto f = make("nvlink_fewer_links", Severity::warning, {pair.first, pair.second},
                  fmt::format("GPU {} <-> GPU {}: {} NVLinks where the node's other pairs have {}: "
                              "collectives over this pair run at {:.0f}% of the others' bandwidth",
                              pair.first, pair.second, links, most, 100.0 * links / most),
                  "links of this pair are down or were never connected (a bridge or cable "
                  "missing or faulty)",
                  fmt::format("`gpuclk topo` and `nvidia-smi nvlink -s -i {}`; reseat or replace "
                              "the pair's bridge or cable",
                              pair.first));
    add(f, "links", links);
    add(f, "links_other_pairs", most);
    out.push_back(std::move(f));
  }
}

}  // namespace gpuclk::rules::detail
