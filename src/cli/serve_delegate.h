// `serve` with a delegation policy: the writer behind serve::Delegation (src/serve/delegate.h).
// Users who are not root send `set` and `restore` over the socket; the service checks them
// against the policy and this writer applies them through src/control, journaled under the
// journal's lock for each change only (ResidentSession), as the governor and the profile do.
#pragma once

#include <memory>
#include <vector>

#include "cli/cmd_control.h"
#include "cli/context.h"
#include "control/gpu_control.h"
#include "serve/delegate.h"

namespace gpuclk::cli {

class DelegateWriter {
 public:
  // Opens every GPU of the service (by position). Throws Error (exit 4) in read-only mode.
  explicit DelegateWriter(Context& ctx);
  serve::DelegateBackend backend();

 private:
  ResidentSession session_;
  std::vector<std::unique_ptr<control::GpuControl>> controls_;
  std::string journal_;
};

}  // namespace gpuclk::cli
