// The /metrics families that are not a sample's readings (those are field_table.h's rows, with
// their names): a GPU's static facts, settings and state, the rules' findings, and the
// attribution's series per GPU and job. The exporter writes them under these names and `gpuclk
// fleet` asks Prometheus for them by these names, so a rename moves both;
// tests/unit/fleet_series_test.cpp checks every name fleet reads against a simulated node's
// /metrics.
#pragma once

#include <string_view>

namespace gpuclk::telemetry::series {

// Per GPU (labels gpu, uuid, pci_bus_id, model).
inline constexpr std::string_view gpu_info = "gpuclk_gpu_info";
inline constexpr std::string_view gpu_lost = "gpuclk_gpu_lost";
inline constexpr std::string_view max_sm_clock = "gpuclk_gpu_max_sm_clock_hertz";
inline constexpr std::string_view power_limit = "gpuclk_gpu_power_limit_watts";
inline constexpr std::string_view app_sm_clock = "gpuclk_gpu_application_sm_clock_hertz";
inline constexpr std::string_view app_memory_clock = "gpuclk_gpu_application_memory_clock_hertz";
inline constexpr std::string_view persistence_mode = "gpuclk_gpu_persistence_mode";
// gpuclk's journal: 0/1 per `domain` (sm, memory), and the lock's ends where they are MHz.
inline constexpr std::string_view locked_clocks = "gpuclk_gpu_locked_clocks";
inline constexpr std::string_view locked_clock_min = "gpuclk_gpu_locked_clock_min_hertz";
inline constexpr std::string_view locked_clock_max = "gpuclk_gpu_locked_clock_max_hertz";
// 0/1 per `reason` (gpu::clock_reasons()' keys).
inline constexpr std::string_view clock_event_reason = "gpuclk_gpu_clock_event_reason";

// The node's findings: one series per finding, labels rule, severity, gpus.
inline constexpr std::string_view finding = "gpuclk_finding";

// What a Slurm job or a Kubernetes pod used of one GPU (the GPU's labels and the owner's: job
// and user; pod_uid, namespace, pod and user), docs/attribution.md: energy, and GPU-seconds by
// `state` (context: holding a context; busy: its kernels ran).
inline constexpr std::string_view gpu_job_energy = "gpuclk_gpu_slurm_job_energy_joules_total";
inline constexpr std::string_view gpu_job_seconds = "gpuclk_gpu_slurm_job_seconds_total";
inline constexpr std::string_view gpu_pod_energy = "gpuclk_gpu_pod_energy_joules_total";
inline constexpr std::string_view gpu_pod_seconds = "gpuclk_gpu_pod_seconds_total";

}  // namespace gpuclk::telemetry::series
