#include "tui/screen.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "gpu/clock_reasons.h"
#include "tui/screen_cells.h"

namespace gpuclk::tui {
namespace {

using namespace cells;
using gpu::ClockReasons;
using telemetry::FastSample;

class Layout {
 public:
  Layout(Terminal& term, const Frame& frame, const View& view, const Heading& heading)
      : t_(term), f_(frame), v_(view), h_(heading), rows_(term.rows()), cols_(term.columns()) {}

  void draw() {
    header();
    if (f_.gpus.empty()) {
      t_.text(2, 0, "no GPU selected");
      return;
    }
    const int n = static_cast<int>(f_.gpus.size());
    int y = 1;
    const bool full = 1 + 3 * n + 13 <= rows_;
    if (full) {
      for (int i = 0; i < n; ++i) y = gpu_block(y, static_cast<std::size_t>(i));
    } else {
      y = compact_list(y);
    }
    detail(y, !full);
    if (v_.help) help();
  }

 private:
  void header() {
    // The keys' hint always shows, and where the numbers come from and how often; the node's
    // description is what gives way: cut with "…", or left out below 8 columns. (It was cut
    // from the end, so a frozen simulated node's note left "· own ? help" at 80 columns.)
    const std::string right = std::string(v_.paused ? "PAUSED  " : "") + "? help  q quit";
    const int x = std::max(0, cols_ - static_cast<int>(right.size()));
    const std::string source = h_.source + ", every " + h_.interval;
    const int room = x - 1 - columns_of("gpuclk top ·  · " + source);
    std::string left = "gpuclk top · " + source;
    // Its last parts go first ("…, time frozen at 10 s"), then its end.
    std::string node = h_.node;
    for (std::size_t comma;
         columns_of(node) > room && (comma = node.rfind(", ")) != std::string::npos;)
      node.erase(comma);
    if (room >= 8) left = "gpuclk top · " + fit(node, room) + " · " + source;
    t_.text(0, 0, left, std::max(0, x - 1), Tone::accent, true);
    t_.text(0, x, right, -1, v_.paused ? Tone::warn : Tone::plain, v_.paused);
  }

  // Three lines: identity and load; SM clock bar; power bar with the reasons.
  int gpu_block(int y, std::size_t i) {
    const auto& g = f_.gpus[i];
    const auto* s = g.fast ? &*g.fast : nullptr;
    const bool selected = i == v_.selected;
    t_.text(y, 0, fmt::format("{:>2}", g.facts.index), 2, Tone::plain, true, selected);
    std::string l1 = fmt::format(" {}", g.facts.name);
    if (s && s->pstate) l1 += fmt::format("  P{}", *s->pstate);
    t_.text(y, 2, l1, cols_ - 2, Tone::plain, true);
    int x = 2 + static_cast<int>(l1.size()) + 2;
    std::string temp = fmt::format("{}/{} C", s ? celsius(s->gpu_temperature) : "N/A",
                                   celsius(g.facts.slowdown_temperature));
    t_.text(y, x, temp, -1, temperature_tone(g));
    x += static_cast<int>(temp.size()) + 2;
    std::string load = fmt::format("util {}", s ? percent(s->gpu_utilization) : "N/A");
    // GPM only whole: a narrow screen would cut the DRAM figure; the detail below shows it then.
    const std::string gpm = gpm_text(g);
    if (!gpm.empty() && x + static_cast<int>(load.size() + 2 + gpm.size()) <= cols_)
      load += "  " + gpm;
    else if (!gpm.empty() && selected)
      gpm_in_detail_ = true;
    t_.text(y, x, load);

    const int bw = std::clamp(cols_ - 60, 10, 50);
    const double sm = fraction(s ? s->sm_clock : std::nullopt, g.facts.max_sm_clock);
    t_.text(y + 1, 3, "SM");
    t_.bar(y + 1, 7, bw, sm, sm_mark(g), load_tone(sm));
    x = 7 + bw + 1;
    std::string clocks = fmt::format("{:>4}/{} MHz  mem {}/{} MHz", s ? mhz(s->sm_clock) : "N/A",
                                     mhz(g.facts.max_sm_clock), s ? mhz(s->memory_clock) : "N/A",
                                     mhz(g.max_memory_clock));
    t_.text(y + 1, x, clocks);
    x += static_cast<int>(clocks.size()) + 2;
    t_.text(y + 1, x,
            fmt::format("VRAM {}/{} GiB", s ? gib(s->memory_used) : "N/A", gib(g.memory_total)));

    const double power = fraction(s ? s->power : std::nullopt, g.facts.power_limit);
    t_.text(y + 2, 3, "Pwr");
    t_.bar(y + 2, 7, bw, power, std::nullopt, load_tone(power));
    x = 7 + bw + 1;
    std::string pw =
        fmt::format("{:>4}/{} W", s ? watts(s->power) : "N/A", watts(g.facts.power_limit));
    t_.text(y + 2, x, pw);
    x += static_cast<int>(pw.size()) + 2;
    t_.text(y + 2, x, "held back: " + reasons_text(g), -1, reasons_tone(g));
    return y + 3;
  }

