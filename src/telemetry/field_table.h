// The readings of a sample (sample.h), one row each: every name a reading goes by — the service
// protocol's key, gpuclk query's field (nvidia-smi's where it has one), dmon's column, the
// Prometheus family — with its unit, the sampler's field that reads it, and where the value lives
// in a FastSample (FastField), a SlowSample (SlowField: the driver's counters and rates) or its
// GPM activity (GpmField). /metrics, the service protocol, dmon and fleet iterate the rows or name
// one, so a new reading is a member in the sample, its read in the sampler, and a row here. A
// slow sample's NVLink counters are rows too (NvLinkField), one per counter of a link, which the
// device source, the packing, the protocol, /metrics and dmon iterate. The model: dcgm-exporter's
// counters file and geopm's signal table, kept typed.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <tuple>

#include "telemetry/fields.h"
#include "telemetry/sample.h"

namespace gpuclk::telemetry {

template <class Q>
struct FastField {
  using quantity_type = Q;

  std::optional<Q> FastSample::*member;
  Field tier;                    // the sampler's field that reads it
  std::string_view key;          // the service protocol's JSON key: "power_watts"
  std::string_view query;        // gpuclk query's field: "power.draw"
  std::string_view dmon_column;  // "pwr"
  std::string_view dmon_unit;    // "W", "%", "MB"
  double dmon_scale;             // dmon shows the value times this (ratio → %, bytes → MiB)
  std::string_view metric;       // the Prometheus gauge: "gpuclk_gpu_power_watts"; "" for none
  std::string_view help;         // its HELP
  double metric_scale;           // the gauge is the value times this (MHz → Hz)
  // /metrics shows the gauge only with `--metrics-detail gpu` (serve/metrics_detail.h): none of
  // the dashboard, the alert rules, fleet or doctor reads it.
  bool metric_detail = false;
};

enum class MetricKind { gauge, counter };

// A driver counter or rate of a slow sample. Its value as a number (number_of): a quantity's
// value, a count, a duration in seconds.
template <class T>
struct SlowField {
  using value_type = T;

