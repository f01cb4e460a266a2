#include "telemetry/nccl_communicator.h"

#include <algorithm>
#include <limits>

namespace gpuclk::telemetry::nccl {
namespace {

OperationTotals& totals_for(std::vector<OperationTotals>& list, Operation operation) {
  auto it = std::find_if(list.begin(), list.end(),
                         [&](const OperationTotals& t) { return t.operation == operation; });
  if (it != list.end()) return *it;
  OperationTotals t;
  t.operation = operation;
  list.push_back(t);
  return list.back();
}

void sort_by_operation(std::vector<OperationTotals>& list) {
  std::sort(list.begin(), list.end(), [](const OperationTotals& a, const OperationTotals& b) {
    return a.operation < b.operation;
  });
}

void add(OperationTotals& t, const InspectorRecord& r) {
  const double moved = algorithm_bytes(r.operation, double(r.message_bytes), r.ranks);
  t.count += 1;
  t.message_bytes += double(r.message_bytes);
  t.algorithm_bytes += moved;
  t.bus_bytes += moved * bus_factor(r.operation, r.ranks);
  t.seconds += double(r.exec_time_us) * 1e-6;
}

// When a record's operation ran, host µs: the verbose trace where there is one (from the call
// to the last kernel stop), else the dump time.
std::pair<std::uint64_t, std::uint64_t> record_span(const InspectorRecord& r) {
  const std::uint64_t from = r.call_time_us.value_or(r.kernel_start_us.value_or(r.dump_time_us));
  const std::uint64_t to = r.kernel_stop_us.value_or(r.dump_time_us);
  return {std::min(from, to), std::max(from, to)};
}

bool traced(const InspectorRecord* r) { return r->call_time_us || r->kernel_start_us; }

// The records of one communicator, grouped.
struct Group {
  Communicator comm;
  std::map<int, std::vector<const InspectorRecord*>> by_rank;
};

RankActivity rank_activity(int rank, const std::vector<const InspectorRecord*>& records,
                           bool dump_times_only) {
  RankActivity a;
  a.rank = rank;
  a.hostname = records.front()->hostname;
  a.pid = records.front()->pid;
  a.first_us = std::numeric_limits<std::uint64_t>::max();
  for (const InspectorRecord* r : records) {
    add(totals_for(a.operations, r->operation), *r);
    a.seconds += double(r->exec_time_us) * 1e-6;
    const auto [from, to] =
        dump_times_only ? std::pair{r->dump_time_us, r->dump_time_us} : record_span(*r);
    a.first_us = std::min(a.first_us, from);
    a.last_us = std::max(a.last_us, to);
  }
  sort_by_operation(a.operations);
  return a;
}

// A typical rank per kind (largest count and bytes, mean time), and the member that waited
// least (shortest total time).
void summarize_operations(Communicator& c) {
  std::map<Operation, std::vector<const OperationTotals*>> kinds;
  for (const RankActivity& m : c.members) {
    for (const OperationTotals& t : m.operations) kinds[t.operation].push_back(&t);
  }
  for (const auto& [operation, list] : kinds) {
    OperationTotals typical;
    typical.operation = operation;
    const OperationTotals* least = list.front();
    for (const OperationTotals* t : list) {
      typical.count = std::max(typical.count, t->count);
      typical.message_bytes = std::max(typical.message_bytes, t->message_bytes);
      typical.algorithm_bytes = std::max(typical.algorithm_bytes, t->algorithm_bytes);
      typical.bus_bytes = std::max(typical.bus_bytes, t->bus_bytes);
      typical.seconds += t->seconds / double(list.size());
      if (t->count >= least->count && t->seconds < least->seconds) least = t;
    }
    c.operations.push_back(typical);
    c.least_waiting.push_back(*least);
  }
}

// All-reduce, all-gather, reduce-scatter and all-to-all end together on every rank (each rank's
// last step needs everybody's data), so execution times, read from each GPU's own timer, give
// arrivals exactly and need no common clock. A broadcast's or reduce's ranks end when their own
// part is done: there only the traced host times can tell (none: not compared).
bool ends_together(Operation operation) {
  switch (operation) {
    case Operation::all_reduce:
    case Operation::all_gather:
    case Operation::all_gather_v:
    case Operation::reduce_scatter:
    case Operation::all_to_all:
      return true;
    default:
      return false;
  }
}

ArrivalMethod arrival_method(const std::vector<const InspectorRecord*>& op) {
  if (ends_together(op.front()->operation)) return ArrivalMethod::execution_time;
  const auto all = [&](auto has) { return std::all_of(op.begin(), op.end(), has); };
  if (all([](const InspectorRecord* r) { return r->kernel_start_us.has_value(); }))
    return ArrivalMethod::kernel_start;
  if (all([](const InspectorRecord* r) { return r->call_time_us.has_value(); }))
    return ArrivalMethod::call_time;
  return ArrivalMethod::none;
}

// Each member's arrival at one shared collective, µs, in the method's time base.
std::vector<double> arrivals(const std::vector<const InspectorRecord*>& op, ArrivalMethod m) {
  std::vector<double> out;
  std::uint64_t longest = 0;
  for (const InspectorRecord* r : op) longest = std::max(longest, r->exec_time_us);
  for (const InspectorRecord* r : op) {
    switch (m) {
      case ArrivalMethod::kernel_start:
        out.push_back(double(*r->kernel_start_us));
        break;
      case ArrivalMethod::call_time:
        out.push_back(double(*r->call_time_us));
        break;
      default:
        out.push_back(double(longest - r->exec_time_us));
        break;
    }
  }
  return out;
}

// Arrivals at the collectives every member recorded: who waited, who was last.
void analyse_arrivals(Group& g, const BuildOptions& options) {
  Communicator& c = g.comm;
  if (c.members.size() < 2) return;
  std::map<std::uint64_t, std::vector<const InspectorRecord*>> shared;  // by sequence
  for (const auto& [rank, records] : g.by_rank) {
    for (const InspectorRecord* r : records) {
      if (!r->point_to_point) shared[r->sequence].push_back(r);
    }
  }
  std::map<ArrivalMethod, std::size_t> methods;
  std::vector<double> lateness_sum(c.members.size(), 0.0);
  for (auto& [sequence, op] : shared) {
    if (op.size() != c.members.size()) continue;  // a rank's record is missing: not comparable
    std::sort(op.begin(), op.end(),
              [](const InspectorRecord* a, const InspectorRecord* b) { return a->rank < b->rank; });
    bool one_each = true;  // members are in rank order too; a repeated number is no match
    for (std::size_t i = 0; i < op.size(); ++i) one_each &= op[i]->rank == c.members[i].rank;
    if (!one_each) continue;
    const ArrivalMethod method = arrival_method(op);
    if (method == ArrivalMethod::none) continue;
    ++methods[method];
    const std::vector<double> at = arrivals(op, method);
    const auto [first, last] = std::minmax_element(at.begin(), at.end());
    ++c.shared_operations;
    for (std::size_t i = 0; i < at.size(); ++i) c.members[i].waited_us += *last - at[i];
    if (*last - *first < options.delayed_us) continue;
    ++c.delayed_operations;
    const auto latest = std::size_t(last - at.begin());
    c.members[latest].last_arrivals += 1;
    lateness_sum[latest] += *last - *first;
  }
  for (std::size_t i = 0; i < c.members.size(); ++i) {
    if (c.members[i].last_arrivals > 0)
      c.members[i].lateness_us = lateness_sum[i] / double(c.members[i].last_arrivals);
  }
  if (!methods.empty()) {
    c.arrival = std::max_element(methods.begin(), methods.end(), [](const auto& a, const auto& b) {
                  return a.second < b.second;
                })->first;
  }
}

}  // namespace

std::optional<double> OperationTotals::algorithm_bandwidth() const {
  if (seconds <= 0) return std::nullopt;
  return algorithm_bytes / seconds;
}

std::optional<double> OperationTotals::bus_bandwidth() const {
  if (seconds <= 0) return std::nullopt;
  return bus_bytes / seconds;
}

std::string_view to_string(ArrivalMethod method) {
  switch (method) {
    case ArrivalMethod::kernel_start:
      return "kernel_start";
    case ArrivalMethod::call_time:
      return "call_time";
    case ArrivalMethod::execution_time:
      return "execution_time";
    case ArrivalMethod::none:
      break;
  }
  return "none";
}

std::optional<double> Communicator::mean_seconds() const {
  if (members.empty()) return std::nullopt;
  double sum = 0;
  for (const RankActivity& m : members) sum += m.seconds;
  return sum / double(members.size());
}

const RankActivity* Communicator::latest() const {
  const RankActivity* best = nullptr;
  for (const RankActivity& m : members) {
    if (m.last_arrivals > 0 && (!best || m.last_arrivals > best->last_arrivals)) best = &m;
  }
  return best;
}

std::vector<Communicator> build_communicators(std::span<const InspectorRecord> records,
                                              const BuildOptions& options) {
  std::map<std::string, Group> groups;
  for (const InspectorRecord& r : records) {
    auto [it, created] = groups.try_emplace(r.comm_id);
    Group& g = it->second;
    if (created) {
      g.comm.id = r.comm_id;
      g.comm.name = r.comm_name;
      g.comm.ranks = r.ranks;
      g.comm.nodes = r.nodes;
    }
    if (r.ranks != g.comm.ranks) continue;
    g.by_rank[r.rank].push_back(&r);
  }
  std::vector<Communicator> out;
  for (auto& [id, g] : groups) {
    Communicator& c = g.comm;
    bool any_trace = false;
    for (const auto& [rank, list] : g.by_rank) {
      any_trace = any_trace || std::any_of(list.begin(), list.end(), traced);
    }
    c.span_from_dump_times = !any_trace;
    c.first_us = std::numeric_limits<std::uint64_t>::max();
    for (const auto& [rank, list] : g.by_rank) {
      c.members.push_back(rank_activity(rank, list, !any_trace));
      c.first_us = std::min(c.first_us, c.members.back().first_us);
      c.last_us = std::max(c.last_us, c.members.back().last_us);
    }
    summarize_operations(c);
    analyse_arrivals(g, options);
    out.push_back(std::move(c));
  }
  return out;
}

void attach_gpus(std::vector<Communicator>& communicators,
                 const std::map<unsigned, std::vector<GpuRef>>& gpus_by_pid) {
  for (Communicator& c : communicators) {
    std::map<unsigned, std::vector<RankActivity*>> by_pid;
    for (RankActivity& m : c.members) by_pid[m.pid].push_back(&m);
    for (auto& [pid, ranks] : by_pid) {
      auto it = gpus_by_pid.find(pid);
      if (it == gpus_by_pid.end() || it->second.size() < ranks.size()) continue;
      std::vector<GpuRef> gpus = it->second;
      // The GPUs it holds the most memory on: a rank's own GPU, not a stray context elsewhere.
      std::stable_sort(gpus.begin(), gpus.end(), [](const GpuRef& a, const GpuRef& b) {
        return a.process_memory_bytes.value_or(0) > b.process_memory_bytes.value_or(0);
      });
      gpus.resize(ranks.size());
      std::sort(gpus.begin(), gpus.end(),
                [](const GpuRef& a, const GpuRef& b) { return a.index < b.index; });
      for (std::size_t i = 0; i < ranks.size(); ++i) ranks[i]->gpu = gpus[i];
    }
  }
}

}  // namespace gpuclk::telemetry::nccl
