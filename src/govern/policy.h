// The policy interface: one interval's signals and class in, a clock decision and its reason
// out. A policy may keep state (what it learned); one instance governs one GPU. Not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "govern/classifier.h"
#include "govern/decision.h"
#include "govern/signals.h"

namespace gpuclk::govern {

struct PolicyInput {
  const Signals& signals;
  PhaseClass phase_class;
  const ClockLadder& ladder;
  Decision current;  // what is written now
};

struct Proposal {
  Decision decision;
  std::string reason;  // one line, for the decision log
};

struct PolicyOptions {
  double max_slowdown = 0.03;  // slowdown budget, a fraction of the job time
  double geopm_phi = 0.5;      // GEOPM's bias: < 0.5 favours energy, > 0.5 performance
  Megahertz geopm_efficient;   // GEOPM's Fe; 0: the base clock
  std::uint64_t seed = 1;      // for policies that draw random numbers
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;
  virtual Proposal decide(const PolicyInput& input) = 0;
};

// The policies by name, in the order evaluations list them.
const std::vector<std::string>& policy_names();  // threshold, geopm, phase, bandit
// Throws gpuclk::Error (exit 2) naming the valid policies for an unknown name.
std::unique_ptr<Policy> make_policy(std::string_view name, const PolicyOptions& options);

}  // namespace gpuclk::govern
