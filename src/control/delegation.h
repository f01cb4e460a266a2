// Delegated settings: the admin's policy (/etc/gpuclk/policy.toml) saying which users and groups
// who are not root may change which settings, within which bounds, on which GPUs, through
// `gpuclk serve` (docs/serve.md, "Delegated settings"). Parsed and checked here; the service
// identifies the user by the socket's peer credentials and asks check() before any write.
//
//   version = 1
//   [[rule]]
//   name = "ml-team"                 # named in refusals and the service's log
//   users = ["alice", 1001]          # user names or uids
//   groups = ["gpu-users"]           # group names or gids (primary or supplementary)
//   gpus = "all"                     # or "0,1": GPU indexes; or "job": the GPUs Slurm gave the
//                                    # requesting process's job (found by the service)
//   settings = ["power_limit", "locked_gpu_clocks"]
//   power_limit_min_w = 300          # bounds; a bound not given is the GPU's own range
//   power_limit_max_w = 700
//   locked_gpu_clocks_max_mhz = 1980
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "control/settings.h"
#include "util/error.h"

namespace gpuclk::control {

struct ClockBounds {
  std::optional<unsigned> min_mhz, max_mhz;
};

struct DelegationRule {
  std::string name;  // `name`, else "rule N (line L)"
  std::set<unsigned> uids, gids;
  bool all_gpus = false;
  bool job_gpus = false;    // the GPUs of the requester's Slurm job (Identity::job_gpus)
  std::set<unsigned> gpus;  // indexes, when neither
  std::set<Setting> settings;
  std::optional<units::Milliwatts> power_min, power_max;
  ClockBounds locked_gpu, locked_memory, application_graphics, application_memory;
};

struct DelegationPolicy {
  std::string source;  // the file, for messages
  std::vector<DelegationRule> rules;
};

// Who asks: from SO_PEERCRED / SO_PEERGROUPS, never from the request.
struct Identity {
  unsigned uid = 0, gid = 0;
  std::vector<unsigned> groups;  // supplementary
  std::string user;              // the name, for messages; may be empty
  // For rules with gpus = "job": the GPU indexes of the Slurm job the requesting process runs
  // in, as the service found them (its cgroup, then scontrol); nullopt with `job_problem` when
  // it runs in none, or they could not be found.
  std::optional<std::set<unsigned>> job_gpus;
  std::string job;  // the job id, for messages
  std::string job_problem;
};

// One GPU of a request with the exact settings it would get (validate()'s target).
struct DelegatedTarget {
  unsigned gpu = 0;
  Settings target;
};

struct Verdict {
  bool granted = false;
  std::string rule;    // the rule that granted, or the one that refused ("none": no rule names
                       // the user)
  std::string reason;  // why it was refused
};

// Names to ids (the service resolves them once, at start). nullopt: no such user/group.
struct NameLookup {
  std::function<std::optional<unsigned>(const std::string&)> user, group;
};
NameLookup system_names();  // getpwnam_r / getgrnam_r

// Throws Error (exit 2) naming the file, line and key; unknown keys are errors.
DelegationPolicy parse_delegation_policy(const std::string& text, const std::string& source,
                                         const NameLookup& names);

// Refuses (Error, exit 2) a policy file that a user other than root could change: not a regular
// file, world-writable, group-writable with a group other than root's, or not owned by root; the
// same for its folder. `euid`: the service's; when it is not root (tests), files owned by that
// user are accepted too.
void check_policy_file(const std::filesystem::path& path, uid_t euid);

// check_policy_file, then parse_delegation_policy with system_names().
DelegationPolicy load_delegation_policy(const std::filesystem::path& path);

// The rules that name this user (by uid, primary gid or a supplementary group), in file order.
std::vector<const DelegationRule*> rules_for(const DelegationPolicy& policy, const Identity& who);

// Whether a rule naming this user has gpus = "job" (then the service looks up the job's GPUs).
bool needs_job(const DelegationPolicy& policy, const Identity& who);

// Granted when one rule naming the user allows every setting of every target on its GPU within
// its bounds; refused otherwise, naming the first rule that names the user and why it refused
// (or "none"). Clock locks: `tdp` passes any bound, `unlimited` fails a bound on its side.
Verdict check(const DelegationPolicy& policy, const Identity& who,
              const std::vector<DelegatedTarget>& targets);

}  // namespace gpuclk::control
