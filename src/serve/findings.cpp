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

std::vector<rules::Finding> FindingsHold::update(const std::vector<rules::Finding>& look,
                                                 TimePoint now) {
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
  return out;
}

}  // namespace gpuclk::serve
