// The read seam of `doctor`: the window of readings its rules judge, watched from now on by the
// command's own sampler (rules/watch.h), or looked back over in a running `gpuclk serve`'s
// history (docs/serve.md), which costs no waiting. The caller gets a rules::Input either way and
// says which it was.
#pragma once

#include <functional>
#include <vector>

#include "gpu/device.h"
#include "rules/input.h"
#include "util/clock.h"

namespace gpuclk::serve {

class Client;
struct Hello;

struct RulesWindow {
  rules::Input input;
  bool from_service = false;  // looked back over the service's history; else watched
  // From the service: the history at its sampling interval with the slow tier (energy, violation,
  // ECC and replay counters: up to 10 min); false: its 1 s history of the fast fields only.
  bool slow_tier = true;
  // False: a service that keeps no events (an older gpuclk serve): no Xid event was looked at.
  bool events_kept = true;
};

// Called while waiting, with the seconds left (for a countdown).
using WaitProgress = std::function<void(double seconds_left)>;

// Watches `devices` for `duration` from now, sampling every `interval`, with Xid and ECC events.
RulesWindow watch_window(const std::vector<gpu::Device*>& devices, const Clock& clock,
                         telemetry::Duration duration, telemetry::Duration interval,
                         const WaitProgress& progress);

// The last `duration` of the history of the service whose `hello` answered, through `client`. A
// service that has run for less than `duration` is waited for. Settings, ECC counts and
// processes are read from `devices` once, as when watching; the Xid and ECC events are the ones
// the service received over the window (it waits on them all along, as watching does); the NCCL
// communicators are the ones it joined from the Inspector's files (nccl_jobs.h). Throws a
// bad argument (exit 2) for a `duration` longer than the service's history, and the client's
// Error when the service stops answering.
RulesWindow look_back(Client& client, const Hello& hello, const Clock& clock,
                      telemetry::Duration duration, const std::vector<gpu::Device*>& devices,
                      const WaitProgress& progress);

}  // namespace gpuclk::serve