  // A header and one row per GPU (scrolled to keep the selected one visible).
  int compact_list(int y) {
    const int n = static_cast<int>(f_.gpus.size());
    // The detail keeps at least 4 lines (its title, settings, a process, a finding): 16 GPUs
    // fit 80x24.
    const int room = std::max(1, std::min(n, rows_ - y - 1 - 4));
    // The reasons keep at least 22 columns; the bars take what is left, up to 24 cells.
    const bool wide = cols_ >= 120;
    const int bw = std::clamp((cols_ - 58 - (wide ? 26 : 0)) / 2, 6, 24);
    const int x_sm = 4, x_pw = x_sm + bw + 11, x_temp = x_pw + bw + 10, x_util = x_temp + 5;
    const int x_gpm = x_util + 6, x_why = wide ? x_gpm + 26 : x_gpm;
    t_.text(y, 0, "GPU", 3, Tone::plain, true);
    t_.text(y, x_sm, "SM clock MHz", -1, Tone::plain, true);
    t_.text(y, x_pw, "Power W", -1, Tone::plain, true);
    t_.text(y, x_temp, "Temp", -1, Tone::plain, true);
    t_.text(y, x_util, "Util", -1, Tone::plain, true);
    if (wide) t_.text(y, x_gpm, "SM  Tensor DRAM VRAM GiB", -1, Tone::plain, true);
    t_.text(y, x_why, "Held back by", -1, Tone::plain, true);
    ++y;
    int first = 0;
    const int sel = static_cast<int>(v_.selected);
    if (sel >= room) first = sel - room + 1;
    for (int r = 0; r < room && first + r < n; ++r) {
      const int position = first + r;
      const auto i = static_cast<std::size_t>(position);
      const auto& g = f_.gpus[i];
      const auto* s = g.fast ? &*g.fast : nullptr;
      const int row = y + r;
      t_.text(row, 0, fmt::format("{:>3}", g.facts.index), 3, Tone::plain, true, i == v_.selected);
      const double sm = fraction(s ? s->sm_clock : std::nullopt, g.facts.max_sm_clock);
      t_.bar(row, x_sm, bw, sm, sm_mark(g), load_tone(sm));
      t_.text(row, x_sm + bw + 1,
              fmt::format("{:>4}/{:<4}", s ? mhz(s->sm_clock) : "N/A", mhz(g.facts.max_sm_clock)));
      const double power = fraction(s ? s->power : std::nullopt, g.facts.power_limit);
      t_.bar(row, x_pw, bw, power, std::nullopt, load_tone(power));
      t_.text(row, x_pw + bw + 1,
              fmt::format("{:>3}/{:<3}", s ? watts(s->power) : "N/A", watts(g.facts.power_limit)));
      t_.text(row, x_temp, (s ? celsius(s->gpu_temperature) : "N/A") + "C", 4, temperature_tone(g));
      t_.text(row, x_util, fmt::format("{:>4}", s ? percent(s->gpu_utilization) : "N/A"));
      if (wide) {
        const auto& gpm = g.slow ? g.slow->gpm : std::nullopt;
        t_.text(row, x_gpm,
                fmt::format("{:>4} {:>5} {:>4} {:>4}/{}", gpm ? percent(gpm->sm) : "-",
                            gpm ? percent(gpm->tensor) : "-", gpm ? percent(gpm->dram) : "-",
                            s ? gib(s->memory_used) : "N/A", gib(g.memory_total)));
      }
      t_.text(row, x_why, reasons_text(g), cols_ - x_why, reasons_tone(g));
    }
    if (first + room < n)
      t_.text(y + room - 1, cols_ - 12, fmt::format("(+{} more)", n - first - room), 12,
              Tone::accent);
    return y + room;
  }

