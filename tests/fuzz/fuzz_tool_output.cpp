// libFuzzer target: what external tools print — ptxas -v logs and cuobjdump
// --dump-resource-usage — and the kernel report over it (names demangled, a glob applied).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "occupancy/kernel_report.h"
#include "occupancy/resource_usage.h"
#include "util/error.h"

using namespace gpuclk::occupancy;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    const auto kernels = data[0] % 2 ? parse_ptxas_log(text) : parse_cuobjdump_resource_usage(text);
    if (kernels.empty()) return 0;
    KernelReportOptions options;
    options.target = parse_architecture("sm_90");
    if (data[0] & 2) options.name_filter = "*a*b*";
    report_kernels(kernels, options);
  } catch (const gpuclk::Error&) {
  }
  return 0;
}
