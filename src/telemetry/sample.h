// Timestamped readings of one GPU, as the sampler stores them. Every field is optional: a field
// not asked for, not supported, or whose read failed is empty (std::nullopt).
// Times are Clock time points (monotonic, in the GPU's time base: simulated time under --sim).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/clock_reasons.h"
#include "gpu/device.h"
#include "gpu/units.h"
#include "util/clock.h"

namespace gpuclk::telemetry {

using units::Bytes;
using units::BytesPerSecond;
using units::Celsius;
using units::Joules;
using units::Megahertz;
using units::Ratio;
using units::Watts;
using TimePoint = Clock::TimePoint;
using Duration = Clock::Duration;

// Static facts a consumer needs next to the samples.
struct GpuInfo {
  unsigned index = 0;
  std::string uuid;
  std::string name;
  std::optional<Megahertz> max_sm_clock;
  std::optional<Megahertz> max_memory_clock;
  std::optional<Watts> power_limit;  // enforced limit when the sampler started
};

// Fields read every tick (Field::sm_clock .. Field::media_utilization).
struct FastSample {
  TimePoint time{};  // when the reads of this GPU began
  std::optional<Megahertz> sm_clock, memory_clock;
  std::optional<Watts> power;  // the driver's reading (a 1 s average on Hopper)
  // The memory's share of `power` (a 1 s average on Hopper; read with Field::power where the
  // board reports it).
  std::optional<Watts> memory_power;
  std::optional<Celsius> gpu_temperature, memory_temperature;
  std::optional<Ratio> gpu_utilization, memory_utilization;  // over the driver's sample period
  std::optional<gpu::ClockReasons> clock_reasons;
  std::optional<Bytes> memory_used, bar1_used, protected_memory_used;
  std::optional<int> pstate;
  std::optional<Ratio> encoder, decoder, jpeg, ofa;
};

// GPM busy fractions over one window (Hopper and later).
struct GpmActivity {
  std::optional<Ratio> graphics, sm, sm_occupancy, tensor, dram, fp64, fp32, fp16;
};

// One NVLink at one slow sample (Field::nvlink). Counters since the driver loaded; empty where
// the driver does not count (or the read failed). Each counter is a row of field_table.h.
struct NvLinkSample {
  unsigned link = 0;
  std::optional<bool> active;
  std::optional<std::uint64_t> replay, recovery, crc, ecc;  // DL errors (crc: flit CRC)
  std::optional<std::uint64_t> tx_bytes, rx_bytes;          // data payload sent / received
};

// A compute process on the GPU at one slow sample (Field::processes).
struct ProcessSample {
  unsigned pid = 0;
  std::optional<Bytes> memory;  // GPU memory it holds; empty where the driver does not say
};

// Fields read on the slow cadence (Field::energy .. Field::violation_time).
struct SlowSample {
  TimePoint time{};
  std::optional<Joules> energy;  // counter since driver load
  std::optional<BytesPerSecond> pcie_rx, pcie_tx;
  std::optional<GpmActivity> gpm;  // over [gpm_window_start, time]
  TimePoint gpm_window_start{};
  std::optional<std::uint64_t> ecc_corrected, ecc_uncorrected;                 // volatile counts
  std::optional<std::uint64_t> pcie_replay;                                    // since driver load
  std::optional<std::chrono::nanoseconds> power_violation, thermal_violation;  // since boot
  std::vector<NvLinkSample> nvlinks;  // every link of the GPU; empty: no NVLink or not read
  // Whether the links' DL error counters were read at this sample; false: they are the last
  // values read (they are read every 10 s: a rate is over the samples where they were fresh).
  bool nvlink_errors_fresh = true;
  // Whether the links' data counters were read at this sample (Field::nvlink_throughput, or
  // with the error counters); false: the last values read. The data sent and received per
  // second, every link, between the last two reads of them: kept until the next read.
  bool nvlink_data_fresh = true;
  std::optional<BytesPerSecond> nvlink_rx_rate, nvlink_tx_rate;
  // Field::processes: the compute processes holding a context now (empty optional: not read),
  // and the driver's per-process utilization samples that came since the previous read (the
  // first read: what the driver keeps), so each belongs to the interval since the previous one.
  std::optional<std::vector<ProcessSample>> processes;
  std::vector<gpu::ProcessUtilization> process_utilization;
};

// What went wrong reading one GPU. A lost GPU (fell off the bus) is not read again.
struct GpuHealth {
  bool lost = false;
  std::optional<TimePoint> lost_at;
  std::uint64_t read_errors = 0;  // failed reads other than "not supported"
  int last_error = 0;             // NVML code of the last failure (0: none)
  std::string last_error_field;   // the field whose read failed last (query's name; "": none)
};

}  // namespace gpuclk::telemetry