  // The selected GPU: settings, history graphs, processes; then the node's findings.
  void detail(int y, bool compact) {
    const auto& g = f_.gpus[std::min(v_.selected, f_.gpus.size() - 1)];
    const auto* s = g.fast ? &*g.fast : nullptr;
    const int bottom = rows_;  // exclusive
    if (y >= bottom) return;
    t_.hline(y, 0, cols_);
    t_.text(y, 2,
            fmt::format(" GPU {} {} · history {} min · graph: {} (m) ", g.facts.index, g.facts.name,
                        v_.history_minutes, to_string(v_.metric)),
            cols_ - 4, Tone::accent, true);
    ++y;

    // Settings, and in the compact layout what the rows had no room for.
    const auto& f = g.facts;
    std::string settings = fmt::format(
        "persistence {} · app clocks {}/{} MHz · locked gpu {} mem {} · limit {} W",
        f.persistence_mode ? (*f.persistence_mode ? "on" : "off") : "N/A", mhz(f.app_sm_clock),
        mhz(f.app_memory_clock), f.locked_gpu_clocks.empty() ? "-" : f.locked_gpu_clocks,
        f.locked_memory_clocks.empty() ? "-" : f.locked_memory_clocks, watts(f.power_limit));
    if (f.default_power_limit && f.power_limit &&
        f.default_power_limit->value() != f.power_limit->value())
      settings += fmt::format(" (default {})", watts(f.default_power_limit));
    if (y < bottom) t_.text(y++, 1, settings, cols_ - 1);
    if (compact && y < bottom) {
      std::string more = fmt::format("mem clock {}/{} MHz · VRAM {}/{} GiB",
                                     s ? mhz(s->memory_clock) : "N/A", mhz(g.max_memory_clock),
                                     s ? gib(s->memory_used) : "N/A", gib(g.memory_total));
      if (s && s->pstate) more = fmt::format("P{} · ", *s->pstate) + more;
      // The GPM figures on the same line when they fit whole, else on a line of their own (at
      // 80 columns the DRAM figure was cut off).
      const std::string gpm = gpm_text(g);
      const auto width = [](const std::string& text) {
        int cells = 0;
        for (unsigned char c : text) cells += (c & 0xC0) != 0x80;
        return cells;
      };
      if (!gpm.empty() && width(more + " · GPM " + gpm) <= cols_ - 1) {
        more += " · GPM " + gpm;
        t_.text(y++, 1, more, cols_ - 1);
      } else {
        t_.text(y++, 1, more, cols_ - 1);
        if (!gpm.empty() && y < bottom) t_.text(y++, 1, "GPM " + gpm, cols_ - 1);
      }
    } else if (gpm_in_detail_ && y < bottom) {
      t_.text(y++, 1, "GPM " + gpm_text(g), cols_ - 1);
    }

    // The rest: graphs, processes, findings.
    const int rem = bottom - y;
    if (rem <= 0) return;
    const int finding_lines =
        f_.findings.empty() ? 1
                            : std::min(static_cast<int>(f_.findings.size()), std::max(1, rem / 6));
    const int wanted_procs = std::max(1, static_cast<int>(g.processes.size()));
    int process_lines = 1 + std::min(wanted_procs, std::max(1, rem / 5));
    int graph_rows = std::min(8, (rem - finding_lines - process_lines) / 3);
    if (graph_rows < 1) {
      graph_rows = 0;
      process_lines = std::max(0, std::min(1 + wanted_procs, rem - finding_lines));
    } else {
      const int spare = rem - finding_lines - process_lines - 3 * graph_rows;
      process_lines = std::min(1 + wanted_procs, process_lines + spare);
    }
    if (graph_rows > 0) y = graphs(y, g, graph_rows);
    y = processes(y, g, process_lines);
    findings(y, bottom);  // and whatever lines are left
  }

