#include "serve/http.h"

#include <civetweb.h>
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <utility>

#include "serve/metrics.h"
#include "util/error.h"

namespace gpuclk::serve {

struct HttpExporter::Impl {
  Impl(const Service& s, MetricsOptions options) : service(s), metrics(s, std::move(options)) {}
  ~Impl() {
    if (context) mg_stop(context);
    mg_exit_library();
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  const Service& service;
  MetricsText metrics;
  mg_context* context = nullptr;
};

namespace {

constexpr const char* kTextFormat = "text/plain; version=0.0.4; charset=utf-8";

// GET (and HEAD) of `text` with `status` (200, or 503 for an unhealthy /healthz); other methods
// get 405.
int send_text(mg_connection* conn, const std::string& text, int status = 200) {
  const char* method = mg_get_request_info(conn)->request_method;
  const bool head = std::strcmp(method, "HEAD") == 0;
  if (!head && std::strcmp(method, "GET") != 0) {
    mg_send_http_error(conn, 405, "%s", "only GET and HEAD\n");
    return 405;
  }
  // The status line and headers by hand, as prometheus-cpp wrote them: mg_send_http_ok adds a
  // Date header through gmtime(), whose static buffer races with any other thread's
  // localtime()/gmtime() (ThreadSanitizer, tests/integration/serve_robustness_test.sh).
  mg_printf(conn, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n", status,
            status == 200 ? "OK" : "Service Unavailable", kTextFormat, text.size());
  if (!head) mg_write(conn, text.data(), text.size());
  return status;
}

}  // namespace

HttpExporter::HttpExporter(const Service& service, const std::string& address,
                           MetricsOptions metrics)
    : impl_(std::make_unique<Impl>(service, std::move(metrics))) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size())
    throw bad_argument(fmt::format("bad --listen '{}'", address),
                       "give ADDRESS:PORT, e.g. 127.0.0.1:9400 or 0.0.0.0:9400");
  mg_init_library(0);
  // civetweb gives a keep-alive connection one worker thread for as long as it keeps sending:
  // with 4 threads, 20 wrk connections pacing a request every 20 ms got 186 requests/s, the
  // other 16 waiting in the queue (perf/serve_load.sh). 64 threads serve 64 such clients at
  // once (Prometheus servers, dashboards, curl); an idle thread costs its stack's mapping, not
  // memory. A client that sends its request slowly (a header line every 2 s) holds a worker
  // until request_timeout_ms from its first byte (civetweb counts the whole header, not each
  // read): 3 s, where a scraper writes its request in one segment. With 10 s and 32 threads,
  // 40 such clients held every worker and scrapes waited ~9 s a wave
  // (tests/faults/socket_abuse_test.sh); now 63 of them leave a worker free, and more delay a
  // scrape by 3 s at most.
  // tcp_nodelay: on the H100 host every keep-alive scrape took 44 ms (p50 = p99), the mark of
  // Nagle's algorithm holding civetweb's second write until the client's delayed ACK (40 ms).
  const char* options[] = {"listening_ports",
                           address.c_str(),
                           "num_threads",
                           "64",
                           "request_timeout_ms",
                           "3000",
                           "enable_keep_alive",
                           "yes",
                           "tcp_nodelay",
                           "1",
                           nullptr};
  mg_callbacks callbacks{};
  mg_init_data init{};
  init.callbacks = &callbacks;
  init.user_data = impl_.get();
  init.configuration_options = options;
  std::array<char, 256> text{};
  unsigned code = 0;
  mg_error_data error{&code, text.data(), text.size()};
  impl_->context = mg_start2(&init, &error);
  if (!impl_->context) {
    throw Error(ExitCode::other, fmt::format("cannot listen on {}: {}", address, text.data()),
                "is another exporter on that port? give --listen ADDRESS:PORT");
  }
  mg_set_request_handler(
      impl_->context, "/metrics$",
      [](mg_connection* conn, void* data) {
        return send_text(conn, *static_cast<Impl*>(data)->metrics.get());
      },
      impl_.get());
  mg_set_request_handler(
      impl_->context, "/healthz$",
      [](mg_connection* conn, void* data) {
        // 503 while unhealthy, so a Kubernetes httpGet probe (or any load balancer) sees it.
        const auto& served = static_cast<Impl*>(data)->service;
        return send_text(conn, health_text(served), healthy(served) ? 200 : 503);
      },
      impl_.get());
  mg_server_port port{};
  const int ports = mg_get_server_ports(impl_->context, 1, &port);
  address_ = address.substr(0, colon + 1) +
             (ports > 0 ? std::to_string(port.port) : address.substr(colon + 1));
}

HttpExporter::~HttpExporter() = default;

}  // namespace gpuclk::serve
