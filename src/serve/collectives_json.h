// The `collectives` request's answer (serve/nccl_jobs.h): each job's NCCL collectives on the node
// and the window's communicators joined with its GPUs, as JSON and back, for `gpuclk ps`,
// `gpuclk stat --job` and doctor (which judges the communicators with its own GPU windows).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "views/collectives.h"

namespace gpuclk::serve {

struct CollectivesAnswer {
  bool enabled = false;   // the service reads NCCL Inspector files (--nccl-inspector-dir)
  std::string root;       // their root
  std::size_t files = 0;  // followed now
  std::uint64_t records = 0, errors = 0;  // read and problems met since the service started
  std::vector<std::string> problems;      // the last few ("FILE:LINE: what")
  std::vector<views::JobCollectives> jobs;
};

// The request: {"request": "collectives"}, optionally "owner": an owner key ("slurm:1234").
nlohmann::json collectives_json(const CollectivesAnswer& answer);
// The inverse. Throws Error (exit 255) on a malformed answer.
CollectivesAnswer collectives_from_json(const nlohmann::json& answer);

}  // namespace gpuclk::serve
