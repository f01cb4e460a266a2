#include "serve/nccl_jobs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "bench/p2p_links.h"
#include "serve/collectives_json.h"
#include "util/text.h"
#include "util/thread_name.h"

namespace gpuclk::serve {

namespace tn = telemetry::nccl;

struct NcclJobs::Directory {
  explicit Directory(const tn::BuildOptions& o) : current(o), previous(o) {}
  // Since first read: Σ over the ranks, by kind; the ranks seen per communicator; the pids.
  std::map<tn::Operation, tn::OperationTotals> totals;
  std::map<std::string, std::set<int>> ranks;
  int max_ranks = 0;  // the most ranks of one communicator seen
  std::set<unsigned> pids;
  // The window being filled and the last one.
  tn::CommunicatorTracker current, previous;
  std::chrono::steady_clock::time_point started;
};

namespace {

constexpr std::size_t kCommunicatorsKept = 1024;  // per job, for its rank count

void add_to(tn::OperationTotals& t, const tn::InspectorRecord& r) {
  const double moved = tn::algorithm_bytes(r.operation, double(r.message_bytes), r.ranks);
  t.operation = r.operation;
  t.count += 1;
  t.message_bytes += double(r.message_bytes);
  t.algorithm_bytes += moved;
  t.bus_bytes += moved * tn::bus_factor(r.operation, r.ranks);
  t.seconds += double(r.exec_time_us) * 1e-6;
}

// The NCCL_* variables of a process (empty when it is not ours to read, or gone).
std::map<std::string, std::string> nccl_environment(unsigned pid) {
  std::map<std::string, std::string> out;
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string entry;
  for (std::size_t n = 0; n < 4096 && std::getline(in, entry, '\0'); ++n) {
    const auto eq = entry.find('=');
    if (entry.rfind("NCCL_", 0) == 0 && eq != std::string::npos)
      out[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return out;
}

// The share of wall time a rank of `c` spent in `operation`: the members' mean over the span
// their records cover (none where the span cannot be the wall time: dump times written at once).
std::optional<double> time_share(const tn::Communicator& c, tn::Operation operation) {
  const double span = c.span_seconds();
  if (span <= 0 || c.members.empty() ||
      (c.span_from_dump_times && span < c.mean_seconds().value_or(0)))
    return std::nullopt;
  double seconds = 0;
  for (const auto& m : c.members)
    for (const auto& t : m.operations)
      if (t.operation == operation) seconds += t.seconds;
  return seconds / double(c.members.size()) / span;
}

// The peak a rank of `w` has to the others where all its ranks are here with their GPUs known
// (bench nccl's definition; peer access assumed: the service cannot see a process's).
void set_link_peak(rules::CommunicatorWindow& w, const bench::nccl::Topology& node) {
  const tn::Communicator& c = w.communicator;
  if (!c.all_ranks_seen() || c.nodes > 1 || node.gpus.empty()) return;
  bench::nccl::Topology t;
  for (const auto& m : c.members) {
    if (!m.gpu) return;
    const auto g = std::find_if(node.gpus.begin(), node.gpus.end(),
                                [&](const auto& l) { return l.index == m.gpu->index; });
    if (g == node.gpus.end()) return;
    t.gpus.push_back(*g);
  }
  for (const auto& p : node.nvlink_pairs) {
    const auto has = [&](unsigned i) {
      return std::any_of(t.gpus.begin(), t.gpus.end(), [&](const auto& g) { return g.index == i; });
    };
    if (has(p.a) && has(p.b)) t.nvlink_pairs.push_back(p);
  }
  const std::vector<std::vector<bool>> access(t.gpus.size(),
                                              std::vector<bool>(t.gpus.size(), true));
  if (auto peak = bench::nccl::collective_peak(t, access)) {
    w.link_peak_bytes_per_second = peak->bytes_per_second;
    w.link_basis = peak->basis;
  }
}

// `job` into `jobs`, merged with the job of the same owner (two dump directories of one job:
// steps writing apart, or the root and a job directory), so that its series are one per kind.
void merge_into(std::vector<views::JobCollectives>& jobs, views::JobCollectives job) {
  const auto same = std::find_if(jobs.begin(), jobs.end(), [&](const auto& j) {
    return host::owner_key(j.owner) == host::owner_key(job.owner);
  });
  if (same == jobs.end()) {
    jobs.push_back(std::move(job));
    return;
  }
  views::JobCollectives& into = *same;
  into.directory += ", " + job.directory;
  into.ranks = std::max(into.ranks, job.ranks);
  std::set<unsigned> gpus(into.gpus.begin(), into.gpus.end());
  gpus.insert(job.gpus.begin(), job.gpus.end());
  into.gpus.assign(gpus.begin(), gpus.end());
  for (auto& c : job.collectives) {
    auto it = std::find_if(into.collectives.begin(), into.collectives.end(),
                           [&](const auto& i) { return i.total.operation == c.total.operation; });
    if (it == into.collectives.end()) {
      into.collectives.push_back(c);
      continue;
    }
    // Bandwidth weighted by time; shares add up (one rank's time in either).
    const double a = it->total.seconds, b = c.total.seconds;
    if (c.bus_bandwidth)
      it->bus_bandwidth = it->bus_bandwidth && a + b > 0
                              ? (*it->bus_bandwidth * a + *c.bus_bandwidth * b) / (a + b)
                              : c.bus_bandwidth;
    if (c.time_share) it->time_share = std::min(1.0, it->time_share.value_or(0) + *c.time_share);
    it->total.count += c.total.count;
    it->total.message_bytes += c.total.message_bytes;
    it->total.algorithm_bytes += c.total.algorithm_bytes;
    it->total.bus_bytes += c.total.bus_bytes;
    it->total.seconds += c.total.seconds;
  }
  std::sort(into.collectives.begin(), into.collectives.end(),
            [](const auto& x, const auto& y) { return x.total.operation < y.total.operation; });
  for (auto& w : job.communicators) into.communicators.push_back(std::move(w));
}

// Per job and kind (no GPU label: a job's ranks on the node together), and the reader's health.
std::vector<ExtraSeries> collectives_series(const std::vector<views::JobCollectives>& jobs,
                                            std::size_t files, std::uint64_t records,
                                            std::uint64_t errors) {
  std::vector<ExtraSeries> out;
  for (const auto& job : jobs) {
    for (const auto& c : job.collectives) {
      const std::vector<std::pair<std::string, std::string>> labels{
          {"job", host::owner_key(job.owner)},
          {"user", job.owner.user},
          {"collective", std::string(tn::info(c.total.operation).key)}};
      const auto add = [&](const char* name, const char* help, bool counter, double v) {
        out.push_back({name, help, counter, std::nullopt, labels, v});
      };
      add("gpuclk_job_nccl_operations_total",
          "NCCL operations the job's ranks on the node completed (each rank's counted)", true,
          double(c.total.count));
      add("gpuclk_job_nccl_bytes_total",
          "Message bytes of the job's NCCL operations, as the NCCL Inspector gives them, summed "
          "over its ranks on the node",
          true, c.total.message_bytes);
      add("gpuclk_job_nccl_seconds_total",
          "Time the job's ranks on the node spent in NCCL operations (their GPU time), summed",
          true, c.total.seconds);
      if (c.bus_bandwidth)
        add("gpuclk_job_nccl_bus_bandwidth_bytes_per_second",
            "Bus bandwidth of the job's NCCL operations over the last window (nccl-tests' "
            "definition: bus bytes over time)",
            false, *c.bus_bandwidth);
      if (c.time_share)
        add("gpuclk_job_nccl_time_ratio",
            "Share of a rank's wall time spent in the job's NCCL operations over the last window",
            false, *c.time_share);
    }
  }
  out.push_back({"gpuclk_nccl_inspector_files",
                 "NCCL Inspector files gpuclk serve follows under --nccl-inspector-dir",
                 false,
                 std::nullopt,
                 {},
                 double(files)});
  out.push_back({"gpuclk_nccl_inspector_records_total",
                 "NCCL Inspector records (one per rank and operation) read",
                 true,
                 std::nullopt,
                 {},
                 double(records)});
  out.push_back({"gpuclk_nccl_inspector_errors_total",
                 "Problems reading the NCCL Inspector's files (unreadable files, lines that are "
                 "not records); `gpuclk ps` shows the last ones",
                 true,
                 std::nullopt,
                 {},
                 double(errors)});
  return out;
}

}  // namespace

bench::nccl::Topology node_links(const std::vector<gpu::Device*>& devices) {
  const gpu::NvLinkSummary nvlinks = gpu::nvlink_summary(devices);
  bench::nccl::Topology t;
  t.gpus = bench::p2p::link_facts(devices, {}, nvlinks);
  for (auto& g : t.gpus)
    if (g.pcie_max) g.pcie_loaded = g.pcie_max;
  for (std::size_t a = 0; a < devices.size(); ++a) {
    for (std::size_t b = a + 1; b < devices.size(); ++b) {
      if (auto d = bench::p2p::direct_links(nvlinks, devices[a]->index(), devices[b]->index()))
        t.nvlink_pairs.push_back(*d);
    }
  }
  return t;
}

NcclJobs::NcclJobs(NcclJobsOptions options, const Service& service)
    : options_(std::move(options)), service_(service), reader_(options_.root, options_.reader) {}

NcclJobs::~NcclJobs() { stop(); }

void NcclJobs::start() {
  poll();
  thread_ = std::thread([this] {
    util::name_this_thread("gpuclk-nccl");
    std::unique_lock lock(mutex_);
    while (!stop_cv_.wait_for(lock, options_.poll, [this] { return stopping_; })) {
      lock.unlock();
      poll();
      lock.lock();
    }
  });
}

void NcclJobs::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void NcclJobs::poll() {
  const auto now = std::chrono::steady_clock::now();
  std::set<unsigned> running;
  if (const auto* a = service_.attribution()) {
    for (const auto& p : a->view().processes)
      if (p.running) running.insert(p.pid);
  }
  const auto alive = [&](unsigned pid) {
    std::error_code ec;
    return running.contains(pid) || std::filesystem::exists("/proc/" + std::to_string(pid), ec);
  };
  const tn::BuildOptions build{1000, options_.max_pending};
  for (auto& [path, d] : directories_) {
    if (now - d->started < options_.window) continue;
    d->previous = std::move(d->current);
    d->current = tn::CommunicatorTracker(build);
    d->started = now;
  }
  for (auto& batch : reader_.poll(now, alive)) {
    auto& slot = directories_[batch.directory];
    if (!slot) {
      slot = std::make_unique<Directory>(build);
      slot->started = now;
    }
    Directory& d = *slot;
    for (const auto& r : batch.records) {
      add_to(d.totals[r.operation], r);
      auto& ranks = d.ranks[r.comm_id];
      ranks.insert(r.rank);
      d.max_ranks = std::max(d.max_ranks, int(ranks.size()));
      if (d.ranks.size() > kCommunicatorsKept) d.ranks.clear();  // a job making a new one per step
      if (d.pids.insert(r.pid).second) environments_[r.pid] = nccl_environment(r.pid);
      d.current.add(r);
    }
  }
  // A directory none of whose files is followed any more: its job is gone.
  const auto followed = reader_.directories();
  for (auto it = directories_.begin(); it != directories_.end();) {
    if (followed.contains(it->first)) {
      ++it;
      continue;
    }
    for (unsigned pid : it->second->pids) environments_.erase(pid);
    it = directories_.erase(it);
  }
  publish();
}

void NcclJobs::publish() {
  attribution::AttributionView view;
  if (const auto* a = service_.attribution()) view = a->view();
  std::map<unsigned, std::vector<tn::GpuRef>> gpus_by_pid;
  std::map<unsigned, host::Owner> owners;
  const auto& facts = service_.facts();
  for (const auto& p : view.processes) {
    owners.try_emplace(p.pid, p.owner);
    if (!p.running) continue;
    std::optional<std::uint64_t> memory;
    if (p.memory) memory = std::uint64_t(p.memory->value());
    gpus_by_pid[p.pid].push_back(
        {p.gpu_index, p.gpu < facts.size() ? facts[p.gpu].key.bus_id : "", memory});
  }
  std::vector<views::JobCollectives> jobs;
  for (const auto& [path, d] : directories_) {
    views::JobCollectives job;
    job.directory = path;
    // Its owner: the first of its processes the attribution knows, else /proc's answer.
    std::optional<host::Owner> owner;
    for (unsigned pid : d->pids) {
      if (auto it = owners.find(pid); it != owners.end()) {
        owner = it->second;
        break;
      }
    }
    if (!owner && !d->pids.empty()) owner = host::owner_of(*d->pids.begin());
    job.owner = owner ? *owner
                      : host::Owner{host::OwnerKind::process,
                                    d->pids.empty() ? "" : std::to_string(*d->pids.begin())};
    job.ranks = d->max_ranks;
    const auto& judged = d->previous.records() > d->current.records() ? d->previous : d->current;
    auto comms = judged.communicators();
    tn::attach_gpus(comms, gpus_by_pid);
    std::set<unsigned> gpus;
    for (const auto& [op, total] : d->totals) {
      views::JobCollective c{total, std::nullopt, std::nullopt};
      double bus = 0, seconds = 0, share = 0;
      bool shared = false;
      for (const auto& comm : comms) {
        for (const auto& m : comm.members)
          for (const auto& t : m.operations)
            if (t.operation == op) bus += t.bus_bytes, seconds += t.seconds;
        if (auto s = time_share(comm, op)) share += *s, shared = true;
      }
      if (seconds > 0) c.bus_bandwidth = bus / seconds;
      if (shared) c.time_share = std::min(1.0, share);
      job.collectives.push_back(c);
    }
    for (auto& comm : comms) {
      rules::CommunicatorWindow w;
      for (const auto& m : comm.members) {
        if (m.gpu) gpus.insert(m.gpu->index);
        for (const auto& [key, value] : environments_[m.pid]) w.nccl_environment[key] = value;
      }
      w.job = host::describe(job.owner);
      w.communicator = std::move(comm);
      set_link_peak(w, options_.links);
      job.communicators.push_back(std::move(w));
    }
    job.gpus.assign(gpus.begin(), gpus.end());
    merge_into(jobs, std::move(job));
  }
  auto series = collectives_series(jobs, reader_.files(), reader_.records(), reader_.errors());
  std::lock_guard lock(mutex_);
  jobs_ = std::move(jobs);
  series_ = std::move(series);
  files_ = reader_.files();
  records_ = reader_.records();
  errors_ = reader_.errors();
  problems_ = reader_.last_problems();
}

std::vector<ExtraSeries> NcclJobs::series() const {
  std::lock_guard lock(mutex_);
  return series_;
}

std::vector<rules::CommunicatorWindow> NcclJobs::communicators() const {
  std::lock_guard lock(mutex_);
  std::vector<rules::CommunicatorWindow> out;
  for (const auto& job : jobs_)
    out.insert(out.end(), job.communicators.begin(), job.communicators.end());
  return out;
}

nlohmann::json NcclJobs::answer(const nlohmann::json& request) const {
  const auto owner = request.contains("owner")
                         ? std::optional<std::string>(request.at("owner").get<std::string>())
                         : std::nullopt;
  CollectivesAnswer a;
  a.enabled = true;
  a.root = options_.root;
  {
    std::lock_guard lock(mutex_);
    a.files = files_;
    a.records = records_;
    a.errors = errors_;
    a.problems = problems_;
    for (const auto& job : jobs_)
      if (!owner || host::owner_key(job.owner) == *owner) a.jobs.push_back(job);
  }
  return collectives_json(a);
}

}  // namespace gpuclk::serve
