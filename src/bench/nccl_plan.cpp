#include "bench/nccl_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "util/error.h"
#include "util/text.h"

namespace gpuclk::bench::nccl {
namespace {

namespace tn = telemetry::nccl;

constexpr std::size_t kMaxSize = std::size_t(1) << 40;  // 1 TiB: no GPU has more

std::string valid_keys() {
  std::string keys;
  for (Operation o : benchmark_operations())
    keys += (keys.empty() ? "" : ", ") + std::string(tn::info(o).key);
  return keys;
}

// Each rank's part rounded down to 16 bytes (nccl-tests: (count / nranks) & ~(16/eltSize - 1)).
std::size_t per_rank_part(std::size_t count, int ranks) {
  return (count / std::size_t(ranks)) & ~(16 / kElementBytes - 1);
}

}  // namespace

const std::vector<Operation>& benchmark_operations() {
  static const std::vector<Operation> operations = {
      Operation::all_reduce, Operation::all_gather, Operation::reduce_scatter,
      Operation::broadcast,  Operation::all_to_all, Operation::send_recv};
  return operations;
}

std::vector<Operation> parse_operations(std::string_view text) {
  if (text == "all") return benchmark_operations();
  std::vector<Operation> out;
  for (const std::string& key : text::split(std::string(text))) {
    const auto op = tn::parse_key(key);
    if (!op || std::find(benchmark_operations().begin(), benchmark_operations().end(), *op) ==
                   benchmark_operations().end()) {
      throw bad_argument(fmt::format("--ops: '{}' is not an operation bench nccl runs", key),
                         "valid: " + valid_keys() + " (comma separated), or all");
    }
    if (std::find(out.begin(), out.end(), *op) == out.end()) out.push_back(*op);
  }
  if (out.empty()) throw bad_argument("--ops names no operation", "valid: " + valid_keys());
  return out;
}

std::size_t parse_size(std::string_view text, std::string_view option) {
  const auto bad = [&] {
    return bad_argument(fmt::format("{}: '{}' is not a size", option, text),
                        "give bytes with an optional K, M or G (binary): 8, 64K, 8G; at most 1T");
  };
  std::string_view digits = text;
  std::size_t unit = 1;
  if (!digits.empty()) {
    switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
      case 'K':
        unit = std::size_t(1) << 10;
        break;
      case 'M':
        unit = std::size_t(1) << 20;
        break;
      case 'G':
        unit = std::size_t(1) << 30;
        break;
      case 'T':
        unit = std::size_t(1) << 40;
        break;
      default:
        break;
    }
    if (unit != 1) digits.remove_suffix(1);
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() ||
      !std::isfinite(value) || value <= 0)
    throw bad();
  const double bytes = std::floor(value * double(unit));
  if (bytes < 1 || bytes > double(kMaxSize)) throw bad();
  return std::size_t(bytes);
}

SizeRange parse_sizes(std::string_view text) {
  SizeRange range;
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    range.min = range.max = parse_size(text, "--sizes");
    return range;
  }
  range.min = parse_size(text.substr(0, colon), "--sizes");
  range.max = parse_size(text.substr(colon + 1), "--sizes");
  if (range.min > range.max) {
    throw bad_argument(fmt::format("--sizes {}: the smallest size is above the largest", text),
                       "give MIN:MAX, e.g. 8:8G");
  }
  return range;
}

std::vector<std::size_t> size_steps(const SizeRange& range) {
  if (range.factor < 2 || range.factor > 1024) {
    throw bad_argument(fmt::format("--factor {} is outside 2..1024", range.factor));
  }
  std::vector<std::size_t> sizes;
  for (std::size_t s = range.min; s <= range.max; s *= std::size_t(range.factor)) {
    sizes.push_back(s);
    if (s > range.max / std::size_t(range.factor)) break;
  }
  return sizes;
}

Counts counts(Operation operation, std::size_t bytes, int ranks) {
  const std::size_t count = bytes / kElementBytes;
  const std::size_t n = std::size_t(std::max(ranks, 1));
  Counts c;
  switch (operation) {
    case Operation::all_gather: {
      const std::size_t base = per_rank_part(count, int(n));
      c = {base, base, base * n, base, 0, 0};
      break;
    }
    case Operation::reduce_scatter: {
      const std::size_t base = per_rank_part(count, int(n));
      c = {base, base * n, base, 0, base, 0};
      break;
    }
    case Operation::all_to_all: {
      const std::size_t part = per_rank_part(count, int(n));
      c = {part, part * n, part * n, 0, 0, 0};
      break;
    }
    default:  // all-reduce, broadcast, reduce, send/recv
      c = {count, count, count, 0, 0, 0};
      break;
  }
  c.bytes = std::max(c.send, c.recv) * kElementBytes;
  return c;
}

Bandwidth bandwidth(Operation operation, const Counts& counts, double seconds, int ranks) {
  if (!(seconds > 0)) return {};
  const double moved =
      tn::algorithm_bytes(operation, double(counts.param * kElementBytes), std::max(ranks, 1));
  const double algorithm = moved / seconds;
  return {algorithm, algorithm * tn::bus_factor(operation, ranks)};
}

bool has_in_place(Operation operation) {
  return operation != Operation::all_to_all && operation != Operation::send_recv;
}

std::size_t buffer_bytes(const std::vector<std::size_t>& sizes, std::size_t pair_bytes) {
  std::size_t largest = pair_bytes;
  for (std::size_t s : sizes) largest = std::max(largest, s);
  const std::size_t rounded = (largest + kElementBytes - 1) / kElementBytes * kElementBytes;
  return 2 * rounded;
}

std::size_t largest_fitting_size(const std::vector<DeviceMemory>& gpus) {
  constexpr std::size_t kGiB = std::size_t(1) << 30;
  std::size_t fits = std::numeric_limits<std::size_t>::max();
  for (const DeviceMemory& g : gpus) {
    const std::size_t reserve = std::min((g.total + 16 * kGiB - 1) / (16 * kGiB) * kGiB, 4 * kGiB);
    const std::size_t keep = reserve + kGiB;
    fits = std::min(fits, g.free > keep ? (g.free - keep) / 2 : 0);
  }
  if (gpus.empty() || fits == 0) return 0;
  std::size_t power = 1;
  while (power <= fits / 2) power *= 2;
  return power;
}

std::string size_text(std::size_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  double value = double(bytes);
  while (unit + 1 < std::size(units) && value >= 1024 && std::fmod(value, 1024) == 0) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:g} {}", value, units[unit]);
}

}  // namespace gpuclk::bench::nccl
