#include "serve/node_views.h"

#include <memory>

#include "control/journal.h"
#include "control/nvml_gpu_control.h"
#include "serve/protocol.h"
#include "views/clocks.h"
#include "views/info.h"
#include "views/query_fields.h"
#include "views/top.h"
#include "views/topo.h"

namespace gpuclk::serve {

json clocks_view_row(const gpu::Device& d) {
  const auto settings = control::read_settings(d);
  return {{"tree", to_json(views::clocks_tree(d, settings))},
          {"name", d.name()},
          {"settings", control::settings_to_json(settings)}};
}

std::vector<View> node_views(const gpu::DeviceSet& devices, const std::string& scenario) {
  std::vector<View> out;
  out.push_back({"query", views::read_all_query_fields, {}});
  out.push_back({"clocks",
                 [](const gpu::Device& d, const gpu::DeviceSet&) { return clocks_view_row(d); },
                 {}});
  const auto cpu = std::make_shared<host::CpuInfo>(
      views::node_cpu_info(devices, scenario.empty() ? "default" : scenario));
  out.push_back(
      {"info",
       [cpu](const gpu::Device& d, const gpu::DeviceSet&) {
         return to_json(views::info_gpu_tree(d, *cpu));
       },
       [cpu](const gpu::DeviceSet& set) { return to_json(views::info_host_tree(set, *cpu)); }});
  out.push_back({"topo", {}, [cpu](const gpu::DeviceSet& set) {
                   auto j = to_json(views::topo_table(set.all(), *cpu));
                   j["cpus_from"] = cpu->source;  // where the affinity's CPUs are
                   j["nvlink"] = views::nvlink_lines(set.all());
                   j["nvlink_columns"] = to_json(views::nvlink_table(set.all()));
                   return j;
                 }});
  // gpuclk top: processes (with the driver's names) and memory size.
  out.push_back({"top", views::read_top_view, {}});
  return out;
}

}  // namespace gpuclk::serve
