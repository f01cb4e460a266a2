// The sampler's real source: gpu::Device getters (which convert NVML units once) and GpmSampler.
#include <algorithm>
#include <chrono>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu/device.h"
#include "gpu/gpm.h"
#include "telemetry/field_table.h"
#include "telemetry/source.h"

namespace gpuclk::telemetry {
namespace {

using gpu::ClockDomain;
using gpu::Reading;
using gpu::ReadStatus;

// Not supported is absence, not an error: the Device remembers it and answers without a call.
// `field`: what was read, as gpuclk query names it (stat's "Read errors" line names it).
template <class T>
void note(const Reading<T>& r, ReadOutcome& outcome, const char* field) {
  if (r.status() != ReadStatus::error) return;
  ++outcome.errors;
  outcome.last_error = r.error_code();
  outcome.last_error_field = field;
  if (gpu::Device::is_lost_error(r.error_code())) outcome.lost = true;
}

template <class T>
std::optional<T> keep(const Reading<T>& r, ReadOutcome& outcome, const char* field) {
  note(r, outcome, field);
  return r.optional();
}

std::optional<Ratio> keep_ratio(const Reading<Ratio>& r) { return r.optional(); }

class DeviceSource final : public GpuSource {
 public:
  DeviceSource(const gpu::Device& device, const FieldSet& fields, Duration nvlink_error_period)
      : device_(device), nvlink_error_period_(nvlink_error_period) {
    if (fields.has(Field::gpm)) gpm_.emplace(device);
  }

  GpuInfo info() const override {
    const auto& id = device_.identity();
    const auto& limits = device_.clock_limits();
    GpuInfo info;
    info.index = id.index;
    info.uuid = id.uuid;
    info.name = id.name;
    info.max_sm_clock = limits.max(ClockDomain::sm).optional();
    info.max_memory_clock = limits.max(ClockDomain::memory).optional();
    info.power_limit = device_.enforced_power_limit().optional();
    return info;
  }

  ReadOutcome read_fast(const FieldSet& f, FastSample& s) override {
    ReadOutcome o;
    // The order puts the reads every consumer wants first, so a GPU that goes away mid-tick is
    // noticed on the cheapest call.
    if (f.has(Field::power)) s.power = keep(device_.power_draw(), o, "power.draw");
    if (o.lost) return o;
    if (f.has(Field::power))
      s.memory_power = keep(device_.memory_power(), o, "memory.power.draw.average");
    if (f.has(Field::sm_clock)) s.sm_clock = keep(device_.clock(ClockDomain::sm), o, "clocks.sm");
    if (f.has(Field::memory_clock))
      s.memory_clock = keep(device_.clock(ClockDomain::memory), o, "clocks.mem");
    if (f.has(Field::clock_reasons))
      s.clock_reasons = keep(device_.clock_reasons(), o, "clocks_event_reasons.active");
    if (f.has(Field::gpu_temperature))
      s.gpu_temperature = keep(device_.temperature(), o, "temperature.gpu");
    if (f.has(Field::memory_temperature)) {
      s.memory_temperature = keep(device_.memory_temperature(), o, "temperature.memory");
    }
    if (f.has(Field::utilization)) {
      auto u = device_.utilization();
      note(u, o, "utilization.gpu");
      if (u) {
        s.gpu_utilization = u->gpu;
        s.memory_utilization = u->memory;
      }
    }
    if (f.has(Field::memory_used)) {
      // nvmlDeviceGetMemoryInfo costs 6.2 µs on the H100, more than all other fast fields
      // together (perf/sampler_vs_pynvml.sh); memory in use moves on a scale of seconds, so it is
      // read at most once a second and repeated in between.
      const auto now = std::chrono::steady_clock::now();
      if (!memory_used_read_at_ || now - *memory_used_read_at_ >= kMemoryUsedPeriod) {
        auto m = device_.memory();
        note(m, o, "memory.used");
        memory_used_ = m ? std::optional<Bytes>(m->used) : std::nullopt;
        memory_used_read_at_ = now;
      }
      s.memory_used = memory_used_;
    }
    if (f.has(Field::pstate)) s.pstate = keep(device_.pstate(), o, "pstate");
    if (f.has(Field::bar1_used)) s.bar1_used = keep(device_.bar1_used(), o, "memory.bar1.used");
    if (f.has(Field::protected_memory_used)) {
      s.protected_memory_used = keep(device_.protected_memory_used(), o, "memory.protected.used");
    }
    if (f.has(Field::media_utilization)) {
      auto media = device_.media_utilization();
      for (const auto* r : {&media.encoder, &media.decoder, &media.jpeg, &media.ofa})
        note(*r, o, "utilization.media");
      s.encoder = keep_ratio(media.encoder);
      s.decoder = keep_ratio(media.decoder);
      s.jpeg = keep_ratio(media.jpeg);
      s.ofa = keep_ratio(media.ofa);
    }
    return o;
  }

