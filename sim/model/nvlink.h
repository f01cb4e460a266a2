// NVLink of the simulated node: which links a GPU has and which are up, where each leads, how
// fast it is, its error counters (pure functions of the scenario and simulated time) and the
// data p2p phases moved over it. sim/abi answers NVML's NvLink reads from these.
#pragma once

#include <cstdint>

#include "gpu_state.h"
#include "scenario.h"

namespace gpuclk::sim {

class NodeModel;

// nvidia-smi nvlink -s's per-link speed by NVLink generation (GB/s per direction): 26.562 on
// Hopper (read on a 2x H200 host), 25 on Ampere, 25.781 on Volta; 0 for none.
double default_nvlink_gigabytes_per_s(std::uint32_t generation);

// Links of `config` that are up and lead to GPU `peer`: all up links to the partner (pairs) or
// to any other GPU (NVSwitch); 0 where no NVLink joins them.
std::uint32_t nvlink_links_to(const GpuConfig& config, std::uint32_t peer);

// Bytes/s a p2p phase from `config`'s GPU to `peer` can reach: the up links' speed together,
// or `pcie_bytes_per_s` where no NVLink joins them.
double p2p_bandwidth(const GpuConfig& config, std::uint32_t peer, double pcie_bytes_per_s);

// Records `bytes` sent to `peer` (a p2p phase's work over one step): spread over the up links
// that lead there.
void record_p2p(const GpuConfig& config, GpuDynamics& d, std::uint32_t peer, double bytes);

// The error counter of `link` at simulated time now_s (whole errors).
std::uint64_t nvlink_error_count(const GpuConfig& config, std::uint32_t link, NvLinkCounter counter,
                                 double now_s);

// Data counters of one link since power-on, bytes: what GPU `gpu` sent over it and what it
// received (pairs: what the partner sent over the same link; NVSwitch: what every other GPU
// sent this one, spread over its up links).
double nvlink_tx_bytes(const NodeModel& node, std::size_t gpu, std::uint32_t link);
double nvlink_rx_bytes(const NodeModel& node, std::size_t gpu, std::uint32_t link);

}  // namespace gpuclk::sim
