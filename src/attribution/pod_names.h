// Kubernetes pods by name: the kubelet's pod-resources answer (host/pod_resources.h: which
// container of which pod holds which device of `nvidia.com/gpu`) joined with what the service
// knows of each process (its pod UID, from its cgroup, and its GPU's UUID, from NVML).
//
// The join, per pod UID with running processes: the pods whose containers hold every GPU its
// processes are on (device ids compared without a time-slicing "::N" suffix). One pod left: the
// UID is that pod (its container: the one container of it holding those GPUs, else unknown).
// Several (time-slicing: pods share a GPU): a pod that the join gave to another UID is taken
// off, and what is left decides; a UID still between several pods stays unnamed. MIG devices
// (MIG-… ids) are never matched: the service knows processes by their parent GPU.
// Per GPU (dcgm-exporter's labels): the one container holding it, whether or not a process runs.
//
// PodNamer asks the kubelet from the service's refresher: every kPodResourcesEvery, and when a
// running pod UID appears that the last answer did not name (at most every kPodResourcesRetry);
// never when the socket does not exist. Requests and scrapes read the last join only.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "attribution/attribution.h"
#include "host/pod_resources.h"

namespace gpuclk::attribution {

// The extended resources whose devices are GPUs: the device plugin's, and its time-sliced
// resource when renamed (`renameByDefault`).
bool is_gpu_resource(std::string_view resource_name);

struct PodJoin {
  std::map<std::string, PodName> named;        // by pod UID: told apart
  std::map<std::string, std::string> unnamed;  // by pod UID: why not
  std::vector<std::optional<PodName>> gpus;    // by GPU position: its one holder, if one
};

// `gpu_uuids`: each GPU position's UUID; `running`: each running pod UID's GPU positions.
PodJoin join_pod_names(std::span<const host::PodResources> listed,
                       std::span<const std::string> gpu_uuids,
                       const std::map<std::string, std::set<std::size_t>>& running);

// The running pod UIDs of an attribution view and the GPU positions their processes are on.
std::map<std::string, std::set<std::size_t>> running_pods(const AttributionView& view);

inline constexpr std::chrono::seconds kPodResourcesEvery{30};
inline constexpr std::chrono::seconds kPodResourcesRetry{5};

// The call (serve/kubelet_client.h in the service): throws Error saying why it failed.
using ListPodResources = std::function<std::vector<host::PodResources>()>;

class PodNamer {
 public:
  // `socket`: asked only while it exists; `log`: one line per change of the kubelet's state
  // (first failure, a different failure, answering again).
  PodNamer(std::string socket, ListPodResources list, std::vector<std::string> gpu_uuids,
           std::function<void(const std::string&)> log);

  // From the refresher: asks the kubelet when due, joins its last answer with `view`, and names
  // the attribution's pods. Returns whether it asked.
  bool refresh(const AttributionView& view, Attribution& attribution,
               std::chrono::steady_clock::time_point now);

  // Each GPU's one holder (by position), from the last join; any thread.
  std::vector<std::optional<PodName>> gpus() const;
  std::uint64_t asks() const;

 private:
  std::string socket_;
  ListPodResources list_;
  std::vector<std::string> gpu_uuids_;
  std::function<void(const std::string&)> log_;
  // The refresher's alone.
  std::optional<std::chrono::steady_clock::time_point> asked_at_;
  std::vector<host::PodResources> listed_;
  std::set<std::string> settled_;  // UIDs the last ask came after (named or not)
  std::string last_error_;         // "" while the kubelet answers (or was never asked)
  bool absent_said_ = false;
  mutable std::mutex mutex_;
  std::vector<std::optional<PodName>> gpus_;
  std::uint64_t asks_ = 0;
};

}  // namespace gpuclk::attribution
