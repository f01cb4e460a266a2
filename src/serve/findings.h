// The node findings the service exports (`gpuclk_findings` series). The one place the service
// asks for them, so the rules engine (src/rules) replaces gpu::check_status here alone.
#pragma once

#include <vector>

#include "gpu/status.h"

namespace gpuclk::serve {

std::vector<gpu::Finding> node_findings(const std::vector<gpu::StatusSnapshot>& status);

}  // namespace gpuclk::serve
