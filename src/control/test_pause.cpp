#include "control/test_pause.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace gpuclk::control {

std::function<void(std::size_t)> test_pause_hook(const std::function<bool()>& simulated) {
  const char* after = std::getenv("GPUCLK_TEST_PAUSE_AFTER_WRITES");
  if (after == nullptr || *after == '\0' || !simulated()) return {};
  const auto n = std::strtoul(after, nullptr, 10);
  const char* marker_env = std::getenv("GPUCLK_TEST_PAUSE_MARKER");
  const std::string marker = marker_env ? marker_env : "";
  return [n, marker](std::size_t done) {
    if (done != n) return;
    if (!marker.empty()) std::ofstream(marker) << ::getpid() << '\n';
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (!marker.empty() && ::access(marker.c_str(), F_OK) != 0) return;
    }
  };
}

}  // namespace gpuclk::control
