// The read seam of the commands that print readings as they come (dmon): a ReadingFeed hands
// them one interval's readings at a time, from the command's own sampler (NVML in this process)
// or from a running `gpuclk serve`'s stream (docs/serve.md: this process then loads no NVML).
// The caller never knows which, as top's feeds (tui/feed.h); it picks one with open_*_feed().
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "gpu/units.h"
#include "telemetry/fields.h"
#include "telemetry/sampler.h"
#include "util/clock.h"

namespace gpuclk::serve {

class Client;
struct Hello;

// One interval's readings of every GPU.
struct Readings {
  std::vector<telemetry::GpuSnapshot> gpus;  // the latest fast sample, the last two slow ones
  // Each GPU's energy since the feed started; nullopt when not asked (FeedOptions::fields has no
  // Field::energy), not readable, or the GPU is lost.
  std::vector<std::optional<units::Joules>> energy;
};

class ReadingFeed {
 public:
  virtual ~ReadingFeed() = default;
  // Where the readings come from: "own sampler" or "gpuclk serve".
  virtual std::string source() const = 0;
  // How often the slow fields are read (rows in between repeat their last values).
  virtual telemetry::Duration slow_interval() const = 0;
  // The next interval's readings, waiting for them; nullopt when the feed has ended: the
  // service's stream ended (its count reached), or a stop signal came (util::StopFlag::raised,
  // checked at least every 100 ms). Throws Error (exit 255) when the service stops streaming.
  virtual std::optional<Readings> next() = 0;
};

struct FeedOptions {
  telemetry::Duration interval{};
  telemetry::FieldSet fields;
  long long count = 0;  // intervals the service streams; 0: until the feed is dropped
};

// The command's own sampler over `devices`: fast fields every interval, slow ones every
// max(interval, 100 ms), each interval's row once its slow reads are in (at most 250 ms later).
std::unique_ptr<ReadingFeed> open_sampler_feed(const std::vector<gpu::Device*>& devices,
                                               const Clock& clock, const FeedOptions& options);

// The stream of the service whose `hello` answered through `client`, of the GPUs with these
// NVML `indexes`, over a connection of its own. nullptr when the service cannot serve these
// options (an interval shorter than its own, or a field it refuses before the first line): the
// caller reads NVML itself, before anything is printed. Waits for the first line.
std::unique_ptr<ReadingFeed> open_service_feed(const Client& client, const Hello& hello,
                                               const std::vector<unsigned>& indexes,
                                               const FeedOptions& options);

}  // namespace gpuclk::serve
