// The attribution (attribution/attribution.h) on the socket: the `processes` request's answer, and
// its decoding for the commands that show it (`gpuclk ps`, `gpuclk stat --job`). Times travel as
// seconds before the answer ("age_s": since first seen, "idle_s": since last seen), so each side
// keeps its own clock.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "attribution/attribution.h"

namespace gpuclk::serve {

// A fixed time point for a client that shows only differences from "now" (ages): decode with it.
inline constexpr telemetry::TimePoint kAnswerTime{std::chrono::hours(24 * 365)};

// The request: {"request": "processes"}, optionally "owner": an owner key ("slurm:1234",
// "pod:UID", …; a pod also as "pod:NAMESPACE/NAME" once the kubelet named it) for that owner alone
// (its processes and its entry in "owners"). A pod the kubelet named has "pod_namespace",
// "pod_name" and, when one container holds its GPUs, "container_name" beside its owner key.
nlohmann::json attribution_json(const attribution::AttributionView& view, telemetry::TimePoint now,
                                const std::optional<std::string>& owner = std::nullopt);
// The inverse; times come back relative to `now`. Throws Error (exit 255) on a malformed answer.
attribution::AttributionView attribution_from_json(const nlohmann::json& answer,
                                                   telemetry::TimePoint now);

}  // namespace gpuclk::serve
