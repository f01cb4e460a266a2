#include "bench/p2p_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

namespace gpuclk::bench::p2p {

namespace out = output;

namespace {

bool is_latency(Figure f) { return info(f).latency; }

// B/s to GB/s, s to ns.
double shown(Figure f, double value) { return is_latency(f) ? value * 1e9 : value * 1e-9; }
std::string unit_of(Figure f) { return is_latency(f) ? "ns" : "GB/s"; }
int precision_of(Figure f) { return is_latency(f) ? 1 : 2; }

out::Value value_of(const FigureReport& f) {
  if (!f.value) return out::na();
  return out::number(shown(f.figure, *f.value), unit_of(f.figure), precision_of(f.figure));
}

out::Value peak_of(const FigureReport& f) {
  if (!f.peak) return out::na();
  return out::number(f.peak->bytes_per_second * 1e-9, "GB/s", 2);
}

out::Value percent_of(const FigureReport& f) {
  if (!f.fraction_of_peak) return out::na();
  return out::number(*f.fraction_of_peak * 100, "%", 1);
}

out::Value optional_int(const std::optional<int>& v) { return v ? out::integer(*v) : out::na(); }

out::Value optional_flag(const std::optional<bool>& v) { return v ? out::flag(*v) : out::na(); }

out::Node figure_node(const FigureReport& f) {
  out::Node n{std::string(info(f.figure).key), std::string(info(f.figure).label), {}, {}, false};
  n.add("nvbandwidth_test", "nvbandwidth test",
        out::text(std::string(info(f.figure).nvbandwidth_test)));
  n.add("value", "value", value_of(f));
  n.add("unit", "unit", out::text(unit_of(f.figure)));
  if (!f.skipped.empty()) n.add("skipped", "skipped", out::text(f.skipped));
  n.add("peak_gb_per_s", "peak", peak_of(f));
  n.add("peak_basis", "peak basis", f.peak ? out::text(f.peak->basis) : out::na());
  n.add("pct_of_peak", "of peak", percent_of(f));
  n.add("verified", "verified", optional_flag(f.verified));
  if (f.value) {
    auto& s = n.section("samples", "samples", true);
    for (double x : f.samples) {
      s.add("", "", out::number(shown(f.figure, x), unit_of(f.figure), precision_of(f.figure)));
    }
    n.add("spread", "spread", out::number(f.summary.spread * 100, "%", 2));
  }
  return n;
}

std::optional<std::string> link_text(const std::optional<gpu::PcieLink>& link) {
  if (!link) return std::nullopt;
  return pcie_text(*link);
}

out::Value text_or_na(const std::optional<std::string>& s) { return s ? out::text(*s) : out::na(); }

// "394.21 / 478.12 (82%)"; "812.4" for latency; the reason when not measured.
std::string cell_text(const FigureReport& f) {
  if (!f.value) return f.skipped.empty() ? "N/A" : f.skipped;
  std::string s = figure_text(f);
  if (f.peak) s += fmt::format(" / {:.2f}", f.peak->bytes_per_second * 1e-9);
  if (f.fraction_of_peak) s += fmt::format(" ({:.0f}%)", *f.fraction_of_peak * 100);
  if (f.verified && !*f.verified) s += " BAD DATA";
  return s;
}

const FigureReport* find(const std::vector<FigureReport>& figures, Figure f) {
  auto it = std::find_if(figures.begin(), figures.end(),
                         [&](const FigureReport& x) { return x.figure == f; });
  return it == figures.end() ? nullptr : &*it;
}

std::string node_text(const HostReport& h) {
  if (!h.numa_node) return "OS's choice";
  return fmt::format("{}{}", *h.numa_node, h.local ? " (local)" : " (remote)");
}

}  // namespace

std::string figure_text(const FigureReport& f) {
  if (!f.value) return "N/A";
  return fmt::format("{:.{}f}", shown(f.figure, *f.value), precision_of(f.figure));
}

out::Node p2p_tree(const P2pReport& r) {
  out::Node root{"bench_p2p", "bench p2p", {}, {}, false};
  root.add("format", "format", out::text(kP2pReportFormat));
  auto& params = root.section("parameters", "parameters");
  params.add("bytes_per_copy", "bytes per copy", out::integer((long long)r.options.bytes, "B"));
  params.add("copies_per_sample", "copies per sample", out::integer(r.options.copies_per_sample));
  params.add("warmup_copies", "warm-up copies", out::integer(r.options.warmup_copies));
  params.add("samples", "samples", out::integer(r.options.samples));
  params.add("latency_bytes", "latency buffer",
             out::integer((long long)r.options.latency_bytes, "B"));
  params.add("latency_accesses", "latency accesses", out::integer(r.options.latency_accesses));
  params.add("statistic", "statistic", out::text("median"));

  auto& gpus = root.section("gpus", "GPUs", true);
  for (const GpuLinks& g : r.gpus) {
    auto& n = gpus.section("", "");
    n.add("index", "index", out::integer(g.index));
    n.add("cuda_ordinal", "CUDA ordinal", out::integer(g.cuda_ordinal));
    n.add("name", "name", out::text(g.name));
    n.add("pci_bus_id", "bus id", out::text(g.bus_id));
    n.add("numa_node", "NUMA node", optional_int(g.numa_node));
    n.add("pcie_idle", "PCIe idle", text_or_na(link_text(g.pcie_idle)));
    n.add("pcie_loaded", "PCIe under load", text_or_na(link_text(g.pcie_loaded)));
    n.add("pcie_max", "PCIe max", text_or_na(link_text(g.pcie_max)));
    n.add("nvlinks", "NVLinks", out::integer(g.nvlinks));
    n.add("nvlinks_down", "NVLinks down", out::integer(g.nvlinks_down));
  }

  auto& peers = root.section("peer", "peer", true);
  for (const PairReport& p : r.pairs) {
    auto& n = peers.section("", "");
    n.add("gpu", "GPU", out::integer(p.gpu));
    n.add("peer", "peer", out::integer(p.peer));
    n.add("path", "path", out::text(p.path));
    n.add("peer_access", "peer access", out::flag(p.peer_access));
    auto& figures = n.section("figures", "figures");
    for (const FigureReport& f : p.figures) figures.children.push_back(figure_node(f));
    auto& verdicts = n.section("verdicts", "verdicts", true);
    for (const auto& v : p.verdicts) verdicts.add("", "", out::text(v));
  }
  if (!r.peer_skipped.empty()) root.add("peer_skipped", "peer", out::text(r.peer_skipped));

  auto& hosts = root.section("host", "host", true);
  for (const HostReport& h : r.hosts) {
    auto& n = hosts.section("", "");
    n.add("gpu", "GPU", out::integer(h.gpu));
    n.add("numa_node", "NUMA node", optional_int(h.numa_node));
    n.add("gpu_numa_node", "GPU NUMA node", optional_int(h.gpu_numa_node));
    n.add("local", "local", out::flag(h.local));
    auto& figures = n.section("figures", "figures");
    for (const FigureReport& f : h.figures) figures.children.push_back(figure_node(f));
    auto& verdicts = n.section("verdicts", "verdicts", true);
    for (const auto& v : h.verdicts) verdicts.add("", "", out::text(v));
  }
  if (!r.host_skipped.empty()) root.add("host_skipped", "host", out::text(r.host_skipped));
  return root;
}

out::Table p2p_rows(const P2pReport& r) {
  out::Table t;
  t.columns = {{"figure", "figure", true},
               {"nvbandwidth_test", "nvbandwidth test", true},
               {"gpu", "GPU"},
               {"peer", "peer"},
               {"numa_node", "NUMA node"},
               {"value", "value"},
               {"unit", "unit", true},
               {"peak", "peak", false, "GB/s"},
               {"pct_of_peak", "of peak", false, "%"},
               {"verified", "verified"},
               {"verdict", "verdict", true}};
  auto row = [&](const FigureReport& f, unsigned gpu, out::Value peer, out::Value node,
                 const std::vector<std::string>& verdicts) {
    out::Value value = value_of(f);
    value.unit.clear();  // one column holds GB/s and ns: the unit column says which
    out::Value peak = peak_of(f);
    peak.unit.clear();
    out::Value pct = percent_of(f);
    pct.unit.clear();
    t.rows.push_back({out::text(std::string(info(f.figure).key)),
                      out::text(std::string(info(f.figure).nvbandwidth_test)), out::integer(gpu),
                      std::move(peer), std::move(node), std::move(value),
                      out::text(unit_of(f.figure)), std::move(peak), std::move(pct),
                      optional_flag(f.verified),
                      verdicts.empty() ? out::text("") : out::text(verdicts.front())});
  };
  for (const PairReport& p : r.pairs) {
    for (const FigureReport& f : p.figures)
      row(f, p.gpu, out::integer(p.peer), out::na(), p.verdicts);
  }
  for (const HostReport& h : r.hosts) {
    for (const FigureReport& f : h.figures)
      row(f, h.gpu, out::na(), optional_int(h.numa_node), h.verdicts);
  }
  return t;
}

std::vector<TitledTable> p2p_tables(const P2pReport& r) {
  std::vector<TitledTable> tables;
  if (!r.pairs.empty()) {
    std::vector<unsigned> gpus;
    for (const PairReport& p : r.pairs) {
      for (unsigned g : {p.gpu, p.peer})
        if (std::find(gpus.begin(), gpus.end(), g) == gpus.end()) gpus.push_back(g);
    }
    std::sort(gpus.begin(), gpus.end());
    for (const FigureInfo& fi : all_figures()) {
      if (!fi.peer) continue;
      TitledTable tt;
      const std::string direction = fi.figure == Figure::ce_write || fi.figure == Figure::sm_write
                                        ? "writes to"
                                    : fi.bidirectional ? "and, at once,"
                                    : fi.latency       ? "loads from"
                                                       : "reads from";
      tt.title =
          fi.latency
              ? fmt::format("{}: GPU(row) {} GPU(column) memory, ns per access", fi.label,
                            direction)
              : fmt::format("{}: GPU(row) {} GPU(column){}, GB/s measured / peak (share)", fi.label,
                            direction, fi.bidirectional ? ", both directions summed" : "");
      tt.table.columns.push_back({"gpu", "", true});
      for (unsigned g : gpus) tt.table.columns.push_back({fmt::format("GPU{}", g), "", false});
      for (unsigned a : gpus) {
        std::vector<out::Value> row{out::text(fmt::format("GPU{}", a))};
        for (unsigned b : gpus) {
          if (a == b) {
            row.push_back(out::text("X"));
            continue;
          }
          auto it = std::find_if(r.pairs.begin(), r.pairs.end(),
                                 [&](const PairReport& p) { return p.gpu == a && p.peer == b; });
          const FigureReport* f = it == r.pairs.end() ? nullptr : find(it->figures, fi.figure);
          row.push_back(out::text(f ? cell_text(*f) : "N/A"));
        }
        tt.table.rows.push_back(std::move(row));
      }
      tables.push_back(std::move(tt));
    }
  }
  if (!r.hosts.empty()) {
    TitledTable tt;
    tt.title = "Host <-> GPU, pinned host memory, copy engine: GB/s measured / peak (share)";
    tt.table.columns = {{"gpu", "GPU", true},         {"numa_node", "host NUMA node", true},
                        {"h2d", "host->device"},      {"d2h", "device->host"},
                        {"local_copy", "local copy"}, {"pcie", "PCIe link", true},
                        {"verdict", "verdict", true}};
    for (const HostReport& h : r.hosts) {
      const GpuLinks* g = nullptr;
      for (const GpuLinks& x : r.gpus)
        if (x.index == h.gpu) g = &x;
      std::string link = "N/A";
      if (g && g->pcie_running()) {
        link = pcie_text(*g->pcie_running());
        if (g->pcie_max) link += fmt::format(" (max {})", pcie_text(*g->pcie_max));
      }
      auto cell = [&](Figure f) {
        const FigureReport* x = find(h.figures, f);
        return out::text(x ? cell_text(*x) : "-");
      };
      tt.table.rows.push_back({out::text(fmt::format("GPU{}", h.gpu)), out::text(node_text(h)),
                               cell(Figure::host_to_device), cell(Figure::device_to_host),
                               cell(Figure::local_copy), out::text(link),
                               out::text(h.verdicts.empty() ? "ok" : h.verdicts.front())});
    }
    tables.push_back(std::move(tt));
  }
  return tables;
}

std::vector<std::string> p2p_verdict_lines(const P2pReport& r) {
  std::vector<std::string> lines;
  for (const PairReport& p : r.pairs) {
    for (const auto& v : p.verdicts)
      lines.push_back(fmt::format("GPU{} -> GPU{}: {}", p.gpu, p.peer, v));
  }
  for (const HostReport& h : r.hosts) {
    for (const auto& v : h.verdicts) {
      lines.push_back(fmt::format("GPU{}, host node {}: {}", h.gpu,
                                  h.numa_node ? std::to_string(*h.numa_node) : "?", v));
    }
  }
  return lines;
}

std::string progress_text(Figure figure, int device, int peer, int sample, int samples) {
  const std::string where =
      peer < 0 ? fmt::format("cuda{}", device) : fmt::format("cuda{} <-> cuda{}", device, peer);
  return fmt::format("bench p2p | {} | {} | sample {}/{}", where, info(figure).label, sample + 1,
                     samples);
}

void print_text(std::ostream& os, output::Printer& printer, const P2pReport& report) {
  bool first = true;
  if (!report.peer_skipped.empty()) {
    os << "Peer: " << report.peer_skipped << "\n";
    first = false;
  }
  for (const auto& t : p2p_tables(report)) {
    os << (first ? "" : "\n") << t.title << "\n";
    os.flush();
    printer.print_table(t.table);
    first = false;
  }
  const auto verdicts = p2p_verdict_lines(report);
  if (!verdicts.empty()) {
    os << "\nVerdicts:\n";
    for (const auto& v : verdicts) os << "  " << v << '\n';
  }
  os << fmt::format(
      "\n{} MiB per copy, {} copies per sample timed behind a spin kernel (+{} warm-up), median "
      "of {} samples, as nvbandwidth v0.8 measures (docs/bench.md#p2p)\n",
      report.options.bytes >> 20, report.options.copies_per_sample, report.options.warmup_copies,
      report.options.samples);
}

}  // namespace gpuclk::bench::p2p
