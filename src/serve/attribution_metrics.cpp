#include "serve/attribution_metrics.h"

#include <algorithm>
#include <string>

#include "telemetry/series_names.h"

namespace gpuclk::serve {

using attribution::AttributionView;
using attribution::GpuBooks;
using attribution::kSplitCount;
using attribution::Split;
using attribution::Usage;

namespace {

// The owners with series of their own, their family's prefix and the label naming them; jobs
// and pods also per GPU they ran on (`gpuclk fleet --job` puts a job's GPUs of every node side
// by side), bounded as the owner's: a job holds a few GPUs of a node.
struct OwnerFamily {
  host::OwnerKind kind;
  std::string_view energy, seconds, help_who, label;
  std::string_view gpu_energy, gpu_seconds;  // per GPU; "" for none
};
constexpr OwnerFamily kOwnerFamilies[] = {
    {host::OwnerKind::slurm_job, "gpuclk_slurm_job_energy_joules_total",
     "gpuclk_slurm_job_gpu_seconds_total", "Slurm job", "job", telemetry::series::gpu_job_energy,
     telemetry::series::gpu_job_seconds},
    {host::OwnerKind::kubernetes_pod, "gpuclk_pod_energy_joules_total",
     "gpuclk_pod_gpu_seconds_total", "Kubernetes pod", "pod_uid", telemetry::series::gpu_pod_energy,
     telemetry::series::gpu_pod_seconds},
    {host::OwnerKind::container, "gpuclk_container_energy_joules_total",
     "gpuclk_container_gpu_seconds_total", "container", "container_id", "", ""},
};

void usage_series(Families& f, std::string_view energy, std::string_view seconds,
                  std::string_view who, const Labels& labels, const Usage& u) {
  const std::string energy_help = "GPU energy used by the " + std::string(who) +
                                  ": each GPU's energy counter split between the processes on it";
  const std::string seconds_help = "GPU-seconds of the " + std::string(who) +
                                   " (state context: holding a context; busy: its kernels ran)";
  f.counter(energy, energy_help, labels, u.energy_j);
  f.counter(seconds, seconds_help, labels, Label{"state", "context"}, u.context_s);
  f.counter(seconds, seconds_help, labels, Label{"state", "busy"}, u.busy_s);
}

}  // namespace

void add_attribution_series(Families& f, const AttributionView& view,
                            const std::vector<Labels>& gpu_labels, telemetry::TimePoint now,
                            bool gpu_books) {
  for (std::size_t i = 0; gpu_books && i < view.gpus.size() && i < gpu_labels.size(); ++i) {
    const GpuBooks& b = view.gpus[i];
    f.counter("gpuclk_gpu_idle_energy_joules_total",
              "Energy of the GPU while no process was on it (since the service started)",
              gpu_labels[i], b.idle_j);
    for (std::size_t k = 0; k < kSplitCount; ++k) {
      f.counter("gpuclk_gpu_process_energy_joules_total",
                "Energy of the GPU booked to its processes, by how it was split (sole: one "
                "process; sm: by their SM utilization; memory: by their memory; equal: in equal "
                "parts)",
                gpu_labels[i], Label{"split", to_string(static_cast<Split>(k))}, b.split_j[k]);
    }
    f.counter("gpuclk_gpu_unattributed_energy_joules_total",
              "Energy of the GPU over intervals whose processes could not be read", gpu_labels[i],
              b.unknown_j);
    double running = 0;
    for (const auto& p : view.processes) {
      if (p.gpu == i && p.running) ++running;
    }
    f.gauge("gpuclk_gpu_processes", "Compute processes on the GPU at the last slow sample",
            gpu_labels[i], running);
  }
  for (const auto& o : view.owners) {
    if (!o.running && now - o.last_seen > kOwnerSeriesKept) continue;
    for (const auto& family : kOwnerFamilies) {
      if (family.kind != o.owner.kind) continue;
      Labels labels{{family.label, o.owner.id}};
      // A pod the kubelet named: its namespace and name beside its UID (one series per UID
      // still: a name once given stays).
      if (!o.owner.pod_name.empty()) {
        labels.add("namespace", o.owner.pod_namespace);
        labels.add("pod", o.owner.pod_name);
      }
      labels.add("user", o.owner.user);
      usage_series(f, family.energy, family.seconds, family.help_who, labels, o.usage);
      if (family.gpu_energy.empty()) continue;
      for (const auto& [index, usage] : o.by_gpu) {
        const auto at = std::find(view.gpu_indexes.begin(), view.gpu_indexes.end(), index);
        const auto position = static_cast<std::size_t>(at - view.gpu_indexes.begin());
        if (at == view.gpu_indexes.end() || position >= gpu_labels.size()) continue;
        Labels on_gpu = gpu_labels[position];
        on_gpu.add(family.label, o.owner.id);
        if (!o.owner.pod_name.empty()) {
          on_gpu.add("namespace", o.owner.pod_namespace);
          on_gpu.add("pod", o.owner.pod_name);
        }
        on_gpu.add("user", o.owner.user);
        usage_series(f, family.gpu_energy, family.gpu_seconds,
                     std::string(family.help_who) + " on this GPU", on_gpu, usage);
      }
    }
  }
  for (const auto& [user, u] : view.users) {
    usage_series(f, "gpuclk_user_energy_joules_total", "gpuclk_user_gpu_seconds_total",
                 "user (every process of theirs; user \"\": processes whose user is unknown)",
                 Labels{{"user", user}}, u);
  }
}

}  // namespace gpuclk::serve
