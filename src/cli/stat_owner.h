// `gpuclk stat --job ID` / `--pod UID`: the report of a job the service watched (serve's
// attribution: docs/attribution.md), running or ended in the last day, per GPU and in all.
#pragma once

#include <string>

namespace gpuclk::cli {

class Context;

// `owner_key`: "slurm:ID" or "pod:UID". Prints to stdout (and as JSON to `json_file` when not
// empty). Throws Error: 3 without a service, 6 when the service saw no process of the owner.
int run_stat_owner(Context& ctx, const std::string& owner_key, const std::string& json_file);

}  // namespace gpuclk::cli
