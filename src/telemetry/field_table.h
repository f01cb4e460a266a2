// The readings of a fast sample (sample.h), one row each: every name a reading goes by — the
// service protocol's key, gpuclk query's field (nvidia-smi's where it has one), dmon's column,
// the Prometheus family — with its unit, the sampler's field that reads it, and where the value
// lives in a FastSample. /metrics, the service protocol, dmon and fleet iterate the rows or name
// one, so a new reading is a member in FastSample, its read in the sampler, and a row here.
// The model: dcgm-exporter's counters file and geopm's signal table, kept typed.
#pragma once

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
};

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
                                                   .metric_scale = kMegahertz};
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
    .metric_scale = 1};
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
    .metric_scale = 1};
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

}  // namespace fields

// f(row) for every fast reading.
template <class F>
void for_each_fast_field(F&& f) {
  std::apply([&](const auto&... row) { (f(row), ...); }, fields::kFast);
}

}  // namespace gpuclk::telemetry