  std::optional<T> SlowSample::*member;
  Field tier;
  std::string_view key;          // the service protocol's JSON key: "energy_joules"
  std::string_view query;        // dmon's JSON Lines key (nvidia-smi's name); "" for none
  std::string_view dmon_column;  // "" when dmon shows no column of the raw value
  std::string_view dmon_unit;
  double dmon_scale;
  std::string_view metric;  // the Prometheus family
  MetricKind kind;
  std::string_view label_name, label_value;  // one more label of the series; "" for none
  std::string_view help;
  bool metric_detail = false;  // as FastField's
};

// One engine's activity in a slow sample's GPM readings (Hopper and later), as a fraction.
struct GpmField {
  std::optional<Ratio> GpmActivity::*member;
  std::string_view key;          // the protocol's key in "gpm", and the metric's activity label
  std::string_view query;        // dmon's JSON Lines key; "" for none
  std::string_view dmon_column;  // "" for no dmon column
  bool metric_detail = false;    // as FastField's
};

// One counter of an NVLink at a slow sample (a member of NvLinkSample), read for every link: a
// DL error counter, read at the error counters' pace (the last value kept in between), or a data
// counter, read every slow tick. Counts and bytes since the driver loaded.
struct NvLinkField {
  std::optional<std::uint64_t> NvLinkSample::*member;
  // The device's reading of it in one link's counters.
  const gpu::Reading<std::uint64_t>& (*reading)(const gpu::NvLinkCounters&);
  bool error;                    // a DL error counter (gpu::NvLinkRead::errors), else data
  std::string_view key;          // the protocol's key in a link's object: "replay", "tx_bytes"
  std::string_view query;        // its name in read errors (query's, dmon's JSON key of the rate)
  std::string_view metric;       // the per-link Prometheus counter
  std::string_view label_value;  // its `type` label (the error counters' family); "" for none
  std::string_view help;
  std::string_view gpu_metric;  // the counter of every link of the GPU summed
  std::string_view gpu_help;
};

template <class Q>
double number_of(const Q& q) {
  return q.value();
}
inline double number_of(std::uint64_t n) { return static_cast<double>(n); }
inline double number_of(std::chrono::nanoseconds d) {
  return std::chrono::duration<double>(d).count();
}

namespace fields {

inline constexpr double kPercent = 100, kMebibyte = 1.0 / (1024 * 1024), kMegahertz = 1e6;

inline constexpr FastField<Megahertz> sm_clock{.member = &FastSample::sm_clock,
                                               .tier = Field::sm_clock,
                                               .key = "sm_clock_mhz",
                                               .query = "clocks.sm",
                                               .dmon_column = "pclk",
                                               .dmon_unit = "MHz",
                                               .dmon_scale = 1,
                                               .metric = "gpuclk_gpu_sm_clock_hertz",
                                               .help = "Current SM clock",
                                               .metric_scale = kMegahertz};
inline constexpr FastField<Megahertz> memory_clock{.member = &FastSample::memory_clock,
                                                   .tier = Field::memory_clock,
                                                   .key = "memory_clock_mhz",
                                                   .query = "clocks.mem",
                                                   .dmon_column = "mclk",
                                                   .dmon_unit = "MHz",
                                                   .dmon_scale = 1,
                                                   .metric = "gpuclk_gpu_memory_clock_hertz",
                                                   .help = "Current memory clock",
                                                   .metric_scale = kMegahertz,
                                                   .metric_detail = true};
inline constexpr FastField<Watts> power{
    .member = &FastSample::power,
    .tier = Field::power,
    .key = "power_watts",
    .query = "power.draw",
    .dmon_column = "pwr",
    .dmon_unit = "W",
    .dmon_scale = 1,
    .metric = "gpuclk_gpu_power_watts",
    .help = "Power draw as the driver reports it (1 s mean on Hopper)",
    .metric_scale = 1};
inline constexpr FastField<Watts> memory_power{
    .member = &FastSample::memory_power,
    .tier = Field::power,
    .key = "memory_power_watts",
    .query = "memory.power.draw.average",
    .dmon_column = "mpwr",
    .dmon_unit = "W",
    .dmon_scale = 1,
    .metric = "gpuclk_gpu_memory_power_watts",
    .help = "The device memory's share of the power draw (1 s mean; H100 and later)",
    .metric_scale = 1,
    .metric_detail = true};
inline constexpr FastField<Celsius> gpu_temperature{.member = &FastSample::gpu_temperature,
                                                    .tier = Field::gpu_temperature,
                                                    .key = "temperature_celsius",
                                                    .query = "temperature.gpu",
                                                    .dmon_column = "gtemp",
                                                    .dmon_unit = "C",
                                                    .dmon_scale = 1,
                                                    .metric = "gpuclk_gpu_temperature_celsius",
                                                    .help = "GPU core temperature",
                                                    .metric_scale = 1};
inline constexpr FastField<Celsius> memory_temperature{
    .member = &FastSample::memory_temperature,
    .tier = Field::memory_temperature,
    .key = "memory_temperature_celsius",
    .query = "temperature.memory",
    .dmon_column = "mtemp",
    .dmon_unit = "C",
    .dmon_scale = 1,
    .metric = "gpuclk_gpu_memory_temperature_celsius",
    .help = "Device memory (HBM) temperature",
    .metric_scale = 1};
inline constexpr FastField<Ratio> gpu_utilization{
    .member = &FastSample::gpu_utilization,
    .tier = Field::utilization,
    .key = "gpu_utilization_ratio",
    .query = "utilization.gpu",
    .dmon_column = "sm",
    .dmon_unit = "%",
    .dmon_scale = kPercent,
    .metric = "gpuclk_gpu_utilization_ratio",
    .help = "Fraction of the driver's sample period in which a kernel ran",
    .metric_scale = 1};
inline constexpr FastField<Ratio> memory_utilization{
    .member = &FastSample::memory_utilization,
    .tier = Field::utilization,
    .key = "memory_utilization_ratio",
    .query = "utilization.memory",
    .dmon_column = "mem",
    .dmon_unit = "%",
    .dmon_scale = kPercent,
    .metric = "gpuclk_gpu_memory_utilization_ratio",
    .help = "Fraction of the driver's sample period in which device memory was read or written",
    .metric_scale = 1,
    .metric_detail = true};
inline constexpr FastField<Bytes> memory_used{.member = &FastSample::memory_used,
                                              .tier = Field::memory_used,
                                              .key = "memory_used_bytes",
                                              .query = "memory.used",
                                              .dmon_column = "fb",
                                              .dmon_unit = "MB",
                                              .dmon_scale = kMebibyte,
                                              .metric = "gpuclk_gpu_memory_used_bytes",
                                              .help = "Device memory in use",
                                              .metric_scale = 1};
inline constexpr FastField<Bytes> bar1_used{.member = &FastSample::bar1_used,
                                            .tier = Field::bar1_used,
                                            .key = "bar1_used_bytes",
                                            .query = "bar1.used",
                                            .dmon_column = "bar1",
                                            .dmon_unit = "MB",
                                            .dmon_scale = kMebibyte,
                                            .metric = "",
                                            .help = "",
                                            .metric_scale = 1};
inline constexpr FastField<Bytes> protected_memory_used{
    .member = &FastSample::protected_memory_used,
    .tier = Field::protected_memory_used,
    .key = "protected_memory_used_bytes",
    .query = "ccpm.used",
    .dmon_column = "ccpm",
    .dmon_unit = "MB",
    .dmon_scale = kMebibyte,
    .metric = "",
    .help = "",
    .metric_scale = 1};
inline constexpr FastField<Ratio> encoder{.member = &FastSample::encoder,
                                          .tier = Field::media_utilization,
                                          .key = "encoder_utilization_ratio",
                                          .query = "utilization.encoder",
                                          .dmon_column = "enc",
                                          .dmon_unit = "%",
                                          .dmon_scale = kPercent,
                                          .metric = "",
                                          .help = "",
                                          .metric_scale = 1};
inline constexpr FastField<Ratio> decoder{.member = &FastSample::decoder,
                                          .tier = Field::media_utilization,
                                          .key = "decoder_utilization_ratio",
                                          .query = "utilization.decoder",
                                          .dmon_column = "dec",
                                          .dmon_unit = "%",
                                          .dmon_scale = kPercent,
                                          .metric = "",
                                          .help = "",
                                          .metric_scale = 1};
inline constexpr FastField<Ratio> jpeg{.member = &FastSample::jpeg,
                                       .tier = Field::media_utilization,
                                       .key = "jpeg_utilization_ratio",
                                       .query = "utilization.jpeg",
                                       .dmon_column = "jpg",
                                       .dmon_unit = "%",
                                       .dmon_scale = kPercent,
                                       .metric = "",
                                       .help = "",
                                       .metric_scale = 1};
inline constexpr FastField<Ratio> ofa{.member = &FastSample::ofa,
                                      .tier = Field::media_utilization,
                                      .key = "ofa_utilization_ratio",
                                      .query = "utilization.ofa",
                                      .dmon_column = "ofa",
                                      .dmon_unit = "%",
                                      .dmon_scale = kPercent,
                                      .metric = "",
                                      .help = "",
                                      .metric_scale = 1};

// Every row, in the order /metrics shows the families.
inline constexpr std::tuple kFast{sm_clock,
                                  memory_clock,
                                  power,
                                  memory_power,
                                  gpu_temperature,
                                  memory_temperature,
                                  gpu_utilization,
                                  memory_utilization,
                                  memory_used,
                                  bar1_used,
                                  protected_memory_used,
                                  encoder,
                                  decoder,
                                  jpeg,
                                  ofa};

// The driver's counters and rates of a slow sample.
inline constexpr SlowField<Joules> energy{.member = &SlowSample::energy,
                                          .tier = Field::energy,
                                          .key = "energy_joules",
                                          .query = "",
                                          .dmon_column = "",
                                          .dmon_unit = "J",
                                          .dmon_scale = 1,
                                          .metric = "gpuclk_gpu_energy_joules_total",
                                          .kind = MetricKind::counter,
                                          .label_name = "",
                                          .label_value = "",
                                          .help = "Energy used since the driver loaded"};
inline constexpr SlowField<std::chrono::nanoseconds> power_violation{
    .member = &SlowSample::power_violation,
    .tier = Field::violation_time,
    .key = "power_violation_seconds",
    .query = "",
    .dmon_column = "",
    .dmon_unit = "s",
    .dmon_scale = 1,
    .metric = "gpuclk_gpu_power_throttle_seconds_total",
    .kind = MetricKind::counter,
    .label_name = "",
    .label_value = "",
    .help = "Time the clocks were held down by the power limit (driver counter)"};
inline constexpr SlowField<std::chrono::nanoseconds> thermal_violation{
    .member = &SlowSample::thermal_violation,
    .tier = Field::violation_time,
    .key = "thermal_violation_seconds",
    .query = "",
    .dmon_column = "",
    .dmon_unit = "s",
    .dmon_scale = 1,
    .metric = "gpuclk_gpu_thermal_throttle_seconds_total",
    .kind = MetricKind::counter,
    .label_name = "",
    .label_value = "",
    .help = "Time the clocks were held down by temperature (driver counter)"};
inline constexpr SlowField<std::uint64_t> ecc_corrected{
    .member = &SlowSample::ecc_corrected,
    .tier = Field::ecc_errors,
    .key = "ecc_corrected",
    .query = "ecc.errors.corrected.volatile.total",
    .dmon_column = "sbecc",
    .dmon_unit = "errs",
    .dmon_scale = 1,
    .metric = "gpuclk_gpu_ecc_errors_total",
    .kind = MetricKind::counter,
    .label_name = "type",
    .label_value = "corrected",
    .help = "ECC errors since driver load (volatile)"};
inline constexpr SlowField<std::uint64_t> ecc_uncorrected{
    .member = &SlowSample::ecc_uncorrected,
    .tier = Field::ecc_errors,
    .key = "ecc_uncorrected",
    .query = "ecc.errors.uncorrected.volatile.total",
    .dmon_column = "dbecc",
    .dmon_unit = "errs",
    .dmon_scale = 1,
    .metric = "gpuclk_gpu_ecc_errors_total",
    .kind = MetricKind::counter,
    .label_name = "type",
    .label_value = "uncorrected",
    .help = "ECC errors since driver load (volatile)"};
inline constexpr SlowField<std::uint64_t> pcie_replay{.member = &SlowSample::pcie_replay,
                                                      .tier = Field::pcie_replay,
                                                      .key = "pcie_replay",
                                                      .query = "pcie.replay_errors",
                                                      .dmon_column = "pci",
                                                      .dmon_unit = "errs",
                                                      .dmon_scale = 1,
                                                      .metric = "gpuclk_gpu_pcie_replays_total",
                                                      .kind = MetricKind::counter,
                                                      .label_name = "",
                                                      .label_value = "",
                                                      .help = "PCIe replays since driver load",
                                                      .metric_detail = true};
inline constexpr SlowField<BytesPerSecond> pcie_rx{
    .member = &SlowSample::pcie_rx,
    .tier = Field::pcie_throughput,
    .key = "pcie_rx_bytes_per_second",
    .query = "pcie.rx",
    .dmon_column = "rxpci",
    .dmon_unit = "MB/s",
    .dmon_scale = kMebibyte,
    .metric = "gpuclk_gpu_pcie_receive_bytes_per_second",
    .kind = MetricKind::gauge,
    .label_name = "",
    .label_value = "",
    .help = "PCIe traffic into the GPU"};
inline constexpr SlowField<BytesPerSecond> pcie_tx{
    .member = &SlowSample::pcie_tx,
    .tier = Field::pcie_throughput,
    .key = "pcie_tx_bytes_per_second",
    .query = "pcie.tx",
    .dmon_column = "txpci",
    .dmon_unit = "MB/s",
    .dmon_scale = kMebibyte,
    .metric = "gpuclk_gpu_pcie_transmit_bytes_per_second",
    .kind = MetricKind::gauge,
    .label_name = "",
    .label_value = "",
    .help = "PCIe traffic out of the GPU"};

// The NVLink data rate of every link, between the last two reads of the links' data counters
// (telemetry::nvlink_rate of the rows below): dmon's -s n columns; no gauge (/metrics has the
// counters, gpuclk_gpu_nvlink_*_bytes_total).
inline constexpr SlowField<BytesPerSecond> nvlink_rx_rate{.member = &SlowSample::nvlink_rx_rate,
                                                          .tier = Field::nvlink,
                                                          .key = "nvlink_rx_bytes_per_second",
                                                          .query = "nvlink.rx",
                                                          .dmon_column = "rxnvl",
                                                          .dmon_unit = "MB/s",
                                                          .dmon_scale = kMebibyte,
                                                          .metric = "",
                                                          .kind = MetricKind::gauge,
                                                          .label_name = "",
                                                          .label_value = "",
                                                          .help = ""};
inline constexpr SlowField<BytesPerSecond> nvlink_tx_rate{.member = &SlowSample::nvlink_tx_rate,
                                                          .tier = Field::nvlink,
                                                          .key = "nvlink_tx_bytes_per_second",
                                                          .query = "nvlink.tx",
                                                          .dmon_column = "txnvl",
                                                          .dmon_unit = "MB/s",
                                                          .dmon_scale = kMebibyte,
                                                          .metric = "",
                                                          .kind = MetricKind::gauge,
                                                          .label_name = "",
                                                          .label_value = "",
                                                          .help = ""};

// Every counter and rate, in the order /metrics shows the families (a row without a metric has
// none).
inline constexpr std::tuple kSlow{
    energy,      power_violation, thermal_violation, ecc_corrected,  ecc_uncorrected,
    pcie_replay, pcie_rx,         pcie_tx,           nvlink_rx_rate, nvlink_tx_rate};

// The NVLink counters, in the order /metrics shows them (the link's state, NvLinkSample::active,
// has a shape of its own: a bool).
constexpr std::string_view kNvLinkErrorsHelp =
    "NVLink DL errors since the driver loaded (replay, recovery, CRC flit, data ECC)";
constexpr std::string_view kNvLinkGpuErrorsHelp =
    "NVLink DL errors since the driver loaded, every link of the GPU (replay, recovery, CRC flit, "
    "data ECC)";
template <gpu::NvLinkError E>
constexpr const gpu::Reading<std::uint64_t>& link_error(const gpu::NvLinkCounters& c) {
  return c.errors[std::size_t(E)];
}
// A DL error counter's row: the family gpuclk_nvlink_errors_total, `key` its type label too.
template <gpu::NvLinkError E>
constexpr NvLinkField error_row(std::optional<std::uint64_t> NvLinkSample::*member,
                                std::string_view key, std::string_view query) {
  return {.member = member,
          .reading = link_error<E>,
          .error = true,
          .key = key,
          .query = query,
          .metric = "gpuclk_nvlink_errors_total",
          .label_value = key,
          .help = kNvLinkErrorsHelp,
          .gpu_metric = "gpuclk_gpu_nvlink_errors_total",
          .gpu_help = kNvLinkGpuErrorsHelp};
}
inline constexpr NvLinkField nvlink_replay =
    error_row<gpu::NvLinkError::replay>(&NvLinkSample::replay, "replay", "nvlink.errors.replay");
inline constexpr NvLinkField nvlink_recovery = error_row<gpu::NvLinkError::recovery>(
    &NvLinkSample::recovery, "recovery", "nvlink.errors.recovery");
inline constexpr NvLinkField nvlink_crc =
    error_row<gpu::NvLinkError::crc>(&NvLinkSample::crc, "crc", "nvlink.errors.crc");
inline constexpr NvLinkField nvlink_ecc =
    error_row<gpu::NvLinkError::ecc>(&NvLinkSample::ecc, "ecc", "nvlink.errors.ecc");
inline constexpr NvLinkField nvlink_tx{
    .member = &NvLinkSample::tx_bytes,
    .reading = [](const gpu::NvLinkCounters& c) -> const gpu::Reading<std::uint64_t>& {
      return c.tx_bytes;
    },
    .error = false,
    .key = "tx_bytes",
    .query = "nvlink.tx",
    .metric = "gpuclk_nvlink_transmit_bytes_total",
    .label_value = "",
    .help = "NVLink data sent since the driver loaded",
    .gpu_metric = "gpuclk_gpu_nvlink_transmit_bytes_total",
    .gpu_help = "NVLink data sent since the driver loaded, every link of the GPU"};
inline constexpr NvLinkField nvlink_rx{
    .member = &NvLinkSample::rx_bytes,
    .reading = [](const gpu::NvLinkCounters& c) -> const gpu::Reading<std::uint64_t>& {
      return c.rx_bytes;
    },
    .error = false,
    .key = "rx_bytes",
    .query = "nvlink.rx",
    .metric = "gpuclk_nvlink_receive_bytes_total",
    .label_value = "",
    .help = "NVLink data received since the driver loaded",
    .gpu_metric = "gpuclk_gpu_nvlink_receive_bytes_total",
    .gpu_help = "NVLink data received since the driver loaded, every link of the GPU"};
inline constexpr NvLinkField kNvLink[] = {nvlink_replay, nvlink_recovery, nvlink_crc,
                                          nvlink_ecc,    nvlink_tx,       nvlink_rx};

// GPM activity, in the order the protocol and /metrics list the engines.
inline constexpr GpmField gpm_graphics{&GpmActivity::graphics, "graphics", "", "", true};
inline constexpr GpmField gpm_sm{&GpmActivity::sm, "sm", "gpm.sm_active", "smact"};
inline constexpr GpmField gpm_sm_occupancy{&GpmActivity::sm_occupancy, "sm_occupancy", "", "",
                                           true};
inline constexpr GpmField gpm_tensor{&GpmActivity::tensor, "tensor", "gpm.tensor_active", "tensor"};
inline constexpr GpmField gpm_dram{&GpmActivity::dram, "dram", "gpm.dram_active", "dram"};
inline constexpr GpmField gpm_fp64{&GpmActivity::fp64, "fp64", "", "", true};
inline constexpr GpmField gpm_fp32{&GpmActivity::fp32, "fp32", "", "", true};
inline constexpr GpmField gpm_fp16{&GpmActivity::fp16, "fp16", "", "", true};
inline constexpr GpmField kGpm[] = {gpm_graphics, gpm_sm,   gpm_sm_occupancy, gpm_tensor,
                                    gpm_dram,     gpm_fp64, gpm_fp32,         gpm_fp16};

}  // namespace fields

// f(row) for every slow counter or rate.
template <class F>
void for_each_slow_field(F&& f) {
  std::apply([&](const auto&... row) { (f(row), ...); }, fields::kSlow);
}

// A row's counter summed over `links` (empty when no link has it).
std::optional<std::uint64_t> link_sum(const std::vector<NvLinkSample>& links,
                                      const NvLinkField& row);

// How fast the `rows` summed over every link grew from `before` to `after`, per second (bytes
// per second for the data counters): the one NVLink rate, which the device source keeps in each
// slow sample (nvlink_rx_rate, nvlink_tx_rate) for dmon and the dcgm-exporter names. Empty when
// a row has no link with a value in either sample, when no time passed, or when the sum went
// back (the driver was reloaded).
std::optional<double> nvlink_rate(const SlowSample& before, const SlowSample& after,
                                  std::initializer_list<NvLinkField> rows);

// f(row) for every fast reading.
template <class F>
void for_each_fast_field(F&& f) {
  std::apply([&](const auto&... row) { (f(row), ...); }, fields::kFast);
}

}  // namespace gpuclk::telemetry
