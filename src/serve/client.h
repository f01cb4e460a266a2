// A client of the service's socket (protocol.h): what read commands use when a service runs.
// Its typed requests (hello() … next_line()) build each request and decode its answer in
// src/serve/ (messages.h): a command, top's feed or a read seam calls them and never writes a
// request or reads an answer's keys itself (scripts/ci/check-rules.sh's `protocol` check).
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "serve/messages.h"
#include "util/error.h"

namespace gpuclk::serve {

class Client {
 public:
  // Connects to `path`; nullptr when nothing answers there (no socket, connection refused).
  static std::unique_ptr<Client> connect(const std::string& path);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // The typed requests (docs/serve.md's table), one answer each on this connection. Each throws
  // Error: the service's own error (its message and exit code), exit 255 when the connection
  // fails or the answer is malformed. Samples' and events' times come back as `now` + their
  // offset (the service sends them relative to its answer).
  Hello hello();
  StatusAnswer status();
  ClocksView clocks_view();
  InfoView info_view();
  TopoView topo_view();
  QueryView query_view();
  TopView top_view();
  std::vector<HistoryGpu> history(const HistoryRequest& request, telemetry::TimePoint now);
  std::vector<GpuSummary> summary(const std::optional<std::vector<unsigned>>& gpus, double seconds,
                                  telemetry::TimePoint now);
  // `read_counters`: the service reads every GPU's counters once more first (stat's edges).
  Snapshot snapshot(const std::vector<unsigned>& gpus, bool read_counters,
                    telemetry::TimePoint now);
  // Every owner's processes, or `owner`'s alone (an owner key: "slurm:1234").
  ProcessesAnswer processes(const std::optional<std::string>& owner = std::nullopt);
  // Each job's NCCL collectives, or `owner`'s alone; not enabled (no jobs) from a service that
  // reads no NCCL Inspector files, an older one included.
  CollectivesAnswer collectives(const std::optional<std::string>& owner = std::nullopt);
  // Delegated settings: a change, and putting back what the caller holds (GPU indexes; every
  // GPU when not given).
  ChangeAnswer set(const SetRequest& request);
  ChangeAnswer restore(const std::optional<std::vector<unsigned>>& gpus = std::nullopt);
  // A `stream`: after open_stream() this connection carries its lines only; next_line() reads
  // each, waiting at most `wait` (nullopt when none came). A refusal of the stream throws from
  // the first next_line(), as the service's error.
  void open_stream(const StreamRequest& request);
  std::optional<StreamLine> next_line(std::chrono::milliseconds wait);

  // The untyped protocol underneath (tests speak it to the service).
  // Sends one request (its "v" is filled in) and returns the response. Throws Error: the
  // service's own error (its message and exit code), or exit 255 when the connection fails.
  nlohmann::json request(nlohmann::json request);
  // A request answered by several lines (`stream`): send() it, then read_line() each line.
  void send(nlohmann::json request);
  // The next response line, waiting at most `wait`; nullopt when none came in that time.
  // Throws as request() does: the service's error line, or the connection failing or closing.
  std::optional<nlohmann::json> read_line(std::chrono::milliseconds wait);
  const std::string& path() const { return path_; }

 private:
  Client(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  Error failure(const char* what) const;
  // `decode`(answer), with a malformed answer thrown as Error (exit 255) naming `what`.
  template <class Decode>
  auto decoded(const char* what, const nlohmann::json& answer, Decode decode) const;
  // Writes `line` whole; false when the service had closed the connection (EPIPE, ECONNRESET),
  // throws failure() for any other error.
  bool write_line(const std::string& line);
  nlohmann::json take_line(std::size_t newline);
  int fd_;
  std::string path_;
  std::string pending_;  // bytes after the last response line
};

}  // namespace gpuclk::serve
