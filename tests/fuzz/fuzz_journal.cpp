// libFuzzer target: the control journal (control::journal_from_json), validated on load; what
// loads must write back and load again to the same journal.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "control/journal.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto journal = gpuclk::control::journal_from_json(text);
    const auto again = gpuclk::control::journal_from_json(gpuclk::control::to_json(journal));
    if (gpuclk::control::to_json(again) != gpuclk::control::to_json(journal)) __builtin_trap();
  } catch (const std::runtime_error&) {
  }
  return 0;
}