  int graphs(int y, const GpuFrame& g, int height) {
    const auto* s = g.fast ? &*g.fast : nullptr;
    std::vector<Series> series(3);
    series[0] = {"SM clock", (s ? mhz(s->sm_clock) : "N/A") + " MHz",
                 g.facts.max_sm_clock ? g.facts.max_sm_clock->value() : 1,
                 [](const FastSample& f) {
                   return f.sm_clock ? std::optional(f.sm_clock->value()) : std::nullopt;
                 },
                 Tone::good};
    series[1] = {"power", (s ? watts(s->power) : "N/A") + " W",
                 g.facts.power_limit ? g.facts.power_limit->value() : 1,
                 [](const FastSample& f) {
                   return f.power ? std::optional(f.power->value()) : std::nullopt;
                 },
                 Tone::warn};
    series[0].scale = mhz(g.facts.max_sm_clock);
    series[1].scale = watts(g.facts.power_limit);
    series[2] = metric_series(g, v_.metric);
    // The y-scale between the labels and the graph: the top of the scale on the graph's first
    // row, 0 on its last (a graph one row tall shows the top only).
    const int label = 16;
    const int scale = 6;  // 5 cells right-aligned, then the axis
    const int width = std::max(1, cols_ - label - scale - 1);
    const auto span =
        std::chrono::duration_cast<telemetry::Duration>(std::chrono::minutes(v_.history_minutes));
    for (const auto& sr : series) {
      t_.text(y, 1, sr.label, label - 1, Tone::plain, true);
      if (height >= 2)
        t_.text(y + 1, 1, sr.latest, label - 1);
      else
        t_.text(y, 1, sr.label + " " + sr.latest, label - 1, Tone::plain, true);
      for (int row = 0; row < height; ++row) {
        const bool top = row == 0, bottom = row == height - 1 && height >= 2;
        const std::string number = top ? sr.scale : bottom ? "0" : "";
        t_.text(y + row, label, fmt::format("{:>5}", number.substr(0, 5)), 5, Tone::plain);
        t_.text(y + row, label + 5, t_.unicode() ? (top || bottom ? "┤" : "│") : "|", 1);
      }
      t_.graph(y, label + scale, height, bins(g.history, f_.time, span, width, sr), sr.tone);
      y += height;
    }
    return y;
  }

  int processes(int y, const GpuFrame& g, int lines) {
    if (lines <= 0) return y;
    t_.text(y, 1,
            fmt::format("{:>7} {:<10} {:>9} {:>5}  COMMAND   (sorted by {}: s)", "PID", "USER",
                        "GPU MEM", "CPU%", to_string(v_.order)),
            cols_ - 1, Tone::plain, true);
    ++y;
    auto rows = g.processes;
    std::stable_sort(rows.begin(), rows.end(), [&](const ProcessRow& a, const ProcessRow& b) {
      switch (v_.order) {
        case ProcessOrder::gpu_memory:
          return (a.gpu_memory ? a.gpu_memory->value() : -1) >
                 (b.gpu_memory ? b.gpu_memory->value() : -1);
        case ProcessOrder::cpu:
          return a.cpu_percent.value_or(-1) > b.cpu_percent.value_or(-1);
        case ProcessOrder::pid:
          return a.pid < b.pid;
      }
      return false;
    });
    if (rows.empty() && lines > 1) t_.text(y++, 1, "(no processes on this GPU)");
    for (std::size_t i = 0; i < rows.size() && static_cast<int>(i) + 1 < lines; ++i) {
      const auto& p = rows[i];
      t_.text(y++, 1,
              fmt::format("{:>7} {:<10} {:>9} {:>5}  {}", p.pid,
                          p.user.empty() ? "-" : p.user.substr(0, 10), mib(p.gpu_memory),
                          p.cpu_percent ? fmt::format("{:.0f}", *p.cpu_percent) : "-",
                          p.command.empty() ? "?" : p.command),
              cols_ - 1);
    }
    return y;
  }

