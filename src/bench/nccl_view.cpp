#include "bench/nccl_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

namespace gpuclk::bench::nccl {

namespace out = output;
namespace tn = telemetry::nccl;

namespace {

out::Value gb(double bytes_per_second) { return out::number(bytes_per_second * 1e-9, "GB/s", 2); }
out::Value us(double seconds) { return out::number(seconds * 1e6, "us", 2); }
out::Value optional_number(const std::optional<double>& v, const char* unit, int precision) {
  return v ? out::number(*v, unit, precision) : out::na();
}
out::Value optional_gb(const std::optional<double>& v) { return v ? gb(*v) : out::na(); }
out::Value wrong_value(const std::optional<std::uint64_t>& w) {
  return w ? out::integer((long long)*w) : out::na();
}
std::string key(Operation op) { return std::string(tn::info(op).key); }

void timing_node(out::Node& parent, const char* name, const Timing& t) {
  auto& n = parent.section(name, name);
  n.add("time_us", "time", us(t.seconds));
  n.add("algbw_gb_per_s", "algbw", gb(t.bandwidth.algorithm));
  n.add("busbw_gb_per_s", "busbw", gb(t.bandwidth.bus));
  n.add("wrong", "#wrong", wrong_value(t.wrong));
}

void peak_nodes(out::Node& n, const std::optional<p2p::Peak>& peak,
                const std::optional<double>& fraction) {
  n.add("peak_gb_per_s", "peak", peak ? gb(peak->bytes_per_second) : out::na());
  n.add("peak_basis", "peak basis", peak ? out::text(peak->basis) : out::na());
  n.add("pct_of_peak", "of peak", fraction ? out::number(*fraction * 100, "%", 1) : out::na());
}

void telemetry_node(out::Node& parent, const std::vector<GpuTelemetry>& list) {
  auto& tel = parent.section("telemetry", "telemetry", true);
  for (const GpuTelemetry& t : list) {
    auto& n = tel.section("", "");
    n.add("gpu", "GPU", out::integer(t.gpu));
    n.add("sm_clock_mhz", "SM clock", optional_number(t.sm_clock_mhz, "MHz", 0));
    n.add("memory_clock_mhz", "memory clock", optional_number(t.memory_clock_mhz, "MHz", 0));
    n.add("power_w", "power", optional_number(t.power_w, "W", 1));
    n.add("temperature_max_c", "max temperature", optional_number(t.temperature_c, "C", 0));
    n.add("nvlink_tx_gb_per_s", "NVLink tx", optional_gb(t.nvlink_tx_bytes_per_second));
    n.add("nvlink_rx_gb_per_s", "NVLink rx", optional_gb(t.nvlink_rx_bytes_per_second));
    auto& reasons = n.section("clock_reasons", "clock event reasons");
    for (const auto& [reason, share] : t.reasons)
      reasons.add(reason, reason, out::number(share * 100, "%", 1));
  }
}

void gpus_node(out::Node& root, const NcclReport& r) {
  auto& gpus = root.section("gpus", "GPUs", true);
  for (std::size_t i = 0; i < r.topology.gpus.size(); ++i) {
    const p2p::GpuLinks& g = r.topology.gpus[i];
    auto& n = gpus.section("", "");
    n.add("rank", "rank", out::integer((long long)i));
    n.add("index", "index", out::integer(g.index));
    n.add("cuda_ordinal", "CUDA ordinal", out::integer(g.cuda_ordinal));
    n.add("name", "name", out::text(g.name));
    n.add("pci_bus_id", "bus id", out::text(g.bus_id));
    n.add("numa_node", "NUMA node", g.numa_node ? out::integer(*g.numa_node) : out::na());
    n.add("pcie_loaded", "PCIe under load",
          g.pcie_running() ? out::text(p2p::pcie_text(*g.pcie_running())) : out::na());
    n.add("pcie_max", "PCIe max", g.pcie_max ? out::text(p2p::pcie_text(*g.pcie_max)) : out::na());
    n.add("nvlinks", "NVLinks", out::integer(g.nvlinks));
    n.add("nvlinks_down", "NVLinks down", out::integer(g.nvlinks_down));
  }
}

void operations_node(out::Node& root, const NcclReport& r) {
  auto& ops = root.section("operations", "operations", true);
  for (const OperationReport& o : r.operations) {
    auto& n = ops.section("", "");
    n.add("operation", "operation", out::text(key(o.operation)));
    n.add("nccl_tests", "nccl-tests", out::text(std::string(tn::info(o.operation).nccl_tests)));
    peak_nodes(n, o.peak, o.fraction_of_peak);
    n.add("judged_bytes", "judged at", out::integer((long long)o.judged_bytes, "B"));
    n.add("busbw_gb_per_s", "busbw", gb(o.judged_bus_bandwidth));
    n.add("smallest_time_us", "latency", us(o.smallest_seconds));
    n.add("wrong", "#wrong", o.checked ? out::integer((long long)o.wrong) : out::na());
    auto& sizes = n.section("results", "results", true);
    for (const SizeResult& s : o.sizes) {
      auto& row = sizes.section("", "");
      row.add("size", "size", out::integer((long long)s.counts.bytes, "B"));
      row.add("count", "count", out::integer((long long)s.counts.param));
      timing_node(row, "out_of_place", s.out_of_place);
      if (s.in_place) timing_node(row, "in_place", *s.in_place);
    }
    telemetry_node(n, o.telemetry);
  }
}

void pairs_node(out::Node& root, const NcclReport& r) {
  auto& pairs = root.section("pairs", "send/recv pairs", true);
  for (const PairReport& p : r.pairs) {
    auto& n = pairs.section("", "");
    n.add("gpu", "GPU", out::integer(p.gpu));
    n.add("peer", "peer", out::integer(p.peer));
    n.add("size", "size", out::integer((long long)p.result.bytes, "B"));
    n.add("time_us", "time", us(p.result.seconds));
    n.add("busbw_gb_per_s", "bandwidth", gb(p.result.bandwidth));
    peak_nodes(n, p.peak, p.fraction_of_peak);
    n.add("wrong", "#wrong", wrong_value(p.result.wrong));
  }
  const auto pair_at = [&](const std::optional<std::size_t>& i) {
    return i ? out::text(fmt::format("{}->{}", r.pairs[*i].gpu, r.pairs[*i].peer)) : out::na();
  };
  root.add("worst_pair", "worst pair", pair_at(r.worst_pair));
  root.add("best_pair", "best pair", pair_at(r.best_pair));
  if (!r.pairs_telemetry.empty()) {
    auto& n = root.section("pairs_telemetry", "pairs telemetry");
    telemetry_node(n, r.pairs_telemetry);
  }
}

std::string reasons_text(const GpuTelemetry& t) {
  std::string s;
  for (const auto& [reason, share] : t.reasons)
    s += fmt::format("{}{} {:.0f}%", s.empty() ? "" : ", ", reason, share * 100);
  return s.empty() ? "-" : s;
}

p2p::TitledTable operation_table(const OperationReport& o) {
  p2p::TitledTable tt;
  tt.title = fmt::format("{} (float32, sum, root 0; as nccl-tests' {}): out-of-place | in-place",
                         tn::info(o.operation).label, tn::info(o.operation).nccl_tests);
  tt.table.columns = {{"size", "size (B)"},     {"count", "count"},     {"oop_time", "time (us)"},
                      {"oop_algbw", "algbw"},   {"oop_busbw", "busbw"}, {"oop_wrong", "#wrong"},
                      {"ip_time", "time (us)"}, {"ip_algbw", "algbw"},  {"ip_busbw", "busbw"},
                      {"ip_wrong", "#wrong"}};
  for (const SizeResult& s : o.sizes) {
    std::vector<out::Value> row{out::integer((long long)s.counts.bytes),
                                out::integer((long long)s.counts.param)};
    for (const std::optional<Timing>& t : {std::optional<Timing>(s.out_of_place), s.in_place}) {
      if (!t) {
        for (int i = 0; i < 4; ++i) row.push_back(out::text("-"));
        continue;
      }
      row.push_back(out::number(t->seconds * 1e6, "", 2));
      row.push_back(out::number(t->bandwidth.algorithm * 1e-9, "", 2));
      row.push_back(out::number(t->bandwidth.bus * 1e-9, "", 2));
      row.push_back(t->wrong ? out::integer((long long)*t->wrong) : out::text("N/A"));
    }
    tt.table.rows.push_back(std::move(row));
  }
  return tt;
}

p2p::TitledTable summary_table(const NcclReport& r) {
  p2p::TitledTable tt;
  tt.title = "Bus bandwidth at the largest size against the links' peak; latency at the smallest";
  tt.table.columns = {{"operation", "operation", true},
                      {"size", "size", true},
                      {"busbw", "busbw GB/s"},
                      {"peak", "peak GB/s"},
                      {"pct", "of peak"},
                      {"latency", "latency us"},
                      {"basis", "peak basis", true}};
  for (const OperationReport& o : r.operations) {
    tt.table.rows.push_back(
        {out::text(std::string(tn::info(o.operation).label)), out::text(size_text(o.judged_bytes)),
         out::number(o.judged_bus_bandwidth * 1e-9, "", 2),
         o.peak ? out::number(o.peak->bytes_per_second * 1e-9, "", 2) : out::na(),
         o.fraction_of_peak ? out::text(fmt::format("{:.0f}%", *o.fraction_of_peak * 100))
                            : out::na(),
         out::number(o.smallest_seconds * 1e6, "", 2),
         o.peak ? out::text(o.peak->basis) : out::text("-")});
  }
  return tt;
}

p2p::TitledTable pair_table(const NcclReport& r) {
  std::vector<unsigned> gpus;
  for (const p2p::GpuLinks& g : r.topology.gpus) gpus.push_back(g.index);
  p2p::TitledTable tt;
  tt.title =
      fmt::format("send/recv: GPU(row) sends {} to GPU(column) alone, GB/s measured / peak (share)",
                  size_text(r.pairs.front().result.bytes));
  tt.table.columns.push_back({"gpu", "", true});
  for (unsigned g : gpus) tt.table.columns.push_back({fmt::format("GPU{}", g), "", false});
  for (unsigned a : gpus) {
    std::vector<out::Value> row{out::text(fmt::format("GPU{}", a))};
    for (unsigned b : gpus) {
      auto it = std::find_if(r.pairs.begin(), r.pairs.end(),
                             [&](const PairReport& p) { return p.gpu == a && p.peer == b; });
      if (a == b || it == r.pairs.end()) {
        row.push_back(out::text(a == b ? "X" : "N/A"));
        continue;
      }
      std::string cell = fmt::format("{:.2f}", it->result.bandwidth * 1e-9);
      if (it->peak) cell += fmt::format(" / {:.2f}", it->peak->bytes_per_second * 1e-9);
      if (it->fraction_of_peak) cell += fmt::format(" ({:.0f}%)", *it->fraction_of_peak * 100);
      if (it->result.wrong.value_or(0) > 0) cell += " BAD DATA";
      row.push_back(out::text(cell));
    }
    tt.table.rows.push_back(std::move(row));
  }
  return tt;
}

p2p::TitledTable telemetry_table(const NcclReport& r) {
  p2p::TitledTable tt;
  tt.title = "Read while each operation ran (median clocks, mean power, NVLink data per direction)";
  tt.table.columns = {{"operation", "operation", true},
                      {"gpu", "GPU"},
                      {"sm", "SM MHz"},
                      {"mem", "mem MHz"},
                      {"power", "power W"},
                      {"temp", "max C"},
                      {"tx", "NVLink tx GB/s"},
                      {"rx", "NVLink rx GB/s"},
                      {"reasons", "clock event reasons", true}};
  auto add = [&](const std::string& what, const std::vector<GpuTelemetry>& list) {
    for (const GpuTelemetry& t : list) {
      const auto num = [](const std::optional<double>& v, int p) {
        return v ? out::number(*v, "", p) : out::na();
      };
      const auto rate = [](const std::optional<double>& v) {
        return v ? out::number(*v * 1e-9, "", 2) : out::na();
      };
      tt.table.rows.push_back({out::text(what), out::integer(t.gpu), num(t.sm_clock_mhz, 0),
                               num(t.memory_clock_mhz, 0), num(t.power_w, 1),
                               num(t.temperature_c, 0), rate(t.nvlink_tx_bytes_per_second),
                               rate(t.nvlink_rx_bytes_per_second), out::text(reasons_text(t))});
    }
  };
  for (const OperationReport& o : r.operations)
    add(std::string(tn::info(o.operation).label), o.telemetry);
  add("send/recv pairs", r.pairs_telemetry);
  return tt;
}

}  // namespace

out::Node nccl_tree(const NcclReport& r) {
  out::Node root{"bench_nccl", "bench nccl", {}, {}, false};
  root.add("format", "format", out::text(kNcclReportFormat));
  auto& params = root.section("parameters", "parameters");
  params.add("min_bytes", "smallest size",
             out::integer((long long)(r.options.sizes.empty() ? 0 : r.options.sizes.front()), "B"));
  params.add("max_bytes", "largest size",
             out::integer((long long)(r.options.sizes.empty() ? 0 : r.options.sizes.back()), "B"));
  params.add("sizes", "sizes", out::integer((long long)r.options.sizes.size()));
  params.add("iterations", "iterations", out::integer(r.options.iterations));
  params.add("warmup_iterations", "warm-up iterations", out::integer(r.options.warmup_iterations));
  params.add("check", "check", out::flag(r.options.check));
  params.add("pair_bytes", "pair size", out::integer((long long)r.options.pair_bytes, "B"));
  params.add("data_type", "data type", out::text("float32"));
  params.add("reduction", "reduction", out::text("sum"));
  auto& lib = root.section("nccl", "NCCL");
  lib.add("version", "version", out::text(r.library_version));
  lib.add("path", "path", out::text(r.library_path));
  lib.add("native_all_to_all", "ncclAlltoAll", out::flag(r.native_all_to_all));
  auto& settings = lib.section("settings", "settings", true);
  for (const auto& s : r.settings) settings.add("", "", out::text(tn::describe(s)));
  gpus_node(root, r);
  operations_node(root, r);
  pairs_node(root, r);
  auto& notes = root.section("notes", "notes", true);
  for (const auto& n : r.notes) notes.add("", "", out::text(n));
  auto& verdicts = root.section("verdicts", "verdicts", true);
  for (const auto& v : r.verdicts) verdicts.add("", "", out::text(v));
  return root;
}

out::Table nccl_rows(const NcclReport& r) {
  out::Table t;
  t.columns = {{"operation", "operation", true},
               {"nccl_tests", "nccl-tests", true},
               {"placement", "placement", true},
               {"gpu", "GPU"},
               {"peer", "peer"},
               {"size", "size", false, "B"},
               {"count", "count"},
               {"time", "time", false, "us"},
               {"algbw", "algbw", false, "GB/s"},
               {"busbw", "busbw", false, "GB/s"},
               {"wrong", "#wrong"},
               {"peak", "peak", false, "GB/s"},
               {"pct_of_peak", "of peak", false, "%"}};
  const auto bare = [](double v, int precision) { return out::number(v, "", precision); };
  for (const OperationReport& o : r.operations) {
    const out::Value peak = o.peak ? bare(o.peak->bytes_per_second * 1e-9, 2) : out::na();
    for (const SizeResult& s : o.sizes) {
      for (const auto& [placement, timing] :
           {std::pair{"out_of_place", std::optional<Timing>(s.out_of_place)},
            std::pair{"in_place", s.in_place}}) {
        if (!timing) continue;
        const double pct = o.peak && o.peak->bytes_per_second > 0
                               ? timing->bandwidth.bus / o.peak->bytes_per_second * 100
                               : -1;
        t.rows.push_back(
            {out::text(key(o.operation)), out::text(std::string(tn::info(o.operation).nccl_tests)),
             out::text(placement), out::na(), out::na(), out::integer((long long)s.counts.bytes),
             out::integer((long long)s.counts.param), bare(timing->seconds * 1e6, 2),
             bare(timing->bandwidth.algorithm * 1e-9, 2), bare(timing->bandwidth.bus * 1e-9, 2),
             wrong_value(timing->wrong), peak, pct >= 0 ? bare(pct, 1) : out::na()});
      }
    }
  }
  for (const PairReport& p : r.pairs) {
    t.rows.push_back(
        {out::text("send_recv_pair"), out::text(""), out::text("out_of_place"), out::integer(p.gpu),
         out::integer(p.peer), out::integer((long long)p.result.bytes),
         out::integer((long long)(p.result.bytes / kElementBytes)), bare(p.result.seconds * 1e6, 2),
         bare(p.result.bandwidth * 1e-9, 2), bare(p.result.bandwidth * 1e-9, 2),
         wrong_value(p.result.wrong), p.peak ? bare(p.peak->bytes_per_second * 1e-9, 2) : out::na(),
         p.fraction_of_peak ? bare(*p.fraction_of_peak * 100, 1) : out::na()});
  }
  return t;
}

std::vector<p2p::TitledTable> nccl_tables(const NcclReport& r) {
  std::vector<p2p::TitledTable> tables;
  for (const OperationReport& o : r.operations) tables.push_back(operation_table(o));
  if (!r.operations.empty()) tables.push_back(summary_table(r));
  if (!r.pairs.empty()) tables.push_back(pair_table(r));
  const bool any_telemetry =
      !r.pairs_telemetry.empty() ||
      std::any_of(r.operations.begin(), r.operations.end(),
                  [](const OperationReport& o) { return !o.telemetry.empty(); });
  if (any_telemetry) tables.push_back(telemetry_table(r));
  return tables;
}

std::string parameters_line(const NcclReport& r) {
  const std::size_t lo = r.options.sizes.empty() ? 0 : r.options.sizes.front();
  const std::size_t hi = r.options.sizes.empty() ? 0 : r.options.sizes.back();
  return fmt::format(
      "{} to {} in {} sizes, {} timed iterations each after {} warm-up, {}, over {} GPU{}; NCCL "
      "{} ({}); GB/s = 1e9 B/s, bus bandwidth as nccl-tests' doc/PERFORMANCE.md "
      "(docs/bench.md#nccl)",
      size_text(lo), size_text(hi), r.options.sizes.size(), r.options.iterations,
      r.options.warmup_iterations, r.options.check ? "results checked" : "results not checked",
      r.topology.gpus.size(), r.topology.gpus.size() == 1 ? "" : "s", r.library_version,
      r.library_path);
}

std::string progress_text(const Progress& p) {
  return p.pair_from >= 0
             ? fmt::format("bench nccl | send/recv pair rank {} -> rank {} | {}", p.pair_from,
                           p.pair_to, size_text(p.bytes))
             : fmt::format("bench nccl | {} | {} ({}/{}) | {}",
                           telemetry::nccl::info(p.operation).label, size_text(p.bytes), p.step + 1,
                           p.steps, p.in_place ? "in-place" : "out-of-place");
}

void print_text(std::ostream& os, output::Printer& printer, const NcclReport& report) {
  for (const auto& note : report.notes) os << "Note: " << note << "\n\n";
  bool first = true;
  for (const auto& t : nccl_tables(report)) {
    os << (first ? "" : "\n") << t.title << "\n";
    os.flush();
    printer.print_table(t.table);
    first = false;
  }
  if (!report.verdicts.empty()) {
    os << "\nVerdicts:\n";
    for (const auto& v : report.verdicts) os << "  " << v << '\n';
  }
  os << '\n' << parameters_line(report) << '\n';
}

}  // namespace gpuclk::bench::nccl