  ReadOutcome read_slow(const FieldSet& f, SlowSample& s) override {
    ReadOutcome o;
    if (f.has(Field::energy)) s.energy = keep(device_.energy(), o, "total_energy_consumption");
    if (o.lost) return o;
    if (f.has(Field::gpm) && gpm_) read_gpm(s, o);
    if (f.has(Field::violation_time)) {
      // Policy numbers as NVML's nvmlPerfPolicyType_t: 0 power, 1 thermal.
      s.power_violation =
          keep(device_.violation_time(gpu::ViolationPolicy::power), o, "violation.power");
      s.thermal_violation =
          keep(device_.violation_time(gpu::ViolationPolicy::thermal), o, "violation.thermal");
    }
    if (f.has(Field::ecc_errors)) {
      s.ecc_corrected = keep(device_.ecc_errors(false), o, "ecc.errors.corrected.volatile.total");
      s.ecc_uncorrected =
          keep(device_.ecc_errors(true), o, "ecc.errors.uncorrected.volatile.total");
    }
    if (f.has(Field::pcie_replay))
      s.pcie_replay = keep(device_.pcie_replay_errors(), o, "pcie.replay");
    if (f.has(Field::nvlink)) read_nvlink(s, o, f.has(Field::nvlink_throughput));
    if (f.has(Field::processes)) read_processes(s, o);
    if (f.has(Field::pcie_throughput)) {
      auto t = device_.pcie_throughput();
      note(t, o, "pcie.throughput");
      if (t) {
        s.pcie_rx = t->rx;
        s.pcie_tx = t->tx;
      }
    }
    return o;
  }

 private:
  // The links' state every slow tick; the DL error counters every nvlink_error_period_ of the
  // sampler's clock (in between, the last values read): they cost ~134 ms per H100 with 18 links,
  // and doctor wants their rate over minutes, not seconds. The data counters (one field-value
  // call, ~260 µs on an H200) every tick with Field::nvlink_throughput (dmon -s n), else with the
  // error counters; their rate over the last two reads stays in the samples between reads. The
  // first tick reads everything, the second the data counters again (a rate from the start).
  void read_nvlink(SlowSample& s, ReadOutcome& o, bool data_every_tick) {
    const bool errors = !nvlink_errors_at_ || s.time - *nvlink_errors_at_ >= nvlink_error_period_;
    if (errors) nvlink_errors_at_ = s.time;
    // The first two ticks read them too, so a rate is there from the start.
    const bool data = errors || data_every_tick || data_reads_ < 2;
    if (data) ++data_reads_;
    s.nvlink_errors_fresh = errors;
    s.nvlink_data_fresh = data;
    auto what = gpu::NvLinkRead::state;
    if (errors) what = what | gpu::NvLinkRead::errors;
    if (data) what = what | gpu::NvLinkRead::data;
    const auto counters = device_.nvlink_counters(what);
    if (errors) nvlink_errors_.assign(counters.size(), {});
    if (data) nvlink_data_.nvlinks.assign(counters.size(), {});
    for (std::size_t k = 0; k < counters.size(); ++k) {
      const auto& c = counters[k];
      NvLinkSample l;
      l.link = c.link;
      l.active = keep(c.active, o, "nvlink.state");
      // The rows' names are literals: .data() is a terminated string that outlives the outcome.
      for (const auto& row : fields::kNvLink) {
        const bool read = row.error ? errors : data;
        auto& kept = row.error ? nvlink_errors_ : nvlink_data_.nvlinks;
        if (read) kept[k].*row.member = keep(row.reading(c), o, row.query.data());
        if (k < kept.size()) l.*row.member = kept[k].*row.member;
      }
      s.nvlinks.push_back(l);
    }
    if (data) {
      nvlink_data_.time = s.time;
      if (nvlink_data_before_) {
        s.nvlink_rx_rate = rate(*nvlink_data_before_, nvlink_data_, fields::nvlink_rx);
        s.nvlink_tx_rate = rate(*nvlink_data_before_, nvlink_data_, fields::nvlink_tx);
      }
      nvlink_data_before_ = nvlink_data_;
      nvlink_rates_ = {s.nvlink_rx_rate, s.nvlink_tx_rate};
    } else {
      std::tie(s.nvlink_rx_rate, s.nvlink_tx_rate) = nvlink_rates_;
    }
  }

