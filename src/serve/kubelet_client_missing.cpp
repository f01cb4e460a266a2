// Built without libnghttp2: the kubelet is never asked, and pods are named by UID.
#include "serve/kubelet_client.h"
#include "util/error.h"

namespace gpuclk::serve {

std::vector<host::PodResources> list_pod_resources(const std::string&, std::chrono::milliseconds) {
  throw Error(ExitCode::not_supported,
              "this gpuclk was built without libnghttp2 (libnghttp2-dev), so it cannot ask the "
              "kubelet");
}

}  // namespace gpuclk::serve
