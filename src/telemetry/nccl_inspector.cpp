#include "telemetry/nccl_inspector.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>

#include "util/error.h"
#include "util/file.h"

namespace gpuclk::telemetry::nccl {
namespace {

using nlohmann::json;

// Why a line is not a record; thrown inside this file only, caught per line.
struct BadLine {
  std::string message;
};

const json& member(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end()) throw BadLine{fmt::format("no \"{}\"", key)};
  return *it;
}

const json* optional_member(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::uint64_t unsigned_value(const json& object, const char* key) {
  const json& v = member(object, key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    throw BadLine{fmt::format("\"{}\" is not a count", key)};
  return v.get<std::uint64_t>();
}

int int_value(const json& object, const char* key) {
  const json& v = member(object, key);
  if (!v.is_number_integer()) throw BadLine{fmt::format("\"{}\" is not an integer", key)};
  return v.get<int>();
}

std::string string_value(const json& object, const char* key, const char* fallback = "") {
  const json* v = optional_member(object, key);
  return v && v->is_string() ? v->get<std::string>() : std::string(fallback);
}

// The plugin writes a double with "%lf", and NaN as the string "nan".
double double_value(const json& object, const char* key) {
  const json* v = optional_member(object, key);
  return v && v->is_number() ? v->get<double>() : 0.0;
}

std::optional<std::uint64_t> optional_unsigned(const json& object, const char* key) {
  const json* v = optional_member(object, key);
  if (!v || !v->is_number_integer() || v->get<std::int64_t>() < 0) return std::nullopt;
  return v->get<std::uint64_t>();
}

// The verbose trace's host times: the call (coll_start_ts / p2p_start_ts) and the kernel
// channels' first start and last stop.
void read_trace(const json& perf, const char* start_key, InspectorRecord& r) {
  const json* trace = optional_member(perf, "event_trace_ts");
  if (!trace || !trace->is_object()) return;
  r.call_time_us = optional_unsigned(*trace, start_key);
  const json* kernels = optional_member(*trace, "kernel_events");
  if (!kernels || !kernels->is_array()) return;
  for (const json& k : *kernels) {
    if (!k.is_object()) continue;
    if (auto start = optional_unsigned(k, "kernel_start_ts"); start && *start > 0)
      r.kernel_start_us = r.kernel_start_us ? std::min(*r.kernel_start_us, *start) : *start;
    if (auto stop = optional_unsigned(k, "kernel_stop_ts"); stop && *stop > 0)
      r.kernel_stop_us = r.kernel_stop_us ? std::max(*r.kernel_stop_us, *stop) : *stop;
  }
}

// coll_perf's or p2p_perf's fields, their names prefixed "coll_" or "p2p_".
void read_perf(const json& perf, bool point_to_point, InspectorRecord& r) {
  const std::string p = point_to_point ? "p2p" : "coll";
  const auto key = [&](const char* suffix) { return p + suffix; };
  const std::string name = string_value(perf, p.c_str());
  const auto operation = parse_inspector_name(name);
  if (!operation) throw BadLine{fmt::format("unknown operation \"{}\"", name)};
  r.operation = *operation;
  r.point_to_point = point_to_point;
  r.sequence = unsigned_value(perf, key("_sn").c_str());
  if (point_to_point) r.peer = int_value(perf, "p2p_peer");
  r.message_bytes = unsigned_value(perf, key("_msg_size_bytes").c_str());
  r.exec_time_us = unsigned_value(perf, key("_exec_time_us").c_str());
  r.timing_source = string_value(perf, key("_timing_source").c_str());
  r.algbw_gbs = double_value(perf, key("_algobw_gbs").c_str());
  r.busbw_gbs = double_value(perf, key("_busbw_gbs").c_str());
  read_trace(perf, key("_start_ts").c_str(), r);
}

InspectorRecord parse_line(std::string_view line) {
  const json doc = json::parse(line.begin(), line.end(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) throw BadLine{"not a JSON object"};
  const json& header = member(doc, "header");
  const json& metadata = member(doc, "metadata");
  if (!header.is_object() || !metadata.is_object())
    throw BadLine{"\"header\" or \"metadata\" is not an object"};
  InspectorRecord r;
  r.comm_id = string_value(header, "id");
  if (r.comm_id.empty()) throw BadLine{"no communicator \"id\""};
  r.comm_name = string_value(header, "comm_name", "unknown");
  r.rank = int_value(header, "rank");
  r.ranks = int_value(header, "n_ranks");
  if (r.ranks < 1 || r.rank < 0 || r.rank >= r.ranks)
    throw BadLine{fmt::format("rank {} of {} ranks", r.rank, r.ranks)};
  r.nodes = optional_unsigned(header, "nnodes").value_or(0);
  r.format_version = string_value(metadata, "inspector_output_format_version");
  r.hostname = string_value(metadata, "hostname");
  r.pid = static_cast<unsigned>(unsigned_value(metadata, "pid"));
  r.dump_time_us = optional_unsigned(metadata, "dump_timestamp_us").value_or(0);
  const json* coll = optional_member(doc, "coll_perf");
  const json* p2p = optional_member(doc, "p2p_perf");
  if ((coll != nullptr) == (p2p != nullptr))
    throw BadLine{"neither \"coll_perf\" nor \"p2p_perf\" (or both)"};
  const json& perf = coll ? *coll : *p2p;
  if (!perf.is_object()) throw BadLine{"the operation is not an object"};
  read_perf(perf, p2p != nullptr, r);
  return r;
}

bool blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c); });
}

}  // namespace

