// What the kubelet says holds which device: the answer of its pod-resources API
// (PodResourcesLister v1 List, k8s.io/kubelet/pkg/apis/podresources/v1), decoded from protobuf's
// wire format by hand. Only the fields gpuclk needs are kept; every other field, of any wire
// type, is skipped:
//   ListPodResourcesResponse { repeated PodResources pod_resources = 1; }
//   PodResources             { string name = 1; string namespace = 2;
//                              repeated ContainerResources containers = 3; }
//   ContainerResources       { string name = 1; repeated ContainerDevices devices = 2; }
//   ContainerDevices         { string resource_name = 1; repeated string device_ids = 2; }
// The call itself (gRPC over HTTP/2 on the kubelet's Unix socket) is serve/kubelet_client.h's.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpuclk::host {

struct ContainerDevices {
  std::string resource_name;            // "nvidia.com/gpu"
  std::vector<std::string> device_ids;  // "GPU-8c1e…", "GPU-8c1e…::2" (time-slicing), "MIG-…"
};

struct ContainerResources {
  std::string name;
  std::vector<ContainerDevices> devices;
};

struct PodResources {
  std::string name;
  std::string pod_namespace;
  std::vector<ContainerResources> containers;
};

// The bounds of one answer: larger messages, longer strings or more entries are refused, not
// truncated (a node runs at most a few hundred pods; the kubelet's default limit is 110).
inline constexpr std::size_t kPodResourcesMaxBytes = 16u << 20;
inline constexpr std::size_t kPodResourcesMaxPods = 4096;
inline constexpr std::size_t kPodResourcesMaxContainers = 256;  // per pod
inline constexpr std::size_t kPodResourcesMaxDevices = 65536;   // device ids, all pods together
inline constexpr std::size_t kPodResourcesMaxString = 4096;     // bytes of a name or device id

// Decodes a ListPodResourcesResponse. Throws Error (exit 255) saying what is wrong: a truncated
// or malformed message, a field of the wrong wire type, or one beyond the bounds above.
std::vector<PodResources> decode_list_pod_resources(std::string_view message);

// A device id without its time-slicing replica suffix: "GPU-x::3" → "GPU-x".
std::string_view device_base(std::string_view device_id);

}  // namespace gpuclk::host
