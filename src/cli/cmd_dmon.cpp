// `gpuclk dmon`: one row per GPU per interval, in nvidia-smi dmon's layout and units, read from
// the telemetry sampler (fast fields every interval, slow ones on their own cadence).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cmath>
#include <csignal>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <thread>

#include "cli/commands.h"
#include "cli/context.h"
#include "output/dmon_printer.h"
#include "serve/client.h"
#include "serve/reading_feed.h"
#include "telemetry/field_table.h"
#include "telemetry/interval.h"
#include "telemetry/sampler.h"
#include "util/error.h"
#include "util/stop_signal.h"

namespace gpuclk::cli {
namespace {

using namespace std::chrono_literals;
using output::DmonColumn;
using output::Value;
using telemetry::Field;
using telemetry::FieldSet;
using telemetry::GpuSnapshot;

struct DmonOptions {
  std::string select = "puc";
  std::string delay = "1";
  long long count = 0;  // 0: until Ctrl-C
  bool count_given = false;
  std::string time_options;
  std::string file;
};

// What a row is built from: the GPU's latest readings and its energy since dmon started.
struct RowInput {
  const GpuSnapshot& gpu;
  std::optional<units::Joules> energy;
};

using Cell = std::function<Value(const RowInput&)>;

struct Group {
  char letter;
  const char* meaning;
  FieldSet fields;
  std::vector<std::pair<DmonColumn, Cell>> columns;
};

template <class Q>
Value rounded(const std::optional<Q>& q, double scale = 1) {
  return q ? output::integer(std::llround(q->value() * scale)) : output::na();
}
using telemetry::fields::kMebibyte;
using telemetry::fields::kPercent;

// Fast readings; '-' until the first tick.
template <class F>
Cell fast(F f) {
  return [f](const RowInput& in) { return in.gpu.fast ? f(*in.gpu.fast) : output::na(); };
}
template <class F>
Cell slow(F f) {
  return [f](const RowInput& in) { return in.gpu.slow ? f(*in.gpu.slow) : output::na(); };
}

// The column of a fast reading (telemetry/field_table.h): its dmon name and unit, gpuclk query's
// key for JSON Lines, the value scaled and rounded as dmon shows it.
template <class Q>
std::pair<DmonColumn, Cell> column(const telemetry::FastField<Q>& f) {
  return {
      {std::string(f.dmon_column), std::string(f.dmon_unit), std::string(f.query)},
      fast([&f](const telemetry::FastSample& s) { return rounded(s.*f.member, f.dmon_scale); })};
}

// The column of a slow counter or rate, or of one GPM engine's activity, likewise.
template <class T>
std::pair<DmonColumn, Cell> column(const telemetry::SlowField<T>& f) {
  return {{std::string(f.dmon_column), std::string(f.dmon_unit), std::string(f.query)},
          slow([&f](const telemetry::SlowSample& s) {
            const auto& v = s.*f.member;
            return v ? output::integer(std::llround(telemetry::number_of(*v) * f.dmon_scale))
                     : output::na();
          })};
}
std::pair<DmonColumn, Cell> column(const telemetry::GpmField& f) {
  return {{std::string(f.dmon_column), "%", std::string(f.query)},
          slow([&f](const telemetry::SlowSample& s) {
            return s.gpm ? rounded((*s.gpm).*f.member, kPercent) : output::na();
          })};
}

// Percent of the time between the last two slow reads that a violation counter grew.
Value violation_percent(const RowInput& in, bool thermal, bool as_flag) {
  const auto& a = in.gpu.previous_slow;
  const auto& b = in.gpu.slow;
  if (!a || !b) return output::na();
  const auto& va = thermal ? a->thermal_violation : a->power_violation;
  const auto& vb = thermal ? b->thermal_violation : b->power_violation;
  const double dt = std::chrono::duration<double>(b->time - a->time).count();
  if (!va || !vb || dt <= 0) return output::na();
  const double fraction = std::chrono::duration<double>(*vb - *va).count() / dt;
  if (as_flag) return output::integer(fraction > 0 ? 1 : 0);
  return output::integer(std::llround(std::clamp(fraction, 0.0, 1.0) * 100));
}

// As `gpuclk query --fields clocks_event_reasons.active` (nvidia-smi's hex bitmask).
Value reason_bitmask(const std::optional<gpu::ClockReasons>& r) {
  return r ? output::text(fmt::format("0x{:016X}", r->bits())) : output::na();
}

Value reason_names(const std::optional<gpu::ClockReasons>& r) {
  if (!r) return output::na();
  std::string names;
  for (const auto& info : gpu::clock_reasons()) {
    if (r->has(info.bit)) names += (names.empty() ? "" : ",") + std::string(info.short_name);
  }
  return output::text(names.empty() ? "none" : names);
}

const std::vector<Group>& groups() {
  namespace F = telemetry::fields;
  using S = telemetry::FastSample;
  static const std::vector<Group> all = {
      {'p',
       "power and temperature",
       {Field::power, Field::gpu_temperature, Field::memory_temperature},
       {column(F::power), column(F::gpu_temperature), column(F::memory_temperature)}},
      {'u',
       "utilization",
       {Field::utilization, Field::media_utilization},
       {column(F::gpu_utilization), column(F::memory_utilization), column(F::encoder),
        column(F::decoder), column(F::jpeg), column(F::ofa)}},
      {'c',
       "memory and SM clocks",
       {Field::memory_clock, Field::sm_clock},
       {column(F::memory_clock), column(F::sm_clock)}},
      {'v',
       "power and thermal violations",
       {Field::violation_time},
       {{{"pviol", "%", "violation.power"},
         [](const RowInput& in) { return violation_percent(in, false, false); }},
        {{"tviol", "bool", "violation.thermal"},
         [](const RowInput& in) { return violation_percent(in, true, true); }}}},
      {'m',
       "frame buffer, BAR1 and protected memory",
       {Field::memory_used, Field::bar1_used, Field::protected_memory_used},
       {column(F::memory_used), column(F::bar1_used), column(F::protected_memory_used)}},
      {'e',
       "ECC errors and PCIe replays",
       {Field::ecc_errors, Field::pcie_replay},
       {column(F::ecc_corrected), column(F::ecc_uncorrected), column(F::pcie_replay)}},
      {'t', "PCIe throughput", {Field::pcie_throughput}, {column(F::pcie_rx), column(F::pcie_tx)}},
      {'n',
       "NVLink throughput, every link (gpuclk)",
       {Field::nvlink, Field::nvlink_throughput},
       {column(F::nvlink_rx_rate), column(F::nvlink_tx_rate)}},
      {'r',
       "clock event reasons (gpuclk)",
       {Field::clock_reasons},
       // The column shows dmon's short names; JSON Lines carries query's two fields instead
       // (the bitmask as nvidia-smi writes it, and the names), as query gives them.
       {{{"reason", "", ""}, fast([](const S& s) { return reason_names(s.clock_reasons); })},
        {{"", "", "clocks_event_reasons.active", true},
         fast([](const S& s) { return reason_bitmask(s.clock_reasons); })},
        {{"", "", "clocks_event_reasons.names", true}, fast([](const S& s) {
           return s.clock_reasons ? output::text(s.clock_reasons->names(" ")) : output::na();
         })}}},
      {'g',
       "GPM SM, tensor and DRAM activity (gpuclk)",
       {Field::gpm},
       {column(F::gpm_sm), column(F::gpm_tensor), column(F::gpm_dram)}},
      {'x',
       "energy since dmon started, and the memory's share of the power (gpuclk)",
       {Field::energy, Field::power},
       {{{"energy", "J", "energy"}, [](const RowInput& in) { return rounded(in.energy); }},
        column(F::memory_power)}},
  };
  return all;
}

std::vector<const Group*> parse_groups(const std::string& select) {
  std::vector<const Group*> chosen;
  std::set<char> seen;
  for (char c : select) {
    if (!seen.insert(c).second) continue;
    auto it = std::find_if(groups().begin(), groups().end(),
                           [c](const Group& g) { return g.letter == c; });
    if (it == groups().end()) {
      throw bad_argument(fmt::format("unknown metric group '{}' in -s {}", c, select),
                         "valid: p u c v m e t (as nvidia-smi dmon), r (clock event reasons), "
                         "g (GPM activity), x (energy, memory power), n (NVLink throughput); "
                         "default puc");
    }
    chosen.push_back(&*it);
  }
  if (chosen.empty()) throw bad_argument("-s needs at least one metric group", "e.g. -s puc");
  return chosen;
}

output::DmonStyle parse_style(const std::string& format, const std::string& time_options) {
  output::DmonStyle style;
  std::size_t start = 0;
  while (start <= format.size()) {
    auto comma = format.find(',', start);
    std::string part =
        format.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? format.size() + 1 : comma + 1;
    if (part == "table")
      style.kind = output::DmonStyle::Kind::table;
    else if (part == "csv")
      style.kind = output::DmonStyle::Kind::csv;
    else if (part == "json")
      style.kind = output::DmonStyle::Kind::json;
    else if (part == "noheader")
      style.header = false;
    else if (part == "nounit" || part == "nounits")
      style.units = false;
    else
      throw bad_argument(fmt::format("unknown dmon format '{}'", part),
                         "valid: table, csv, json, with noheader and nounit (comma separated)");
  }
  for (char c : time_options) {
    if (c == 'D')
      style.date = true;
    else if (c == 'T')
      style.time = true;
    else
      throw bad_argument(fmt::format("unknown -o option '{}'", c), "valid: D (date), T (time), DT");
  }
  return style;
}

// Prints one interval's rows; returns how many GPUs are still alive. The same for both sources
// (the sampler here, or the service's stream), so the output is the same either way.
class RowPrinter {
 public:
  RowPrinter(output::DmonPrinter& printer, const std::vector<Cell>& cells)
      : printer_(printer), cells_(cells) {}

