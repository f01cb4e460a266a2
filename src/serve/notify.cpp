#include "serve/notify.h"

#include <dlfcn.h>

namespace gpuclk::serve {
namespace {

// libsystemd is opened only here, when the service starts: linking it would load it and the six
// libraries it needs (libgcrypt, liblzma, libzstd, …) into every gpuclk command's start-up.
using SdNotify = int (*)(int unset_environment, const char* state);

SdNotify sd_notify_function() {
  static const SdNotify function = [] {
    void* library = ::dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    return library ? reinterpret_cast<SdNotify>(::dlsym(library, "sd_notify")) : nullptr;
  }();
  return function;
}

void notify(const std::string& state) {
  if (auto* function = sd_notify_function()) function(0, state.c_str());
}

}  // namespace

void notify_ready(const std::string& status) { notify("READY=1\nSTATUS=" + status); }
void notify_stopping() { notify("STOPPING=1"); }

}  // namespace gpuclk::serve
