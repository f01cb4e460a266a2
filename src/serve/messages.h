// The protocol's requests and answers as types (docs/serve.md's table): a request is built here
// and its answer decoded here, so that the commands, top's feed and the read seams never write a
// request or read an answer's keys themselves (scripts/ci/check-rules.sh's `protocol` check: no
// request outside src/serve/). serve::Client (client.h) sends them; a new answer field is added
// in one place, here. Answers carry the data models the commands print (gpu::StatusSnapshot,
// output::Node and Table, telemetry samples, control::ChangeReport), as protocol.h decodes them.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "control/report.h"
#include "control/settings.h"
#include "gpu/events.h"
#include "gpu/selection.h"
#include "gpu/status.h"
#include "gpu/units.h"
#include "host/owner.h"
#include "output/value.h"
#include "serve/attribution_json.h"
#include "serve/collectives_json.h"
#include "telemetry/fields.h"
#include "telemetry/sample.h"
#include "telemetry/sampler.h"
#include "telemetry/summary.h"

namespace gpuclk::serve {

// `hello`: what the service is, how it samples, its GPUs.
struct Hello {
  std::string service;    // "gpuclk serve"
  std::string simulated;  // the scenario of a simulated node; "" on a real driver
  std::string sim_state;  // the simulator's state file it runs on (GPUCLK_SIM_STATE); "" for none
  // Its sampling interval, its slow tier's and its history's length; nullopt where it did not
  // say (each reader falls back as suits it).
  std::optional<double> interval_seconds, slow_interval_seconds, history_seconds;
  std::vector<gpu::DeviceKey> gpus;
  // The policy file of a service that takes settings from users (delegated `set`).
  std::optional<std::string> delegation;
};

// `status`: every GPU's settings and state, as `gpuclk status` reads it.
struct StatusAnswer {
  std::vector<gpu::DeviceKey> gpus;
  std::vector<gpu::StatusSnapshot> status;  // in the order of `gpus`
  std::string simulated;                    // the scenario; "" on a real driver
  // A simulated node whose time is not real time: "time frozen at 60 s (…)"; "" otherwise.
  std::string sim_time_note;
};

// The views (`view` with a name): per GPU what a read command prints, in the order of `gpus`.
struct ClocksView {  // "clocks"
  struct Gpu {
    std::string name;
    control::Settings settings;  // for the settings that differ between GPUs
    output::Node tree;           // clocks' report tree
  };
  std::vector<gpu::DeviceKey> gpus;
  std::vector<Gpu> rows;
};

struct InfoView {  // "info"
  std::vector<gpu::DeviceKey> gpus;
  output::Node host;               // the host section
  std::vector<output::Node> rows;  // each GPU's tree
};

struct TopoView {  // "topo": the whole node's
  std::vector<gpu::DeviceKey> gpus;
  output::Table table;
  std::vector<std::string> nvlink;  // NVLink bandwidth per GPU pair, links down
  std::string cpus_from;            // whose CPUs and NUMA nodes the affinity columns are
  output::Table nvlink_columns;  // each GPU's links as columns (views::nvlink_table); may be empty
};

struct QueryView {  // "query": per GPU every field of `gpuclk query` by name
  std::vector<gpu::DeviceKey> gpus;
  std::vector<std::map<std::string, output::Value, std::less<>>> rows;

  // The GPU at `pos`'s `field`; throws Error (exit 255) for a field the service does not serve
  // (an older gpuclk serve).
  const output::Value& value(std::size_t pos, std::string_view field) const;
};

struct TopView {  // "top": memory size and processes
  struct Process {
    unsigned pid = 0;
    std::optional<units::Bytes> used_memory;
    std::optional<std::string> name;   // the driver's name for it
    std::optional<host::Owner> owner;  // who it works for (with its user), where known
  };
  struct Gpu {
    std::optional<units::Bytes> memory_total;
    std::optional<std::vector<Process>> processes;  // nullopt: not readable
  };
  std::vector<gpu::DeviceKey> gpus;
  std::vector<Gpu> rows;
};

// `history`: the 1 s history (up to the service's --history), or every sample (10 min).
struct HistoryRequest {
  std::optional<std::vector<unsigned>> gpus;  // GPU indexes; every GPU when not given
  double seconds = 60;
  bool every_sample = false;  // resolution "interval" (with the slow tier), else "1s"
  bool slow = false;          // the slow tier with a "1s" history too
};

struct HistoryGpu {
  gpu::DeviceKey key;
  std::vector<telemetry::FastSample> samples;
  std::vector<telemetry::SlowSample> slow;  // when asked (and the service knows "slow")
  // False from a service that keeps no NVML events (an older gpuclk serve): none was looked at.
  bool events_kept = false;
  std::vector<gpu::GpuEvent> events;  // kept over the window, oldest first (gpu: key.index)
  std::vector<gpu::EventKind> events_watched;
};

// `summary`: each GPU's telemetry::Summary over the last seconds (≤ 600).
struct GpuSummary {
  gpu::DeviceKey key;
  telemetry::Summary summary;
};

// `snapshot`: the sampler's latest samples.
struct SnapshotGpu {
  gpu::DeviceKey key;
  std::optional<telemetry::FastSample> fast;
  std::optional<telemetry::SlowSample> slow;
  bool lost = false;
  std::uint64_t read_errors = 0;
  std::optional<double> simulator_energy_j;  // the simulator's exact energy counter
};

struct Snapshot {
  std::vector<SnapshotGpu> gpus;
  // The service's sampler time when it answered and of its last tick, in its time base (a
  // stream's); nullopt from a service that did not say.
  std::optional<telemetry::TimePoint> now, time;
  telemetry::TimingStats timing;  // since the service started (ticks, missed, lateness, cost)
};

// `processes`: who used the GPUs (docs/attribution.md).
struct ProcessesAnswer {
  std::vector<gpu::DeviceKey> gpus;
  attribution::AttributionView view;  // times relative to kAnswerTime
  double interval_s = 1.0;            // the time resolution of the figures
  // The answer as the service sent it (its JSON text: a json member here would make this
  // struct's destructor one that may throw, for clang-tidy).
  std::string text;

