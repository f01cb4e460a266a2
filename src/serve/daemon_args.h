// What `gpuclk serve` hands gpuclk-serve, the service's own program: the node as the command
// resolved it (the NVML library, the simulated scenario, the GPUs -i selects, the socket, the
// journal) and serve's options as typed, which gpuclk-serve checks (exit 2 names the option).
// gpuclk-serve links no command code: the command line is parsed once, by gpuclk, and travels
// as JSON in GPUCLK_SERVE_ARGS (the process's arguments stay what the user typed, for ps and for
// a journal lock's holder).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/kubelet_client.h"

namespace gpuclk::serve {

inline constexpr const char* kDaemonArgsVariable = "GPUCLK_SERVE_ARGS";

// serve's options, as typed (their defaults are the documented ones).
struct ServeOptionTexts {
  std::string listen = "127.0.0.1:9400";
  std::string interval = "100ms";
  std::string history = "1h";
  std::string counters_interval = "5s";
  // --govern POLICY: the energy governor (docs/govern.md) inside the service.
  std::string govern;
  std::string govern_interval = "20ms";
  std::string govern_max_slowdown = "3%";
  std::string govern_log;
  bool govern_dry_run = false;
  // --profile FILE: the desired state, applied at start and kept (serve/profile_keeper.h).
  std::string profile;
  std::string profile_check = "5s";
  // --policy FILE: who may change what through the socket (control/delegation.h).
  std::string policy;
  // --metrics-compat dcgm-exporter[:4.8|:3]: dcgm-exporter's series beside gpuclk's
  // (serve/dcgm_compat.h).
  std::string metrics_compat;
  // --metrics-detail nvlink,gpu,attribution|all: series beyond the default set
  // (serve/metrics_detail.h).
  std::string metrics_detail;
  // --kubelet-socket PATH: pods' names from the kubelet's pod-resources API (serve/pod_names.h).
  std::string kubelet_socket = kKubeletPodResourcesSocket;
  // --nccl-inspector-dir DIR: the NCCL Inspector's dump directories, DIR and DIR/* (one per job;
  // serve/nccl_jobs.h).
  std::string nccl_inspector_dir;
};

struct DaemonArgs {
  std::string nvml_library;  // the file to open (the simulator's under --sim)
  std::string simulated;     // the scenario ("default" when --sim names none); empty: real GPUs
  std::vector<unsigned> selected;  // the indexes of the GPUs -i selects
  std::string socket;              // the socket path, resolved
  std::string journal_dir;
  bool read_only = false;
  ServeOptionTexts options;
};

nlohmann::json to_json(const DaemonArgs& a);
// Throws Error (exit 2) when `j` is not what to_json() writes.
DaemonArgs daemon_args_from_json(const nlohmann::json& j);
// GPUCLK_SERVE_ARGS read and removed from the environment (not for the processes the service may
// start); Error (exit 2) when it is missing or not what `gpuclk serve` writes.
DaemonArgs daemon_args_from_environment();

}  // namespace gpuclk::serve
