// Top's screen: lays a Frame out on the terminal. Fits 80×24 and uses more: a block of three
// lines per GPU when there is room, else a compact row each (8 and 16 GPUs); below, the selected
// GPU's settings, history graphs (SM clock, power, one chosen metric) and processes; at the
// bottom the node's findings, one line each. Keys change the View (cmd_top.cpp reads them).
#pragma once

#include <string>
#include <string_view>

#include "tui/feed.h"
#include "tui/terminal.h"

namespace gpuclk::tui {

// The third history graph (key m cycles).
enum class Metric { temperature, gpu_utilization, memory_clock, memory_used, memory_temperature };
inline constexpr int kMetricCount = 5;
std::string_view to_string(Metric m);  // "temperature", "utilization", ...

// The process table's order (key s cycles).
enum class ProcessOrder { gpu_memory, cpu, pid };
inline constexpr int kProcessOrderCount = 3;
std::string_view to_string(ProcessOrder o);  // "GPU memory", "CPU", "pid"

struct View {
  std::size_t selected = 0;  // position in Frame::gpus
  Metric metric = Metric::temperature;
  ProcessOrder order = ProcessOrder::gpu_memory;
  bool paused = false;
  bool help = false;
  int history_minutes = 5;  // the graphs' span (key h cycles 1, 5, 15, 60)
};

// What the header says about the node and the feed.
struct Heading {
  std::string node;      // "8 GPUs, simulated: 8xh100"
  std::string source;    // "own sampler" / "gpuclk serve"
  std::string interval;  // "1 s", "100 ms"
};

void draw(Terminal& term, const Frame& frame, const View& view, const Heading& heading);

// Short words for the active clock event reasons ("power cap, HW thermal"); "" when none.
std::string reasons_in_words(std::uint64_t bits);

}  // namespace gpuclk::tui
