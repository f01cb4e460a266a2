#include "telemetry/nccl_communicator.h"

#include <algorithm>
#include <limits>

namespace gpuclk::telemetry::nccl {

// The tracker's state types: named (not internal) since CommunicatorTracker::State holds them.
namespace tracking {

constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();

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

// What one rank's record of a collective says about when the rank got there.
struct Arrival {
  int rank = 0;
  Operation operation = Operation::all_reduce;
  std::uint64_t exec_us = 0;
  std::optional<std::uint64_t> kernel_start_us, call_time_us;
};

ArrivalMethod arrival_method(const std::vector<Arrival>& op) {
  if (ends_together(op.front().operation)) return ArrivalMethod::execution_time;
  const auto all = [&](auto has) { return std::all_of(op.begin(), op.end(), has); };
  if (all([](const Arrival& a) { return a.kernel_start_us.has_value(); }))
    return ArrivalMethod::kernel_start;
  if (all([](const Arrival& a) { return a.call_time_us.has_value(); }))
    return ArrivalMethod::call_time;
  return ArrivalMethod::none;
}

// Each member's arrival at one shared collective, µs, in the method's time base.
std::vector<double> arrival_times(const std::vector<Arrival>& op, ArrivalMethod m) {
  std::vector<double> out;
  std::uint64_t longest = 0;
  for (const Arrival& a : op) longest = std::max(longest, a.exec_us);
  for (const Arrival& a : op) {
    switch (m) {
      case ArrivalMethod::kernel_start:
        out.push_back(double(*a.kernel_start_us));
        break;
      case ArrivalMethod::call_time:
        out.push_back(double(*a.call_time_us));
        break;
      default:
        out.push_back(double(longest - a.exec_us));
        break;
    }
  }
  return out;
}

// One rank as records come: its totals and both spans (traced host times, dump times).
struct Member {
  RankActivity activity;
  std::uint64_t trace_first = kNever, trace_last = 0, dump_first = kNever, dump_last = 0;
  double lateness_sum = 0;  // µs over its last arrivals
};

// What the shared collectives judged so far say: counted once per collective.
struct Arrivals {
  std::map<ArrivalMethod, std::size_t> methods;
  std::size_t shared = 0, delayed = 0;
  std::map<int, double> waited_us, lateness_sum;  // by rank
  std::map<int, std::size_t> last_arrivals;
};

struct CommState {
  Communicator header;  // id, name, ranks, nodes
  std::map<int, Member> members;
  std::map<std::uint64_t, std::vector<Arrival>> pending;  // collectives by sequence number
  Arrivals judged;
  bool any_trace = false;
};

// Judges one collective if every member (rank seen) recorded it once.
void judge(const std::map<int, Member>& members, std::vector<Arrival> op, double delayed_us,
           Arrivals& out) {
  if (members.size() < 2 || op.size() != members.size()) return;
  std::sort(op.begin(), op.end(),
            [](const Arrival& a, const Arrival& b) { return a.rank < b.rank; });
  auto m = members.begin();
  for (const Arrival& a : op) {
    if (a.rank != (m++)->first) return;  // a repeated number is no match
  }
  const ArrivalMethod method = arrival_method(op);
  if (method == ArrivalMethod::none) return;
  ++out.methods[method];
  const std::vector<double> at = arrival_times(op, method);
  const auto [first, last] = std::minmax_element(at.begin(), at.end());
  ++out.shared;
  for (std::size_t i = 0; i < at.size(); ++i) out.waited_us[op[i].rank] += *last - at[i];
  if (*last - *first < delayed_us) return;
  ++out.delayed;
  const int latest = op[std::size_t(last - at.begin())].rank;
  out.last_arrivals[latest] += 1;
  out.lateness_sum[latest] += *last - *first;
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

// The model of one communicator now: the judged collectives and those pending that every
// member seen has recorded.
Communicator snapshot(const CommState& s, double delayed_us) {
  Communicator c = s.header;
  Arrivals arrivals = s.judged;
  for (const auto& [sequence, op] : s.pending) judge(s.members, op, delayed_us, arrivals);
  c.span_from_dump_times = !s.any_trace;
  c.first_us = kNever;
  for (const auto& [rank, m] : s.members) {
    RankActivity a = m.activity;
    sort_by_operation(a.operations);
    a.first_us = s.any_trace ? m.trace_first : m.dump_first;
    a.last_us = s.any_trace ? m.trace_last : m.dump_last;
    if (a.first_us == kNever) a.first_us = a.last_us;  // a member whose records had no trace
    a.waited_us = arrivals.waited_us[rank];
    a.last_arrivals = arrivals.last_arrivals[rank];
    if (a.last_arrivals > 0) a.lateness_us = arrivals.lateness_sum[rank] / double(a.last_arrivals);
    c.first_us = std::min(c.first_us, a.first_us);
    c.last_us = std::max(c.last_us, a.last_us);
    c.members.push_back(std::move(a));
  }
  if (c.members.empty()) c.first_us = 0;
  summarize_operations(c);
  c.shared_operations = arrivals.shared;
  c.delayed_operations = arrivals.delayed;
  if (!arrivals.methods.empty()) {
    c.arrival = std::max_element(arrivals.methods.begin(), arrivals.methods.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; })
                    ->first;
  }
  return c;
}

void add_to_member(Member& m, const InspectorRecord& r) {
  add(totals_for(m.activity.operations, r.operation), r);
  m.activity.seconds += double(r.exec_time_us) * 1e-6;
  m.dump_first = std::min(m.dump_first, r.dump_time_us);
  m.dump_last = std::max(m.dump_last, r.dump_time_us);
  if (r.call_time_us || r.kernel_start_us) {
    // From the call to the last kernel stop (or the dump where the stop was not traced).
    const std::uint64_t from = r.call_time_us.value_or(*r.kernel_start_us);
    const std::uint64_t to = r.kernel_stop_us.value_or(r.dump_time_us);
    m.trace_first = std::min(m.trace_first, std::min(from, to));
    m.trace_last = std::max(m.trace_last, std::max(from, to));
  }
}

}  // namespace tracking

struct CommunicatorTracker::State {
  BuildOptions options;
  std::map<std::string, tracking::CommState> comms;
  std::size_t records = 0;
};

CommunicatorTracker::CommunicatorTracker(BuildOptions options) : state_(std::make_unique<State>()) {
  state_->options = options;
}
CommunicatorTracker::~CommunicatorTracker() = default;
CommunicatorTracker::CommunicatorTracker(CommunicatorTracker&&) noexcept = default;
CommunicatorTracker& CommunicatorTracker::operator=(CommunicatorTracker&&) noexcept = default;

std::size_t CommunicatorTracker::records() const { return state_->records; }

void CommunicatorTracker::add(const InspectorRecord& r) {
  auto [it, created] = state_->comms.try_emplace(r.comm_id);
  tracking::CommState& s = it->second;
  if (created) {
    s.header.id = r.comm_id;
    s.header.name = r.comm_name;
    s.header.ranks = r.ranks;
    s.header.nodes = r.nodes;
  }
  if (r.ranks != s.header.ranks) return;
  ++state_->records;
  auto [member, joined] = s.members.try_emplace(r.rank);
  if (joined) {
    member->second.activity.rank = r.rank;
    member->second.activity.hostname = r.hostname;
    member->second.activity.pid = r.pid;
  }
  add_to_member(member->second, r);
  s.any_trace = s.any_trace || r.call_time_us || r.kernel_start_us;
  if (r.point_to_point) return;
  auto& op = s.pending[r.sequence];
  op.push_back({r.rank, r.operation, r.exec_time_us, r.kernel_start_us, r.call_time_us});
  const double delayed_us = state_->options.delayed_us;
  // Every rank of the communicator has it: nothing more will come.
  if (int(op.size()) == s.header.ranks) {
    judge(s.members, std::move(op), delayed_us, s.judged);
    s.pending.erase(r.sequence);
  }
  const std::size_t bound = state_->options.max_pending;
  while (bound > 0 && s.pending.size() > bound) {
    judge(s.members, std::move(s.pending.begin()->second), delayed_us, s.judged);
    s.pending.erase(s.pending.begin());
  }
}

std::vector<Communicator> CommunicatorTracker::communicators() const {
  std::vector<Communicator> out;
  for (const auto& [id, s] : state_->comms) {
    if (!s.members.empty()) out.push_back(snapshot(s, state_->options.delayed_us));
  }
  return out;
}

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
  CommunicatorTracker tracker(options);
  for (const InspectorRecord& r : records) tracker.add(r);
  return tracker.communicators();
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
