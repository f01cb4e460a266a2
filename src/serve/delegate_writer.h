// `serve` with a delegation policy: the writer behind serve::Delegation (serve/delegate.h).
// Users who are not root send `set` and `restore` over the socket; the service checks them
// against the policy and this writer applies them through src/control, journaled under the
// journal's lock for each change only (ResidentSession), as the governor and the profile do.
#pragma once

#include <memory>
#include <vector>

#include "control/gpu_control.h"
#include "control/session.h"
#include "gpu/device.h"
#include "serve/delegate.h"

namespace gpuclk::serve {

class DelegateWriter {
 public:
  // Opens every GPU of the service (`devices`, by position). Throws Error (exit 4) in read-only
  // mode. The session's command is set here.
  DelegateWriter(control::SessionOptions session, const std::vector<gpu::Device*>& devices);
  DelegateBackend backend();

 private:
  control::ResidentSession session_;
  std::vector<std::unique_ptr<control::GpuControl>> controls_;
  std::string journal_;
};

}  // namespace gpuclk::serve
