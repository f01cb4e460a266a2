#include "serve/findings.h"

#include <algorithm>

#include "rules/rule.h"
#include "rules/status_input.h"

namespace gpuclk::serve {
namespace {

// A finding's identity across looks: its rule and its GPUs (its numbers change every look).
std::string key_of(const rules::Finding& f) {
  std::string key = f.rule + ':';
  for (auto index : f.gpus) key += std::to_string(index) + ',';
  return key;
}

}  // namespace

std::vector<rules::Finding> node_findings(const std::vector<gpu::StatusSnapshot>& status) {
  return rules::evaluate(rules::status_input(status));
}

std::vector<rules::Finding> window_findings(const std::vector<gpu::StatusSnapshot>& status,
                                            const telemetry::Sampler& sampler,
                                            const attribution::Attribution* attribution,
                                            std::vector<rules::CommunicatorWindow> communicators,
                                            telemetry::Duration window) {
  if (!attribution || !sampler.running()) return {};
  auto in = rules::status_input(status);
  in.to = sampler.now();
  in.from = in.to - window;
  for (std::size_t i = 0; i < in.gpus.size() && i < sampler.gpu_count(); ++i) {
    in.gpus[i].fast = sampler.fast_samples(i, in.from, in.to);
    in.gpus[i].facts.processes.emplace();
  }
  for (const auto& p : attribution->view().processes) {
    if (!p.running || p.gpu >= in.gpus.size()) continue;
    in.gpus[p.gpu].facts.processes->push_back(p.pid);
    in.process_owners[p.pid] = p.owner;
  }
  in.communicators = std::move(communicators);
  static const std::vector<const rules::Rule*> rules{rules::find_rule("straggler"),
                                                     rules::find_rule("communication_bound"),
                                                     rules::find_rule("late_rank")};
  return rules::evaluate(in, rules);
}

std::vector<rules::Finding> FindingsHold::update(const std::vector<rules::Finding>& look,
                                                 TimePoint now,
                                                 const std::vector<rules::Finding>& windowed) {
  std::set<std::string> keys;
  for (const auto& f : look) {
    const auto key = key_of(f);
    keys.insert(key);
    last_seen_[key] = f;
  }
  looks_.emplace_back(now, std::move(keys));
  while (looks_.size() > 1 && now - looks_.front().first > options_.window) looks_.pop_front();

  std::map<std::string, std::size_t> seen;
  for (const auto& [when, in_look] : looks_)
    for (const auto& key : in_look) ++seen[key];
  const double looks = static_cast<double>(looks_.size());
  for (auto it = last_seen_.begin(); it != last_seen_.end();) {
    const auto n = seen.count(it->first) ? static_cast<double>(seen[it->first]) : 0.0;
    const double share = n / looks;
    if (n == looks || share >= options_.raise) held_.insert(it->first);
    if (share <= options_.clear) held_.erase(it->first);
    // Out of the window altogether: forgotten.
    if (n == 0) {
      it = last_seen_.erase(it);
    } else {
      ++it;
    }
  }

  // In the order the rules engine gives (this look's first, then those held from earlier looks).
  std::vector<rules::Finding> out;
  std::set<std::string> done;
  for (const auto& f : look) {
    const auto key = key_of(f);
    if (held_.count(key) && done.insert(key).second) out.push_back(f);
  }
  for (const auto& key : held_) {
    if (done.insert(key).second) out.push_back(last_seen_.at(key));
  }

  std::set<std::string> seen_now;
  for (const auto& f : windowed) {
    const auto key = key_of(f);
    if (!seen_now.insert(key).second) continue;
    auto& w = windowed_[key];
    ++w.seen;
    w.missed = 0;
    w.last = f;
    if (w.seen >= options_.windowed_raise) w.shown = true;
  }
  for (auto it = windowed_.begin(); it != windowed_.end();) {
    auto& w = it->second;
    if (!seen_now.count(it->first)) {
      w.seen = 0;
      if (++w.missed >= options_.windowed_clear) w.shown = false;
      if (!w.shown) {
        it = windowed_.erase(it);
        continue;
      }
    }
    if (w.shown && done.insert(it->first).second) out.push_back(w.last);
    ++it;
  }
  return out;
}

}  // namespace gpuclk::serve
