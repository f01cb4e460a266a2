#include "serve/findings.h"

#include "rules/rule.h"
#include "rules/status_input.h"

namespace gpuclk::serve {

std::vector<rules::Finding> node_findings(const std::vector<gpu::StatusSnapshot>& status) {
  return rules::evaluate(rules::status_input(status));
}

}  // namespace gpuclk::serve