  std::size_t print(const std::vector<GpuSnapshot>& gpus,
                    const std::vector<std::optional<units::Joules>>& energy) {
    const auto now = std::chrono::system_clock::now();
    std::size_t alive = 0;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const auto& g = gpus[i];
      if (g.health.lost) {
        if (reported_lost_.insert(g.info.index).second) {
          std::cerr << fmt::format("gpuclk: GPU {} was lost (fell off the bus); the others go on\n",
                                   g.info.index);
        }
        continue;
      }
      ++alive;
      RowInput in{g, energy.at(i)};
      std::vector<Value> values;
      for (const auto& cell : cells_) values.push_back(cell(in));
      printer_.row(now, g.info.index, values);
    }
    if (alive == 0) {
      throw Error(ExitCode::gpu_lost, "every selected GPU was lost",
                  "check `dmesg` for Xid errors; a reset or reboot brings it back");
    }
    return alive;
  }

 private:
  output::DmonPrinter& printer_;
  const std::vector<Cell>& cells_;
  std::set<unsigned> reported_lost_;
};

// Where the rows come from: the stream of a service that answers and can serve these options
// (this process then loads no NVML), else dmon's own sampler.
std::unique_ptr<serve::ReadingFeed> open_feed(Context& ctx, const serve::FeedOptions& options) {
  if (const auto* hello = ctx.service_hello()) {
    const auto indexes = ctx.indexes_from(hello->gpus);
    if (auto feed = serve::open_service_feed(*ctx.service(), *hello, indexes, options)) return feed;
  }
  return serve::open_sampler_feed(ctx.selected(), ctx.clock(), options);
}

int run_dmon(Context& ctx, const DmonOptions& o) {
  const auto chosen = parse_groups(o.select);
  const auto interval = telemetry::interval_option(o.delay, "-d");
  auto style = parse_style(ctx.options.format, o.time_options);
  style.milliseconds = interval < 1s;
  // -c 0 ran forever, as no -c does, while this says a count is at least 1.
  if (o.count < 0 || (o.count_given && o.count == 0))
    throw bad_argument(fmt::format("bad count -c {}", o.count),
                       "give a count >= 1, or no -c to run until Ctrl-C");

  FieldSet fields;
  std::vector<DmonColumn> columns;
  std::vector<Cell> cells;
  for (const auto* g : chosen) {
    fields = fields | g->fields;
    for (const auto& [column, cell] : g->columns) {
      columns.push_back(column);
      cells.push_back(cell);
    }
  }
  std::ofstream file;
  if (!o.file.empty()) {
    ctx.effect("write -f FILE");
    file.open(o.file);
    if (!file) throw Error(ExitCode::other, fmt::format("cannot write {}", o.file));
  }
  std::ostream& out = o.file.empty() ? std::cout : file;
  output::DmonPrinter printer(out, style);
  RowPrinter rows(printer, cells);
  util::StopFlag stop;  // Ctrl-C, kill, a closed terminal: dmon ends cleanly (exit 0)
  const auto feed = open_feed(ctx, {interval, fields, o.count});
  long long printed = 0;
  while (auto readings = feed->next()) {
    if (printed++ == 0) {
      // The note on slow fields (when they are read less often than the rows come), the header.
      const auto slow = feed->slow_interval();
      if (!fields.slow().empty() && slow > interval) {
        printer.note(
            fmt::format("slow fields are read every {} ms; rows in between repeat the last value",
                        std::chrono::duration_cast<std::chrono::milliseconds>(slow).count()));
      }
      printer.begin(columns);
    }
    rows.print(readings->gpus, readings->energy);
    if (o.count && printed >= o.count) break;
  }
  return 0;
}

}  // namespace

