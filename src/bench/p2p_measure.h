// `gpuclk bench p2p`'s run over the selected GPUs: the options checked, host rows GPU by GPU
// (the PCIe link read again while they copy: the loaded link), peer figures pair by ordered
// pair, each beside its link's peak (p2p_report.h), and whether any copy's data was wrong.
#pragma once

#include <string>
#include <vector>

#include "bench/p2p.h"
#include "bench/p2p_report.h"
#include "gpu/device.h"
#include "gpu/topology.h"

namespace gpuclk::bench::p2p {

// --mib (1..65536), --copies, --samples and the data check as measure options. Throws
// gpuclk::Error (exit 2) naming the bad one.
Options measure_options(double mib, int copies, int samples, bool check);

// Each GPU's host rows into `report.hosts`: pinned memory on the GPU's own NUMA node, then on
// the nodes `numa` names ("0,1", "all"; empty: none). `report.gpus` holds the devices' links.
void measure_hosts(const std::string& numa, const Options& m,
                   const std::vector<gpu::Device*>& devices, P2pReport& report);

// Every ordered pair of the devices into `report.pairs`.
void measure_peers(const Options& m, const std::vector<gpu::Device*>& devices,
                   const gpu::NvLinkSummary& nvlinks, P2pReport& report);

// Whether a copy's destination differed from its source (a verified figure that failed).
bool any_bad_data(const P2pReport& report);

}  // namespace gpuclk::bench::p2p