ParsedText parse_inspector_text(std::string_view text, const std::string& source,
                                std::size_t first_line) {
  ParsedText out;
  std::size_t start = 0, number = first_line;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) break;  // still being written: the next read has it
    const std::string_view line = text.substr(start, end - start);
    if (!blank(line)) {
      try {
        out.records.push_back(parse_line(line));
      } catch (const BadLine& bad) {
        out.problems.push_back({source, number, bad.message});
      }
    }
    start = end + 1;
    out.consumed = start;
    ++number;
  }
  return out;
}

ParsedText parse_inspector_file(const std::string& path) {
  const std::string text = file::read_bounded(path, "NCCL Inspector file", file::kLogMax);
  ParsedText out = parse_inspector_text(text, path);
  if (out.consumed < text.size() && !blank(std::string_view(text).substr(out.consumed))) {
    const auto lines = std::count(text.begin(), text.begin() + long(out.consumed), '\n');
    out.problems.push_back(
        {path, std::size_t(lines) + 1, "incomplete last line (the plugin was still writing it)"});
  }
  return out;
}

bool is_inspector_file_name(std::string_view name) {
  constexpr std::string_view suffix = ".log", marker = "-pid";
  if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix)
    return false;
  const std::string_view stem = name.substr(0, name.size() - suffix.size());
  const std::size_t at = stem.rfind(marker);
  if (at == std::string_view::npos || at == 0) return false;
  const std::string_view digits = stem.substr(at + marker.size());
  return !digits.empty() &&
         std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); });
}

ParsedText parse_inspector_directory(const std::string& directory) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> files;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code kind;
    if (it->is_regular_file(kind) && is_inspector_file_name(it->path().filename().string()))
      files.push_back(it->path().string());
  }
  if (ec) {
    throw bad_argument(
        fmt::format("cannot read NCCL Inspector directory {}: {}", directory, ec.message()),
        "give NCCL_INSPECTOR_DUMP_DIR's directory (files <host>-pid<pid>.log)");
  }
  std::sort(files.begin(), files.end());
  ParsedText all;
  for (const std::string& path : files) {
    ParsedText one = parse_inspector_file(path);
    all.records.insert(all.records.end(), std::make_move_iterator(one.records.begin()),
                       std::make_move_iterator(one.records.end()));
    all.problems.insert(all.problems.end(), one.problems.begin(), one.problems.end());
  }
  return all;
}

}  // namespace gpuclk::telemetry::nccl
