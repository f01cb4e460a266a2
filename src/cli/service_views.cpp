#include "cli/service_views.h"

#include "serve/protocol.h"
#include "serve/query_fields.h"
#include "tui/service_feed.h"

namespace gpuclk::cli {

std::vector<serve::View> service_views(Context& ctx) {
  std::vector<serve::View> views;
  views.push_back({"query", serve::read_all_query_fields, {}});
  views.push_back({"clocks",
                   [](const gpu::Device& d, const gpu::DeviceSet&) { return clocks_view_row(d); },
                   {}});
  // The host's CPU and NUMA layout do not change while the service runs: read once (a simulated
  // node's: the scenario's).
  auto cpu = std::make_shared<host::CpuInfo>(ctx.host_cpu());
  views.push_back(
      {"info",
       [cpu](const gpu::Device& d, const gpu::DeviceSet&) {
         return serve::to_json(info_gpu_tree(d, *cpu));
       },
       [&ctx, cpu](const gpu::DeviceSet&) { return serve::to_json(info_host_tree(ctx, *cpu)); }});
  views.push_back({"topo", {}, [cpu](const gpu::DeviceSet& set) {
                     auto j = serve::to_json(topo_table(set.all(), *cpu));
                     j["cpus_from"] = cpu->source;  // where the affinity's CPUs are
                     j["nvlink"] = nvlink_lines(set.all());
                     return j;
                   }});
  // gpuclk top: processes (with the driver's names) and memory size.
  views.push_back({"top", tui::read_top_view, {}});
  return views;
}

}  // namespace gpuclk::cli
