#include "occupancy/resource_usage.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "occupancy/arch_limits.h"
#include "util/error.h"
#include "util/parse.h"
#include "util/text.h"

namespace gpuclk::occupancy {
namespace {

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// Tool output is input too: a count must be plain digits within what any GPU could have. A
// value beyond that is a corrupted or hostile file, said so, never wrapped or truncated.
constexpr std::uint64_t kMaxBytes = 1ull << 40;
constexpr std::uint64_t kMaxRegisters = 65536;

std::int64_t to_number(std::string_view text, std::string_view what,
                       std::uint64_t max = kMaxBytes) {
  const auto v = parse::try_unsigned(text, 0, max);
  if (!v) {
    throw bad_argument(
        fmt::format("{}: '{}' is not a count from 0 to {}", what, parse::quote(text), max),
        "is this the output of ptxas -v or cuobjdump --dump-resource-usage?");
  }
  return static_cast<std::int64_t>(*v);
}

// "REG:24 STACK:32 SHARED:0 LOCAL:0 CONSTANT[0]:372 CONSTANT[2]:8 TEXTURE:0 …"
void read_cuobjdump_fields(std::string_view line, KernelResources& kernel) {
  while (!(line = text::trim(line)).empty()) {
    const auto end = line.find(' ');
    const std::string_view field = line.substr(0, end);
    line = end == std::string_view::npos ? std::string_view{} : line.substr(end);
    const auto colon = field.rfind(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = field.substr(0, colon);
    if (key != "REG" && key != "SHARED" && key != "STACK" && key != "LOCAL" &&
        !key.starts_with("CONSTANT["))
      continue;  // TEXTURE, SURFACE, SAMPLER: not needed, not parsed
    const std::int64_t value =
        to_number(field.substr(colon + 1), key, key == "REG" ? kMaxRegisters : kMaxBytes);
    if (key == "REG")
      kernel.registers = int(value);
    else if (key == "SHARED")
      kernel.static_shared_bytes = value;
    else if (key == "STACK")
      kernel.stack_bytes = value;
    else if (key == "LOCAL")
      kernel.local_bytes = value;
    else if (key == "CONSTANT[0]")
      kernel.constant0_bytes = value;
    else if (key.starts_with("CONSTANT["))
      kernel.other_constant_bytes = std::min<std::int64_t>(kernel.other_constant_bytes + value,
                                                           static_cast<std::int64_t>(kMaxBytes));
  }
}

// The number right before `unit` in "…, 1200 bytes stack frame, …"; 0 when absent.
std::int64_t number_before(std::string_view line, std::string_view unit,
                           std::uint64_t max = kMaxBytes) {
  const auto at = line.find(unit);
  if (at == std::string_view::npos) return 0;
  std::string_view before = text::trim(line.substr(0, at));
  const auto start = before.find_last_not_of("0123456789");
  return to_number(before.substr(start == std::string_view::npos ? 0 : start + 1), text::trim(unit),
                   max);
}

std::string_view quoted(std::string_view line, std::size_t from) {
  const auto open = line.find('\'', from);
  if (open == std::string_view::npos) return {};
  const auto close = line.find('\'', open + 1);
  if (close == std::string_view::npos) return {};
  return line.substr(open + 1, close - open - 1);
}

}  // namespace

std::vector<KernelResources> parse_cuobjdump_resource_usage(std::string_view text) {
  std::vector<KernelResources> kernels;
  std::string arch;
  KernelResources* pending = nullptr;  // "Function X:" seen, its fields on the next line
  for (std::string_view raw : lines_of(text)) {
    const std::string_view line = text::trim(raw);
    if (line.starts_with("Fatbin ")) {
      arch.clear();
      pending = nullptr;
    } else if (line.starts_with("arch =")) {
      arch = std::string(text::trim(line.substr(6)));
    } else if (line.starts_with("Function ") && line.ends_with(":")) {
      KernelResources kernel;
      kernel.name = std::string(text::trim(line.substr(9, line.size() - 10)));
      kernel.arch = arch;
      kernels.push_back(std::move(kernel));
      pending = &kernels.back();
    } else if (pending != nullptr && line.starts_with("REG:")) {
      read_cuobjdump_fields(line, *pending);
      // cuobjdump's SHARED counts the block's system-reserved shared memory (1 KiB from sm_80
      // on) on top of the __shared__ arrays: measured on the H100, a kernel with 16 B of
      // __shared__ shows SHARED:1040 while cudaFuncGetAttributes says 16. The calculator adds
      // the reservation itself, so keep only what the kernel declared.
      if (const ArchLimits* limits = parse_architecture(pending->arch)) {
        const auto reserved = limits->reserved_shared_memory_per_block;
        if (pending->static_shared_bytes >= reserved) pending->static_shared_bytes -= reserved;
      }
      pending = nullptr;
    }
  }
  return kernels;
}

std::vector<KernelResources> parse_ptxas_log(std::string_view text) {
  std::vector<KernelResources> kernels;
  KernelResources* current = nullptr;  // the entry function whose lines follow
  bool in_properties = false;          // after "Function properties for <current>"
  for (std::string_view raw : lines_of(text)) {
    const std::string_view line = text::trim(raw);
    if (const auto at = line.find("Compiling entry function"); at != std::string_view::npos) {
      KernelResources kernel;
      kernel.name = std::string(quoted(line, at));
      const auto for_at = line.find(" for ", at);
      if (for_at != std::string_view::npos) kernel.arch = std::string(quoted(line, for_at));
      kernels.push_back(std::move(kernel));
      current = &kernels.back();
      in_properties = false;
    } else if (const auto props = line.find("Function properties for ");
               props != std::string_view::npos) {
      // Device functions have properties too; only the current kernel's count.
      const std::string_view name = text::trim(line.substr(props + 24));
      in_properties = current != nullptr && name == current->name;
    } else if (in_properties && current != nullptr &&
               line.find("bytes stack frame") != std::string_view::npos) {
      current->stack_bytes = number_before(line, "bytes stack frame");
      current->spill_store_bytes = number_before(line, "bytes spill stores");
      current->spill_load_bytes = number_before(line, "bytes spill loads");
      in_properties = false;
    } else if (current != nullptr && line.find("Used ") != std::string_view::npos &&
               line.find(" registers") != std::string_view::npos) {
      current->registers = int(number_before(line, " registers", kMaxRegisters));
      if (line.find(" barriers") != std::string_view::npos) {
        current->barriers = int(number_before(line, " barriers", kMaxRegisters));
      }
      current->static_shared_bytes = number_before(line, " bytes smem");
      current->local_bytes = number_before(line, " bytes lmem");
      // ptxas for sm_90 and later does not print bank 0.
      if (line.find(" bytes cmem[0]") != std::string_view::npos) {
        current->constant0_bytes = number_before(line, " bytes cmem[0]");
      }
      for (int bank = 1; bank < 32; ++bank) {
        current->other_constant_bytes +=
            number_before(line, " bytes cmem[" + std::to_string(bank) + "]");  // ≤ 31 × 2^40
      }
      // A kernel's lines end here: a "stack frame" line after it belongs to no kernel (a log cut
      // and spliced, or a hostile one: the fuzzer's regressions-tool_output case).
      current = nullptr;
      in_properties = false;
    }
  }
  return kernels;
}

std::string demangle(const std::string& name) {
  // The demangler recurses on nesting; real kernel names are far shorter than this.
  if (name.size() > kMaxDemangle) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> plain(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && plain ? std::string(plain.get()) : name;
}

}  // namespace gpuclk::occupancy
