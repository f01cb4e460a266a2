// How each pair of GPUs is connected: NVLink (count of bonded links) or the PCIe path, with
// nvidia-smi topo -m's abbreviations.
#pragma once

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

// matrix[i][j]: how devices[i] reaches devices[j]. NVLinks to an NVSwitch count as links to every
// GPU on the same switch fabric (what nvidia-smi reports on HGX boards).
std::vector<std::vector<Connection>> connection_matrix(const std::vector<Device*>& devices);

}  // namespace gpuclk::gpu