  static std::optional<BytesPerSecond> rate(const SlowSample& before, const SlowSample& after,
                                            const NvLinkField& row) {
    const auto r = nvlink_rate(before, after, {row});
    return r ? std::optional<BytesPerSecond>(BytesPerSecond(*r)) : std::nullopt;
  }

  // The process list, then the utilization samples newer than the newest seen so far (the first
  // read gets what the driver keeps, older than any interval: a consumer has no interval for it).
  void read_processes(SlowSample& s, ReadOutcome& o) {
    const auto list = device_.processes();
    note(list, o, "compute-apps");
    if (list) {
      std::vector<ProcessSample> processes;
      for (const auto& p : *list) processes.push_back({p.pid, p.used_memory.optional()});
      s.processes = std::move(processes);
    }
    const auto samples = device_.process_utilization(process_samples_seen_us_);
    note(samples, o, "process.utilization");
    if (!samples) return;
    for (const auto& u : *samples) {
      process_samples_seen_us_ = std::max(process_samples_seen_us_, u.time_us);
    }
    s.process_utilization = *samples;
  }

  void read_gpm(SlowSample& s, ReadOutcome& o) {
    auto m = gpm_->take();
    if (m) {
      s.gpm = GpmActivity{m->graphics_activity.optional(), m->sm_activity.optional(),
                          m->sm_occupancy.optional(),      m->tensor_activity.optional(),
                          m->dram_activity.optional(),     m->fp64_activity.optional(),
                          m->fp32_activity.optional(),     m->fp16_activity.optional()};
      s.gpm_window_start = last_gpm_time_;
    } else if (!gpu::GpmSampler::opened_window(m)) {
      note(m, o, "gpm");
    }
    // A window kept open (its counters had not moved) still starts where it started.
    if (!gpm_->kept_window()) last_gpm_time_ = s.time;
  }

  const gpu::Device& device_;
  std::optional<gpu::GpmSampler> gpm_;
  static constexpr std::chrono::seconds kMemoryUsedPeriod{1};
  std::optional<Bytes> memory_used_;
  std::optional<std::chrono::steady_clock::time_point> memory_used_read_at_;
  TimePoint last_gpm_time_{};
  Duration nvlink_error_period_;
  std::optional<TimePoint> nvlink_errors_at_;
  std::vector<NvLinkSample> nvlink_errors_;       // per link, the last DL error counters read
  SlowSample nvlink_data_;                        // the last data counters read (links, time)
  std::optional<SlowSample> nvlink_data_before_;  // the read before it, for the rate
  std::pair<std::optional<BytesPerSecond>, std::optional<BytesPerSecond>> nvlink_rates_;
  unsigned data_reads_ = 0;
  std::uint64_t process_samples_seen_us_ = 0;  // the newest utilization sample's time
};

}  // namespace

std::unique_ptr<GpuSource> make_device_source(const gpu::Device& device, const FieldSet& fields,
                                              Duration nvlink_error_period) {
  return std::make_unique<DeviceSource>(device, fields, nvlink_error_period);
}

}  // namespace gpuclk::telemetry
