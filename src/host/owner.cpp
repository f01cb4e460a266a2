#include "host/owner.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <vector>

#include "host/process.h"
#include "util/file.h"
#include "util/text.h"

namespace gpuclk::host {
namespace {

// /proc/PID/cgroup lists one line per hierarchy (a dozen on cgroup v1), environ a few KiB.
constexpr std::uint64_t kProcFileMax = 1 << 20;

std::string read_proc_file(const std::filesystem::path& path) {
  try {
    return file::read_bounded(path.string(), "/proc file", kProcFileMax);
  } catch (const std::exception&) {
    return {};  // gone, or not ours to read (environ of another user)
  }
}

bool every_char(std::string_view text, int (*is)(int)) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [is](char c) {
    return is(static_cast<unsigned char>(c)) != 0;
  });
}
bool is_number(std::string_view text) { return every_char(text, std::isdigit); }
bool is_hex(std::string_view text) { return every_char(text, std::isxdigit); }

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}
std::string_view without_suffix(std::string_view text, std::string_view suffix) {
  if (text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix)
    text.remove_suffix(suffix.size());
  return text;
}

// A pod UID as Kubernetes writes it, "8f3c…-…"; the systemd cgroup driver writes '_' for '-'.
std::optional<std::string> pod_uid(std::string_view text) {
  if (text.size() != 36) return std::nullopt;
  std::string uid(text);
  for (std::size_t i = 0; i < uid.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash && (uid[i] == '_' || uid[i] == '-')) {
      uid[i] = '-';
    } else if (dash || std::isxdigit(static_cast<unsigned char>(uid[i])) == 0) {
      return std::nullopt;
    }
  }
  return uid;
}

// The owner one cgroup path names, if any. Slurm's own cgroup wins over the container or pod a
// job step may run in, then the pod over its containers.
std::optional<Owner> owner_of_cgroup(std::string_view path) {
  const auto parts = text::split(path, '/');
  const bool slurm = path.find("slurm") != std::string_view::npos;
  for (const auto& part : parts) {
    // v1: /slurm/uid_1000/job_1234/step_0; v2: /system.slice/slurmstepd.scope/job_1234/step_0.
    if (slurm && starts_with(part, "job_") && is_number(std::string_view(part).substr(4)))
      return Owner{OwnerKind::slurm_job, part.substr(4), {}};
  }
  if (path.find("kubepods") != std::string_view::npos) {
    for (const auto& part : parts) {
      // cgroupfs: /kubepods/burstable/pod<UID>/<container>; systemd:
      // /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<UID_>.slice/…
      const auto name = without_suffix(part, ".slice");
      const auto at = name.rfind("pod");
      if (at == std::string_view::npos) continue;
      if (auto uid = pod_uid(name.substr(at + 3)))
        return Owner{OwnerKind::kubernetes_pod, *uid, {}};
    }
  }
  for (const auto& part : parts) {
    // docker-ID.scope, cri-containerd-ID.scope, crio-ID.scope, libpod-ID.scope (systemd);
    // /docker/ID, /libpod_parent/libpod-ID (cgroupfs). podman's monitor (libpod-conmon-ID) is
    // not the container.
    auto name = without_suffix(part, ".scope");
    for (std::string_view prefix : {"docker-", "cri-containerd-", "crio-", "libpod-"}) {
      if (starts_with(name, prefix)) {
        name.remove_prefix(prefix.size());
        break;
      }
    }
    if (name.size() >= 12 && is_hex(name))
      return Owner{OwnerKind::container, std::string(name), {}};
  }
  return std::nullopt;
}

std::optional<Owner> owner_of_cgroups(const std::string& cgroup) {
  std::optional<Owner> best;
  for (const auto& line : text::split(cgroup, '\n')) {
    // "hierarchy-ID:controllers:path" (v2: "0::path").
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    auto owner = owner_of_cgroup(std::string_view(line).substr(second + 1));
    if (owner && (!best || owner->kind < best->kind)) best = std::move(owner);
  }
  return best;
}

std::optional<std::string> slurm_job_in_environment(const std::string& environ) {
  constexpr std::string_view kName = "SLURM_JOB_ID=";
  for (const auto& entry : text::split(environ, '\0')) {
    if (starts_with(entry, kName) && is_number(std::string_view(entry).substr(kName.size())))
      return entry.substr(kName.size());
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(OwnerKind kind) {
  switch (kind) {
    case OwnerKind::slurm_job:
      return "slurm";
    case OwnerKind::kubernetes_pod:
      return "pod";
    case OwnerKind::container:
      return "container";
    case OwnerKind::session:
      return "session";
    case OwnerKind::process:
      break;
  }
  return "process";
}

std::string owner_key(const Owner& owner) {
  return std::string(to_string(owner.kind)) + ":" + owner.id;
}

std::optional<Owner> parse_owner_key(std::string_view key) {
  const auto colon = key.find(':');
  if (colon == std::string_view::npos || colon + 1 == key.size()) return std::nullopt;
  for (auto kind : {OwnerKind::slurm_job, OwnerKind::kubernetes_pod, OwnerKind::container,
                    OwnerKind::session, OwnerKind::process}) {
    if (key.substr(0, colon) == to_string(kind))
      return Owner{kind, std::string(key.substr(colon + 1)), {}};
  }
  return std::nullopt;
}

std::string describe(const Owner& owner) {
  switch (owner.kind) {
    case OwnerKind::slurm_job:
      return "Slurm job " + owner.id;
    case OwnerKind::kubernetes_pod:
      if (!owner.pod_name.empty()) return "pod " + owner.pod_namespace + "/" + owner.pod_name;
      return "pod " + owner.id;
    case OwnerKind::container:
      return "container " + owner.id.substr(0, 12);  // as `docker ps` shows it
    case OwnerKind::session:
      return "session " + owner.id;
    case OwnerKind::process:
      break;
  }
  return "process " + owner.id;
}

std::optional<Owner> owner_of(unsigned pid, const std::filesystem::path& proc_root) {
  const auto dir = proc_root / std::to_string(pid);
  // stat: "pid (comm) state ppid pgrp session …"; comm may hold spaces and parentheses.
  const auto stat = read_proc_file(dir / "stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;

  Owner owner{OwnerKind::process, std::to_string(pid), {}};
  if (auto from_cgroup = owner_of_cgroups(read_proc_file(dir / "cgroup"))) {
    owner = std::move(*from_cgroup);
  } else if (auto job = slurm_job_in_environment(read_proc_file(dir / "environ"))) {
    owner = Owner{OwnerKind::slurm_job, std::move(*job), {}};
  } else {
    // The session, not the process group: MPI launchers and torchrun put ranks in process groups
    // of their own, but they stay in the session of the shell or service that started them.
    const auto fields = text::split(std::string_view(stat).substr(close + 1), ' ');
    if (fields.size() > 3 && is_number(fields[3]) && fields[3] != "0")
      owner = Owner{OwnerKind::session, fields[3], {}};
  }
  for (const auto& line : text::split(read_proc_file(dir / "status"), '\n')) {
    if (!starts_with(line, "Uid:")) continue;
    // "Uid:\treal\teffective\tsaved\tfilesystem"
    const auto uids = text::split(std::string_view(line).substr(4), '\t');
    const auto real = uids.empty() ? std::string_view() : text::trim(uids[0]);
    if (is_number(real) && real.size() <= 10)
      owner.user = user_name(static_cast<unsigned>(std::stoull(std::string(real))));
    break;
  }
  return owner;
}

}  // namespace gpuclk::host
