#include "control/gpu_control.h"

#include <stdexcept>

#include "control/setting_table.h"

namespace gpuclk::control {

void write_setting(GpuControl& gpu, Setting s, const Settings& target) {
  if (!target.has(s)) throw std::logic_error("write_setting: target lacks the setting");
  table::with_row(s, [&](const auto& row) { row.write(gpu, *(target.*row.value)); });
}

}  // namespace gpuclk::control
