// Who a process works for: the job it is part of as the host's scheduler or container runtime
// groups processes (a Slurm job, a Kubernetes pod, a container), else its session. Processes of
// one owner on several GPUs are one job, and only GPUs of one job are each other's peers (the
// straggler rule). Read from /proc; Linux only.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace gpuclk::host {

// From the most specific grouping to the least; `process`: nothing groups it with others.
enum class OwnerKind { slurm_job, kubernetes_pod, container, session, process };

struct Owner {
  OwnerKind kind = OwnerKind::process;
  std::string id;    // the Slurm job id, the pod UID, the container id, the session id, the pid
  std::string user;  // the login name of the process's real uid; "" when unknown
  // A Kubernetes pod's namespace and name, and the name of its container on the process's GPU,
  // as the kubelet names them (its pod-resources API; attribution/pod_names.h); "" when unknown.
  // Not part of the key: a pod is its UID.
  std::string pod_namespace{}, pod_name{}, container_name{};
};

// "slurm", "pod", "container", "session", "process": the prefix of owner_key().
std::string_view to_string(OwnerKind kind);
// "slurm:1234", "pod:UID", "container:ID", "session:812", "process:43000": equal keys, one job.
std::string owner_key(const Owner& owner);
// The inverse of owner_key (user left empty); nullopt for another kind or an empty id.
std::optional<Owner> parse_owner_key(std::string_view key);
// For people: "Slurm job 1234", "pod 3f2a…" ("pod ml/train-0" when the kubelet named it),
// "container 0123456789ab", "session 812", "process 43000".
std::string describe(const Owner& owner);

// The owner of process `pid`, from `proc_root`/PID/: a Slurm job from its cgroup (v1
// "/slurm/uid_N/job_M/…", v2 "…/slurmstepd.scope/job_M/…") or SLURM_JOB_ID in its environment
// (when this user may read it); a Kubernetes pod (a "kubepods" cgroup with the pod's UID); a
// container (docker, containerd, CRI-O, podman scopes); else its session (stat). nullopt when
// the process does not exist there (it ended, or lives in another PID namespace). Never throws.
std::optional<Owner> owner_of(unsigned pid, const std::filesystem::path& proc_root = "/proc");

}  // namespace gpuclk::host
