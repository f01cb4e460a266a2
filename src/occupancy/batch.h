// `gpuclk occupancy --batch FILE.csv`: many kernels at once, for tools and CI pipelines.
// Input: a CSV file with a header row naming at least arch, threads, regs, smem_static and
// smem_dynamic, optionally max_threads (__launch_bounds__) and carveout (percent); any other
// column is carried through to the output unchanged. Blank lines and lines starting with '#'
// are skipped. Sizes are bytes, or KiB with a K/KiB suffix ("48K").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "occupancy/arch_limits.h"
#include "occupancy/calculator.h"

namespace gpuclk::occupancy {

struct BatchRow {
  int line = 0;                    // 1-based line in the file
  std::vector<std::string> cells;  // as read, one per header column
  const ArchLimits* arch = nullptr;
  KernelConfig kernel;
  Occupancy occupancy;  // filled by parse_batch_csv
};

struct Batch {
  std::vector<std::string> columns;  // the input header, trimmed
  std::vector<BatchRow> rows;
};

// The batch read line by line, for files of any length in bounded memory: feed each line, get
// back the evaluated row when it is one. Throws as parse_batch_csv does.
class BatchParser {
 public:
  // `line` without its '\n'; `number` 1-based.
  std::optional<BatchRow> feed(std::string_view line, int number);
  // Throws when no header was seen (an empty file).
  void finish() const;
  const std::vector<std::string>& columns() const { return columns_; }

 private:
  std::vector<std::string> columns_;
};

// Cells per row and characters per line, far above any real batch.
inline constexpr std::size_t kMaxBatchColumns = 256;
inline constexpr std::size_t kMaxBatchLine = 1 << 16;

// Parses and evaluates every row (BatchParser over a whole text). Throws
// gpuclk::Error(bad_argument) naming the line, the column and the value for anything that is not a
// kernel (unknown arch, a non-number, a missing required column); a kernel that cannot launch is a
// row with occupancy.valid() false.
Batch parse_batch_csv(std::string_view text);

// "48K" / "48KiB" → 49152, "1000" → 1000; nullopt for anything else (negative, other suffixes).
std::optional<std::int64_t> parse_bytes(std::string_view text);

// "warps+registers": the binding limiters joined with '+'; "" when there are none.
std::string join_limiters(const Occupancy& occupancy);

}  // namespace gpuclk::occupancy
