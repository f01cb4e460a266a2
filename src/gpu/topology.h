// How each pair of GPUs is connected: NVLink (count of bonded links) or the PCIe path, with
// nvidia-smi topo -m's abbreviations.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpu/device.h"

namespace gpuclk::gpu {

enum class PathKind { self, nvlink, pix, pxb, phb, node, sys, unknown };

struct Connection {
  PathKind kind = PathKind::unknown;
  unsigned nvlinks = 0;  // for PathKind::nvlink
};

// "X", "NV4", "PIX", "PXB", "PHB", "NODE", "SYS", "N/A".
std::string abbreviation(const Connection& c);

// The legend nvidia-smi topo -m prints, one (abbreviation, meaning) per line.
const std::vector<std::pair<std::string, std::string>>& topology_legend();

// NVLinks between two GPUs, or between a GPU and its NVSwitches (peer empty), counted from the
// first GPU's side; only links that are up now.
struct NvLinkPair {
  unsigned gpu = 0;
  std::optional<unsigned> peer;  // GPU index; empty: the NVSwitch fabric
  unsigned links = 0;
  double gigabytes_per_s_per_link = 0;  // per direction (nvidia-smi nvlink -s)
  std::string version;                  // "4.0"; empty when unknown
};
// Links of one GPU that are down now.
struct NvLinksDown {
  unsigned gpu = 0;
  std::vector<unsigned> links;
  unsigned total = 0;  // links the GPU has
};
struct NvLinkSummary {
  std::vector<NvLinkPair> pairs;  // each GPU pair once (lower index first), then switch links
  std::vector<NvLinksDown> down;
};
// Reads every device's links (their counters' state: 1 call per link) and pairs them up.
NvLinkSummary nvlink_summary(const std::vector<Device*>& devices);

// matrix[i][j]: how devices[i] reaches devices[j]. NVLinks to an NVSwitch count as links to every
// GPU on the same switch fabric (what nvidia-smi reports on HGX boards).
std::vector<std::vector<Connection>> connection_matrix(const std::vector<Device*>& devices);

}  // namespace gpuclk::gpu
