// Reads the kernels of an executable, shared library, cubin or fatbin with the CUDA toolkit's
// cuobjdump. cuobjdump is looked for in $GPUCLK_CUOBJDUMP, then PATH, then $CUDA_HOME/bin and
// /usr/local/cuda/bin.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "occupancy/resource_usage.h"

namespace gpuclk::occupancy {

// The cuobjdump to run; nullopt when none is installed.
std::optional<std::string> find_cuobjdump();

// Runs `cuobjdump --dump-resource-usage PATH` and parses its output. Throws gpuclk::Error:
// not_supported (3) when cuobjdump is not installed (the hint names the package, the variable
// and the --ptxas-log alternative); bad_argument (2) when PATH is missing, unreadable or holds
// no CUDA device code.
std::vector<KernelResources> read_binary_kernels(const std::string& path);

// Reads and parses a ptxas -v log (nvcc -Xptxas -v … 2> FILE). Throws bad_argument (2) when
// the file cannot be read or holds no "Compiling entry function" line.
std::vector<KernelResources> read_ptxas_log(const std::string& path);

}  // namespace gpuclk::occupancy
