#include "serve/findings.h"

namespace gpuclk::serve {

std::vector<gpu::Finding> node_findings(const std::vector<gpu::StatusSnapshot>& status) {
  return gpu::check_status(status);
}

}  // namespace gpuclk::serve
