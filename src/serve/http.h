// The service's HTTP side: /metrics (Prometheus text format 0.0.4, MetricsText: built once per
// sample) and /healthz, served by civetweb.
#pragma once

#include <memory>
#include <string>

#include "serve/metrics.h"
#include "serve/service.h"

namespace gpuclk::serve {

class HttpExporter {
 public:
  // Listens on `address` ("127.0.0.1:9400", "[::1]:9400", port 0 for any free port); /metrics
  // shows what `metrics` asks for besides gpuclk's series.
  // Throws Error when it cannot (exit 255; exit 3 when built without civetweb).
  HttpExporter(const Service& service, const std::string& address, MetricsOptions metrics = {});
  ~HttpExporter();
  HttpExporter(const HttpExporter&) = delete;
  HttpExporter& operator=(const HttpExporter&) = delete;

  // The address actually bound ("127.0.0.1:41234" when port 0 was asked).
  const std::string& address() const { return address_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string address_;
};

}  // namespace gpuclk::serve
