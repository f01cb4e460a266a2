#include "govern/policy.h"

#include <fmt/format.h>

#include "govern/bandit_policy.h"
#include "govern/geopm_policy.h"
#include "govern/phase_policy.h"
#include "govern/threshold_policy.h"
#include "util/error.h"

namespace gpuclk::govern {

const std::vector<std::string>& policy_names() {
  static const std::vector<std::string> names = {"threshold", "geopm", "phase", "bandit"};
  return names;
}

std::unique_ptr<Policy> make_policy(std::string_view name, const PolicyOptions& o) {
  if (name == "threshold") return std::make_unique<ThresholdPolicy>();
  if (name == "geopm") return std::make_unique<GeopmPolicy>(o.geopm_phi, o.geopm_efficient);
  if (name == "phase") return std::make_unique<PhasePolicy>(o.max_slowdown);
  if (name == "bandit") return std::make_unique<BanditPolicy>(o.max_slowdown);
  throw bad_argument(fmt::format("unknown policy '{}'", name),
                     fmt::format("give one of: {}", fmt::join(policy_names(), ", ")));
}

}  // namespace gpuclk::govern
