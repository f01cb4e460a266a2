// The node findings the service exports (`gpuclk_findings` series): the rules engine (src/rules)
// over the service's latest status, the same findings `gpuclk status` prints.
#pragma once

#include <vector>

#include "gpu/status.h"
#include "rules/finding.h"

namespace gpuclk::serve {

std::vector<rules::Finding> node_findings(const std::vector<gpu::StatusSnapshot>& status);

}  // namespace gpuclk::serve
