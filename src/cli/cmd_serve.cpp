// `gpuclk serve`: the resident node service (src/serve): one sampler and its history, the Unix
// socket every read command asks first, and /metrics for Prometheus. Runs until SIGTERM/SIGINT.
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdlib>
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/service_views.h"
#include "serve/http.h"
#include "serve/notify.h"
#include "serve/protocol.h"
#include "serve/service.h"
#include "serve/socket_server.h"
#include "telemetry/interval.h"
#include "util/error.h"

namespace gpuclk::cli {
namespace {

struct ServeOptions {
  std::string listen = "127.0.0.1:9400";
  std::string interval = "100ms";
  std::string history = "1h";
};

// "3600", "3600s", "90m", "1h": at least a minute, at most a week.
telemetry::Duration parse_history(const std::string& text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 0;
  const double seconds = value * scale;
  if (ec != std::errc() || scale == 0 || seconds < 60 || seconds > 7 * 86400)
    throw bad_argument(fmt::format("bad --history '{}'", text),
                       "give a duration from 60s to 168h, e.g. 3600s, 90m, 1h");
  return std::chrono::duration_cast<telemetry::Duration>(std::chrono::duration<double>(seconds));
}

int run_serve(Context& ctx, const ServeOptions& o) {
  const auto interval = telemetry::parse_interval(o.interval);
  if (!interval)
    throw bad_argument(fmt::format("bad --interval '{}'", o.interval),
                       "give seconds or milliseconds from 10ms to 24h, e.g. 100ms, 1s");
  serve::ServiceOptions so;
  so.interval = *interval;
  so.history = parse_history(o.history);

  // SIGINT/SIGTERM are blocked in every thread (the ones started below inherit the mask); this
  // thread waits for them and shuts down in order.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto& devices = ctx.devices();
  if (ctx.simulated()) {
    so.simulated = ctx.options.sim.empty() ? "default" : ctx.options.sim;
    if (const char* state = std::getenv("GPUCLK_SIM_STATE")) so.sim_state = state;
  }
  // The socket first: a second service on the same path stops here, before touching a GPU.
  const auto socket_path = serve::socket_path(ctx.options.socket);
  std::unique_ptr<serve::Service> service;
  serve::SocketServer socket(socket_path, [&service](std::string_view line, const serve::Peer& p) {
    auto request = nlohmann::json::parse(line, nullptr, false);
    if (request.is_discarded())
      return serve::error_response("malformed request: not JSON",
                                   static_cast<int>(ExitCode::bad_argument))
          .dump();
    return service->handle(request, p).dump();
  });
  auto views = service_views(ctx);
  // --govern POLICY (src/govern) will run here, on the service's sampler.
  std::unique_ptr<serve::HttpExporter> http;
  service = std::make_unique<serve::Service>(devices, ctx.clock(), so, std::move(views));
  service->start();
  if (o.listen != "off") {
    http = std::make_unique<serve::HttpExporter>(*service, o.listen);
    service->set_http_address(http->address());
  }
  socket.start();

  const auto status = fmt::format(
      "{} GPUs{}, sampling every {} ms; socket {}; {}", devices.size(),
      so.simulated.empty() ? "" : " (simulated: " + so.simulated + ")",
      std::chrono::duration_cast<std::chrono::milliseconds>(so.interval).count(), socket_path,
      http ? "metrics http://" + http->address() + "/metrics" : std::string("no HTTP"));
  std::cerr << "gpuclk serve: " << status << std::endl;
  serve::notify_ready(status);

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  serve::notify_stopping();
  std::cerr << "gpuclk serve: " << (signal_number == SIGTERM ? "SIGTERM" : "SIGINT") << ", stopping"
            << std::endl;
  http.reset();
  socket.stop();
  service->stop();
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ServeOptions>();
  auto* sub = app.add_subcommand(
      "serve",
      "Resident node service: one sampler and its history for every read command (Unix socket), "
      "Prometheus /metrics");
  sub->add_option("--listen", o->listen,
                  "HTTP address for /metrics and /healthz (default 127.0.0.1:9400; off: none)");
  sub->add_option("--interval", o->interval, "sampling interval (default 100ms)");
  sub->add_option("--history", o->history, "history kept at 1 s (default 1h)");
  sub->callback([&ctx, o] { ctx.run = [&ctx, o] { return run_serve(ctx, *o); }; });
}

}  // namespace gpuclk::cli