void add_dmon_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<DmonOptions>();
  auto* sub =
      app.add_subcommand("dmon",
                         "Scrolling per-GPU telemetry, one row per interval (as nvidia-smi dmon; "
                         "plus r: clock event reasons, g: GPM activity, x: energy)");
  sub->add_option("-s,--select", opts->select,
                  "metric groups: p power/temp, u utilization, c clocks, v violations, m memory, "
                  "e ECC/PCIe errors, t PCIe throughput, r reasons, g GPM, x energy (default puc)");
  sub->add_option("-d,--delay", opts->delay,
                  "interval: seconds (1, 0.1) or 100ms; at least 10ms (default 1)");
  auto* count = sub->add_option("-c,--count", opts->count,
                                "stop after this many intervals (default: until Ctrl-C)");
  sub->add_option("-o,--options", opts->time_options,
                  "D: date, T: time, DT: both, first in each row");
  sub->add_option("-f,--filename", opts->file, "write to this file instead of stdout");
  sub->footer(
      "Formats (global --format): table, csv, json (JSON Lines); csv/table take noheader, nounit.");
  sub->callback([&ctx, opts, count] {
    opts->count_given = count->count() > 0;
    ctx.run = [&ctx, opts] { return run_dmon(ctx, *opts); };
  });
}

}  // namespace gpuclk::cli
