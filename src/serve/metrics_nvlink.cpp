#include "serve/metrics_nvlink.h"

#include <chrono>
#include <string>

#include "rules/rule.h"

namespace gpuclk::serve {
namespace {

namespace F = telemetry::fields;

// How often the data-ECC rate is taken: the service reads the DL error counters every minute.
constexpr auto kEccRatePeriod = std::chrono::minutes(1);

bool up(const telemetry::NvLinkSample& l) { return l.active.value_or(false); }
bool down(const telemetry::NvLinkSample& l) { return l.active && !*l.active; }

// A gauge or counter of a row, with its `type` label when it has one.
void counter(Families& f, std::string_view name, std::string_view help, const Labels& labels,
             std::string_view type, double v) {
  if (type.empty())
    f.counter(name, help, labels, v);
  else
    f.counter(name, help, labels, Label{"type", type}, v);
}

}  // namespace

bool NvLinkSeries::any_link_up(const telemetry::Snapshot& snapshot) {
  for (const auto& g : snapshot.gpus) {
    if (!g.slow || g.health.lost) continue;
    for (const auto& l : g.slow->nvlinks)
      if (up(l)) return true;
  }
  return false;
}

void NvLinkSeries::add(Families& f, std::size_t gpu, const Labels& labels,
                       const telemetry::SlowSample& s, bool node_link_up,
                       const MetricsDetail& detail) {
  if (s.nvlinks.empty()) return;
  add_gpu(f, labels, s, detail);
  if (gpus_.size() <= gpu) gpus_.resize(gpu + 1);
  auto& links = gpus_[gpu];
  for (const auto& l : s.nvlinks) {
    auto& link = links[l.link];
    // Every rule is looked at each build (the ECC rate needs its reference kept up to date).
    const bool rose = errors_rose(link, l, s.time);
    if (rose || (down(l) && node_link_up)) link.shown = true;
    if (link.shown || detail.nvlink) add_link(f, labels, l);
  }
}

bool NvLinkSeries::errors_rose(Link& link, const telemetry::NvLinkSample& l,
                               telemetry::TimePoint t) const {
  bool rose = false;
  for (std::size_t k = 0; k < std::size(F::kNvLink); ++k) {
    const auto& row = F::kNvLink[k];
    const auto& v = l.*row.member;
    if (!row.error || !v || row.member == F::nvlink_ecc.member) continue;
    auto& first = link.first[k];
    if (!first || *v < *first) first = *v;  // first seen, or the driver was reloaded
    if (*v > *first) rose = true;
  }
  // Data ECC: the link corrected the errors; a healthy link counts some (doctor's background).
  if (const auto& ecc = l.ecc) {
    if (!link.ecc || *ecc < *link.ecc) {
      link.ecc = *ecc;
      link.ecc_at = t;
    } else if (t - link.ecc_at >= kEccRatePeriod) {
      const double minutes = std::chrono::duration<double>(t - link.ecc_at).count() / 60;
      if (static_cast<double>(*ecc - *link.ecc) / minutes >
          rules::Thresholds{}.nvlink_ecc_per_minute)
        rose = true;
      link.ecc = *ecc;
      link.ecc_at = t;
    }
  }
  return rose;
}

void NvLinkSeries::add_gpu(Families& f, const Labels& labels, const telemetry::SlowSample& s,
                           const MetricsDetail& detail) const {
  unsigned n_up = 0, n_down = 0;
  bool state_read = false;
  for (const auto& l : s.nvlinks) {
    state_read = state_read || l.active.has_value();
    n_up += up(l) ? 1 : 0;
    n_down += down(l) ? 1 : 0;
  }
  if (state_read) {
    f.gauge("gpuclk_gpu_nvlinks_up", "NVLinks of the GPU that are up", labels, n_up);
    if (n_down > 0 || detail.gpu)
      f.gauge("gpuclk_gpu_nvlinks_down",
              "NVLinks of the GPU that are down (no series while none is, unless "
              "--metrics-detail gpu)",
              labels, n_down);
  }
  for (const auto& row : F::kNvLink) {
    if (const auto total = telemetry::link_sum(s.nvlinks, row))
      counter(f, row.gpu_metric, row.gpu_help, labels, row.label_value,
              static_cast<double>(*total));
  }
}

void NvLinkSeries::add_link(Families& f, const Labels& labels,
                            const telemetry::NvLinkSample& l) const {
  const Labels link = with(labels, "link", std::to_string(l.link));
  if (l.active)
    f.gauge("gpuclk_nvlink_up", "1 while the NVLink is active, 0 while it is down", link,
            *l.active ? 1 : 0);
  for (const auto& row : F::kNvLink) {
    if (const auto& v = l.*row.member)
      counter(f, row.metric, row.help, link, row.label_value, static_cast<double>(*v));
  }
}

}  // namespace gpuclk::serve
