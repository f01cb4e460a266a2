#include "serve/http.h"

#include <fmt/format.h>
#include <prometheus/exposer.h>

#include "serve/metrics.h"
#include "util/error.h"

namespace gpuclk::serve {

struct HttpExporter::Impl {
  std::unique_ptr<prometheus::Exposer> exposer;
  std::shared_ptr<MetricsCollector> metrics;
  std::shared_ptr<HealthCollector> health;
};

HttpExporter::HttpExporter(const Service& service, const std::string& address)
    : impl_(std::make_unique<Impl>()) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size())
    throw bad_argument(fmt::format("bad --listen '{}'", address),
                       "give ADDRESS:PORT, e.g. 127.0.0.1:9400 or 0.0.0.0:9400");
  try {
    // civetweb gives a keep-alive connection one worker thread for as long as it keeps sending:
    // with 4 threads, 20 wrk connections pacing a request every 20 ms got 186 requests/s, the
    // other 16 waiting in the queue (perf/serve_load.sh). 32 threads serve 32 such clients at
    // once (Prometheus servers, dashboards, curl); an idle thread costs its stack's mapping, not
    // memory. Slow clients hold one each for request_timeout_ms at most.
    // tcp_nodelay: on the H100 host every keep-alive scrape took 44 ms (p50 = p99), the mark of
    // Nagle's algorithm holding civetweb's second write until the client's delayed ACK (40 ms).
    impl_->exposer = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
        "listening_ports", address, "num_threads", "32", "request_timeout_ms", "10000",
        "enable_keep_alive", "yes", "tcp_nodelay", "1"});
  } catch (const std::exception& e) {
    throw Error(ExitCode::other, fmt::format("cannot listen on {}: {}", address, e.what()),
                "is another exporter on that port? give --listen ADDRESS:PORT");
  }
  impl_->metrics = std::make_shared<MetricsCollector>(service);
  impl_->health = std::make_shared<HealthCollector>(service);
  impl_->exposer->RegisterCollectable(impl_->metrics, "/metrics");
  impl_->exposer->RegisterCollectable(impl_->health, "/healthz");
  auto ports = impl_->exposer->GetListeningPorts();
  address_ = address.substr(0, colon + 1) +
             (ports.empty() ? address.substr(colon + 1) : std::to_string(ports.front()));
}

HttpExporter::~HttpExporter() = default;

}  // namespace gpuclk::serve
