// Per-kernel resources as the CUDA tools report them, parsed from their text:
// `cuobjdump --dump-resource-usage FILE` (executables, shared libraries, cubins, fatbins) and
// the `ptxas -v` / `nvcc -Xptxas -v` log of a build. Parsing is lenient: lines it does not know
// are skipped, so newer tool versions that add fields still parse.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuclk::occupancy {

struct KernelResources {
  std::string name;   // as in the binary (mangled)
  std::string arch;   // "sm_90"; empty when the text does not say (a lone cubin's dump)
  int registers = 0;  // per thread
  std::int64_t static_shared_bytes = 0;  // per block, __shared__ arrays
  std::int64_t stack_bytes = 0;  // per thread: stack frame (spills and local arrays live here)
  std::int64_t local_bytes = 0;  // per thread: other local memory (cuobjdump LOCAL)
  std::int64_t spill_store_bytes = 0;  // per thread; ptxas logs only
  std::int64_t spill_load_bytes = 0;   // per thread; ptxas logs only
  std::int64_t constant0_bytes = -1;  // constant bank 0 (parameters, driver data); -1: not reported
  std::int64_t other_constant_bytes = 0;  // banks 1.. (user __constant__ data, compiler constants)
  int barriers = -1;  // named barriers used; -1 when the text does not say (cuobjdump)
};

// cuobjdump --dump-resource-usage: one entry per "Function NAME:" line and ELF section, with the
// arch of the "Fatbin elf code" section it belongs to.
std::vector<KernelResources> parse_cuobjdump_resource_usage(std::string_view text);

// ptxas -v: one entry per "Compiling entry function 'NAME' for 'sm_XX'" (device functions that
// are not kernels are skipped).
std::vector<KernelResources> parse_ptxas_log(std::string_view text);

// "_Z3addPfPKfi" → "add(float*, float const*, int)"; the input unchanged when it is not a C++
// mangled name.
// Names longer than kMaxDemangle are returned unchanged (the demangler recurses on nesting).
inline constexpr std::size_t kMaxDemangle = 4096;
std::string demangle(const std::string& name);

}  // namespace gpuclk::occupancy
