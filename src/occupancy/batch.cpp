#include "occupancy/batch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "util/error.h"
#include "util/parse.h"
#include "util/text.h"

namespace gpuclk::occupancy {
namespace {

// One CSV record; double quotes may enclose a cell, "" inside them is a quote.
std::vector<std::string> split_record(std::string_view line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  for (std::string& cell : cells) cell = std::string(text::trim(cell));
  return cells;
}

// Every count in a batch is small: block sizes, registers, percentages. Anything above this is
// a typo, refused before it can reach the calculator.
constexpr std::int64_t kMaxCount = 1 << 20;

std::optional<int> parse_int(std::string_view text) {
  const auto value = parse::try_integer(text, -kMaxCount, kMaxCount);
  if (!value) return std::nullopt;
  return static_cast<int>(*value);
}

class RowReader {
 public:
  RowReader(const std::vector<std::string>& columns, BatchRow& row)
      : columns_(columns), row_(row) {}

  // Index of a column, or -1 if the header does not have it.
  int index(std::string_view name) const {
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      if (text::lower(columns_[i]) == name) return int(i);
    }
    return -1;
  }
  const std::string& cell(int column) const { return row_.cells[std::size_t(column)]; }

  int integer(int column, std::string_view valid) const {
    const auto value = parse_int(cell(column));
    if (!value) fail(column, valid);
    return *value;
  }
  std::int64_t bytes(int column) const {
    const auto value = parse_bytes(cell(column));
    if (!value) fail(column, "bytes, or KiB with a K suffix");
    return *value;
  }
  [[noreturn]] void fail(int column, std::string_view valid) const {
    throw bad_argument(fmt::format("line {}, column {}: \"{}\" is not valid (use {})", row_.line,
                                   parse::quote(columns_[std::size_t(column)]),
                                   parse::quote(cell(column)), valid));
  }

 private:
  const std::vector<std::string>& columns_;
  BatchRow& row_;
};

constexpr std::string_view kRequired[] = {"arch", "threads", "regs", "smem_static", "smem_dynamic"};

void read_row(const std::vector<std::string>& columns, BatchRow& row) {
  const RowReader reader(columns, row);
  const int arch = reader.index("arch");
  row.arch = parse_architecture(reader.cell(arch));
  if (row.arch == nullptr) reader.fail(arch, architecture_names());
  row.kernel.threads_per_block = reader.integer(reader.index("threads"), "1..1024");
  row.kernel.registers_per_thread = reader.integer(reader.index("regs"), "0..255");
  row.kernel.static_shared_bytes = reader.bytes(reader.index("smem_static"));
  row.kernel.dynamic_shared_bytes = reader.bytes(reader.index("smem_dynamic"));
  if (const int bounds = reader.index("max_threads"); bounds >= 0 && !reader.cell(bounds).empty()) {
    row.kernel.launch_bounds_max_threads = reader.integer(bounds, "1..1024, or empty");
  }
  if (const int carveout = reader.index("carveout");
      carveout >= 0 && !reader.cell(carveout).empty()) {
    row.kernel.carveout_percent = reader.integer(carveout, "0..100, or empty");
  }
  try {
    row.occupancy = calculate(*row.arch, row.kernel);
  } catch (const Error& error) {
    throw bad_argument(fmt::format("line {}: {}", row.line, error.what()));
  }
}

}  // namespace

std::optional<std::int64_t> parse_bytes(std::string_view text) {
  std::int64_t multiplier = 1;
  for (std::string_view suffix : {"KiB", "K", "k"}) {
    if (text.ends_with(suffix)) {
      text.remove_suffix(suffix.size());
      multiplier = 1024;
      break;
    }
  }
  // Bytes of shared memory: a GPU has at most a few hundred KiB per SM; cap far above that so
  // the product cannot overflow.
  const auto value = parse::try_unsigned(text, 0, (1ull << 40) / 1024);
  if (!value) return std::nullopt;
  return static_cast<std::int64_t>(*value) * multiplier;
}

std::string join_limiters(const Occupancy& occupancy) {
  std::string joined;
  for (Limiter limiter : occupancy.limiters) {
    if (!joined.empty()) joined += '+';
    joined += to_string(limiter);
  }
  return joined;
}

std::optional<BatchRow> BatchParser::feed(std::string_view line, int line_number) {
  if (line.size() > kMaxBatchLine) {
    throw bad_argument(
        fmt::format("line {} is longer than {} characters", line_number, kMaxBatchLine),
        "is this a CSV file of kernels?");
  }
  const std::string trimmed(text::trim(line));
  if (trimmed.empty() || trimmed.front() == '#') return std::nullopt;
  if (columns_.empty()) {
    columns_ = split_record(line);
    if (columns_.size() > kMaxBatchColumns) {
      throw bad_argument(fmt::format("batch header (line {}) has {} columns; at most {}",
                                     line_number, columns_.size(), kMaxBatchColumns));
    }
    for (std::string_view required : kRequired) {
      const bool present = std::any_of(columns_.begin(), columns_.end(), [&](const std::string& c) {
        return text::lower(c) == required;
      });
      if (!present) {
        columns_.clear();
        throw bad_argument(fmt::format(
            "batch header (line {}) has no column \"{}\": it needs arch, threads, regs, "
            "smem_static, smem_dynamic and may have max_threads, carveout",
            line_number, required));
      }
    }
    return std::nullopt;
  }
  BatchRow row;
  row.line = line_number;
  row.cells = split_record(line);
  if (row.cells.size() != columns_.size()) {
    throw bad_argument(fmt::format("line {} has {} cells; the header has {} columns", line_number,
                                   row.cells.size(), columns_.size()));
  }
  read_row(columns_, row);
  return row;
}

void BatchParser::finish() const {
  if (columns_.empty()) {
    throw bad_argument(
        "batch file is empty: it needs a header row "
        "(arch,threads,regs,smem_static,smem_dynamic) and one row per kernel");
  }
}

Batch parse_batch_csv(std::string_view text) {
  Batch batch;
  BatchParser parser;
  int line_number = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    ++line_number;
    if (auto row = parser.feed(line, line_number)) batch.rows.push_back(std::move(*row));
  }
  parser.finish();
  batch.columns = parser.columns();
  return batch;
}

}  // namespace gpuclk::occupancy
