#include "fleet/snapshot.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <tuple>

#include "telemetry/field_table.h"
#include "telemetry/series_names.h"
#include "util/parse.h"

namespace gpuclk::fleet {
namespace {

namespace F = telemetry::fields;
namespace S = telemetry::series;
using Key = std::pair<std::string, unsigned>;  // instance, GPU index

std::optional<unsigned> gpu_index(const Sample& s) {
  const auto v = parse::try_unsigned(s.label("gpu"), 0, 1u << 20);
  return v ? std::optional<unsigned>(static_cast<unsigned>(*v)) : std::nullopt;
}

std::optional<rules::Severity> severity_of(const std::string& text) {
  if (text == "critical") return rules::Severity::critical;
  if (text == "warning") return rules::Severity::warning;
  if (text == "info") return rules::Severity::info;
  return std::nullopt;
}

std::vector<unsigned> gpu_list(const std::string& text) {
  std::vector<unsigned> out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (auto v = parse::try_unsigned(text.substr(start, end - start), 0, 1u << 20))
      out.push_back(static_cast<unsigned>(*v));
    start = end + 1;
  }
  return out;
}

// The families whose latest value fleet reads (one query: collect_now).
constexpr std::string_view kNow[] = {
    F::sm_clock.metric,    F::power.metric,  F::gpu_temperature.metric,
    F::memory_used.metric, S::gpu_lost,      S::max_sm_clock,
    S::power_limit,        S::app_sm_clock,  S::app_memory_clock,
    S::persistence_mode,   S::locked_clocks, S::locked_clock_min,
    S::locked_clock_max};

// Every GPU an answer names, by (instance, index), made on first sight.
struct GpuOf {
  std::map<Key, GpuState> all;
  GpuState* operator()(const Sample& s) {
    const auto index = gpu_index(s);
    const auto instance = s.label("instance");
    if (!index || instance.empty()) return nullptr;
    auto& g = all[{instance, *index}];
    g.instance = instance;
    g.index = *index;
    return &g;
  }
  GpuState* at(const Key& key) {
    const auto it = all.find(key);
    return it == all.end() ? nullptr : &it->second;
  }
};

// `text` as a PromQL double-quoted string's content.
std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

// `selector` with one more matcher (`{a="b"}` + `c="d"` → `{a="b",c="d"}`).
std::string merged(const std::string& selector, const std::string& matcher) {
  const auto inner = selector.size() >= 2 ? selector.substr(1, selector.size() - 2) : "";
  const bool any = inner.find_first_not_of(' ') != std::string::npos;
  return "{" + (any ? inner + "," : "") + matcher + "}";
}

// Queries asked together (Prometheus::query_all), each answer handed to its function in the
// order they were added.
class Batch {
 public:
  void add(std::string promql, std::function<void(const std::vector<Sample>&)> apply) {
    queries_.push_back(std::move(promql));
    apply_.push_back(std::move(apply));
  }
  void run(Prometheus& prometheus) {
    const auto answers = prometheus.query_all(queries_);
    for (std::size_t i = 0; i < answers.size(); ++i) apply_[i](answers[i]);
  }

 private:
  std::vector<std::string> queries_;
  std::vector<std::function<void(const std::vector<Sample>&)>> apply_;
};

// What each Slurm job and pod used of each GPU over a range: two queries, the GPU-seconds by
// state and the energy, each summed by the server per GPU and job. Prometheus stores the
// exporter's `job` label as `exported_job` (its own `job` is the scrape job's).
class JobUses {
 public:
  // `kind`: "slurm", "pod", or "" for both.
  void add_queries(Batch& batch, const std::string& selector, const std::string& range,
                   const std::string& kind) {
    const auto names = [&](std::string_view slurm, std::string_view pod) {
      if (kind == "slurm") return std::string(slurm);
      if (kind == "pod") return std::string(pod);
      return fmt::format("{}|{}", slurm, pod);
    };
    const std::string by = "instance, gpu, exported_job, pod_uid, namespace, pod, user";
    batch.add("sum by (" + by + ", state) (increase(" +
                  series_matching(names(S::gpu_job_seconds, S::gpu_pod_seconds), selector) + range +
                  "))",
              [this](const std::vector<Sample>& answer) {
                for (const auto& s : answer)
                  if (auto* u = use(s))
                    (s.label("state") == "busy" ? u->busy_s : u->context_s) = s.value;
              });
    batch.add("sum by (" + by + ") (increase(" +
                  series_matching(names(S::gpu_job_energy, S::gpu_pod_energy), selector) + range +
                  "))",
              [this](const std::vector<Sample>& answer) {
                for (const auto& s : answer)
                  if (auto* u = use(s)) u->energy_j = s.value;
              });
  }
  // The GPUs a job held a context on in the range, by instance, GPU and job.
  std::vector<JobUse> list() {
    std::vector<JobUse> out;
    for (auto& [key, u] : uses_)
      if (u.context_s > 0) out.push_back(std::move(u));
    return out;
  }

