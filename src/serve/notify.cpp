#include "serve/notify.h"

#ifdef GPUCLK_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace gpuclk::serve {

#ifdef GPUCLK_HAVE_SYSTEMD
void notify_ready(const std::string& status) {
  sd_notify(0, ("READY=1\nSTATUS=" + status).c_str());
}
void notify_stopping() { sd_notify(0, "STOPPING=1"); }
#else
void notify_ready(const std::string&) {}
void notify_stopping() {}
#endif

}  // namespace gpuclk::serve
