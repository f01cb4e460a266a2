// `gpuclk clocks`' tree of one GPU: all of nvidia-smi -q -d CLOCK,PERFORMANCE,SUPPORTED_CLOCKS,
// with a one-line meaning for each clock event reason and the supported clocks written compactly.
#pragma once

#include "control/settings.h"
#include "gpu/device.h"
#include "output/value.h"

namespace gpuclk::views {

// Without the "Set by gpuclk" section (that one comes from the journal of the command's own state
// directory). `settings` is control::read_settings(d): the tree shows its application clocks
// rather than reading them again (on an H100 each read takes ~1 ms).
output::Node clocks_tree(const gpu::Device& d, const control::Settings& settings);

}  // namespace gpuclk::views
