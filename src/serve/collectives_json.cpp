#include "serve/collectives_json.h"

#include <fmt/format.h>

#include "util/error.h"

namespace gpuclk::serve {

namespace tn = telemetry::nccl;
using nlohmann::json;

namespace {

std::string key_of(tn::Operation op) { return std::string(tn::info(op).key); }

tn::Operation operation_from(const json& j) {
  const auto op = tn::parse_key(j.get<std::string>());
  if (!op) throw Error(ExitCode::other, "unknown collective " + j.dump());
  return *op;
}

json totals_json(const tn::OperationTotals& t) {
  return {{"collective", key_of(t.operation)}, {"count", t.count},
          {"message_bytes", t.message_bytes},  {"algorithm_bytes", t.algorithm_bytes},
          {"bus_bytes", t.bus_bytes},          {"seconds", t.seconds}};
}

tn::OperationTotals totals_from(const json& j) {
  tn::OperationTotals t;
  t.operation = operation_from(j.at("collective"));
  t.count = j.at("count").get<std::uint64_t>();
  t.message_bytes = j.at("message_bytes").get<double>();
  t.algorithm_bytes = j.at("algorithm_bytes").get<double>();
  t.bus_bytes = j.at("bus_bytes").get<double>();
  t.seconds = j.at("seconds").get<double>();
  return t;
}

json totals_list(const std::vector<tn::OperationTotals>& list) {
  json out = json::array();
  for (const auto& t : list) out.push_back(totals_json(t));
  return out;
}

std::vector<tn::OperationTotals> totals_list_from(const json& j) {
  std::vector<tn::OperationTotals> out;
  for (const auto& t : j) out.push_back(totals_from(t));
  return out;
}

json member_json(const tn::RankActivity& m) {
  json j{{"rank", m.rank},
         {"hostname", m.hostname},
         {"pid", m.pid},
         {"operations", totals_list(m.operations)},
         {"seconds", m.seconds},
         {"first_us", m.first_us},
         {"last_us", m.last_us},
         {"last_arrivals", m.last_arrivals},
         {"lateness_us", m.lateness_us},
         {"waited_us", m.waited_us}};
  if (m.gpu) j["gpu"] = {{"index", m.gpu->index}, {"bus_id", m.gpu->bus_id}};
  return j;
}

tn::RankActivity member_from(const json& j) {
  tn::RankActivity m;
  m.rank = j.at("rank").get<int>();
  m.hostname = j.at("hostname").get<std::string>();
  m.pid = j.at("pid").get<unsigned>();
  m.operations = totals_list_from(j.at("operations"));
  m.seconds = j.at("seconds").get<double>();
  m.first_us = j.at("first_us").get<std::uint64_t>();
  m.last_us = j.at("last_us").get<std::uint64_t>();
  m.last_arrivals = j.at("last_arrivals").get<std::size_t>();
  m.lateness_us = j.at("lateness_us").get<double>();
  m.waited_us = j.at("waited_us").get<double>();
  if (j.contains("gpu"))
    m.gpu = tn::GpuRef{j["gpu"].at("index").get<unsigned>(),
                       j["gpu"].at("bus_id").get<std::string>(), std::nullopt};
  return m;
}

json window_json(const rules::CommunicatorWindow& w) {
  const tn::Communicator& c = w.communicator;
  json members = json::array();
  for (const auto& m : c.members) members.push_back(member_json(m));
  return {{"id", c.id},
          {"name", c.name},
          {"ranks", c.ranks},
          {"nodes", c.nodes},
          {"members", members},
          {"operations", totals_list(c.operations)},
          {"least_waiting", totals_list(c.least_waiting)},
          {"arrival", std::string(tn::to_string(c.arrival))},
          {"shared_operations", c.shared_operations},
          {"delayed_operations", c.delayed_operations},
          {"span_from_dump_times", c.span_from_dump_times},
          {"first_us", c.first_us},
          {"last_us", c.last_us},
          {"job", w.job},
          {"link_peak_bytes_per_s", w.link_peak_bytes_per_second.value_or(0)},
          {"link_basis", w.link_basis},
          {"nccl_environment", w.nccl_environment}};
}

rules::CommunicatorWindow window_from(const json& j) {
  rules::CommunicatorWindow w;
  tn::Communicator& c = w.communicator;
  c.id = j.at("id").get<std::string>();
  c.name = j.at("name").get<std::string>();
  c.ranks = j.at("ranks").get<int>();
  c.nodes = j.at("nodes").get<std::uint64_t>();
  for (const auto& m : j.at("members")) c.members.push_back(member_from(m));
  c.operations = totals_list_from(j.at("operations"));
  c.least_waiting = totals_list_from(j.at("least_waiting"));
  const auto arrival = j.at("arrival").get<std::string>();
  for (auto m : {tn::ArrivalMethod::none, tn::ArrivalMethod::kernel_start,
                 tn::ArrivalMethod::call_time, tn::ArrivalMethod::execution_time})
    if (tn::to_string(m) == arrival) c.arrival = m;
  c.shared_operations = j.at("shared_operations").get<std::size_t>();
  c.delayed_operations = j.at("delayed_operations").get<std::size_t>();
  c.span_from_dump_times = j.at("span_from_dump_times").get<bool>();
  c.first_us = j.at("first_us").get<std::uint64_t>();
  c.last_us = j.at("last_us").get<std::uint64_t>();
  w.job = j.at("job").get<std::string>();
  if (const double peak = j.at("link_peak_bytes_per_s").get<double>(); peak > 0)
    w.link_peak_bytes_per_second = peak;
  w.link_basis = j.at("link_basis").get<std::string>();
  w.nccl_environment = j.at("nccl_environment").get<std::map<std::string, std::string>>();
  return w;
}

json job_json(const views::JobCollectives& job) {
  json collectives = json::array();
  for (const auto& c : job.collectives) {
    json one = totals_json(c.total);
    if (c.bus_bandwidth) one["bus_bandwidth_bytes_per_s"] = *c.bus_bandwidth;
    if (c.time_share) one["time_share"] = *c.time_share;
    collectives.push_back(std::move(one));
  }
  json communicators = json::array();
  for (const auto& w : job.communicators) communicators.push_back(window_json(w));
  return {{"owner", host::owner_key(job.owner)},
          {"user", job.owner.user},
          {"directory", job.directory},
          {"ranks", job.ranks},
          {"gpus", job.gpus},
          {"collectives", collectives},
          {"communicators", communicators}};
}

views::JobCollectives job_from(const json& j) {
  views::JobCollectives job;
  auto owner = host::parse_owner_key(j.at("owner").get<std::string>());
  if (!owner) throw Error(ExitCode::other, "bad owner " + j.at("owner").dump());
  job.owner = *owner;
  job.owner.user = j.at("user").get<std::string>();
  job.directory = j.at("directory").get<std::string>();
  job.ranks = j.at("ranks").get<int>();
  job.gpus = j.at("gpus").get<std::vector<unsigned>>();
  for (const auto& c : j.at("collectives")) {
    views::JobCollective one{totals_from(c), std::nullopt, std::nullopt};
    if (c.contains("bus_bandwidth_bytes_per_s"))
      one.bus_bandwidth = c["bus_bandwidth_bytes_per_s"].get<double>();
    if (c.contains("time_share")) one.time_share = c["time_share"].get<double>();
    job.collectives.push_back(one);
  }
  for (const auto& w : j.at("communicators")) job.communicators.push_back(window_from(w));
  return job;
}

}  // namespace

json collectives_json(const CollectivesAnswer& a) {
  json jobs = json::array();
  for (const auto& job : a.jobs) jobs.push_back(job_json(job));
  json out{{"enabled", a.enabled}, {"jobs", jobs}};
  if (a.enabled) {
    out["root"] = a.root;
    out["files"] = a.files;
    out["records"] = a.records;
    out["errors"] = a.errors;
    out["problems"] = a.problems;
  }
  return out;
}

CollectivesAnswer collectives_from_json(const json& answer) {
  try {
    CollectivesAnswer a;
    a.enabled = answer.at("enabled").get<bool>();
    if (a.enabled) {
      a.root = answer.at("root").get<std::string>();
      a.files = answer.at("files").get<std::size_t>();
      a.records = answer.at("records").get<std::uint64_t>();
      a.errors = answer.at("errors").get<std::uint64_t>();
      a.problems = answer.at("problems").get<std::vector<std::string>>();
    }
    for (const auto& j : answer.at("jobs")) a.jobs.push_back(job_from(j));
    return a;
  } catch (const json::exception& e) {
    throw Error(ExitCode::other,
                fmt::format("malformed collectives answer from the service: {}", e.what()));
  }
}

}  // namespace gpuclk::serve
