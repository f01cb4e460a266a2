#include "rules/jobs.h"

#include <algorithm>
#include <map>
#include <string>

namespace gpuclk::rules {

std::vector<Job> jobs(const Input& input) {
  std::map<std::string, Job> by_key;
  for (const auto& w : input.gpus) {
    if (w.facts.unavailable_code != 0 || w.health.lost || !w.facts.processes) continue;
    for (auto pid : *w.facts.processes) {
      const auto known = input.process_owners.find(pid);
      const host::Owner owner =
          known != input.process_owners.end()
              ? known->second
              : host::Owner{host::OwnerKind::process, std::to_string(pid), {}};
      auto& job = by_key.try_emplace(host::owner_key(owner), Job{owner, {}}).first->second;
      if (std::find(job.gpus.begin(), job.gpus.end(), w.facts.index) == job.gpus.end())
        job.gpus.push_back(w.facts.index);
    }
  }
  std::vector<Job> out;
  for (auto& [key, job] : by_key) {
    std::sort(job.gpus.begin(), job.gpus.end());
    out.push_back(std::move(job));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Job& a, const Job& b) { return a.gpus.front() < b.gpus.front(); });
  return out;
}

}  // namespace gpuclk::rules
