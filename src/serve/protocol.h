// The service's socket protocol: newline-delimited JSON, one request object per line, one
// response object per line (docs/serve.md lists every request). Versioned: a request carries
// "v": kProtocolVersion; a response always carries "v" and "ok" (false with "error" and "code").
// Also the (de)serialization of the data models that travel: a command's data model is what the
// service sends, so the same printer prints it either way, byte for byte. Doubles round-trip
// exactly (nlohmann-json writes the shortest text that reads back the same double).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "control/report.h"
#include "gpu/events.h"
#include "gpu/selection.h"
#include "gpu/status.h"
#include "output/value.h"
#include "output/value_json.h"
#include "telemetry/sample.h"
#include "telemetry/summary.h"

namespace gpuclk::serve {

using nlohmann::json;

inline constexpr int kProtocolVersion = 1;
// A request line longer than this is answered with an error and the connection closed.
inline constexpr std::size_t kMaxRequestBytes = std::size_t{64} * 1024;

// The default socket: /run/gpuclk/gpuclk.sock as root, $XDG_RUNTIME_DIR/gpuclk.sock otherwise
// (/tmp/gpuclk-UID.sock without XDG_RUNTIME_DIR). `explicit_path` (--socket) and GPUCLK_SOCKET
// win, in that order.
std::string socket_path(const std::string& explicit_path = {});

// The node's system service (`gpuclk serve` as root, as under systemd).
inline constexpr const char* kSystemSocket = "/run/gpuclk/gpuclk.sock";
// Where a client looks, in order: socket_path(); then, for a user who is not root and named no
// socket (--socket, GPUCLK_SOCKET), the system service's — so users reach the node's service,
// and its delegated settings, without configuring anything.
std::vector<std::string> client_socket_paths(const std::string& explicit_path, unsigned euid);

json error_response(const std::string& message, int exit_code);

// Checked reads of a request's values: a client may send anything, and a value converted
// unchecked answers the wrong question (4294967297 or 1.5 read as GPU 1). Each throws a bad
// argument (exit 2) naming the key, the value and what is valid; a missing key gives `fallback`.
// A GPU index: a whole number from 0 to 4095, as -i takes (gpu/selection.h).
unsigned gpu_index_of(const json& value);
// A number from `min` to `max` (finite).
double number_of(const json& request, const char* key, double fallback, double min, double max);
// A whole number from 0 to `max`.
std::uint64_t count_of(const json& request, const char* key, std::uint64_t fallback,
                       std::uint64_t max);
// A string, or true/false.
std::string string_of(const json& request, const char* key, const std::string& fallback);
bool flag_of(const json& request, const char* key, bool fallback);

json to_json(const gpu::StatusSnapshot& s);
gpu::StatusSnapshot status_from_json(const json& j);

// Report values, trees and tables (clocks, info, topo): output/value_json.h's.
using output::node_from_json;
using output::table_from_json;
using output::to_json;
using output::value_from_json;

json to_json(const gpu::DeviceKey& k);
gpu::DeviceKey device_key_from_json(const json& j);

// History samples: times are seconds relative to `now` (≤ 0), in the GPU's time base.
json to_json(const telemetry::FastSample& s, telemetry::TimePoint now);
json to_json(const telemetry::SlowSample& s, telemetry::TimePoint now);
json to_json(const telemetry::Summary& s, telemetry::TimePoint now);
// The inverse of the two above: a sample read back with its time `now` + t.
telemetry::FastSample fast_sample_from_json(const json& j, telemetry::TimePoint now);
telemetry::SlowSample slow_sample_from_json(const json& j, telemetry::TimePoint now);
// An NVML event the service kept (history's "events"): {"t", "kind", "xid" (Xid events only)},
// t relative to `now` as the samples'. Read back for GPU index `gpu`; an unknown kind throws.
json to_json(const gpu::GpuEvent& e, telemetry::TimePoint now);
gpu::GpuEvent event_from_json(const json& j, unsigned gpu, telemetry::TimePoint now);
// "xid", "double_bit_ecc", "single_bit_ecc" to the kind; nullopt for another name.
std::optional<gpu::EventKind> event_kind_from_string(std::string_view name);

// A change or restore report (delegated `set`/`restore`): what the CLI prints, either way.
json to_json(const control::ChangeReport& r);
control::ChangeReport change_report_from_json(const json& j);

}  // namespace gpuclk::serve
