#include "occupancy/kernel_report.h"

#include <fmt/format.h>

#include <map>

#include "occupancy/sweep.h"
#include "util/error.h"
#include "util/glob.h"

namespace gpuclk::occupancy {
namespace {

// SASS runs on its own architecture and on later minors of the same major (sm_80 SASS on an
// sm_86 GPU), never across majors. The closest such SASS is what the driver loads.
bool runs_on(const ArchLimits& sass, const ArchLimits& target) {
  return sass.major == target.major && sass.minor <= target.minor;
}

KernelReport evaluate(const KernelResources& resources, const ArchLimits* sass,
                      const ArchLimits& run, const KernelReportOptions& options) {
  KernelReport report;
  report.resources = resources;
  report.display_name = demangle(resources.name);
  report.sass_arch = sass;
  report.run_arch = &run;
  report.kernel.registers_per_thread = resources.registers;
  report.kernel.static_shared_bytes = resources.static_shared_bytes;
  report.kernel.dynamic_shared_bytes = options.dynamic_shared_bytes;
  report.kernel.carveout_percent = options.carveout_percent;
  report.kernel.launch_bounds_max_threads = options.launch_bounds_max_threads;
  if (options.threads_per_block) {
    report.kernel.threads_per_block = *options.threads_per_block;
  } else {
    const Sweep all = sweep(run, report.kernel);
    report.best_block_size = all.best_threads_per_block > 0;
    report.kernel.threads_per_block =
        all.best_threads_per_block > 0 ? all.best_threads_per_block : run.max_threads_per_block;
  }
  report.occupancy = calculate(run, report.kernel);
  return report;
}

}  // namespace

KernelReports report_kernels(const std::vector<KernelResources>& resources,
                             const KernelReportOptions& options) {
  KernelReports reports;
  // Kernel name → its SASS entries, in the order the kernels first appear.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const KernelResources*>> by_name;
  for (const KernelResources& entry : resources) {
    if (options.name_filter && !glob::search(*options.name_filter, entry.name) &&
        !glob::search(*options.name_filter, demangle(entry.name))) {
      continue;
    }
    if (!by_name.count(entry.name)) order.push_back(entry.name);
    by_name[entry.name].push_back(&entry);
  }
  if (order.empty()) {
    throw bad_argument(options.name_filter ? "no kernel matches the --kernel pattern"
                                           : "no kernels found");
  }
  for (const std::string& name : order) {
    const KernelResources* chosen = nullptr;
    const ArchLimits* chosen_arch = nullptr;
    for (const KernelResources* entry : by_name[name]) {
      const ArchLimits* sass = entry->arch.empty() ? nullptr : parse_architecture(entry->arch);
      if (options.target == nullptr) {
        if (sass == nullptr) {
          throw bad_argument(
              fmt::format("the dump does not say which architecture {} is compiled for{}",
                          demangle(name), entry->arch.empty() ? "" : " (" + entry->arch + ")"),
              "give the architecture with --arch sm_XX");
        }
        reports.kernels.push_back(evaluate(*entry, sass, *sass, options));
      } else if (sass == nullptr) {
        // A lone cubin does not name its architecture: take the user's word for it.
        if (chosen == nullptr) chosen = entry;
      } else if (runs_on(*sass, *options.target) &&
                 (chosen_arch == nullptr || sass->minor > chosen_arch->minor)) {
        chosen = entry;
        chosen_arch = sass;
      }
    }
    if (options.target == nullptr) continue;
    if (chosen == nullptr) {
      reports.notes.push_back(
          fmt::format("{}: no SASS that runs on {} (the driver would compile "
                      "its PTX, if any, when loading it)",
                      demangle(name), options.target->name));
      continue;
    }
    reports.kernels.push_back(
        evaluate(*chosen, chosen_arch ? chosen_arch : options.target, *options.target, options));
  }
  return reports;
}

}  // namespace gpuclk::occupancy
