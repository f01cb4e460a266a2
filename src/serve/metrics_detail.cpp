#include "serve/metrics_detail.h"

#include <fmt/format.h>

#include "util/error.h"
#include "util/parse.h"
#include "util/text.h"

namespace gpuclk::serve {
namespace {

struct Group {
  std::string_view name;
  bool MetricsDetail::*member;
};
constexpr Group kGroups[] = {{"nvlink", &MetricsDetail::nvlink},
                             {"gpu", &MetricsDetail::gpu},
                             {"attribution", &MetricsDetail::attribution}};

}  // namespace

MetricsDetail parse_metrics_detail(std::string_view list) {
  MetricsDetail detail;
  const auto items = text::split(list);
  if (items.empty())
    throw bad_argument("--metrics-detail needs a value",
                       "give nvlink, gpu, attribution (comma-separated), all or none");
  for (const auto& item : items) {
    if (item == "all") {
      for (const auto& g : kGroups) detail.*g.member = true;
      continue;
    }
    if (item == "none") continue;
    bool known = false;
    for (const auto& g : kGroups) {
      if (item == g.name) detail.*g.member = known = true;
    }
    if (!known)
      throw bad_argument(
          fmt::format("bad --metrics-detail '{}': the valid values are nvlink, gpu, attribution, "
                      "all and none",
                      parse::quote(item)),
          "give a comma-separated list, e.g. --metrics-detail nvlink,gpu (docs/exporter.md)");
  }
  return detail;
}

std::string to_string(const MetricsDetail& detail) {
  std::string out;
  for (const auto& g : kGroups) {
    if (!(detail.*g.member)) continue;
    if (!out.empty()) out += ',';
    out += g.name;
  }
  return out.empty() ? "none" : out;
}

}  // namespace gpuclk::serve