 private:
  JobUse* use(const Sample& s) {
    const auto index = gpu_index(s);
    const auto instance = s.label("instance");
    const auto slurm = s.label("exported_job"), uid = s.label("pod_uid");
    if (!index || instance.empty() || (slurm.empty() && uid.empty())) return nullptr;
    const auto key = slurm.empty() ? "pod:" + uid : "slurm:" + slurm;
    auto& u = uses_[{instance, *index, key}];
    u.instance = instance;
    u.index = *index;
    u.job = key;
    u.user = s.label("user");
    if (!slurm.empty())
      u.name = "Slurm job " + slurm;
    else if (!s.label("pod").empty())
      u.name = "pod " + s.label("namespace") + "/" + s.label("pod");
    else
      u.name = "pod " + uid;
    return &u;
  }
  std::map<std::tuple<std::string, unsigned, std::string>, JobUse> uses_;
};

// A query's answer, one sample per GPU: `range` applied to each GPU's series of `metric` and
// aggregated to one value per (instance, gpu) by the server, so that the answer carries two
// labels, not the series' ten.
std::string per_gpu(const std::string& function, const std::string& metric,
                    const std::string& selector, const std::string& range) {
  return "max by (instance, gpu) (" + function + series(metric, selector) + range + "))";
}

// The latest value of each setting and reading (collect_now's second query) into the GPUs.
void apply_now(const std::vector<Sample>& answer, GpuOf& gpu) {
  std::map<Key, std::pair<std::optional<double>, std::optional<double>>> lock_range;
  for (const auto& s : answer) {
    auto* g = gpu(s);
    if (!g) continue;
    const auto name = s.label("__name__");
    const double v = s.value;
    if (name == S::gpu_lost)
      g->lost = v != 0;
    else if (name == F::sm_clock.metric)
      g->sm_clock_mhz = v / F::sm_clock.metric_scale;
    else if (name == S::max_sm_clock)
      g->max_sm_clock_mhz = v / 1e6;
    else if (name == F::power.metric)
      g->power_w = v;
    else if (name == S::power_limit)
      g->power_limit_w = v;
    else if (name == S::app_sm_clock)
      g->app_sm_clock_mhz = v / 1e6;
    else if (name == S::app_memory_clock)
      g->app_memory_clock_mhz = v / 1e6;
    else if (name == S::persistence_mode)
      g->persistence_mode = v != 0;
    else if (name == F::gpu_temperature.metric)
      g->temperature_c = v;
    else if (name == F::memory_used.metric)
      g->memory_used_bytes = v;
    else if (s.label("domain") == "sm") {
      if (name == S::locked_clocks && v == 0)
        g->sm_clock_lock = "unlocked";
      else if (name == S::locked_clocks && !g->sm_clock_lock)
        g->sm_clock_lock = "locked";
      else if (name == S::locked_clock_min)
        lock_range[{g->instance, g->index}].first = v / 1e6;
      else if (name == S::locked_clock_max)
        lock_range[{g->instance, g->index}].second = v / 1e6;
    }
  }
  for (const auto& [key, r] : lock_range) {
    auto* g = gpu.at(key);
    if (!g || !r.first || !r.second || g->sm_clock_lock == "unlocked") continue;
    g->sm_clock_lock = *r.first == *r.second
                           ? fmt::format("{:.0f} MHz", *r.first)
                           : fmt::format("{:.0f}-{:.0f} MHz", *r.first, *r.second);
  }
}

// The latest value of each setting and reading fleet shows, in one query: the readings
// (telemetry/field_table.h) and the settings' gauges (telemetry/series_names.h).
void collect_now(Batch& batch, const std::string& selector, GpuOf& gpu) {
  // Identity (a GPU lost before its service started has its model only on gpuclk_gpu_lost).
  batch.add("max by (instance, gpu, uuid, model) (" +
                series_matching(fmt::format("{}|{}", S::gpu_info, S::gpu_lost), selector) + ")",
            [&gpu](const std::vector<Sample>& answer) {
              for (const auto& s : answer)
                if (auto* g = gpu(s)) {
                  if (g->uuid.empty()) g->uuid = s.label("uuid");
                  if (g->model.empty() || s.label("model") != "(GPU is lost)")
                    g->model = s.label("model");
                }
            });
  std::string regex;
  for (const auto n : kNow) regex += fmt::format("{}{}", regex.empty() ? "" : "|", n);
  // (gpuclk's memory clock locks are not shown: their series are left out.)
  batch.add("max by (__name__, instance, gpu, domain) (" +
                series_matching(regex, merged(selector, "domain!=\"memory\"")) + ")",
            [&gpu](const std::vector<Sample>& answer) { apply_now(answer, gpu); });
}

// Each GPU over the range: the share of it each clock event reason was active (only those
// that were), its median SM clock (and 5th percentile), mean power and utilization.
void collect_range(Batch& batch, const std::string& selector, const std::string& range, bool p5,
                   GpuOf& gpu) {
  std::string limiting;
  for (const auto r : kLimitingReasons)
    limiting += fmt::format("{}{}", limiting.empty() ? "" : "|", r);
  batch.add("sum by (instance, gpu, reason) (avg_over_time(" +
                merged(selector, "__name__=\"" + std::string(S::clock_event_reason) +
                                     "\",reason=~\"" + limiting + "\"") +
                range + ")) > 0",
            [&gpu](const std::vector<Sample>& answer) {
              for (const auto& s : answer)
                if (auto* g = gpu(s)) g->reason_fraction[s.label("reason")] = s.value;
            });
  const std::string clock(F::sm_clock.metric);
  batch.add(per_gpu("quantile_over_time(0.5, ", clock, selector, range),
            [&gpu](const std::vector<Sample>& answer) {
              for (const auto& s : answer)
                if (auto* g = gpu(s)) g->sm_clock_median_mhz = s.value / F::sm_clock.metric_scale;
            });
  if (p5)
    batch.add(per_gpu("quantile_over_time(0.05, ", clock, selector, range),
              [&gpu](const std::vector<Sample>& answer) {
                for (const auto& s : answer)
                  if (auto* g = gpu(s)) g->sm_clock_p5_mhz = s.value / F::sm_clock.metric_scale;
              });
  batch.add(per_gpu("avg_over_time(", std::string(F::power.metric), selector, range),
            [&gpu](const std::vector<Sample>& answer) {
              for (const auto& s : answer)
                if (auto* g = gpu(s)) g->power_avg_w = s.value;
            });
  batch.add(per_gpu("avg_over_time(", std::string(F::gpu_utilization.metric), selector, range),
            [&gpu](const std::vector<Sample>& answer) {
              for (const auto& s : answer)
                if (auto* g = gpu(s)) g->utilization_avg = s.value;
            });
}

}  // namespace

