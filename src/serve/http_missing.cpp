// Built without civetweb (a portable build on a host without it): --listen says how to
// get /metrics; the socket side works.
#include "serve/http.h"
#include "util/error.h"

namespace gpuclk::serve {

struct HttpExporter::Impl {};

HttpExporter::HttpExporter(const Service&, const std::string&, MetricsOptions) {
  throw Error(ExitCode::not_supported, "this gpuclk was built without civetweb: no /metrics",
              "install libcivetweb-dev and rebuild, or run with --listen off");
}

HttpExporter::~HttpExporter() = default;

}  // namespace gpuclk::serve
