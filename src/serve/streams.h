// The service's streams: requests answered by one line per interval instead of one line.
//
//   SampleStream  the `stream` request: the sampler's latest readings of the asked GPUs once per
//                 interval (`gpuclk dmon`), and every sample since the last line (`gpuclk stat`);
//   ViewWait      a view's first request after an idle spell: one line, once the refresh that
//                 reads the view has published it;
//   Streams       parses a `stream` request and opens its SampleStream, and counts what the open
//                 streams want of the sampler: its on-demand fields (dmon's extra columns) and
//                 the slow tier at full rate.
//
// The socket server asks each stream for its lines on its poll thread (Stream in reply.h).
// Thread-safety: a stream is used by one thread at a time; Streams' demand counting from any
// thread (streams open and close on the poll thread, tests elsewhere).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpu/selection.h"
#include "serve/reply.h"
#include "telemetry/fields.h"
#include "telemetry/sampler.h"
#include "util/clock.h"

namespace gpuclk::serve {

// The fields the service reads only while a stream asks for them (dmon's extra columns): media
// utilization and BAR1/protected memory are four and two more reads per tick, PCIe throughput
// 2 × 20 ms per slow read, the NVLink data counters one field-value call per slow read (dmon -s
// n; else the device source reads them with the error counters, each minute: issue 45's cost on
// NVLink hosts).
inline constexpr telemetry::FieldSet kStreamOnDemand{
    telemetry::Field::bar1_used, telemetry::Field::protected_memory_used,
    telemetry::Field::media_utilization, telemetry::Field::pcie_throughput,
    telemetry::Field::nvlink_throughput};

// What the open streams want of the sampler: each on-demand field while a stream asks for it,
// and the slow tier every second while any stream is open (else every counters_every seconds).
class StreamDemand {
 public:
  explicit StreamDemand(telemetry::Sampler& sampler) : sampler_(sampler) {}
  // A stream wanting `fields` opened (+1) or closed (-1).
  void change(telemetry::FieldSet fields, int delta);

 private:
  telemetry::Sampler& sampler_;
  std::mutex mutex_;
  int streams_open_ = 0;
  std::array<int, static_cast<std::size_t>(telemetry::Field::count)> counts_{};
};

// A `stream` request, checked: its interval (in the GPUs' time base and as wall time), the
// number of lines (0: until the client goes), the on-demand fields and whether every sample
// goes with each line ("samples": "all").
struct StreamOptions {
  std::chrono::nanoseconds wall{};
  std::uint64_t count = 0;
  telemetry::FieldSet wanted;
  bool every_sample = false;
};

class Streams {
 public:
  // `sampling`: the sampler's fast interval (no stream is faster).
  Streams(telemetry::Sampler& sampler, const Clock& clock, telemetry::Duration sampling);

  // Checks a `stream` request; throws Error (a bad argument) naming what is wrong.
  StreamOptions parse(const nlohmann::json& request) const;
  // Its stream over the GPUs at `positions`; `keys`: every GPU's, by position.
  std::unique_ptr<Stream> open(const StreamOptions& request, std::vector<std::size_t> positions,
                               std::vector<gpu::DeviceKey> keys);

 private:
  telemetry::Sampler& sampler_;
  const Clock& clock_;
  telemetry::Duration sampling_;
  StreamDemand demand_;
};

// The longest a view's first request waits for the refresh that reads it (the client gives up
// after 10 s).
inline constexpr std::chrono::seconds kViewWait{5};

// A one-line answer that waits, without holding up the socket's poll thread (and every other
// client: a dmon's lines, say), for the refresh that reads view `name`.
class ViewWait final : public Stream {
 public:
  // `answer`: the view's answer once the node state holds it, else null; `running`: false once
  // the service stops (the wait ends then).
  using Answer = std::function<std::shared_ptr<const std::string>()>;
  ViewWait(std::string name, Answer answer, std::function<bool()> running);
  // Looks for the refresh every 10 ms: the refresh it waits for reads every GPU, so 10 ms more is
  // nothing to the waiting client, and 1000 wake-ups a second of the poll thread bought it nothing.
  std::chrono::nanoseconds interval() const override { return std::chrono::milliseconds(10); }
  std::optional<std::string> next(bool& last) override;

 private:
  std::string name_;
  Answer answer_;
  std::function<bool()> running_;
  std::chrono::steady_clock::time_point give_up_;
};

}  // namespace gpuclk::serve
