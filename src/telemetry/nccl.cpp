#include "telemetry/nccl.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace gpuclk::telemetry::nccl {

const std::vector<OperationInfo>& all_operations() {
  // The Inspector's names are ncclFuncToString's (its inspector.cc); nccl-tests' binaries are
  // those of its src/ (2.19.6).
  static const std::vector<OperationInfo> operations = {
      {Operation::all_reduce, "all_reduce", "all-reduce", "AllReduce", "all_reduce_perf", false,
       false},
      {Operation::all_gather, "all_gather", "all-gather", "AllGather", "all_gather_perf", false,
       true},
      {Operation::reduce_scatter, "reduce_scatter", "reduce-scatter", "ReduceScatter",
       "reduce_scatter_perf", false, true},
      {Operation::broadcast, "broadcast", "broadcast", "Broadcast", "broadcast_perf", false, false},
      {Operation::reduce, "reduce", "reduce", "Reduce", "reduce_perf", false, false},
      {Operation::all_to_all, "all_to_all", "all-to-all", "All2All", "alltoall_perf", false, true},
      {Operation::send_recv, "send_recv", "send/recv", "SendRecv", "sendrecv_perf", true, false},
      {Operation::send, "send", "send", "Send", "", true, false},
      {Operation::recv, "recv", "recv", "Recv", "", true, false},
      {Operation::all_gather_v, "all_gather_v", "all-gather-v", "AllGatherV", "", false, true},
  };
  return operations;
}

const OperationInfo& info(Operation operation) {
  return all_operations().at(static_cast<std::size_t>(operation));
}

std::optional<Operation> parse_key(std::string_view key) {
  for (const auto& o : all_operations()) {
    if (o.key == key) return o.operation;
  }
  return std::nullopt;
}

std::optional<Operation> parse_inspector_name(std::string_view name) {
  for (const auto& o : all_operations()) {
    if (o.inspector_name == name) return o.operation;
  }
  return std::nullopt;
}

double bus_factor(Operation operation, int ranks) {
  if (ranks < 1) return 0;
  const double n = ranks;
  switch (operation) {
    case Operation::all_reduce:
      return 2 * (n - 1) / n;
    case Operation::all_gather:
    case Operation::all_gather_v:
    case Operation::reduce_scatter:
    case Operation::all_to_all:
      return (n - 1) / n;
    case Operation::broadcast:
    case Operation::reduce:
    case Operation::send_recv:
    case Operation::send:
    case Operation::recv:
      return 1;
  }
  return 0;
}

double algorithm_bytes(Operation operation, double message_bytes, int ranks) {
  return info(operation).message_per_rank ? message_bytes * std::max(ranks, 1) : message_bytes;
}

namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

bool truthy(const std::string& value) { return !value.empty() && value != "0"; }

// NCCL_P2P_LEVEL takes a path name or its number (NCCL's order: LOC 0, NVL 1, PIX 2, PXB 3,
// PHB 4, SYS 5); SYS allows every path, as NCCL does by default within a node.
std::optional<SettingEffect> p2p_level(const std::string& value) {
  static const std::vector<std::pair<std::string, std::string>> levels = {
      {"LOC", "never between GPUs (every peer transfer staged through host memory)"},
      {"NVL", "only over NVLink (PCIe pairs staged through host memory)"},
      {"PIX", "only through one PCIe switch"},
      {"PXB", "only through PCIe switches, never the CPU"},
      {"PHB", "only through the CPU's PCIe host bridge, never across CPU sockets"},
      {"SYS", "across CPU sockets too (NCCL's default)"},
  };
  const std::string v = upper(value);
  for (std::size_t i = 0; i < levels.size(); ++i) {
    if (v == levels[i].first || v == std::to_string(i)) {
      return SettingEffect{"NCCL_P2P_LEVEL", value, "peer-to-peer " + levels[i].second,
                           levels[i].first != "SYS"};
    }
  }
  return SettingEffect{"NCCL_P2P_LEVEL", value, "peer-to-peer limited to a path level", true};
}

}  // namespace

std::vector<SettingEffect> bandwidth_settings(
    const std::map<std::string, std::string>& environment) {
  std::vector<SettingEffect> out;
  auto get = [&](const char* name) -> const std::string* {
    auto it = environment.find(name);
    return it == environment.end() ? nullptr : &it->second;
  };
  if (auto v = get("NCCL_P2P_DISABLE"); v && truthy(*v)) {
    out.push_back({"NCCL_P2P_DISABLE", *v,
                   "peer-to-peer off: NCCL stages GPU-to-GPU data through host memory instead of "
                   "NVLink or PCIe peer access",
                   true});
  }
  if (auto v = get("NCCL_P2P_LEVEL"); v && !v->empty()) {
    if (auto e = p2p_level(*v)) out.push_back(*e);
  }
  if (auto v = get("NCCL_ALGO"); v && !v->empty()) {
    out.push_back({"NCCL_ALGO", *v,
                   "algorithms restricted: NCCL cannot pick the fastest (ring, tree, NVLS, …) for "
                   "each size",
                   false});
  }
  if (auto v = get("NCCL_PROTO"); v && !v->empty()) {
    out.push_back({"NCCL_PROTO", *v,
                   "protocols restricted: NCCL cannot pick the fastest (LL, LL128, Simple) for "
                   "each size",
                   false});
  }
  if (auto v = get("NCCL_NVLS_ENABLE"); v && *v == "0") {
    out.push_back({"NCCL_NVLS_ENABLE", *v,
                   "NVLink SHARP off: on NVSwitch systems all-reduce loses the in-switch reduction",
                   true});
  }
  if (auto v = get("NCCL_SHM_DISABLE"); v && truthy(*v)) {
    out.push_back({"NCCL_SHM_DISABLE", *v,
                   "shared-memory transport off: without peer access, GPUs of one node talk over "
                   "the network",
                   true});
  }
  if (auto v = get("NCCL_IB_DISABLE"); v && truthy(*v)) {
    out.push_back({"NCCL_IB_DISABLE", *v,
                   "InfiniBand off: traffic between nodes goes over TCP sockets", true});
  }
  for (const char* name : {"NCCL_MAX_NCHANNELS", "NCCL_MAX_CTAS"}) {
    if (auto v = get(name); v && !v->empty()) {
      out.push_back({name, *v, "fewer channels (SMs moving data) than NCCL would use", true});
    }
  }
  if (auto v = get("NCCL_NET_GDR_LEVEL"); v && !v->empty()) {
    out.push_back({"NCCL_NET_GDR_LEVEL", *v,
                   "GPUDirect RDMA limited to a path level: NIC traffic may be staged through "
                   "host memory",
                   false});
  }
  return out;
}

std::string describe(const SettingEffect& setting) {
  return fmt::format("{}={} ({})", setting.name, setting.value, setting.effect);
}

std::string version_text(int code) {
  if (code <= 0) return "unknown";
  if (code >= 10000) {
    return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
  }
  return fmt::format("{}.{}.{}", code / 1000, code / 100 % 10, code % 100);
}

}  // namespace gpuclk::telemetry::nccl
