#include "attribution/attribution.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <set>

#include "gpu/clock_reasons.h"

namespace gpuclk::attribution {
namespace {

double seconds(telemetry::Duration d) { return std::chrono::duration<double>(d).count(); }

// What the fast samples of one interval say about the GPU: its mean SM clock, its busy seconds
// (utilization × time) and the seconds each clock event reason was active. Each sample stands for
// an equal part of the interval.
struct IntervalFacts {
  std::optional<double> sm_mhz;
  std::optional<double> busy_s;
  std::array<double, kReasonSlots> held_s{};
};

IntervalFacts facts_of(std::span<const telemetry::FastSample> fast, double dt) {
  IntervalFacts f;
  double clock = 0, busy = 0;
  std::size_t clocks = 0, busies = 0;
  for (const auto& s : fast) {
    if (s.sm_clock) {
      clock += s.sm_clock->value();
      ++clocks;
    }
    if (s.gpu_utilization) {
      busy += s.gpu_utilization->value();
      ++busies;
    }
  }
  if (clocks > 0) f.sm_mhz = clock / static_cast<double>(clocks);
  if (busies > 0) f.busy_s = busy / static_cast<double>(busies) * dt;
  if (!fast.empty()) {
    const double each = dt / static_cast<double>(fast.size());
    for (const auto& s : fast) {
      if (!s.clock_reasons) continue;
      for (std::size_t bit = 0; bit < kReasonSlots; ++bit) {
        if (s.clock_reasons->has(std::uint64_t{1} << bit)) f.held_s[bit] += each;
      }
    }
  }
  return f;
}

}  // namespace

std::string_view to_string(Split split) {
  switch (split) {
    case Split::sole:
      return "sole";
    case Split::sm:
      return "sm";
    case Split::memory:
      return "memory";
    case Split::equal:
      return "equal";
  }
  return "?";
}

void Usage::add(const Usage& o) {
  energy_j += o.energy_j;
  context_s += o.context_s;
  busy_s += o.busy_s;
  clock_mhz_s += o.clock_mhz_s;
  clock_s += o.clock_s;
  for (std::size_t k = 0; k < held_s.size(); ++k) held_s[k] += o.held_s[k];
}

std::optional<double> Usage::mean_sm_mhz() const {
  if (clock_s <= 0) return std::nullopt;
  return clock_mhz_s / clock_s;
}

std::string held_back_text(const Usage& u, std::size_t most) {
  std::vector<std::pair<double, std::string_view>> held;
  for (const auto& r : gpu::clock_reasons()) {
    const auto bit = static_cast<std::size_t>(std::countr_zero(r.bit));
    if (bit >= u.held_s.size() || !gpu::ClockReasons(r.bit).limiting()) continue;
    if (u.held_s[bit] > 0 && u.context_s > 0) held.emplace_back(u.held_s[bit], r.key);
  }
  std::sort(held.rbegin(), held.rend());
  std::string text;
  for (std::size_t k = 0; k < held.size() && k < most; ++k) {
    text += (k ? ", " : "") + std::string(held[k].second) + " " +
            std::to_string(
                static_cast<int>(std::lround(100 * std::min(1.0, held[k].first / u.context_s)))) +
            "%";
  }
  return text.empty() ? "-" : text;
}

Attribution::Attribution(std::vector<unsigned> gpu_indexes, IdentifyProcess identify)
    : gpu_indexes_(std::move(gpu_indexes)),
      identify_(std::move(identify)),
      books_(gpu_indexes_.size()) {}

namespace {

// One process's part in one interval of its GPU.
struct Participant {
  bool listed_before = false, listed_now = false;
  std::optional<units::Bytes> memory;
  double sm = 0;  // Σ of its SM utilization samples
  double share = 0;
};
using Participants = std::map<unsigned, Participant>;

// The energy counter's delta over the interval; nullopt without both readings.
std::optional<double> energy_of(const telemetry::SlowSample& previous,
                                const telemetry::SlowSample& current) {
  if (!previous.energy || !current.energy) return std::nullopt;
  return std::max(0.0, current.energy->value() - previous.energy->value());
}

// Who was on the GPU: listed at either end, or sampled in between.
Participants participants_of(const telemetry::SlowSample& previous,
                             const telemetry::SlowSample& current) {
  Participants on;
  if (previous.processes) {
    for (const auto& p : *previous.processes) on[p.pid].listed_before = true;
  }
  if (current.processes) {
    for (const auto& p : *current.processes) {
      on[p.pid].listed_now = true;
      on[p.pid].memory = p.memory;
    }
  }
  for (const auto& u : current.process_utilization) on[u.pid].sm += u.sm.value();
  return on;
}

// How the energy is split, with each participant's share set.
Split split_shares(Participants& on) {
  Split split = Split::sole;
  double total_sm = 0, total_memory = 0;
  bool every_memory = true;
  for (const auto& [pid, p] : on) {
    total_sm += p.sm;
    if (p.memory) {
      total_memory += p.memory->value();
    } else {
      every_memory = false;
    }
  }
  if (on.size() > 1) {
    if (total_sm > 0) {
      split = Split::sm;
    } else if (every_memory && total_memory > 0) {
      split = Split::memory;
    } else {
      split = Split::equal;
    }
  }
  for (auto& [pid, p] : on) {
    switch (split) {
      case Split::sole:
        p.share = 1;
        break;
      case Split::sm:
        p.share = p.sm / total_sm;
        break;
      case Split::memory:
        p.share = p.memory->value() / total_memory;
        break;
      case Split::equal:
        p.share = 1.0 / static_cast<double>(on.size());
        break;
    }
  }
  return split;
}

// The GPU's books: the delta goes to the unknown (the processes were not read), to idle (none
// ran) or to the processes, by how it was split.
void book_gpu(GpuBooks& books, const telemetry::SlowSample& previous,
              const telemetry::SlowSample& current, std::optional<double> energy, bool idle,
              Split split) {
  ++books.intervals;
  if (!energy) return;
  if (!books.first_counter_j) books.first_counter_j = previous.energy->value();
  books.last_counter_j = current.energy->value();
  books.counted_j += *energy;
  if (!current.processes) {
    books.unknown_j += *energy;
  } else if (idle) {
    books.idle_j += *energy;
  } else {
    books.split_j[static_cast<std::size_t>(split)] += *energy;
  }
}

// A process's state at the end of the interval: when last seen, its share and power, its memory.
void note_interval(ProcessUse& use, const Participant& p, Split split, telemetry::TimePoint now,
                   std::optional<double> energy, double dt) {
  use.last_seen = now;
  use.running = true;
  use.share = p.share;
  use.split = split;
  use.power_w = energy ? *energy / dt * p.share : 0;
  if (p.memory) {
    use.memory = p.memory;
    if (!use.memory_peak || p.memory->value() > use.memory_peak->value())
      use.memory_peak = p.memory;
  }
}

// A participant's usage in the interval: its share of the energy and of the busy time, its context
// time (all of the interval when listed at both ends, else half), and the clock and the reasons
// over that time.
Usage step_of(const Participant& p, const IntervalFacts& facts, std::optional<double> energy,
              double dt) {
  Usage step;
  const double context = (p.listed_before && p.listed_now) ? 1.0 : 0.5;
  step.energy_j = energy ? *energy * p.share : 0;
  step.context_s = context * dt;
  step.busy_s = facts.busy_s ? *facts.busy_s * p.share : 0;
  if (facts.sm_mhz) {
    step.clock_mhz_s = *facts.sm_mhz * step.context_s;
    step.clock_s = step.context_s;
  }
  for (std::size_t k = 0; k < kReasonSlots; ++k) step.held_s[k] = facts.held_s[k] * context;
  return step;
}

}  // namespace

OwnerUse& Attribution::owner_of(const ProcessUse& process) {
  OwnerUse& o = owners_[host::owner_key(process.owner)];
  if (o.owner.id.empty()) {
    o.owner = process.owner;
    o.first_seen = process.first_seen;
  }
  return o;
}

void Attribution::identify(unsigned pid) {
  if (!identities_.contains(pid)) identities_.emplace(pid, identify_(pid));
}

ProcessUse& Attribution::process_use(std::size_t gpu, unsigned pid,
                                     telemetry::TimePoint first_seen) {
  const auto [it, fresh] = processes_.try_emplace({gpu, pid});
  ProcessUse& use = it->second;
  if (!fresh) return use;
  const auto known = identities_.find(pid);
  use.pid = pid;
  use.gpu = gpu;
  use.gpu_index = gpu_indexes_[gpu];
  use.name = known->second.name;
  use.owner =
      known->second.owner.value_or(host::Owner{host::OwnerKind::process, std::to_string(pid), ""});
  use.first_seen = first_seen;
  // A process of a pod named before it started takes the pod's name.
  if (const auto o = owners_.find(host::owner_key(use.owner));
      o != owners_.end() && !o->second.owner.pod_name.empty()) {
    use.owner.pod_namespace = o->second.owner.pod_namespace;
    use.owner.pod_name = o->second.owner.pod_name;
    use.owner.container_name = o->second.owner.container_name;
  }
  return use;
}

void Attribution::book(ProcessUse& use, const Usage& step) {
  use.usage.add(step);
  OwnerUse& owner = owner_of(use);
  owner.last_seen = use.last_seen;
  owner.usage.add(step);
  owner.by_gpu[use.gpu_index].add(step);
  if (!std::binary_search(owner.pids.begin(), owner.pids.end(), use.pid)) {
    owner.pids.insert(std::upper_bound(owner.pids.begin(), owner.pids.end(), use.pid), use.pid);
  }
  users_[use.owner.user].add(step);
}

void Attribution::add(std::size_t gpu, const telemetry::SlowSample& previous,
                      const telemetry::SlowSample& current,
                      std::span<const telemetry::FastSample> fast) {
  if (gpu >= books_.size()) return;
  const double dt = seconds(current.time - previous.time);
  if (!(dt > 0)) return;
  const std::optional<double> energy = energy_of(previous, current);
  Participants on = participants_of(previous, current);
  const Split split = split_shares(on);
  const IntervalFacts facts = facts_of(fast, dt);
  // Who a new pid is: /proc and the driver, read before taking the lock readers wait on
  // (identities_ is this thread's alone).
  for (const auto& [pid, p] : on) identify(pid);

  std::lock_guard lock(mutex_);
  book_gpu(books_[gpu], previous, current, energy, on.empty(), split);
  if (!current.processes) return;  // who ran is unknown: only the GPU's books move

  // Each participant's usage in this interval, added to it, its owner and its user.
  for (auto& [key, process] : processes_) {
    if (key.first == gpu) process.running = false;
  }
  for (const auto& [pid, p] : on) {
    ProcessUse& use = process_use(gpu, pid, previous.time);
    note_interval(use, p, split, current.time, energy, dt);
    book(use, step_of(p, facts, energy, dt));
  }
  for (auto& [key, owner] : owners_) owner.running = false;
  for (const auto& [key, process] : processes_) {
    if (process.running) owner_of(process).running = true;
  }
}

void Attribution::prune(telemetry::TimePoint now) {
  std::lock_guard lock(mutex_);
  std::set<unsigned> kept_pids;
  for (auto it = processes_.begin(); it != processes_.end();) {
    if (!it->second.running && now - it->second.last_seen > kEndedProcessKept) {
      it = processes_.erase(it);
    } else {
      kept_pids.insert(it->first.second);
      ++it;
    }
  }
  std::erase_if(identities_, [&](const auto& entry) { return !kept_pids.contains(entry.first); });
  std::erase_if(owners_, [&](const auto& entry) {
    return !entry.second.running && now - entry.second.last_seen > kEndedOwnerKept;
  });
  while (owners_.size() > kOwnersKept) {
    auto oldest = owners_.end();
    for (auto it = owners_.begin(); it != owners_.end(); ++it) {
      if (it->second.running) continue;
      if (oldest == owners_.end() || it->second.last_seen < oldest->second.last_seen) oldest = it;
    }
    if (oldest == owners_.end()) break;
    owners_.erase(oldest);
  }
}

void Attribution::name_pods(const std::map<std::string, PodName>& named) {
  if (named.empty()) return;
  const auto name = [&](host::Owner& o) {
    if (o.kind != host::OwnerKind::kubernetes_pod || !o.pod_name.empty()) return;
    const auto it = named.find(o.id);
    if (it == named.end()) return;
    o.pod_namespace = it->second.pod_namespace;
    o.pod_name = it->second.name;
    o.container_name = it->second.container;
  };
  std::lock_guard lock(mutex_);
  for (auto& [key, owner] : owners_) name(owner.owner);
  for (auto& [key, process] : processes_) name(process.owner);
}

AttributionView Attribution::view() const {
  std::lock_guard lock(mutex_);
  AttributionView v;
  for (const auto& [key, process] : processes_) v.processes.push_back(process);
  for (const auto& [key, owner] : owners_) v.owners.push_back(owner);
  std::sort(v.owners.begin(), v.owners.end(),
            [](const OwnerUse& a, const OwnerUse& b) { return a.first_seen < b.first_seen; });
  v.users = users_;
  v.gpus = books_;
  v.gpu_indexes = gpu_indexes_;
  return v;
}

}  // namespace gpuclk::attribution