Snapshot collect(Prometheus& prometheus, const std::string& selector, long range_s, bool p5) {
  Snapshot snap;
  snap.prometheus = prometheus.url();
  snap.selector = selector;
  snap.range_s = range_s;
  const auto range = fmt::format("[{}s]", range_s);

  std::map<std::string, NodeState> nodes;
  const auto node = [&](const std::string& instance) -> NodeState& {
    auto& n = nodes[instance];
    n.instance = instance;
    return n;
  };
  // Every query at once: the server answers them side by side.
  Batch batch;
  batch.add(series("up", selector), [&](const std::vector<Sample>& answer) {
    for (const auto& s : answer) node(s.label("instance")).up = s.value;
  });
  batch.add("max by (instance) (max_over_time(" + series("up", selector) + range + "))",
            [&](const std::vector<Sample>& answer) {
              for (const auto& s : answer) node(s.label("instance")).seen_in_range = true;
            });
  GpuOf gpu;
  collect_now(batch, selector, gpu);
  collect_range(batch, selector, range, p5, gpu);
  batch.add("sum by (instance) (increase(" + series(std::string(F::energy.metric), selector) +
                range + "))",
            [&](const std::vector<Sample>& answer) {
              for (const auto& s : answer) node(s.label("instance")).energy_j = s.value;
            });
  batch.add(
      "max by (instance, rule, severity, gpus) (" + series(std::string(S::finding), selector) + ")",
      [&](const std::vector<Sample>& answer) {
        for (const auto& s : answer) {
          const auto severity = severity_of(s.label("severity"));
          if (!severity || s.label("rule").empty() || s.value == 0) continue;
          snap.node_findings.push_back(
              {s.label("instance"), s.label("rule"), *severity, gpu_list(s.label("gpus"))});
        }
      });
  JobUses jobs;
  jobs.add_queries(batch, selector, range, "");
  batch.run(prometheus);

  std::sort(snap.node_findings.begin(), snap.node_findings.end(), [](const auto& a, const auto& b) {
    return std::tie(a.instance, a.gpus, a.rule) < std::tie(b.instance, b.gpus, b.rule);
  });
  snap.jobs = jobs.list();
  for (auto& [key, g] : gpu.all) {
    if (g.instance.empty()) continue;
    ++node(g.instance).gpus;
    snap.gpus.push_back(std::move(g));
  }
  for (auto& [instance, n] : nodes)
    if (!instance.empty()) snap.nodes.push_back(std::move(n));
  return snap;
}

