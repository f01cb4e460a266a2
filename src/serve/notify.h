// Readiness and shutdown notices for systemd (Type=notify) through libsystemd's sd_notify; a
// no-op when not started by systemd (no NOTIFY_SOCKET) or built without libsystemd.
#pragma once

#include <string>

namespace gpuclk::serve {

void notify_ready(const std::string& status);
void notify_stopping();

}  // namespace gpuclk::serve
