// `gpuclk top`: every GPU live in the terminal (src/tui draws it). Parses the options, picks
// the feed (the service when it answers, else top's own sampler), and runs the key loop.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <memory>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/journal_facts.h"
#include "gpu/simulator.h"
#include "serve/client.h"
#include "telemetry/interval.h"
#include "tui/sampler_feed.h"
#include "tui/screen.h"
#include "tui/service_feed.h"
#include "tui/terminal.h"
#include "util/error.h"

namespace gpuclk::cli {
namespace {

using namespace std::chrono_literals;

struct TopOptions {
  std::string delay = "1";
};

std::string interval_text(telemetry::Duration d) {
  if (d < 1s)
    return fmt::format("{} ms", std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  return fmt::format("{:g} s", std::chrono::duration<double>(d).count());
}

// Applies a key to the view; false when it asks to quit.
bool apply_key(const tui::Key& key, const tui::Frame& frame, tui::View& v) {
  const auto n = frame.gpus.size();
  if (key.kind == tui::Key::character && (key.ch == 'q' || key.ch == 'Q')) return false;
  if (v.help && key.kind != tui::Key::none && key.kind != tui::Key::resize) {
    v.help = false;  // any key closes the help
    return true;
  }
  switch (key.kind) {
    case tui::Key::up:
    case tui::Key::left:
      if (v.selected > 0) --v.selected;
      return true;
    case tui::Key::down:
    case tui::Key::right:
      if (v.selected + 1 < n) ++v.selected;
      return true;
    case tui::Key::character:
      break;
    default:
      return true;
  }
  const int c = key.ch;
  if (c == 'k' && v.selected > 0) --v.selected;
  if (c == 'j' && v.selected + 1 < n) ++v.selected;
  if (c == '\t' && n > 0) v.selected = (v.selected + 1) % n;
  if (c >= '0' && c <= '9') {
    for (std::size_t i = 0; i < n; ++i)
      if (frame.gpus[i].facts.index == static_cast<unsigned>(c - '0')) v.selected = i;
  }
  if (c == 'm')
    v.metric = static_cast<tui::Metric>((static_cast<int>(v.metric) + 1) % tui::kMetricCount);
  if (c == 's')
    v.order =
        static_cast<tui::ProcessOrder>((static_cast<int>(v.order) + 1) % tui::kProcessOrderCount);
  if (c == 'h')
    v.history_minutes = v.history_minutes == 1    ? 5
                        : v.history_minutes == 5  ? 15
                        : v.history_minutes == 15 ? 60
                                                  : 1;
  if (c == 'p' || c == ' ') v.paused = !v.paused;
  if (c == '?') v.help = true;
  return true;
}

int run_top(Context& ctx, const TopOptions& o) {
  const auto interval = telemetry::duration_option(o.delay, "-d", 0.1, 3600, "1, 0.5, 100ms or 1m");
  tui::Heading heading;
  heading.interval = interval_text(interval);
  std::unique_ptr<tui::Feed> feed;
  auto journal_facts = [&ctx](std::vector<rules::GpuWindow>& gpus) {
    add_journal_facts(ctx, gpus);
  };
  std::size_t count = 0;
  std::string simulated;
  std::string frozen;  // a simulated node whose time stands still or runs fast
  if (const auto* hello = ctx.service_hello()) {
    // The service's sampler and history; this process loads no NVML.
    auto positions = ctx.select_from(hello->gpus);
    count = positions.size();
    simulated = hello->simulated;
    // Context checked that this is the node asked for (hello carries the scenario); the
    // feed's requests go over a connection of its own.
    auto client = serve::Client::connect(ctx.service_socket());
    if (!client)
      throw gpuclk::Error(ExitCode::other, "the service (gpuclk serve) stopped answering");
    feed = std::make_unique<tui::ServiceFeed>(std::move(client), hello->gpus, std::move(positions),
                                              interval, journal_facts);
  } else {
    const auto devices = ctx.selected();
    count = devices.size();
    if (ctx.simulated()) {
      simulated = ctx.options.sim.empty() ? "default" : ctx.options.sim;
      // The heading has one line: the note in short, "time frozen at 10 s" (status and doctor
      // say it in full).
      const auto note = gpu::simulator_time_note(ctx.nvml());
      if (!note.empty()) frozen = ", " + note.substr(0, note.find(" ("));
    }
    feed = std::make_unique<tui::SamplerFeed>(ctx.devices(), devices, ctx.clock(), interval,
                                              journal_facts);
  }
  heading.node = fmt::format("{} GPU{}", count, count == 1 ? "" : "s");
  // A scenario file shows as its name: the heading has one line, and a path would push the
  // source (sampler or service) off it.
  if (!simulated.empty())
    heading.node += ", simulated: " + std::filesystem::path(simulated).stem().string() + frozen;
  heading.source = feed->source();

  tui::Terminal term;  // from here on, the destructor restores the terminal
  tui::View view;
  tui::Frame frame;
  auto next = std::chrono::steady_clock::now();
  bool dirty = true;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (!view.paused && now >= next) {
      const auto span = std::chrono::duration_cast<telemetry::Duration>(
          std::chrono::minutes(view.history_minutes));
      frame = feed->frame(span, view.selected);
      next = now + interval;
      dirty = true;
    }
    if (!frame.gpus.empty()) view.selected = std::min(view.selected, frame.gpus.size() - 1);
    if (dirty) tui::draw(term, frame, view, heading);
    dirty = false;
    const auto wait = view.paused ? 1000ms
                                  : std::chrono::duration_cast<std::chrono::milliseconds>(
                                        next - std::chrono::steady_clock::now());
    const auto key = term.key(std::clamp<std::chrono::milliseconds>(wait, 0ms, 1000ms));
    if (tui::Terminal::stop_requested()) return 128 + tui::Terminal::stop_signal();
    if (key.kind == tui::Key::none) continue;
    if (!apply_key(key, frame, view)) return 0;
    dirty = true;
  }
}

}  // namespace

void add_top_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<TopOptions>();
  auto* sub = app.add_subcommand(
      "top",
      "Every GPU live in the terminal: clocks and power against their limits, why each is held "
      "back, history, processes, findings (keys: ? help, q quit)");
  sub->add_option("-d,--delay", opts->delay,
                  "refresh interval: seconds (1, 0.5) or 100ms; from 100ms (default 1)");
  sub->callback([&ctx, opts] { ctx.run = [&ctx, opts] { return run_top(ctx, *opts); }; });
}

}  // namespace gpuclk::cli