std::vector<SeriesRead> series_read() {
  std::vector<SeriesRead> out;
  for (const auto n : kNow)
    out.push_back({n, n != S::locked_clock_min && n != S::locked_clock_max});
  for (const auto n : {F::gpu_utilization.metric, S::gpu_info, S::clock_event_reason,
                       F::energy.metric, S::finding, S::gpu_job_seconds, S::gpu_job_energy})
    out.push_back({n, true});
  for (const auto n : {S::gpu_pod_seconds, S::gpu_pod_energy}) out.push_back({n, false});
  return out;
}

std::vector<JobUse> collect_job(Prometheus& prometheus, const std::string& selector, long range_s,
                                const std::string& job, bool pod) {
  std::string matcher;
  if (!pod) {
    matcher = "exported_job=\"" + escaped(job) + "\"";
  } else if (const auto slash = job.find('/'); slash != std::string::npos) {
    matcher = "namespace=\"" + escaped(job.substr(0, slash)) + "\",pod=\"" +
              escaped(job.substr(slash + 1)) + "\"";
  } else {
    matcher = "pod_uid=\"" + escaped(job) + "\"";
  }
  Batch batch;
  JobUses uses;
  uses.add_queries(batch, merged(selector, matcher), fmt::format("[{}s]", range_s),
                   pod ? "pod" : "slurm");
  batch.run(prometheus);
  return uses.list();
}

std::string with_instances(const std::string& selector, const std::vector<std::string>& instances) {
  std::string alternatives;
  for (const auto& i : instances) {
    std::string quoted;
    for (char c : i) {
      if (std::string_view(".+*?()[]{}|^$\\").find(c) != std::string_view::npos) quoted += '\\';
      quoted += c;
    }
    alternatives += (alternatives.empty() ? "" : "|") + quoted;
  }
  return merged(selector, "instance=~\"^(" + escaped(alternatives) + ")$\"");
}

std::vector<NodeLine> collect_nodes(Prometheus& prometheus, const std::string& selector) {
  std::map<std::string, NodeLine> nodes;
  const auto line = [&](const Sample& s) -> NodeLine& {
    auto& n = nodes[s.label("instance")];
    n.instance = s.label("instance");
    return n;
  };
  for (const auto& s : prometheus.query(series("up", selector))) line(s).up = s.value;
  const std::pair<std::string, std::optional<double> NodeLine::*> columns[] = {
      {fmt::format("count by (instance) ({}{{}})", S::gpu_info), &NodeLine::gpus},
      {fmt::format("sum by (instance) ({}{{}})", S::gpu_lost), &NodeLine::lost},
      {fmt::format("avg by (instance) ({}{{}}) / {}", F::sm_clock.metric, F::sm_clock.metric_scale),
       &NodeLine::sm_clock_mhz},
      {fmt::format("sum by (instance) ({}{{}})", F::power.metric), &NodeLine::power_w},
      {fmt::format("sum by (instance) ({}{{}})", S::power_limit), &NodeLine::power_limit_w},
      {fmt::format("max by (instance) ({}{{}})", F::gpu_temperature.metric),
       &NodeLine::temperature_max_c},
      {fmt::format("avg by (instance) ({}{{}})", F::gpu_utilization.metric),
       &NodeLine::utilization},
  };
  for (const auto& [query, member] : columns) {
    std::string q = query;
    const auto braces = q.find("{}");
    q.replace(braces, 2, selector);
    for (const auto& s : prometheus.query(q)) line(s).*member = s.value;
  }
  for (const auto& s : prometheus.query("count by (instance, severity) (" +
                                        series(std::string(S::finding), selector) + ")")) {
    if (s.label("severity") == "critical") line(s).critical = static_cast<int>(s.value);
    if (s.label("severity") == "warning") line(s).warning = static_cast<int>(s.value);
  }
  std::vector<NodeLine> out;
  for (auto& [instance, n] : nodes)
    if (!instance.empty()) out.push_back(std::move(n));
  return out;
}

}  // namespace gpuclk::fleet