  // The answer as `gpuclk ps --format json` prints it, less "v" and "ok": the processes of the
  // GPUs with these `indexes`, and the ended ones only with `ended_too`.
  nlohmann::json processes_document(const std::set<unsigned>& indexes, bool ended_too) const;
  // The answer to a request for one owner as `gpuclk stat --job` prints it: its entry in
  // "owners", with "processes".
  nlohmann::json owner_document() const;
};

// `set` (delegated settings): the change to make.
struct SetRequest {
  // Setting key → value: the journal's typed form (control::request_to_json, settings_to_json),
  // or text as `gpuclk set` takes it ("default").
  nlohmann::json settings = nlohmann::json::object();
  std::optional<std::vector<unsigned>> gpus;  // GPU indexes; every GPU when not given
  bool snap = false, dry_run = false;
  bool settle = true;  // false: no read back after the clocks' settling time (a governor's writes)
};

// `set` and `restore`: what was done.
struct ChangeAnswer {
  control::ChangeReport report;
  std::string rule;                       // the policy's rule that granted it
  std::string journal;                    // the service's journal
  int session = 0;                        // the session (its leader's pid) that holds it
  std::optional<std::string> held_until;  // until when, where the service said
};

// `stream`: one line per interval over a connection of its own.
struct StreamRequest {
  std::vector<unsigned> gpus;  // GPU indexes
  double interval_seconds = 1;
  std::uint64_t count = 0;     // lines; 0: until the client goes
  telemetry::FieldSet fields;  // the fields the client needs (some are read only while asked)
  bool every_sample = false;   // "samples": "all": every sample since the previous line too
};

struct StreamGpu {
  gpu::DeviceKey key;
  std::optional<telemetry::FastSample> fast;
  std::optional<telemetry::SlowSample> slow, previous_slow;
  std::optional<units::Joules> energy;  // since the stream opened, where known
  // `lost`; with every_sample also the read errors since the service started, the last error
  // and when it was lost.
  telemetry::GpuHealth health;
  // With every_sample: every fast and slow sample since the previous line.
  std::vector<telemetry::FastSample> samples;
  std::vector<telemetry::SlowSample> slow_samples;
};

struct StreamLine {
  bool end = false;             // the line after the last (`count` reached): no GPUs
  telemetry::TimePoint time{};  // the service's sampler time; the samples' times are in its base
  std::vector<StreamGpu> gpus;
};

// The requests, as the service reads them.
nlohmann::json hello_request();
nlohmann::json status_request();
nlohmann::json view_request(const std::string& name);
nlohmann::json history_request(const HistoryRequest& r);
nlohmann::json summary_request(const std::optional<std::vector<unsigned>>& gpus, double seconds);
nlohmann::json snapshot_request(const std::vector<unsigned>& gpus, bool read_counters);
nlohmann::json processes_request(const std::optional<std::string>& owner);
// `collectives`: each job's NCCL collectives (collectives_json.h: CollectivesAnswer).
nlohmann::json collectives_request(const std::optional<std::string>& owner);
nlohmann::json set_request(const SetRequest& r);
nlohmann::json restore_request(const std::optional<std::vector<unsigned>>& gpus);
nlohmann::json stream_request(const StreamRequest& r);

// The answers. Samples' and events' times come back as `now` + their offset ("t"), as
// protocol.h's decoders read them. Each throws (nlohmann::json's or std:: exceptions, or Error)
// on a malformed answer; Client turns that into an Error naming the service.
Hello hello_from_json(const nlohmann::json& answer);
StatusAnswer status_answer_from_json(const nlohmann::json& answer);
ClocksView clocks_view_from_json(const nlohmann::json& answer);
InfoView info_view_from_json(const nlohmann::json& answer);
TopoView topo_view_from_json(const nlohmann::json& answer);
QueryView query_view_from_json(const nlohmann::json& answer);
TopView top_view_from_json(const nlohmann::json& answer);
std::vector<HistoryGpu> history_from_json(const nlohmann::json& answer, telemetry::TimePoint now);
std::vector<GpuSummary> summaries_from_json(const nlohmann::json& answer, telemetry::TimePoint now);
Snapshot snapshot_from_json(const nlohmann::json& answer, telemetry::TimePoint now);
ProcessesAnswer processes_from_json(const nlohmann::json& answer);
ChangeAnswer change_answer_from_json(const nlohmann::json& answer);
// A stream's line; its samples' times in the service's time base (the line's "time").
StreamLine stream_line_from_json(const nlohmann::json& line);

}  // namespace gpuclk::serve
