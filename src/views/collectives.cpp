#include "views/collectives.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpuclk::views {

namespace out = output;
namespace tn = telemetry::nccl;

out::Table collectives_table(const std::vector<JobCollectives>& jobs,
                             const std::set<unsigned>* only) {
  out::Table t;
  t.columns = {{"job", "JOB", true},     {"collective", "COLLECTIVE", true},
               {"ranks", "RANKS"},       {"count", "COUNT"},
               {"gib", "GiB"},           {"seconds", "TIME s"},
               {"bus_gbps", "BUS GB/s"}, {"time_pct", "TIME %"}};
  for (const auto& job : jobs) {
    const bool shown = !only || job.gpus.empty() ||
                       std::any_of(job.gpus.begin(), job.gpus.end(),
                                   [&](unsigned g) { return only->contains(g); });
    for (const auto& c : job.collectives) {
      if (!shown) break;
      t.rows.push_back(
          {out::text(host::describe(job.owner)),
           out::text(std::string(tn::info(c.total.operation).label)), out::integer(job.ranks),
           out::integer(static_cast<long long>(c.total.count)),
           out::number(c.total.message_bytes / double(1 << 30), "GiB", 2),
           out::number(c.total.seconds, "s", 3),
           c.bus_bandwidth ? out::number(*c.bus_bandwidth * 1e-9, "GB/s", 1) : out::na(),
           c.time_share ? out::number(*c.time_share * 100, "%", 1) : out::na()});
    }
  }
  return t;
}

std::string collectives_line(const JobCollectives& job) {
  std::string line;
  for (const auto& c : job.collectives) {
    line += fmt::format("{}{} {} ops, {:.2f} GiB, {:.3f} s", line.empty() ? "" : "; ",
                        tn::info(c.total.operation).label, c.total.count,
                        c.total.message_bytes / double(1 << 30), c.total.seconds);
    if (c.bus_bandwidth) line += fmt::format(", {:.1f} GB/s bus", *c.bus_bandwidth * 1e-9);
    if (c.time_share) line += fmt::format(", {:.1f}% of the time", *c.time_share * 100);
  }
  return line;
}

}  // namespace gpuclk::views
