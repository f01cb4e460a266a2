// The attribution's series on /metrics (docs/exporter.md, "Who used the energy"): per GPU the
// energy booked to no process and to processes (by how it was split), and energy and GPU time per
// Slurm job, pod, container and user. Bounded cardinality: no series per process; an owner's
// series end kOwnerSeriesKept after its last process ended (its final value gets scraped first),
// while per-user series stay (one per user who ran on the node).
#pragma once

#include <vector>

#include "attribution/attribution.h"
#include "serve/exposition.h"

namespace gpuclk::serve {

inline constexpr std::chrono::minutes kOwnerSeriesKept{10};

// `gpu_labels`: each GPU position's rendered labels; `now`: the sampler's time; `gpu_books`: each
// GPU's energy books (idle, split, unattributed, processes), which /metrics leaves out without
// --metrics-detail attribution. Each job's and pod's series per GPU come regardless (fleet --job).
void add_attribution_series(Families& f, const attribution::AttributionView& view,
                            const std::vector<Labels>& gpu_labels, telemetry::TimePoint now,
                            bool gpu_books = true);

}  // namespace gpuclk::serve