  void findings(int y, int bottom) {
    if (y >= bottom) return;
    if (f_.findings.empty()) {
      t_.text(y, 1, "findings: none (the doctor's rules over the last minute)", cols_ - 1,
              Tone::good);
      return;
    }
    for (const auto& fi : f_.findings) {
      if (y >= bottom) break;
      const Tone tone = fi.severity == rules::Severity::critical  ? Tone::bad
                        : fi.severity == rules::Severity::warning ? Tone::warn
                                                                  : Tone::plain;
      t_.text(y, 1, std::string(rules::to_string(fi.severity)), 8, tone, true);
      t_.text(y, 10, fi.summary, cols_ - 10);
      ++y;
    }
  }

  void help() {
    static const char* const lines[] = {
        "gpuclk top: keys",
        "",
        "up/down, j/k, 0-9   select a GPU",
        "m                   switch the third graph's metric",
        "h                   history span: 1, 5, 15, 60 min",
        "s                   sort processes: GPU memory, CPU, pid",
        "p or space          pause / resume",
        "?                   this help (any key closes it)",
        "q                   quit",
        "",
        "SM bar: clock / max, | = application clock or lock",
        "Power bar: draw / limit. Held back: clock event reasons",
    };
    const int h = static_cast<int>(std::size(lines)) + 2;
    const int w = std::min(cols_, 60);
    const int y = std::max(0, (rows_ - h) / 2), x = std::max(0, (cols_ - w) / 2);
    t_.box(y, x, h, w);
    for (int i = 0; i < static_cast<int>(std::size(lines)); ++i)
      t_.text(y + 1 + i, x + 2, lines[i], w - 4, Tone::plain, i == 0);
  }

  // "SM 52% tensor 40% DRAM 10%" (GPM activity); "" without GPM.
  static std::string gpm_text(const GpuFrame& g) {
    if (!g.slow || !g.slow->gpm) return {};
    return fmt::format("SM {} tensor {} DRAM {}", percent(g.slow->gpm->sm),
                       percent(g.slow->gpm->tensor), percent(g.slow->gpm->dram));
  }

  Terminal& t_;
  const Frame& f_;
  const View& v_;
  const Heading& h_;
  int rows_, cols_;
  bool gpm_in_detail_ = false;  // the selected GPU's GPM figures did not fit its block's line
};

}  // namespace

std::string_view to_string(Metric m) {
  switch (m) {
    case Metric::temperature:
      return "temperature";
    case Metric::gpu_utilization:
      return "utilization";
    case Metric::memory_clock:
      return "memory clock";
    case Metric::memory_used:
      return "memory used";
    case Metric::memory_temperature:
      return "memory temperature";
  }
  return "";
}

std::string_view to_string(ProcessOrder o) {
  switch (o) {
    case ProcessOrder::gpu_memory:
      return "GPU memory";
    case ProcessOrder::cpu:
      return "CPU";
    case ProcessOrder::pid:
      return "pid";
  }
  return "";
}

std::string reasons_in_words(std::uint64_t bits) {
  static const std::pair<std::uint64_t, const char*> words[] = {
      {ClockReasons::sw_power_cap, "power cap"},
      {ClockReasons::hw_slowdown, "HW slowdown"},
      {ClockReasons::hw_thermal_slowdown, "HW thermal"},
      {ClockReasons::sw_thermal_slowdown, "SW thermal"},
      {ClockReasons::hw_power_brake_slowdown, "power brake"},
      {ClockReasons::sync_boost, "sync boost"},
      {ClockReasons::applications_clocks_setting, "app clocks"},
      {ClockReasons::display_clock_setting, "display clock"},
      {ClockReasons::gpu_idle, "idle"},
  };
  std::string out;
  std::uint64_t known = 0;
  for (const auto& [bit, word] : words) {
    known |= bit;
    if ((bits & bit) == 0) continue;
    out += (out.empty() ? "" : ", ") + std::string(word);
  }
  if (bits & ~known) out += out.empty() ? "other" : ", other";
  return out;
}

void draw(Terminal& term, const Frame& frame, const View& view, const Heading& heading) {
  term.begin_frame();
  Layout(term, frame, view, heading).draw();
  term.end_frame();
}

}  // namespace gpuclk::tui
