// What the read commands show, as data the service (gpuclk serve) can keep and send: each command
// builds its report from these, whether it read the GPUs itself or got them from the service, so
// the output is the same byte for byte either way (tests/cli/serve_test.sh).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "cli/context.h"
#include "control/settings.h"
#include "gpu/device.h"
#include "host/cpu.h"
#include "output/value.h"
#include "serve/service.h"

namespace gpuclk::cli {

// `gpuclk clocks` of one GPU, without the "Set by gpuclk" section (that one comes from the
// journal of the command's own state directory). `settings` is control::read_settings(d): the
// tree shows its application clocks rather than reading them again.
output::Node clocks_tree(const gpu::Device& d, const control::Settings& settings);
// The clocks view's row: the tree, the GPU's name and its settings (compared across GPUs).
nlohmann::json clocks_view_row(const gpu::Device& d);
// `gpuclk info`: the host section and one GPU's block.
output::Node info_host_tree(Context& ctx, const host::CpuInfo& cpu);
output::Node info_gpu_tree(const gpu::Device& d, const host::CpuInfo& cpu);
// `gpuclk topo`'s table over `devices` (the legend is printed apart).
output::Table topo_table(const std::vector<gpu::Device*>& devices, const host::CpuInfo& cpu);
// Its NVLink lines: "GPU0 <-> GPU1: 18 links x 26.562 GB/s = 478 GB/s (NVLink 4.0)", links down.
std::vector<std::string> nvlink_lines(const std::vector<gpu::Device*>& devices);

// The service's views: query, clocks, info, topo, top (Service reads each only while in demand).
std::vector<serve::View> service_views(Context& ctx);

}  // namespace gpuclk::cli
