// One look at the node (`gpuclk status`) as rules input: each GPU's StatusSnapshot becomes its
// facts and a single fast sample (a window of zero length, Input::snapshot()).
#pragma once

#include <vector>

#include "gpu/status.h"
#include "rules/input.h"

namespace gpuclk::rules {

Input status_input(const std::vector<gpu::StatusSnapshot>& gpus);

}  // namespace gpuclk::rules
