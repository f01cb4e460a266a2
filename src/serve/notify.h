// Readiness and shutdown notices for systemd (Type=notify) through libsystemd's sd_notify,
// loaded at run time (libsystemd.so.0); a no-op where it is missing or when not started by
// systemd (no NOTIFY_SOCKET).
#pragma once

#include <string>

namespace gpuclk::serve {

void notify_ready(const std::string& status);
void notify_stopping();

}  // namespace gpuclk::serve
