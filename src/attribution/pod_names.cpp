#include "attribution/pod_names.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <tuple>

namespace gpuclk::attribution {
namespace {

using Pod = std::pair<std::string, std::string>;  // namespace, name

struct Holder {
  std::string pod_namespace, name, container;
  auto operator<=>(const Holder&) const = default;
};

std::string pod_text(const Pod& p) { return p.first + "/" + p.second; }

std::string pods_text(const std::set<Pod>& pods) {
  std::string text;
  std::size_t n = 0;
  for (const auto& p : pods) {
    if (++n > 4) {
      text += ", …";
      break;
    }
    text += (text.empty() ? "" : ", ") + pod_text(p);
  }
  return text;
}

}  // namespace

bool is_gpu_resource(std::string_view resource_name) {
  return resource_name == "nvidia.com/gpu" || resource_name == "nvidia.com/gpu.shared";
}

PodJoin join_pod_names(std::span<const host::PodResources> listed,
                       std::span<const std::string> gpu_uuids,
                       const std::map<std::string, std::set<std::size_t>>& running) {
  PodJoin join;
  join.gpus.assign(gpu_uuids.size(), std::nullopt);
  std::map<std::string_view, std::size_t> position;
  for (std::size_t i = 0; i < gpu_uuids.size(); ++i) position.emplace(gpu_uuids[i], i);

  // Who holds each GPU: every container with one of its device ids (replicas "::N" of one GPU
  // given to one container are one holder).
  std::vector<std::set<Holder>> holders(gpu_uuids.size());
  for (const auto& pod : listed) {
    for (const auto& c : pod.containers) {
      for (const auto& d : c.devices) {
        if (!is_gpu_resource(d.resource_name)) continue;
        for (const auto& id : d.device_ids) {
          const auto at = position.find(host::device_base(id));
          if (at != position.end())
            holders[at->second].insert({pod.pod_namespace, pod.name, c.name});
        }
      }
    }
  }
  for (std::size_t i = 0; i < holders.size(); ++i) {
    if (holders[i].size() == 1) {
      const auto& h = *holders[i].begin();
      join.gpus[i] = PodName{h.pod_namespace, h.name, h.container};
    }
  }

  // Each UID's candidates: the pods holding every GPU its processes are on.
  std::map<std::string, std::set<Pod>> candidates;
  for (const auto& [uid, positions] : running) {
    std::optional<std::set<Pod>> both;
    for (const auto p : positions) {
      std::set<Pod> here;
      if (p < holders.size()) {
        for (const auto& h : holders[p]) here.emplace(h.pod_namespace, h.name);
      }
      if (!both) {
        both = std::move(here);
      } else {
        std::set<Pod> kept;
        std::set_intersection(both->begin(), both->end(), here.begin(), here.end(),
                              std::inserter(kept, kept.end()));
        both = std::move(kept);
      }
    }
    candidates[uid] = both.value_or(std::set<Pod>{});
  }

  // One candidate: that pod, unless it is the one candidate of another UID too. A pod given to a
  // UID is no other UID's, which may leave one candidate to another: again until nothing moves.
  std::map<Pod, std::string> taken;
  std::set<std::string> contested;
  for (bool moved = true; moved;) {
    moved = false;
    std::map<Pod, std::vector<std::string>> sole;
    for (auto& [uid, pods] : candidates) {
      if (join.named.contains(uid)) continue;
      std::erase_if(pods, [&](const Pod& p) { return taken.contains(p); });
      if (pods.size() == 1) sole[*pods.begin()].push_back(uid);
    }
    for (const auto& [pod, uids] : sole) {
      if (uids.size() > 1) {
        contested.insert(uids.begin(), uids.end());
        continue;
      }
      taken.emplace(pod, uids.front());
      join.named[uids.front()] = PodName{pod.first, pod.second, ""};
      moved = true;
    }
  }

  for (const auto& [uid, pods] : candidates) {
    if (auto named = join.named.find(uid); named != join.named.end()) {
      // Its container: the one container of the pod holding its GPUs.
      std::set<std::string> containers;
      for (const auto p : running.at(uid)) {
        if (p >= holders.size()) continue;
        for (const auto& h : holders[p]) {
          if (h.pod_namespace == named->second.pod_namespace && h.name == named->second.name)
            containers.insert(h.container);
        }
      }
      if (containers.size() == 1) named->second.container = *containers.begin();
      continue;
    }
    if (contested.contains(uid)) {
      join.unnamed[uid] = fmt::format("pod {} holds its GPUs, and other pod UIDs run there too",
                                      pod_text(*pods.begin()));
    } else if (pods.empty()) {
      join.unnamed[uid] = "no pod of the kubelet's answer holds its GPUs";
    } else {
      join.unnamed[uid] =
          fmt::format("its GPUs are shared by {} pods ({})", pods.size(), pods_text(pods));
    }
  }
  return join;
}

std::map<std::string, std::set<std::size_t>> running_pods(const AttributionView& view) {
  std::map<std::string, std::set<std::size_t>> pods;
  for (const auto& p : view.processes) {
    if (p.running && p.owner.kind == host::OwnerKind::kubernetes_pod)
      pods[p.owner.id].insert(p.gpu);
  }
  return pods;
}

PodNamer::PodNamer(std::string socket, ListPodResources list, std::vector<std::string> gpu_uuids,
                   std::function<void(const std::string&)> log)
    : socket_(std::move(socket)),
      list_(std::move(list)),
      gpu_uuids_(std::move(gpu_uuids)),
      log_(std::move(log)),
      gpus_(gpu_uuids_.size()) {}

bool PodNamer::refresh(const AttributionView& view, Attribution& attribution,
                       std::chrono::steady_clock::time_point now) {
  const auto running = running_pods(view);
  bool due = !asked_at_ || now - *asked_at_ >= kPodResourcesEvery;
  if (!due && now - *asked_at_ >= kPodResourcesRetry) {
    due = std::any_of(running.begin(), running.end(),
                      [&](const auto& entry) { return !settled_.contains(entry.first); });
  }
  if (due) {
    asked_at_ = now;
    settled_.clear();
    for (const auto& [uid, gpus] : running) settled_.insert(uid);
    std::error_code ec;
    if (socket_.empty() || !list_ || !std::filesystem::exists(socket_, ec)) {
      // Not a Kubernetes node, or the kubelet is not up: said once, when a pod needs a name
      // (not with --kubelet-socket off).
      listed_.clear();
      if (!running.empty() && !absent_said_ && !socket_.empty() && log_) {
        log_(fmt::format("no kubelet pod-resources socket at {}: pods are named by UID", socket_));
        absent_said_ = true;
      }
    } else {
      try {
        listed_ = list_();
        {
          std::lock_guard lock(mutex_);
          ++asks_;
        }
        if (!last_error_.empty() && log_)
          log_(fmt::format("the kubelet's pod-resources API on {} answers again", socket_));
        last_error_.clear();
      } catch (const std::exception& e) {
        // An old answer could name a new pod after one that is gone: none until it answers.
        listed_.clear();
        {
          std::lock_guard lock(mutex_);
          ++asks_;
        }
        if (e.what() != last_error_ && log_)
          log_(
              fmt::format("the kubelet's pod-resources API on {}: {}; pods are named by UID "
                          "until it answers (asked again every {} s)",
                          socket_, e.what(), kPodResourcesEvery.count()));
        last_error_ = e.what();
      }
    }
  }
  const auto join = join_pod_names(listed_, gpu_uuids_, running);
  attribution.name_pods(join.named);
  std::lock_guard lock(mutex_);
  gpus_ = join.gpus;
  return due;
}

std::vector<std::optional<PodName>> PodNamer::gpus() const {
  std::lock_guard lock(mutex_);
  return gpus_;
}

std::uint64_t PodNamer::asks() const {
  std::lock_guard lock(mutex_);
  return asks_;
}

}  // namespace gpuclk::attribution
