// The kubelet's pod-resources API, one unary gRPC call: PodResourcesLister v1 List, over
// HTTP/2 without TLS (h2c, prior knowledge) on the kubelet's Unix socket. HTTP/2 is libnghttp2's;
// gRPC's framing (a 5-byte prefix per message: a compressed flag and a big-endian length) and
// its status (grpc-status, grpc-message in the trailers, or in the headers of a trailers-only
// answer) are read here; the answer is decoded by host/pod_resources.h. One call does not
// justify gRPC++ and protobuf's code generator.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "host/pod_resources.h"

namespace gpuclk::serve {

inline constexpr const char* kKubeletPodResourcesSocket =
    "/var/lib/kubelet/pod-resources/kubelet.sock";
inline constexpr std::chrono::milliseconds kKubeletTimeout{2000};

// Asks the kubelet on `socket` for every pod's resources, within `timeout` in all (connect,
// request, answer). Throws Error (exit 255) saying what failed: no connection, a timeout, an
// HTTP/2 or gRPC error (its status and message), an answer beyond host/pod_resources.h's bounds.
std::vector<host::PodResources> list_pod_resources(
    const std::string& socket, std::chrono::milliseconds timeout = kKubeletTimeout);

}  // namespace gpuclk::serve
